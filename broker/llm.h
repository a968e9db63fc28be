/* LLM clients (broker only): OpenAI-compatible chat completions, the
 * Anthropic Messages API and the `replay` provider, streamed over libcurl
 * (server-sent events) and parsed incrementally.
 *
 * The conversation is a json-c array of LMC messages, the format Open
 * Interpreter saves:  {"role": "user"|"assistant"|"computer",
 *                      "type": "message"|"code"|"console",
 *                      "format": "output"|<language>  (code/console only),
 *                      "content": "..."}
 * Each client converts it to its provider's request: an assistant "code"
 * message becomes a call of the one tool, execute(language, code), and the
 * "computer" console message after it the tool's result.  Tool-call ids are
 * derived from message positions, so the same history always converts the
 * same way. */
#ifndef BROKER_LLM_H
#define BROKER_LLM_H

#include <json-c/json.h>
#include <signal.h>
#include <stdbool.h>

#include "warden/err.h"

struct llm_config {
	char *provider;        /* "openai", "anthropic", "ollama", "replay" */
	char *model;           /* the provider's model name */
	char *api_base;        /* e.g. "https://api.openai.com/v1"; NULL = provider default */
	char *api_key;         /* never logged, never saved */
	bool tools;            /* false: fenced code blocks in text (--no-tools) */
	long connect_timeout_ms, idle_timeout_ms;
	int max_retries;       /* on 429/5xx, with backoff and Retry-After */
	int max_tokens;        /* 0 = provider default */
	double temperature;    /* < 0 = provider default */
	long replay_delay_ms;  /* replay only: pause between streamed chunks */
};

/* Once, before the broker confines itself (Landlock then hides the CA
 * files and the resolver's modules): curl_global_init, the CA bundle read
 * into memory (CURLOPT_CAINFO_BLOB), name-service modules loaded. */
int llm_global_init(struct werr *err);

/* Parse "openai/gpt-4o", "anthropic/claude-...", "ollama/llama3",
 * "replay:FILE", or a bare name (openai, or whatever api_base serves).
 * Fills provider and model (malloc'd).  Errors say what forms exist. */
int llm_parse_model(const char *spec, struct llm_config *cfg, struct werr *err);
void llm_config_free(struct llm_config *cfg);

struct llm_events {
	void (*text)(void *ctx, const char *s, size_t n);   /* assistant text, as it streams */
	void (*code_start)(void *ctx, const char *language); /* a tool call began (may be NULL) */
	void (*retry)(void *ctx, int attempt, long wait_ms, const char *why); /* may be NULL */
};

/* One assistant turn.  On success *out is a new json array of the LMC
 * messages the assistant produced, in order: "message" text and "code"
 * blocks (from tool calls; in no-tools mode the caller extracts fenced
 * blocks with llm_extract_code).  *cancel (may be NULL) set by a signal
 * handler aborts the request: -1 with err "interrupted", and *out holds what
 * had streamed so far, so nothing is lost.  Any other failure (HTTP error,
 * cut-off stream, invalid JSON) is -1 with a one-line err and *out holding
 * the partial reply too. */
int llm_complete(const struct llm_config *cfg, const char *system, json_object *history,
                 const struct llm_events *ev, void *ctx, volatile sig_atomic_t *cancel,
                 json_object **out, struct werr *err);

/* Code blocks in assistant text, and the common mistakes of local models:
 * ```lang fenced blocks; a tool call written as plain JSON text
 * ({"name":"execute","arguments":{...}}); functions.execute(...); a tool
 * named after the language ({"name":"python","arguments":"..."}).
 * Returns a json array of LMC messages that replaces `text`: the prose
 * pieces as "message", each block as "code". */
json_object *llm_extract_code(const char *text);

/* One LMC message {role, type, format (omitted when NULL), content}. */
json_object *lmc_msg(const char *role, const char *type, const char *format,
                     const char *content);

/* The name of the one tool. */
#define LLM_TOOL_NAME "execute"

#endif
