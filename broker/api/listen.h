/* warden serve --listen, the broker's side (docs/serve.md "Listening"):
 * HTTP, WebSocket and TLS by libwebsockets on the socket the supervisor
 * made; the broker never binds one (SECURITY.md G210).
 *
 *   /ws    the serve protocol (serve.c), one JSON object per text frame;
 *          each connection is one client: its sessions are its own and
 *          end with it (G213)
 *
 * Every request and every WebSocket upgrade carries "Authorization:
 * Bearer TOKEN" (listen_auth.c), or gets 401 before anything else is read
 * or started (G211). */
#ifndef BROKER_API_LISTEN_H
#define BROKER_API_LISTEN_H

#include <stdbool.h>

#include "warden/err.h"

struct blisten;
struct serve_opts;

/* Before confinement: the token (fd WBROKER_TOKEN_FD), the TLS
 * certificate and key (fds 10, 11) with tls, and the lws context. */
int blisten_preload(bool tls, struct blisten **out, struct werr *err);
/* After: accept on fd WBROKER_LISTEN_FD and serve until the supervisor
 * goes; the broker's exit status. */
int blisten_main(struct blisten *l, const struct serve_opts *o);
void blisten_free(struct blisten *l);

#endif
