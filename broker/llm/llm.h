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
 * same way.
 *
 * The files: llm.c (this header: set-up, model names, dispatch) over the
 * providers (llm_provider.h: llm_openai.c, llm_anthropic.c, llm_replay.c)
 * over llm_stream.c (the reply being built, the one request helper) over
 * http.c, sse.c, extract.c and lmc.c (the messages and the tool). */
#ifndef BROKER_LLM_H
#define BROKER_LLM_H

#include <json-c/json.h>
#include <signal.h>
#include <stdbool.h>

#include "llm_types.h"
#include "warden/err.h"

/* Once, before the broker confines itself (Landlock then hides the CA
 * files and the resolver's modules): curl_global_init, the CA bundle read
 * into memory (CURLOPT_CAINFO_BLOB), name-service modules loaded. */
int llm_global_init(struct werr *err);

/* Parse "openai/gpt-4o", "anthropic/claude-...", "ollama/llama3",
 * "replay:FILE", or a bare name (openai, or whatever api_base serves).
 * Fills provider and model (malloc'd).  Errors say what forms exist. */
int llm_parse_model(const char *spec, struct llm_config *cfg, struct werr *err);
void llm_config_free(struct llm_config *cfg);

/* The default API base of a provider ("" when it has none), and the TCP
 * port the default endpoint of a model spec's provider listens on (0 when
 * the spec names no provider or one without network): for broker_confine. */
const char *llm_default_base(const char *provider);
long llm_model_port(const char *spec);

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

#endif
