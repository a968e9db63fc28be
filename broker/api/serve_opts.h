/* warden-broker serve: its command line, read before the broker confines
 * itself (broker/main.c): what the listener and the model need from files
 * and the network's set-up comes first (serve_opts.c). */
#ifndef BROKER_API_SERVE_OPTS_H
#define BROKER_API_SERVE_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "chat/chat.h"
#include "core/broker.h"
#include "warden/err.h"

struct blisten;
struct serve_chat_cfg;

struct serve_opts {
	int sup_fd;
	bool listen, tls;
	unsigned session_idle_s;
	struct serve_chat_cfg *chat;   /* --model given: the "chat" op's model */
	struct blisten *ls;            /* --listen: the lws context, made here */
	bool help;
};

/* argv[0] is "serve".  Fills o and the TCP ports the confined broker may
 * connect to (the model's, as warden chat's; none without a model).  -1
 * with err: the exit status is 2 (a wrong command line) or 125. */
int serve_preload(int argc, char **argv, const struct bdirs *d, struct serve_opts *o,
                  uint16_t *ports, size_t *n_ports, struct werr *err);
/* After confinement: serve until the input or the supervisor ends. */
int serve_main(struct serve_opts *o);
void serve_opts_free(struct serve_opts *o);

/* the transports (api_stdio.c, listen.c) */
int serve_stdio_main(const struct serve_opts *o);

#endif
