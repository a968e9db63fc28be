/* The event loop (common/loop.c): the supervisor's one loop, used by
 * `warden run` (run.c) and by the session server (server.c, session.c,
 * dispatch.c), and the egress proxy's (egress/), which is why it lives in
 * common/ (it calls nothing but common/).  Everything here calls down into
 * it, never up.
 *
 *   sources   an fd and a callback (wsrc): watch, rearm, unwatch
 *   timers    a timerfd as a source, armed in milliseconds
 *   the peer  at most one connection (the broker) that frames are sent to,
 *             with backpressure: above OUT_HIGH queued bytes the sources
 *             that feed it pause (wloop_peer_behind), below OUT_LOW they
 *             resume, and a peer OUT_DEAD behind ends the loop. */
#ifndef WARDEN_SV_LOOP_H
#define WARDEN_SV_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "warden/err.h"
#include "warden/proto.h"

struct wloop;

/* One epoll registration; data.ptr of every event is one of these.  fd -1:
 * not watched (a callback is never called for it). */
struct wsrc {
	int fd;
	void (*cb)(struct wloop *l, struct wsrc *src, uint32_t events);
	void *ctx;
};

struct wloop {
	int ep;
	bool quitting;
	int exit_status;            /* the first wloop_quit's */
	struct wconn *peer;         /* frames go here (wloop_send), or NULL */
	struct wsrc *peer_src;      /* its registration (EPOLLOUT armed while behind) */
	bool peer_out_armed;
	struct wloop_grave *grave;  /* wloop_free_later's, freed after the batch */
};

int wloop_init(struct wloop *l, struct werr *err);
void wloop_free(struct wloop *l);   /* closes the epoll fd, not the sources */

/* Watch fd (the source owns it from now on).  -1 when epoll refuses it (a
 * regular file, /dev/null): src->fd is still set, and no event comes. */
int wloop_watch(struct wloop *l, struct wsrc *src, int fd, uint32_t events,
                void (*cb)(struct wloop *, struct wsrc *, uint32_t), void *ctx);
void wloop_rearm(struct wloop *l, struct wsrc *src, uint32_t events);
void wloop_unwatch(struct wloop *l, struct wsrc *src);   /* and close the fd */
void wloop_forget(struct wloop *l, struct wsrc *src);    /* the fd stays open */

/* A non-blocking timerfd as a source, disarmed; events as wloop_watch. */
int wloop_timer(struct wloop *l, struct wsrc *src, uint32_t events,
                void (*cb)(struct wloop *, struct wsrc *, uint32_t), void *ctx);
/* First expiry after first_ms, then every every_ms (0: once); 0, 0 disarms. */
void wloop_timer_set(struct wsrc *src, uint64_t first_ms, uint64_t every_ms);

/* Wait for one batch of events and run their callbacks (none after
 * wloop_quit).  The number of events (0: the timeout passed, or a
 * signal), -1 when epoll itself fails. */
int wloop_wait(struct wloop *l, int timeout_ms);
void wloop_quit(struct wloop *l, int status);
/* free(p) after the current batch of events (or at wloop_free): a later
 * event of the same batch may still name a source inside p, whose fd the
 * caller has set to -1 (wloop_unwatch/wloop_forget). */
void wloop_free_later(struct wloop *l, void *p);

/* The peer: its connection and registration (watched by the caller with
 * EPOLLIN; wloop_send arms EPOLLOUT while frames wait). */
void wloop_peer(struct wloop *l, struct wconn *c, struct wsrc *src);
/* After a frame was queued on the peer's out buffer by a wproto_*() call
 * that returned rc: flush what the socket takes now.  A frame that could
 * not be built, a peer that is gone or OUT_DEAD behind ends the loop (125). */
void wloop_send(struct wloop *l, int rc, struct werr *err);
/* On the peer's EPOLLOUT: flush; true when it is below OUT_LOW again (the
 * paused sources may resume).  An error ends the loop (125). */
bool wloop_peer_writable(struct wloop *l);
/* More than OUT_HIGH queued: stop reading what feeds the peer. */
bool wloop_peer_behind(const struct wloop *l);

#endif
