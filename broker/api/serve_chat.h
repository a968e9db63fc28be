/* The "chat" op of the serve protocol (docs/serve.md "Chat"): the whole
 * LLM loop of warden chat for a session, over the API.
 *
 * The model is fixed when the server starts (serve's --model, --api-base,
 * ...; the key from OPENAI_API_KEY / ANTHROPIC_API_KEY): a request can
 * neither name another model nor another endpoint, so it cannot send the
 * key anywhere, and no event carries it (SECURITY.md G215).  Each model
 * request runs in a thread of its own (libcurl blocks); everything else,
 * the session's blocks included, runs in the serve loop. */
#ifndef BROKER_API_SERVE_CHAT_H
#define BROKER_API_SERVE_CHAT_H

#include <stdbool.h>

#include "chat/chat.h"
#include "llm/llm.h"
#include "warden/err.h"

struct serve_chat_cfg {
	struct llm_config llm;
	bool auto_run;                /* -y: code runs without a confirmation */
	long max_output, context_window;
	char *system_base, *system_extra;
};

/* From serve's chat options (chat_load_opts): NULL with err when the
 * model cannot be used (no key for a hosted provider, a bad name). */
struct serve_chat_cfg *serve_chat_cfg_new(const struct chat_opts *o, struct werr *err);
void serve_chat_cfg_free(struct serve_chat_cfg *c);

#endif
