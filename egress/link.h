/* The egress process's link to the supervisor (egress/link.c): the
 * SOCK_SEQPACKET socket on fd 3, frames of warden/egress.h.  The supervisor
 * is trusted here (it started this process), but what it sends is still
 * decoded strictly: a frame this process cannot use ends it.  Private to
 * egress/. */
#ifndef WARDEN_EGRESS_LINK_H
#define WARDEN_EGRESS_LINK_H

#include "warden/loop.h"
#include "resolve.h"
#include "warden/egress.h"
#include "warden/err.h"

/* The first frame, before anything else happens: CONFIG (blocking). */
int elink_config(struct wegress_conf *conf, struct werr *err);
/* A LOG frame for people (through the supervisor, which shows it on its
 * stderr); dropped when the socket is far behind.  Usable before
 * elink_serve (the resolver's warnings). */
void elink_warn(const char *msg);
/* Once confined: READY, then serve ADD and REMOVE on l until the supervisor
 * closes its end; then every proxy is closed (each connection audited),
 * REMOVED said for each, and the queue flushed.  The process's exit
 * status. */
int elink_serve(struct wloop *l, struct eres *res, const struct wegress_conf *conf);

#endif
