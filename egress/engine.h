/* The allowlisting egress proxy's engine (egress/engine.c; docs/design.md
 * "Network: the egress proxy's engine").  One eproxy per jail: the jail's
 * child made a listening TCP socket on 127.0.0.1 inside its own network
 * namespace; the egress process accepts on it from outside, in its one
 * event loop (loop.h), and serves HTTP CONNECT and absolute-URI HTTP
 * requests: non-blocking, many connections at once, both directions
 * relayed with splice through bounded pipes, names resolved without
 * blocking the loop (resolve.h), each destination checked with
 * warden/netallow.h, refusals answered 403 with the policy line or --allow
 * that would allow it, and every connection (allowed or refused) handed to
 * the audit callback when it ends.  Used by warden-egress (main.c, link.c)
 * and by tests/helpers/proxyd.c.  Private to egress/. */
#ifndef WARDEN_EGRESS_ENGINE_H
#define WARDEN_EGRESS_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "warden/loop.h"
#include "resolve.h"
#include "warden/egress.h"
#include "warden/err.h"

struct eproxy;

struct eproxy_conf {
	const char *name, *source;   /* the policy's, for the 403's body */
	char *const *allow;          /* its allow entries (warden/netallow.h) */
	size_t n_allow;
	struct eres *res;            /* the process's resolver */
	/* 0: the defaults (tests set them small) */
	uint32_t head_timeout_ms;    /* a client must send its whole head within this (10 s) */
	uint32_t dial_timeout_ms;    /* resolve and connect within this, else 504 (30 s) */
	uint32_t relay_idle_ms;      /* a relayed connection with no byte either way for
	                                this long is closed (5 min) */
	uint32_t audit_max;          /* records per proxy, then only counted (4096) */
	/* each connection that sent a request line, or was turned away at the
	 * cap, when it ends (within audit_max); may be NULL */
	void (*audit)(void *ctx, const struct wegress_rec *r);
	void *ctx;
	void (*warn)(const char *msg);   /* one line for people; may be NULL */
};

/* Serve listen_fd (listening; the proxy owns it from now on) on loop l.
 * conf and what it points to must outlive the proxy. */
struct eproxy *eproxy_new(struct wloop *l, int listen_fd, const struct eproxy_conf *conf,
                          struct werr *err);
/* Close the listener and every connection (each audited as it ends); the
 * number of records audit_max left out. */
uint64_t eproxy_free(struct eproxy *p);

/* Once, before the first proxy (and before confinement: it sets a
 * limit): raise the soft open-files limit to the hard one and remember it.
 * All proxies of the process share it, less reserve fds for the rest of
 * the process and 2 per proxy (its listener and its timer): engine.c. */
void eproxy_fd_budget(size_t reserve);

#endif
