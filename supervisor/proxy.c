/* The supervisor's side of the egress proxy (proxy.h).
 *
 * States of the process:
 *
 *   OFF       none (before the first jail that needs it, after shutdown, or
 *             after a death with no jail left to serve)
 *   STARTING  forked; CONFIG and every live jail's ADD queued on the link;
 *             READY not read yet
 *   UP        READY read: it is confined and serving
 *   WAITING   it died; the restart timer runs (backoff)
 *
 * From a death to the next READY ("restarting") the supervisor answers on
 * the jails' listeners itself (fallback): accept, a fixed 502, shutdown,
 * a bounded non-blocking read that is thrown away, close.  It parses
 * nothing a client sends.  During the very first start there is no
 * fallback: connections wait in the listener's queue, as they would for a
 * slow proxy.
 *
 * Everything read from the link is hostile: wegress_decode checks every
 * field's form and bound; this file checks what a well-formed frame may
 * say (a jail it serves, an entry that jail has, READY once per start, no
 * fd ever).  Anything else ends the process with the reason audited. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "egress_start.h"
#include "proxy.h"
#include "sv.h"
#include "warden/broker_start.h"
#include "warden/log.h"
#include "warden/util.h"

#define BACKOFF_FIRST_MS 200
#define BACKOFF_MAX_MS 5000
#define STABLE_MS 10000          /* up this long: the next restart waits the first delay */
#define AUDIT_MAX 4096           /* "net" records per jail, then one net_dropped */
#define QUEUE_MAX 4096           /* frames the process has not read; beyond: it is not reading */
#define LOG_MAX 100              /* LOG lines shown per process; the rest dropped */
#define FRAMES_PER_WAKEUP 64     /* then the loop serves the others */
#define SHUTDOWN_MS 2000         /* its last records, at most this long */
#define EXIT_MS 1000             /* its socket closed: it must have exited within this */
#define DISCARD_MAX (64u * 1024) /* fallback: what is read and thrown away */
#define FALLBACK_BODY \
	"warden proxy: warden's egress proxy stopped and is being restarted; this request was " \
	"not sent anywhere. Try again in a moment.\n"

struct wproxy {
	struct wproxy *next;
	uint32_t id;
	int lfd;                 /* the supervisor's own copy of the jail's listener */
	struct wsrc fb;          /* lfd, watched while the process is down */
	bool removing;           /* REMOVE sent: freed at REMOVED */
	char *session, *name, *source;
	struct wstrv allow;
	struct waudit *audit;
	uint64_t audited, dropped;
};

struct oframe {                  /* a frame the process has not read yet */
	struct oframe *next;
	uint8_t *d;
	size_t len;
	int fd;                      /* sent with it (SCM_RIGHTS), owned; or -1 */
};

/* CLOSING: its socket is closed, its exit not seen yet (a process that was
 * killed closes its fds before its parent can reap it) */
enum est { E_OFF, E_STARTING, E_UP, E_CLOSING, E_WAITING };

static struct egress {
	struct wloop *l;
	struct waudit *audit;
	const char *user;
	struct sv_egress_exe exe;
	bool prepared, restarting, shutting;
	enum est st;
	pid_t pid;
	struct wsrc sock, pidfd, timer;
	uint64_t backoff_ms, up_ms, down_ms, refused;
	struct oframe *q, **qtail;
	size_t qn;
	struct wproxy *jails;
	uint32_t next_id;
	unsigned logs;
} g = { .user = WBROKER_USER, .exe.fd = -1, .sock.fd = -1, .pidfd.fd = -1, .timer.fd = -1 };

static void egress_down(const char *why);
static void egress_lost(void);
static int egress_start(struct werr *err);

void wproxy_user(const char *user)
{
	g.user = user;
}

json_object *wproxy_net_record(const struct wegress_rec *r, const char *session,
                               const char *rule)
{
	json_object *o = json_object_new_object();

	if (session)
		json_object_object_add(o, "session", json_object_new_string(session));
	json_object_object_add(o, "method", json_object_new_string(r->method));
	json_object_object_add(o, "host", json_object_new_string(r->host));
	json_object_object_add(o, "port", json_object_new_int(r->port));
	if (r->address[0])
		json_object_object_add(o, "address", json_object_new_string(r->address));
	json_object_object_add(o, "allowed", json_object_new_boolean(r->allowed));
	if (rule)
		json_object_object_add(o, "rule", json_object_new_string(rule));
	json_object_object_add(o, "status", json_object_new_int(r->status));
	if (r->reason[0])
		json_object_object_add(o, "reason", json_object_new_string(r->reason));
	json_object_object_add(o, "bytes_up", json_object_new_int64((int64_t)r->bytes_up));
	json_object_object_add(o, "bytes_down", json_object_new_int64((int64_t)r->bytes_down));
	json_object_object_add(o, "duration_ms", json_object_new_int64((int64_t)r->duration_ms));
	return o;
}

/* --- the jails ------------------------------------------------------------ */

static struct wproxy *jail_find(uint32_t id)
{
	for (struct wproxy *j = g.jails; j; j = j->next)
		if (j->id == id)
			return j;
	return NULL;
}

/* Out of the list and freed; its net_dropped written when records were
 * left out (by the process's cap, egress_dropped, or by ours). */
static void jail_free(struct wproxy *j, uint64_t egress_dropped)
{
	uint64_t dropped = j->dropped + egress_dropped;

	for (struct wproxy **pp = &g.jails; *pp; pp = &(*pp)->next)
		if (*pp == j) {
			*pp = j->next;
			break;
		}
	if (dropped && j->audit) {
		json_object *r = json_object_new_object();
		if (j->session)
			json_object_object_add(r, "session", json_object_new_string(j->session));
		json_object_object_add(r, "dropped", json_object_new_int64((int64_t)dropped));
		json_object_object_add(r, "limit", json_object_new_int64(AUDIT_MAX));
		waudit_emit(j->audit, "net_dropped", r);
	}
	if (j->fb.fd >= 0)
		wloop_forget(g.l, &j->fb);
	closep(&j->lfd);
	free(j->session);
	free(j->name);
	free(j->source);
	wstrv_free(&j->allow);
	wloop_free_later(g.l, j);   /* j->fb may be named by a later event of this batch */
}

/* The fallback: a fixed answer, nothing the client sent is parsed.  The
 * listener is the jail's, in its namespace; every call here is
 * non-blocking and bounded. */
static void on_fallback(struct wloop *l, struct wsrc *src, uint32_t ev)
{
	static char reply[512];
	static size_t reply_len;

	if (!reply_len)
		reply_len = (size_t)snprintf(reply, sizeof(reply),
		                             "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain; "
		                             "charset=utf-8\r\nContent-Length: %zu\r\nConnection: "
		                             "close\r\n\r\n%s", sizeof(FALLBACK_BODY) - 1,
		                             FALLBACK_BODY);
	for (int i = 0; i < 64; i++) {
		int fd = accept4(src->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		char sink[4096];
		size_t got = 0;
		ssize_t n;

		if (fd < 0)
			return;
		g.refused++;
		(void)!send(fd, reply, reply_len, MSG_NOSIGNAL | MSG_DONTWAIT);
		shutdown(fd, SHUT_WR);
		/* what the client sent is dropped unread, so that the close does
		 * not turn into a reset that could cost it the answer */
		while (got < DISCARD_MAX && (n = recv(fd, sink, sizeof(sink), MSG_DONTWAIT)) > 0)
			got += (size_t)n;
		close(fd);
	}
}

static void fallback(struct wproxy *j, bool on)
{
	if (on && j->fb.fd < 0 && j->lfd >= 0 && !j->removing)
		wloop_watch(g.l, &j->fb, j->lfd, EPOLLIN, on_fallback, j);
	else if (!on && j->fb.fd >= 0)
		wloop_forget(g.l, &j->fb);
}

/* --- the link: frames out ------------------------------------------------- */

static void sock_arm(void)
{
	if (g.sock.fd >= 0)
		wloop_rearm(g.l, &g.sock, EPOLLIN | (g.q ? EPOLLOUT : 0));
}

/* Send what the process will take now; the rest waits for EPOLLOUT. */
static void flush(void)
{
	while (g.q && g.sock.fd >= 0) {
		struct oframe *f = g.q;
		struct iovec iov = { .iov_base = f->d, .iov_len = f->len };
		union {
			char buf[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} u;
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

		if (f->fd >= 0) {
			struct cmsghdr *cm;

			mh.msg_control = u.buf;
			mh.msg_controllen = sizeof(u.buf);
			cm = CMSG_FIRSTHDR(&mh);
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			cm->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(cm), &f->fd, sizeof(int));
		}
		if (sendmsg(g.sock.fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
			if (errno != EAGAIN && errno != EINTR)
				egress_lost();
			break;
		}
		g.q = f->next;
		if (!g.q)
			g.qtail = &g.q;
		g.qn--;
		closep(&f->fd);
		free(f->d);
		free(f);
	}
	sock_arm();
}

static void queue(const struct wbuf *b, int fd)
{
	struct oframe *f = xcalloc(1, sizeof(*f));

	f->d = xmalloc(b->len);
	memcpy(f->d, b->d, b->len);
	f->len = b->len;
	f->fd = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : -1;
	if (!g.q)
		g.qtail = &g.q;
	*g.qtail = f;
	g.qtail = &f->next;
	if (++g.qn > QUEUE_MAX) {
		egress_down("killed: it stopped reading its socket");
		return;
	}
	flush();
}

static void queue_free(void)
{
	while (g.q) {
		struct oframe *f = g.q;
		g.q = f->next;
		closep(&f->fd);
		free(f->d);
		free(f);
	}
	g.qtail = &g.q;
	g.qn = 0;
}

static void send_add(struct wproxy *j)
{
	struct wbuf b;
	struct werr err = { 0 };

	wbuf_init(&b, WEGRESS_FRAME_MAX);
	/* checked to fit when the jail was added (wproxy_new) */
	if (wegress_add(&b, j->id, j->name, j->source, j->allow.v, j->allow.n, &err) == 0)
		queue(&b, j->lfd);
	wbuf_free(&b);
}

/* --- the link: frames in -------------------------------------------------- */

/* What a well-formed frame may say now: NULL, or why it may not. */
static const char *handle(const struct wegress_msg *m)
{
	struct wproxy *j;

	switch ((enum wegress_type)m->type) {
	case WE_READY: {
		json_object *r;

		if (g.st != E_STARTING)
			return "a second READY";
		if (m->version != WEGRESS_VERSION)
			return "READY of another version of the egress wire";
		g.st = E_UP;
		g.up_ms = sv_now_ms();
		r = json_object_new_object();
		json_object_object_add(r, "pid", json_object_new_int(g.pid));
		json_object_object_add(r, "restart", json_object_new_boolean(g.restarting));
		if (g.restarting) {
			json_object_object_add(r, "down_ms",
			                       json_object_new_int64((int64_t)(g.up_ms - g.down_ms)));
			json_object_object_add(r, "refused", json_object_new_int64((int64_t)g.refused));
			for (j = g.jails; j; j = j->next)
				fallback(j, false);
		}
		g.restarting = false;
		g.refused = 0;
		if (g.audit)
			waudit_emit(g.audit, "egress_start", r);
		else
			json_object_put(r);
		return NULL;
	}
	case WE_AUDIT:
		if (!(j = jail_find(m->jail)))
			return "an AUDIT for a jail it does not serve";
		if (m->rec.rule >= 0 && (size_t)m->rec.rule >= j->allow.n)
			return "an AUDIT naming an allow entry its jail does not have";
		if (!j->audit)
			return NULL;
		if (j->audited >= AUDIT_MAX) {
			j->dropped++;
			return NULL;
		}
		j->audited++;
		waudit_emit(j->audit, "net",
		            wproxy_net_record(&m->rec, j->session,
		                              m->rec.rule >= 0 ? j->allow.v[m->rec.rule] : NULL));
		return NULL;
	case WE_REMOVED:
		if (!(j = jail_find(m->jail)) || !j->removing)
			return "REMOVED for a jail it was not asked to remove";
		jail_free(j, m->dropped);
		return NULL;
	case WE_LOG:
		if (g.logs++ < LOG_MAX)
			wlog_warn("egress proxy: %s", m->text);
		return NULL;
	case WE_CONFIG:
	case WE_ADD:
	case WE_REMOVE:
		break;
	}
	return "a frame of the supervisor's";   /* wegress_decode refuses these */
}

/* Read what is there (at most FRAMES_PER_WAKEUP frames). */
static void read_frames(void)
{
	static uint8_t buf[WEGRESS_FRAME_MAX + 1];

	for (int i = 0; i < FRAMES_PER_WAKEUP && g.sock.fd >= 0; i++) {
		union {
			char b[CMSG_SPACE(8 * sizeof(int))];
			struct cmsghdr align;
		} u;
		struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
		                     .msg_controllen = sizeof(u.b) };
		struct wegress_msg m;
		struct werr err = { 0 };
		const char *why;
		char what[WERR_MSG_MAX + 32];
		ssize_t n = recvmsg(g.sock.fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		bool fds = false;

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			egress_lost();
			return;
		}
		/* it never sends an fd: any that came is closed, and it is ended */
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
				for (size_t k = 0; k < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); k++) {
					int fd;
					memcpy(&fd, CMSG_DATA(cm) + k * sizeof(int), sizeof(int));
					close(fd);
				}
			fds = true;
		}
		if (fds || (mh.msg_flags & MSG_CTRUNC)) {
			egress_down("killed: it sent a file descriptor");
			return;
		}
		if (mh.msg_flags & MSG_TRUNC) {
			egress_down("killed: it sent a frame over 64 KiB");
			return;
		}
		if (wegress_decode(buf, (size_t)n, true, &m, &err) < 0) {
			snprintf(what, sizeof(what), "killed: %s", err.msg);
			egress_down(what);
			return;
		}
		why = handle(&m);
		wegress_msg_free(&m);
		if (why) {
			snprintf(what, sizeof(what), "killed: it sent %s", why);
			egress_down(what);
			return;
		}
	}
}

static void on_sock(struct wloop *l, struct wsrc *src, uint32_t ev)
{
	if (ev & EPOLLOUT)
		flush();
	if (ev & (EPOLLIN | EPOLLHUP | EPOLLERR))
		read_frames();
}

static void on_pidfd(struct wloop *l, struct wsrc *src, uint32_t ev)
{
	/* what it still wrote first (its last records, or the frame that
	 * explains a death): then the death */
	read_frames();
	if (g.pidfd.fd >= 0)
		egress_down("it died");
}

/* --- starting, ending, restarting ----------------------------------------- */

static void timer_set(uint64_t ms)
{
	wloop_timer_set(&g.timer, ms, 0);
}

static void on_timer(struct wloop *l, struct wsrc *src, uint32_t ev)
{
	uint64_t exp;
	struct werr err = { 0 };

	(void)!read(src->fd, &exp, sizeof(exp));
	if (g.st == E_CLOSING) {
		egress_down("killed: it closed its socket and did not exit");
		return;
	}
	if (g.st != E_WAITING)
		return;
	if (egress_start(&err) < 0) {
		wlog_warn("restarting the egress proxy: %s; trying again in %llu ms", err.msg,
		          (unsigned long long)g.backoff_ms);
		g.backoff_ms = g.backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : g.backoff_ms * 2;
		timer_set(g.backoff_ms);
	}
}

static int egress_start(struct werr *err)
{
	struct wegress_conf conf = { .fd_reserve = 64 };
	int sp[2], pidfd;
	struct wbuf b;

	if (!g.prepared) {
		if (sv_egress_prepare(&g.exe, g.user, err) < 0)
			return -1;
		g.prepared = true;
	}
	if (g.timer.fd < 0 && wloop_timer(g.l, &g.timer, EPOLLIN, on_timer, NULL) < 0)
		return werr_set(err, errno, "the egress proxy's restart timer");
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return werr_set(err, errno, "the egress proxy's socketpair");
	g.pid = sv_egress_spawn(&g.exe, sp[1], err);
	close(sp[1]);
	if (g.pid < 0) {
		g.pid = 0;
		close(sp[0]);
		return -1;
	}
	pidfd = (int)syscall(SYS_pidfd_open, g.pid, 0);
	if (pidfd < 0) {
		werr_set(err, errno, "pidfd_open of the egress proxy");
		kill(g.pid, SIGKILL);
		waitpid(g.pid, NULL, 0);
		g.pid = 0;
		close(sp[0]);
		return -1;
	}
	wloop_watch(g.l, &g.sock, sp[0], EPOLLIN, on_sock, NULL);
	wloop_watch(g.l, &g.pidfd, pidfd, EPOLLIN, on_pidfd, NULL);
	g.st = E_STARTING;
	g.up_ms = 0;
	g.logs = 0;
	g.qtail = &g.q;
	wbuf_init(&b, WEGRESS_FRAME_MAX);
	if (wegress_config(&b, &conf, err) == 0)
		queue(&b, -1);
	wbuf_free(&b);
	for (struct wproxy *j = g.jails; j && g.st == E_STARTING; j = j->next)
		if (!j->removing)
			send_add(j);
	return 0;
}

/* Its socket is gone (it closed it, or died): the death itself is seen on
 * the pidfd (egress_down from on_pidfd), or, if it lives on without its
 * socket, it is killed after EXIT_MS. */
static void egress_lost(void)
{
	if (g.sock.fd >= 0)
		wloop_unwatch(g.l, &g.sock);
	queue_free();
	if (g.pidfd.fd < 0 || g.shutting) {
		egress_down("it closed its socket");
		return;
	}
	g.st = E_CLOSING;
	timer_set(EXIT_MS);
}

/* The process is gone, or is made to go (why starts with "killed: "):
 * reaped, audited, and, while jails need it and warden is not ending,
 * restarted after the backoff with the fallback answering meanwhile. */
static void egress_down(const char *why)
{
	siginfo_t si = { 0 };
	json_object *r = json_object_new_object();
	uint64_t now = sv_now_ms();
	bool live = false;
	pid_t pid = g.pid;

	if (g.pidfd.fd >= 0) {
		syscall(SYS_pidfd_send_signal, g.pidfd.fd, SIGKILL, NULL, 0);
		while (syscall(SYS_waitid, P_PIDFD, g.pidfd.fd, &si, WEXITED, NULL) < 0 &&
		       errno == EINTR)
			;
		wloop_unwatch(g.l, &g.pidfd);
	}
	if (g.sock.fd >= 0)
		wloop_unwatch(g.l, &g.sock);
	queue_free();
	g.pid = 0;
	if (g.shutting && strncmp(why, "killed: ", 8))
		why = "stopped: warden is ending";
	json_object_object_add(r, "pid", json_object_new_int(pid));
	json_object_object_add(r, "reason", json_object_new_string(why));
	json_object_object_add(r, "exit_code", si.si_code == CLD_EXITED
	                       ? json_object_new_int(si.si_status) : NULL);
	json_object_object_add(r, "signal", si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED
	                       ? json_object_new_int(si.si_status) : NULL);
	if (g.audit)
		waudit_emit(g.audit, "egress_end", r);
	else
		json_object_put(r);
	/* the jails it was removing need nothing more */
	for (struct wproxy *j = g.jails, *next; j; j = next) {
		next = j->next;
		if (j->removing)
			jail_free(j, 0);
		else
			live = true;
	}
	if (g.shutting || !live) {
		g.st = E_OFF;
		g.restarting = false;
		timer_set(0);
		return;
	}
	if (g.up_ms && now - g.up_ms >= STABLE_MS)
		g.backoff_ms = BACKOFF_FIRST_MS;
	else
		g.backoff_ms = !g.backoff_ms ? BACKOFF_FIRST_MS
		               : g.backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : g.backoff_ms * 2;
	if (!g.restarting)
		g.down_ms = now;
	g.restarting = true;
	g.st = E_WAITING;
	wlog_warn("the egress proxy (pid %d) ended (%s, %s %d); network requests of the jails get "
	          "502 until it is restarted, in %llu ms", (int)pid, why,
	          si.si_code == CLD_EXITED ? "exit status" : "signal", si.si_status,
	          (unsigned long long)g.backoff_ms);
	for (struct wproxy *j = g.jails; j; j = j->next)
		fallback(j, true);
	timer_set(g.backoff_ms);
}

struct wproxy *wproxy_new(struct wloop *l, int listen_fd, const struct wproxy_conf *conf,
                          struct werr *err)
{
	const struct wpolicy *pol = conf ? conf->pol : NULL;
	struct wproxy *j;
	struct wbuf b;

	if (listen_fd < 0 || !pol || (g.l && g.l != l)) {
		werr_set(err, EINVAL, "proxy: no listening socket, no policy, or another loop");
		if (listen_fd >= 0)
			close(listen_fd);
		return NULL;
	}
	/* the ADD must fit in one frame: say so now, not when it is sent */
	wbuf_init(&b, WEGRESS_FRAME_MAX);
	if (wegress_add(&b, 0, pol->name ? pol->name : "?", pol->source ? pol->source : "?",
	                pol->net_allow.v, pol->net_allow.n, err) < 0) {
		wbuf_free(&b);
		close(listen_fd);
		werr_set(err, 0, "the policy's name, source or allow list (%zu entries) is too long "
		         "for the egress proxy (one frame of %u bytes): shorten it",
		         pol->net_allow.n, WEGRESS_FRAME_MAX);
		return NULL;
	}
	wbuf_free(&b);
	g.l = l;
	if (!g.audit)
		g.audit = conf->audit;
	if (g.st == E_OFF && egress_start(err) < 0) {
		close(listen_fd);
		return NULL;
	}
	j = xcalloc(1, sizeof(*j));
	j->id = ++g.next_id;
	j->lfd = listen_fd;
	j->fb.fd = -1;
	j->session = conf->audit_session ? xstrdup(conf->audit_session) : NULL;
	j->name = xstrdup(pol->name ? pol->name : "?");
	j->source = xstrdup(pol->source ? pol->source : "?");
	for (size_t i = 0; i < pol->net_allow.n; i++)
		wstrv_push(&j->allow, pol->net_allow.v[i]);
	j->audit = conf->audit;
	j->next = g.jails;
	g.jails = j;
	if (g.st == E_STARTING || g.st == E_UP)
		send_add(j);
	fallback(j, g.restarting);   /* the process is down: answered here meanwhile */
	return j;
}

void wproxy_free(struct wproxy *j)
{
	struct wbuf b;
	struct werr err = { 0 };

	if (!j)
		return;
	fallback(j, false);
	closep(&j->lfd);   /* the process has its own copy */
	if ((g.st == E_STARTING || g.st == E_UP) && g.sock.fd >= 0) {
		j->removing = true;
		wbuf_init(&b, WEGRESS_FRAME_MAX);
		if (wegress_remove(&b, j->id, &err) == 0)
			queue(&b, -1);
		wbuf_free(&b);
		return;
	}
	jail_free(j, 0);
}

void wproxy_drain(void)
{
	/* bounded: a process that keeps writing cannot hold the caller */
	for (int i = 0; i < 16 && g.sock.fd >= 0; i++) {
		struct pollfd pf = { .fd = g.sock.fd, .events = POLLIN };

		if (poll(&pf, 1, 0) <= 0)
			break;
		read_frames();
	}
}

void wproxy_free_wait(struct wproxy *j)
{
	uint64_t deadline = sv_now_ms() + SHUTDOWN_MS;
	uint32_t id;

	if (!j)
		return;
	id = j->id;
	wproxy_free(j);
	/* REMOVE is queued: the process closes the jail's connections, sends
	 * their records, then REMOVED (jail_free).  Bounded: a process that
	 * does not answer in time is given up on here, as at shutdown */
	while (jail_find(id) && (g.st == E_STARTING || g.st == E_UP) && g.sock.fd >= 0) {
		uint64_t now = sv_now_ms();
		struct pollfd pf = { .fd = g.sock.fd, .events = POLLIN | (g.q ? POLLOUT : 0) };

		if (now >= deadline || poll(&pf, 1, (int)(deadline - now)) <= 0)
			break;
		if (pf.revents & POLLOUT)
			flush();
		if (pf.revents & (POLLIN | POLLHUP | POLLERR))
			read_frames();
	}
}

void wproxy_shutdown(void)
{
	uint64_t deadline = sv_now_ms() + SHUTDOWN_MS;

	if (!g.l)
		return;
	g.shutting = true;
	/* not READY yet (a short `warden run`): it has read no jail's
	 * connection, so it has nothing to say; it is not waited for */
	if (g.sock.fd >= 0)
		read_frames();
	if (g.st == E_STARTING)
		egress_down("stopped: warden is ending");
	/* what is queued goes first; then EOF: the process closes every
	 * connection (audited), says REMOVED for each jail, and exits */
	while (g.q && g.sock.fd >= 0 && sv_now_ms() < deadline) {
		struct pollfd pf = { .fd = g.sock.fd, .events = POLLOUT };
		if (poll(&pf, 1, (int)(deadline - sv_now_ms())) <= 0)
			break;
		flush();
	}
	if (g.sock.fd >= 0)
		shutdown(g.sock.fd, SHUT_WR);
	while (g.sock.fd >= 0) {
		uint64_t now = sv_now_ms();
		struct pollfd pf = { .fd = g.sock.fd, .events = POLLIN };

		if (now >= deadline || poll(&pf, 1, (int)(deadline - now)) <= 0)
			break;
		read_frames();
	}
	if (g.pid > 0 || g.sock.fd >= 0)
		egress_down("stopped: warden is ending");
	while (g.jails)
		jail_free(g.jails, 0);
	if (g.timer.fd >= 0)
		wloop_unwatch(g.l, &g.timer);
	sv_egress_exe_close(&g.exe);
	g = (struct egress){ .user = g.user, .exe.fd = -1, .sock.fd = -1, .pidfd.fd = -1,
	                     .timer.fd = -1 };
}
