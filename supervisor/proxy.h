/* The allowlisting egress proxy of network mode "proxy" (docs/design.md §7,
 * issue 10).  One wproxy per jail: the jail's child made a listening TCP
 * socket on 127.0.0.1 inside its own network namespace and handed it to the
 * supervisor; the supervisor accepts on it from outside, in its one event
 * loop (loop.h), and serves HTTP CONNECT and absolute-URI HTTP requests:
 * non-blocking, many connections at once, both directions relayed with
 * bounded buffers, names resolved without blocking the loop, each
 * destination checked with warden/netallow.h, refusals answered 403 with
 * the policy line or --allow that would allow it, and every connection
 * (allowed or refused) audited as event "net" when it ends.
 * Private to supervisor/. */
#ifndef WARDEN_SV_PROXY_H
#define WARDEN_SV_PROXY_H

#include <stdint.h>

#include "audit.h"
#include "loop.h"
#include "warden/err.h"
#include "warden/policy.h"

struct wproxy;

struct wproxy_conf {
	const struct wpolicy *pol;   /* net_allow, name and source (for the 403) */
	struct waudit *audit;        /* may be NULL (tests) */
	const char *audit_session;   /* the session's audit id, or NULL (warden run) */
	/* 0: the defaults (tests set them small) */
	uint32_t head_timeout_ms;    /* a client must send its whole head within this (10 s) */
	uint32_t dial_timeout_ms;    /* resolve and connect within this, else 504 (30 s) */
	uint32_t relay_idle_ms;      /* a relayed connection with no byte either way for
	                                this long is closed (5 min) */
	uint32_t audit_max;          /* "net" records per proxy, then one "net_dropped" (4096) */
};

/* Serve listen_fd (non-blocking, listening; the proxy owns it from now on)
 * on loop l.  conf and what it points to must outlive the proxy. */
struct wproxy *wproxy_new(struct wloop *l, int listen_fd, const struct wproxy_conf *conf,
                          struct werr *err);
/* Close the listener and every connection (each audited as it ends). */
void wproxy_free(struct wproxy *p);

/* The fds every proxy of this process leaves to the rest of it (64 unless
 * told): all proxies' connections together stay within the open-files
 * limit less this, each live proxy keeping room for a few (proxy.c). */
void wproxy_reserve_fds(size_t fds);

#endif
