/* See egress/link.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "engine.h"
#include "link.h"
#include "warden/util.h"

#define QUEUE_BYTES_MAX (1u << 20)   /* past this, AUDIT and LOG frames are dropped
                                        (counted: REMOVED says how many) */

struct ejail {
	struct ejail *next;
	uint32_t id;
	struct eproxy *p;
	struct eproxy_conf conf;
	struct wegress_msg add;          /* owns the name, source and entries conf names */
	uint64_t lost;                   /* records the queue had no room for */
};

struct qframe {
	struct qframe *next;
	size_t len;
	uint8_t d[];
};

static struct {
	struct wloop *l;
	struct wsrc sock;                /* fd WEGRESS_FD once served */
	struct eres *res;
	struct wegress_conf conf;
	struct ejail *jails;
	struct qframe *q, **qtail;
	size_t qbytes;
	bool eof;
} k = { .sock.fd = -1 };

/* The supervisor is gone: nothing here has a reader any more. */
static void gone(void)
{
	_exit(0);
}

/* A frame this process cannot use: said, then the end.  The supervisor
 * restarts it. */
static void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fatal(const char *fmt, ...)
{
	char msg[WEGRESS_LOG_MAX];
	struct wbuf b;
	struct werr err = { 0 };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	wbuf_init(&b, WEGRESS_FRAME_MAX);
	if (wegress_log(&b, msg, &err) == 0)
		(void)!send(WEGRESS_FD, b.d, b.len, MSG_NOSIGNAL);
	_exit(1);
}

static void flush(void)
{
	while (k.q) {
		struct qframe *f = k.q;

		if (send(WEGRESS_FD, f->d, f->len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			gone();
		}
		k.q = f->next;
		if (!k.q)
			k.qtail = &k.q;
		k.qbytes -= f->len;
		free(f);
	}
	if (k.sock.fd >= 0)
		wloop_rearm(k.l, &k.sock, (k.eof ? 0 : EPOLLIN) | (k.q ? EPOLLOUT : 0));
	if (k.eof && !k.q)
		wloop_quit(k.l, 0);
}

/* false: no room (only for frames that may be dropped) */
static bool queue(const struct wbuf *b, bool droppable)
{
	struct qframe *f;

	if (droppable && k.qbytes + b->len > QUEUE_BYTES_MAX)
		return false;
	f = xmalloc(sizeof(*f) + b->len);
	f->next = NULL;
	f->len = b->len;
	memcpy(f->d, b->d, b->len);
	if (!k.q)
		k.qtail = &k.q;
	*k.qtail = f;
	k.qtail = &f->next;
	k.qbytes += b->len;
	flush();
	return true;
}

void elink_warn(const char *msg)
{
	struct wbuf b;
	struct werr err = { 0 };
	char line[WEGRESS_LOG_MAX + 1];

	snprintf(line, sizeof(line), "%s", msg);
	for (char *p = line; *p; p++)
		if (*p < 0x20 || *p > 0x7e)
			*p = '?';
	wbuf_init(&b, WEGRESS_FRAME_MAX);
	if (wegress_log(&b, line, &err) == 0)
		queue(&b, true);
	wbuf_free(&b);
}

static void on_audit(void *ctx, const struct wegress_rec *r)
{
	struct ejail *j = ctx;
	struct wbuf b;
	struct werr err = { 0 };

	wbuf_init(&b, WEGRESS_FRAME_MAX);
	if (wegress_audit(&b, j->id, r, &err) < 0 || !queue(&b, true))
		j->lost++;
	wbuf_free(&b);
}

static void removed(struct ejail *j)
{
	struct wbuf b;
	struct werr err = { 0 };
	uint64_t dropped = eproxy_free(j->p) + j->lost;

	for (struct ejail **pp = &k.jails; *pp; pp = &(*pp)->next)
		if (*pp == j) {
			*pp = j->next;
			break;
		}
	wbuf_init(&b, WEGRESS_FRAME_MAX);
	if (wegress_removed(&b, j->id, dropped, &err) == 0)
		queue(&b, false);
	wbuf_free(&b);
	wegress_msg_free(&j->add);
	free(j);
}

static struct ejail *find(uint32_t id)
{
	for (struct ejail *j = k.jails; j; j = j->next)
		if (j->id == id)
			return j;
	return NULL;
}

/* ADD: a listening socket came with it, and the jail is new. */
static void add(struct wegress_msg *m, int fd)
{
	struct ejail *j;
	struct werr err = { 0 };
	int listening = 0;
	socklen_t len = sizeof(listening);

	if (fd < 0)
		fatal("egress: an ADD without a listener");
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) < 0 || !listening)
		fatal("egress: the listener of an ADD is not a listening socket");
	if (find(m->jail))
		fatal("egress: a second ADD of jail %u", m->jail);
	j = xcalloc(1, sizeof(*j));
	j->id = m->jail;
	j->add = *m;
	memset(m, 0, sizeof(*m));   /* j->add owns its strings now */
	j->conf = (struct eproxy_conf){
		.name = j->add.name, .source = j->add.source,
		.allow = j->add.allow, .n_allow = j->add.n_allow,
		.res = k.res, .head_timeout_ms = k.conf.head_ms, .dial_timeout_ms = k.conf.dial_ms,
		.relay_idle_ms = k.conf.idle_ms, .audit_max = k.conf.audit_max,
		.audit = on_audit, .ctx = j, .warn = elink_warn,
	};
	j->p = eproxy_new(k.l, fd, &j->conf, &err);
	if (!j->p)
		fatal("egress: %s", err.msg);
	j->next = k.jails;
	k.jails = j;
}

/* The supervisor closed its end: every proxy ends, each said REMOVED;
 * the loop ends once the queue is out. */
static void at_eof(void)
{
	k.eof = true;
	while (k.jails)
		removed(k.jails);
	flush();
}

static void on_sock(struct wloop *l, struct wsrc *src, uint32_t ev)
{
	static uint8_t buf[WEGRESS_FRAME_MAX + 1];

	if (ev & EPOLLOUT)
		flush();
	if (k.eof || !(ev & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		return;
	for (int i = 0; i < 64 && !k.eof; i++) {
		union {
			char b[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} u;
		struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
		                     .msg_controllen = sizeof(u.b) };
		struct cmsghdr *cm;
		struct wegress_msg m;
		struct werr err = { 0 };
		ssize_t n = recvmsg(WEGRESS_FD, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		int fd = -1;

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			at_eof();
			return;
		}
		cm = CMSG_FIRSTHDR(&mh);
		if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
		    cm->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(&fd, CMSG_DATA(cm), sizeof(int));
		if ((mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
		    wegress_decode(buf, (size_t)n, false, &m, &err) < 0)
			fatal("egress: %s", err.msg[0] ? err.msg : "a truncated frame");
		if (m.type == WE_ADD) {
			add(&m, fd);
		} else if (fd >= 0) {
			fatal("egress: a %s frame with a file descriptor", wegress_type_name(m.type));
		} else if (m.type == WE_REMOVE) {
			struct ejail *j = find(m.jail);
			if (!j)
				fatal("egress: REMOVE of jail %u, which is not served", m.jail);
			removed(j);
		} else {
			fatal("egress: a second CONFIG");
		}
		wegress_msg_free(&m);
	}
}

int elink_config(struct wegress_conf *conf, struct werr *err)
{
	uint8_t buf[WEGRESS_FRAME_MAX + 1];
	struct wegress_msg m;
	ssize_t n;

	do
		n = recv(WEGRESS_FD, buf, sizeof(buf), 0);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return werr_set(err, n < 0 ? errno : 0, "egress: reading CONFIG from the supervisor");
	if (wegress_decode(buf, (size_t)n, false, &m, err) < 0)
		return -1;
	if (m.type != WE_CONFIG || m.version != WEGRESS_VERSION) {
		wegress_msg_free(&m);
		return werr_set(err, 0, "egress: the first frame is not CONFIG of version %d",
		                WEGRESS_VERSION);
	}
	*conf = m.conf;
	wegress_msg_free(&m);
	return 0;
}

int elink_serve(struct wloop *l, struct eres *res, const struct wegress_conf *conf)
{
	struct wbuf b;
	struct werr err = { 0 };

	k.l = l;
	k.res = res;
	k.conf = *conf;
	if (wloop_watch(l, &k.sock, WEGRESS_FD, EPOLLIN, on_sock, NULL) < 0)
		fatal("egress: watching the supervisor's socket");
	wbuf_init(&b, WEGRESS_FRAME_MAX);
	if (wegress_ready(&b, &err) == 0)
		queue(&b, false);
	wbuf_free(&b);
	while (!l->quitting)
		if (wloop_wait(l, -1) < 0 && errno != EINTR)
			fatal("egress: epoll_wait: %s", strerror(errno));
	return l->exit_status;
}
