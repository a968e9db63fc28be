/* The providers (llm_openai.c, llm_anthropic.c, llm_replay.c): one table
 * row each, which llm.c looks models up in.  Providers build on
 * llm_stream.h, lmc.h and extract.h, never on llm.c. */
#ifndef BROKER_LLM_PROVIDER_H
#define BROKER_LLM_PROVIDER_H

#include <json-c/json.h>
#include <signal.h>

#include "llm_stream.h"
#include "llm_types.h"
#include "warden/err.h"

struct llm_provider {
	const char *name;           /* cfg->provider: "openai" */
	const char *prefix;         /* how a model spec names it: "openai/", "replay:" */
	const char *needs;          /* what must follow the prefix, for the error */
	const char *default_base;   /* the API when --api-base is not given; NULL: none */
	long default_port;          /* its TCP port (broker_confine); 0: no network */
	/* At parse time, before the broker confines itself (may be NULL). */
	int (*preload)(const char *model, struct werr *err);
	/* An HTTP API: the request body (malloc'd) and how it is posted and its
	 * stream read (llm_stream_post) ... */
	char *(*request_body)(const struct llm_config *cfg, const char *system,
	                      json_object *history);
	struct llm_post post;
	/* ... or anything else: one assistant turn into s->turn. */
	int (*complete)(const struct llm_config *cfg, json_object *history, struct llm_stream *s,
	                volatile sig_atomic_t *cancel, struct werr *err);
};

extern const struct llm_provider llm_provider_openai, llm_provider_ollama,
	llm_provider_anthropic, llm_provider_replay;

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

/* Reads and checks a recording now (before the broker confines itself);
 * the replay provider uses this copy. */
int replay_preload(const char *path, struct werr *err);

#endif
