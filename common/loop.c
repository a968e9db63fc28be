/* See supervisor/loop.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "warden/loop.h"
#include "warden/log.h"
#include "warden/util.h"

#define OUT_HIGH (8u * 1024 * 1024)    /* stop reading what feeds the peer above this */
#define OUT_LOW (1u * 1024 * 1024)     /* and start again below this */
#define OUT_DEAD (64u * 1024 * 1024)   /* a peer this far behind is not reading */

int wloop_init(struct wloop *l, struct werr *err)
{
	memset(l, 0, sizeof(*l));
	l->ep = epoll_create1(EPOLL_CLOEXEC);
	if (l->ep < 0)
		return werr_set(err, errno, "epoll_create1");
	return 0;
}

struct wloop_grave {
	struct wloop_grave *next;
	void *p;
};

static void grave_empty(struct wloop *l)
{
	while (l->grave) {
		struct wloop_grave *g = l->grave;

		l->grave = g->next;
		free(g->p);
		free(g);
	}
}

void wloop_free_later(struct wloop *l, void *p)
{
	struct wloop_grave *g = xcalloc(1, sizeof(*g));

	g->p = p;
	g->next = l->grave;
	l->grave = g;
}

void wloop_free(struct wloop *l)
{
	grave_empty(l);
	closep(&l->ep);
}

int wloop_watch(struct wloop *l, struct wsrc *src, int fd, uint32_t events,
                void (*cb)(struct wloop *, struct wsrc *, uint32_t), void *ctx)
{
	struct epoll_event ev = { .events = events, .data.ptr = src };

	src->fd = fd;
	src->cb = cb;
	src->ctx = ctx;
	if (fd < 0)
		return -1;
	if (epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
		/* EPERM: a file, always ready; EBADF: a closed stdin.  Either is
		 * the caller's to handle (run.c reads such a stdin unpolled). */
		if (errno != EPERM && errno != EBADF)
			wlog_warn("epoll: %s", strerror(errno));
		return -1;
	}
	return 0;
}

void wloop_rearm(struct wloop *l, struct wsrc *src, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = src };

	if (src->fd >= 0)
		epoll_ctl(l->ep, EPOLL_CTL_MOD, src->fd, &ev);
}

void wloop_forget(struct wloop *l, struct wsrc *src)
{
	if (src->fd < 0)
		return;
	epoll_ctl(l->ep, EPOLL_CTL_DEL, src->fd, NULL);
	src->fd = -1;
}

void wloop_unwatch(struct wloop *l, struct wsrc *src)
{
	int fd = src->fd;

	wloop_forget(l, src);
	if (fd >= 0)
		close(fd);
}

int wloop_timer(struct wloop *l, struct wsrc *src, uint32_t events,
                void (*cb)(struct wloop *, struct wsrc *, uint32_t), void *ctx)
{
	return wloop_watch(l, src, timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK),
	                   events, cb, ctx);
}

void wloop_timer_set(struct wsrc *src, uint64_t first_ms, uint64_t every_ms)
{
	struct itimerspec its = {
		.it_value = { (time_t)(first_ms / 1000), (long)(first_ms % 1000) * 1000000 },
		.it_interval = { (time_t)(every_ms / 1000), (long)(every_ms % 1000) * 1000000 },
	};

	if (src->fd >= 0)
		(void)timerfd_settime(src->fd, 0, &its, NULL);
}

int wloop_wait(struct wloop *l, int timeout_ms)
{
	struct epoll_event evs[32];
	int n = epoll_wait(l->ep, evs, ARRAY_SIZE(evs), timeout_ms);

	if (n < 0)
		return errno == EINTR ? 0 : -1;
	for (int i = 0; i < n && !l->quitting; i++) {
		struct wsrc *src = evs[i].data.ptr;
		if (src->fd >= 0)
			src->cb(l, src, evs[i].events);
	}
	grave_empty(l);
	return n;
}

void wloop_quit(struct wloop *l, int status)
{
	if (!l->quitting)
		l->exit_status = status;
	l->quitting = true;
}

void wloop_peer(struct wloop *l, struct wconn *c, struct wsrc *src)
{
	l->peer = c;
	l->peer_src = src;
	l->peer_out_armed = false;
}

void wloop_send(struct wloop *l, int rc, struct werr *err)
{
	struct werr ferr = { 0 };

	if (rc < 0) {
		wlog_error("internal: %s", err->msg);
		wloop_quit(l, 125);
		return;
	}
	if (!l->peer || l->peer->fd < 0)
		return;
	if (wconn_flush(l->peer, &ferr) < 0) {
		wloop_quit(l, 125);
		return;
	}
	if (l->peer->out.len > OUT_DEAD) {
		wlog_error("the broker stopped reading (%zu bytes queued); ending it", l->peer->out.len);
		wloop_quit(l, 125);
		return;
	}
	if (l->peer->out.len && !l->peer_out_armed) {
		wloop_rearm(l, l->peer_src, EPOLLIN | EPOLLOUT);
		l->peer_out_armed = true;
	}
}

bool wloop_peer_writable(struct wloop *l)
{
	struct werr err = { 0 };

	if (wconn_flush(l->peer, &err) < 0) {
		wloop_quit(l, 125);
		return false;
	}
	if (!l->peer->out.len) {
		wloop_rearm(l, l->peer_src, EPOLLIN);
		l->peer_out_armed = false;
	}
	return l->peer->out.len < OUT_LOW;
}

bool wloop_peer_behind(const struct wloop *l)
{
	return l->peer && l->peer->out.len > OUT_HIGH;
}
