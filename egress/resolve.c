/* See egress/resolve.h.
 *
 * Resolver: c-ares (libc-ares-dev), not a helper process and not
 * getaddrinfo_a (threads).  Its socket-state callback hands each of its
 * sockets to the loop (a wsrc each), and a 250 ms tick runs its timeouts
 * while a lookup is pending, so a slow or dead DNS server delays only the
 * lookups waiting for it.  The channel is made once, before confinement:
 *   - no search domains (ARES_OPT_DOMAINS, 0 of them): the name looked up
 *     is the name checked, never that name with a domain of resolv.conf
 *     appended (c-ares 1.18's getaddrinfo ignores ARES_FLAG_NOSEARCH);
 *   - lookups "b" (DNS only): /etc/hosts is answered from the snapshot
 *     read at start (hosts.h), since c-ares 1.18 would open the file at
 *     every lookup, which the confined process cannot;
 *   - the environment's LOCALDOMAIN and RES_OPTIONS never reach it (the
 *     supervisor starts the process with an empty environment). */
#include <ares.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "hosts.h"
#include "resolve.h"
#include "warden/util.h"

#define TICK_MS 250

struct esock {                   /* one of c-ares' sockets */
	struct wsrc src;
	struct esock *next;
	struct eres *r;
};

struct equery {                  /* one lookup handed to c-ares */
	struct eres *r;
	eres_cb cb;
	void *arg;
};

struct eres {
	struct wloop *l;
	ares_channel ch;
	bool ch_ok;
	char why[200];               /* why there is no channel */
	struct ehosts hosts;
	struct esock *socks;
	struct wsrc tick;
	size_t pending;
};

static void tick_set(struct eres *r)
{
	wloop_timer_set(&r->tick, r->pending ? TICK_MS : 0, r->pending ? TICK_MS : 0);
}

static void on_tick(struct wloop *l, struct wsrc *src, uint32_t ev)
{
	struct eres *r = src->ctx;
	uint64_t exp;

	(void)!read(src->fd, &exp, sizeof(exp));
	if (r->ch_ok)
		ares_process_fd(r->ch, ARES_SOCKET_BAD, ARES_SOCKET_BAD);   /* its timeouts */
}

static void on_ares(struct wloop *l, struct wsrc *src, uint32_t ev)
{
	struct esock *s = src->ctx;
	int fd = src->fd;

	ares_process_fd(s->r->ch, ev & (EPOLLIN | EPOLLHUP | EPOLLERR) ? fd : ARES_SOCKET_BAD,
	                ev & EPOLLOUT ? fd : ARES_SOCKET_BAD);
}

static void sock_cb(void *data, ares_socket_t fd, int readable, int writable)
{
	struct eres *r = data;
	struct esock **pp, *s;
	uint32_t ev = (readable ? EPOLLIN : 0) | (writable ? EPOLLOUT : 0);

	for (pp = &r->socks; *pp && (*pp)->src.fd != fd; pp = &(*pp)->next)
		;
	s = *pp;
	if (!ev) {
		if (s) {
			*pp = s->next;
			wloop_forget(r->l, &s->src);   /* c-ares closes it */
			wloop_free_later(r->l, s);
		}
		return;
	}
	if (s) {
		wloop_rearm(r->l, &s->src, ev);
		return;
	}
	s = xcalloc(1, sizeof(*s));
	s->r = r;
	s->next = r->socks;
	r->socks = s;
	wloop_watch(r->l, &s->src, fd, ev, on_ares, s);
}

static void on_answer(void *arg, int status, int timeouts, struct ares_addrinfo *res)
{
	struct equery *q = arg;
	struct eres *r = q->r;
	struct sockaddr_storage out[ERES_ANSWER];
	size_t n = 0;

	r->pending--;
	tick_set(r);
	if (status != ARES_SUCCESS || !res) {
		q->cb(q->arg, status == ARES_EDESTRUCTION ? "resolver shut down"
		                                          : ares_strerror(status), NULL, 0);
		goto out;
	}
	for (struct ares_addrinfo_node *a = res->nodes; a && n < ERES_ANSWER; a = a->ai_next) {
		memset(&out[n], 0, sizeof(out[n]));
		if (a->ai_family == AF_INET && a->ai_addrlen >= sizeof(struct sockaddr_in))
			memcpy(&out[n], a->ai_addr, sizeof(struct sockaddr_in));
		else if (a->ai_family == AF_INET6 && a->ai_addrlen >= sizeof(struct sockaddr_in6))
			memcpy(&out[n], a->ai_addr, sizeof(struct sockaddr_in6));
		else
			continue;
		n++;
	}
	q->cb(q->arg, NULL, out, n);
out:
	if (res)
		ares_freeaddrinfo(res);
	free(q);
}

void eres_lookup(struct eres *r, const char *name, eres_cb cb, void *arg)
{
	struct sockaddr_storage out[ERES_ANSWER];
	struct ares_addrinfo_hints hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	size_t n = ehosts_find(&r->hosts, name, out, ERES_ANSWER);
	struct equery *q;

	if (n) {   /* /etc/hosts first, as its lookup order "files dns" says */
		cb(arg, NULL, out, n);
		return;
	}
	if (!r->ch_ok) {
		cb(arg, r->why, NULL, 0);
		return;
	}
	q = xcalloc(1, sizeof(*q));
	q->r = r;
	q->cb = cb;
	q->arg = arg;
	r->pending++;
	tick_set(r);
	ares_getaddrinfo(r->ch, name, NULL, &hints, on_answer, q);
}

struct eres *eres_new(struct wloop *l, void (*warn)(const char *msg), struct werr *err)
{
	struct eres *r = xcalloc(1, sizeof(*r));
	struct ares_options opts = { 0 };
	struct werr herr = { 0 };
	char lookups[] = "b";
	int rc;

	r->l = l;
	if (wloop_timer(l, &r->tick, EPOLLIN, on_tick, r) < 0) {
		werr_set(err, errno, "egress: the resolver's timerfd");
		free(r);
		return NULL;
	}
	if (ehosts_load(&r->hosts, "/etc/hosts", &herr) < 0 && warn) {
		char msg[600];
		snprintf(msg, sizeof(msg), "names in /etc/hosts will not resolve: %s", herr.msg);
		warn(msg);
	}
	opts.sock_state_cb = sock_cb;
	opts.sock_state_cb_data = r;
	opts.flags = ARES_FLAG_NOSEARCH;
	opts.domains = NULL;
	opts.ndomains = 0;
	opts.lookups = lookups;
	rc = ares_library_init(ARES_LIB_INIT_ALL);
	if (rc == ARES_SUCCESS)
		rc = ares_init_options(&r->ch, &opts, ARES_OPT_SOCK_STATE_CB | ARES_OPT_FLAGS |
		                                      ARES_OPT_DOMAINS | ARES_OPT_LOOKUPS);
	if (rc != ARES_SUCCESS) {
		snprintf(r->why, sizeof(r->why), "the resolver (c-ares) did not start: %s; check "
		         "/etc/resolv.conf", ares_strerror(rc));
		if (warn)
			warn(r->why);
	} else {
		r->ch_ok = true;
	}
	return r;
}

void eres_free(struct eres *r)
{
	if (!r)
		return;
	/* calls every pending lookup's callback (ARES_EDESTRUCTION), and the
	 * socket callback for each socket */
	if (r->ch_ok)
		ares_destroy(r->ch);
	while (r->socks) {
		struct esock *s = r->socks;
		r->socks = s->next;
		wloop_forget(r->l, &s->src);
		wloop_free_later(r->l, s);
	}
	ehosts_free(&r->hosts);
	wloop_unwatch(r->l, &r->tick);
	free(r);
}
