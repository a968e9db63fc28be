/* Private to the LLM clients (llm*.c, extract.c): the reply being built,
 * the streamed-event state shared by the providers, and their entry points.
 * Exposed in a header so that the fuzzer can drive the event handlers. */
#ifndef BROKER_LLM_IMPL_H
#define BROKER_LLM_IMPL_H

#include <json-c/json.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "llm.h"
#include "warden/err.h"

/* A whole reply (text plus tool-call arguments) is bounded. */
#define LLM_REPLY_MAX (8u << 20)
#define LLM_MAX_CALLS 64

/* The assistant turn being built: *out of llm_complete. */
struct llm_turn {
	json_object *msgs;          /* LMC messages so far */
	char *text;                 /* the text message still streaming */
	size_t text_len, text_cap;
	size_t total;               /* bytes of text and code, against LLM_REPLY_MAX */
	const struct llm_events *ev;
	void *ctx;
};

void turn_init(struct llm_turn *t, const struct llm_events *ev, void *ctx);
/* Streams text to ev->text and keeps it. */
int turn_text(struct llm_turn *t, const char *s, size_t n, struct werr *err);
/* Ends the current text message (the next text starts a new one). */
void turn_break(struct llm_turn *t);
/* Ends the current text message and appends a code message. */
int turn_code(struct llm_turn *t, const char *language, const char *code, struct werr *err);
/* Ends the text message; returns the messages (ownership passes). */
json_object *turn_finish(struct llm_turn *t);
void turn_free(struct llm_turn *t);

/* One tool call being streamed. */
struct llm_call {
	char *id, *name;
	char *args;
	size_t args_len, args_cap;
	bool announced;             /* ev->code_start was called */
	bool done;
};

/* A provider's streamed reply: the SSE handlers below feed this. */
struct llm_stream {
	const char *who;            /* "openai", "anthropic", "ollama" */
	struct llm_turn turn;
	struct llm_call calls[LLM_MAX_CALLS];
	int n_calls;
	/* anthropic: content block index -> kind (0 none, 1 text, 2 tool, 3 other)
	 * and call slot */
	unsigned char block_kind[LLM_MAX_CALLS];
	int block_call[LLM_MAX_CALLS];
	bool finished;              /* finish_reason / stop_reason seen */
	bool done;                  /* [DONE] / message_stop seen */
	bool in_text_block;
	unsigned long events;       /* SSE events received */
	char stop_reason[32];
};

void llm_stream_init(struct llm_stream *s, const char *who, const struct llm_events *ev,
                     void *ctx);
void llm_stream_free(struct llm_stream *s);
/* Turns the finished tool calls into code messages (OpenAI: at the end of
 * the stream; on errors, only calls whose arguments are complete). */
int llm_stream_flush_calls(struct llm_stream *s, bool complete_only, struct werr *err);

/* Adds a fragment to tool call `index` (id, name, arguments may be NULL). */
int llm_call_add(struct llm_stream *s, int index, const char *id, const char *name,
                 const char *args, size_t args_len, struct werr *err);
/* base without trailing '/' (malloc'd) */
char *llm_base_url(const char *base);

/* SSE event handlers (sse_event_fn with ctx = struct llm_stream *). */
int openai_on_event(void *ctx, const char *event, const char *data, size_t len,
                    struct werr *err);
int anthropic_on_event(void *ctx, const char *event, const char *data, size_t len,
                       struct werr *err);

/* Request bodies (malloc'd JSON text) from an LMC history. */
char *openai_request_body(const struct llm_config *cfg, const char *system,
                          json_object *history);
char *anthropic_request_body(const struct llm_config *cfg, const char *system,
                             json_object *history);

/* Providers: fill s->turn; the caller builds *out. */
int openai_complete(const struct llm_config *cfg, const char *system, json_object *history,
                    struct llm_stream *s, volatile sig_atomic_t *cancel, struct werr *err);
int anthropic_complete(const struct llm_config *cfg, const char *system, json_object *history,
                       struct llm_stream *s, volatile sig_atomic_t *cancel, struct werr *err);
int replay_complete(const struct llm_config *cfg, json_object *history, struct llm_turn *t,
                    volatile sig_atomic_t *cancel, struct werr *err);
/* Reads and checks a recording now (before the broker confines itself);
 * replay_complete uses this copy. */
int replay_preload(const char *path, struct werr *err);

/* extract.c: a tool call whose name is "execute" (or a language) and whose
 * arguments are JSON {language, code}, a JSON string of that, or raw code.
 * 0 with *language and *code malloc'd, or -1 when it is not a code call. */
int llm_repair_call(const char *name, const char *args, char **language, char **code);
/* True for the names of languages a model may use as a tool name. */
bool llm_is_language(const char *name);

/* The tool's JSON-schema parameters (new object). */
json_object *llm_tool_schema(void);
extern const char llm_tool_description[];

/* LMC helpers */
const char *lmc_str(json_object *m, const char *key);   /* "" when absent */


#endif
