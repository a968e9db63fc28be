/* The reply being built and the streamed-event state the providers share
 * (llm_stream.c): below the providers, above http.c, sse.c, lmc.c and
 * extract.c.  Exposed in a header so that the tests and the fuzzer can
 * drive the providers' event handlers. */
#ifndef BROKER_LLM_STREAM_H
#define BROKER_LLM_STREAM_H

#include <json-c/json.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "llm_types.h"
#include "core/lmc.h"
#include "sse.h"
#include "warden/err.h"

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

/* A provider's streamed reply: the SSE handlers of the providers feed this. */
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

/* One SSE event's data as a JSON object (surrounding white space allowed),
 * or NULL with err naming the provider and showing the start of the data. */
json_object *llm_event_json(const struct llm_stream *s, const char *data, size_t len,
                            struct werr *err);
/* A string member of o (o may be NULL or not an object); NULL if absent. */
const char *llm_jstr(json_object *o, const char *key);

/* base without trailing '/' (malloc'd) */
char *llm_base_url(const char *base);

/* One streamed request of a provider. */
struct llm_post {
	const char *path;           /* appended to the API base: "/chat/completions" */
	const char *key_header;     /* "Authorization: Bearer ": the API key follows */
	const char *extra_header;   /* one more "Name: value", or NULL */
	sse_event_fn on_event;      /* ctx = the struct llm_stream */
	/* for the errors: what the server should be ("the Anthropic API") and the
	 * event that ends the stream ("message_stop") */
	const char *api, *end_event;
	bool finish_ends;           /* a finish reason ends the stream too */
};
/* POSTs body to cfg->api_base (else default_base) + p->path, feeds the reply's events to p->on_event, reports the retries
 * to s->turn.ev->retry, checks the stream ended and turns its tool calls
 * into code.  0, or -1 with a one-line err; s holds what streamed either way. */
int llm_stream_post(struct llm_stream *s, const struct llm_post *p, const char *default_base,
                    const struct llm_config *cfg, const char *body,
                    volatile sig_atomic_t *cancel, struct werr *err);

#endif
