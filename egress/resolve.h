/* The egress proxy's resolver (egress/resolve.c): one c-ares channel for the
 * whole process, its sockets on the process's one loop, and the /etc/hosts
 * snapshot (hosts.h) before it.  Made before the process confines itself:
 * c-ares reads /etc/resolv.conf (and /dev/urandom, for its query ids) when
 * the channel is made and never again; once confined, the process opens no
 * file.  Private to egress/. */
#ifndef WARDEN_EGRESS_RESOLVE_H
#define WARDEN_EGRESS_RESOLVE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "warden/loop.h"
#include "warden/err.h"

#define ERES_ANSWER 32   /* addresses of an answer handed on */

struct eres;

/* The answer for a name: msg NULL and n addresses (port 0; n may be 0), or
 * msg saying why there is none ("Domain name not found", ...).  Called
 * once per eres_lookup, from it when /etc/hosts has the name, else from the
 * loop; with msg "resolver shut down" when eres_free ends a pending one. */
typedef void (*eres_cb)(void *arg, const char *msg, const struct sockaddr_storage *addrs,
                        size_t n);

/* -1 and err only when the loop refuses its timer; a channel c-ares cannot
 * make (no usable resolv.conf) is said by warn and every lookup then fails
 * with that message. */
struct eres *eres_new(struct wloop *l, void (*warn)(const char *msg), struct werr *err);
void eres_lookup(struct eres *r, const char *name, eres_cb cb, void *arg);
void eres_free(struct eres *r);

#endif
