/* The allowlisting egress proxy's engine (engine.h, docs/design.md
 * "Network: the egress proxy's engine").
 *
 * Every byte that arrives here comes from the jail.  A connection goes
 *
 *   HEAD     reading the request head into a fixed 16 KiB buffer (level-
 *            triggered EPOLLIN; parsed by head.c); past the bound: 431; not
 *            finished within head_timeout_ms: 408
 *   RESOLVE  the name matched an entry: the resolver (resolve.h) looks it
 *            up, its sockets in this same loop (a slow one stalls nothing)
 *   CONNECT  a non-blocking connect to the first address wnet_allow_addr
 *            allows, then the next; within dial_ms() (DIAL_MS), else 504
 *   RELAY    both directions spliced through a pipe each (relay.c); no
 *            byte either way for the idle limit (IDLE_MS): closed
 *   REPLY    the proxy's own answer (403, 502, ...; relay.c) written, then
 *   DRAIN    what the client still sends is read and dropped (bounded), so
 *            the answer is not lost to a reset, then closed.
 *
 * Each connection is audited once (conf.audit) when it ends, or as the
 * proxy answers it itself (econn_reply, before the answer is written); at most
 * AUDIT_MAX records per proxy, then only counted (eproxy_free's result).
 * One request per connection: the proxy sends "Connection: close" upstream
 * and relays bytes as they come after the head, so a second request on the
 * same connection can only reach the same (allowed) destination. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "conn.h"
#include "head.h"
#include "hostaddr.h"
#include "warden/netallow.h"
#include "warden/util.h"

#define MAX_CONNS 256            /* per proxy; beyond: 503 */
#define HEAD_MAX EHEAD_MAX       /* request head bound; beyond: 431 */
#define DIAL_MS 30000            /* resolve and connect within this */
#define DRAIN_MS 2000            /* after an answer, read and drop at most this long */
#define DRAIN_MAX (256u * 1024)  /* and at most this much */
#define TICK_MS 250              /* deadlines */
#define PROXY_FDS 2              /* what a proxy holds: its listener, its timer */
#define GUARANTEED 4             /* connections each live proxy can always open,
                                    however much the others hold */
#define BUSY_REASON "too many connections at once (at most 256, and the egress " \
                    "process's open-files budget)"

/* The fds every proxy of this process holds together are bounded: a jail
 * that floods its proxy must never take the fds the process needs for the
 * other jails' proxies or for its link to the supervisor.  The budget is
 * the open-files limit less g_reserve and PROXY_FDS per live proxy; each
 * connection is charged CONN_FDS from its accept to its end, and a
 * connection is admitted only if, after it, GUARANTEED connections of
 * every other live proxy would still fit. */
static struct eproxy *g_proxies;
static size_t g_nproxies;
static size_t g_reserve = 64;    /* fds kept for the rest of the process */
static size_t g_limit = 1024;    /* RLIMIT_NOFILE's soft limit */

void eproxy_fd_budget(size_t reserve)
{
	struct rlimit rl;

	g_reserve = reserve;
	/* A relayed connection holds 6 fds (2 sockets, 2 pipes): 256 of them
	 * need more than the usual soft limit of 1024.  Use what we are given
	 * (the soft limit up to the hard one, as the session server does). */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		g_limit = rl.rlim_cur == RLIM_INFINITY ? (size_t)-1 / 2 : (size_t)rl.rlim_cur;
}

static bool admit(const struct eproxy *p)
{
	size_t need = CONN_FDS, keep = g_reserve + g_nproxies * PROXY_FDS;
	size_t budget = g_limit > keep ? g_limit - keep : 0;

	if (p->nconns >= MAX_CONNS)
		return false;
	for (const struct eproxy *q = g_proxies; q; q = q->gnext)
		if (q != p && q->nconns < GUARANTEED)
			need += (GUARANTEED - q->nconns) * CONN_FDS;
	return econn_fds_held() + need <= budget;
}

static uint32_t dial_ms(const struct eproxy *p)
{
	return p->conf.dial_timeout_ms ? p->conf.dial_timeout_ms : DIAL_MS;
}

static void warn(const struct eproxy *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void warn(const struct eproxy *p, const char *fmt, ...)
{
	char msg[WEGRESS_LOG_MAX];
	va_list ap;

	if (!p->conf.warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p->conf.warn(msg);
}

static void on_cli(struct wloop *l, struct wsrc *src, uint32_t ev);
static void on_up(struct wloop *l, struct wsrc *src, uint32_t ev);

/* --- connecting ------------------------------------------------------------------ */

/* The address of ss (AF_INET or AF_INET6) as text */
static void addr_text(const struct sockaddr_storage *ss, char *out, size_t len)
{
	const void *in = ss->ss_family == AF_INET6
	                     ? (const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr
	                     : (const void *)&((const struct sockaddr_in *)ss)->sin_addr;

	inet_ntop(ss->ss_family, in, out, (socklen_t)len);
}

static void connect_next(struct pconn *c)
{
	int saved = 0;

	while (c->iaddr < c->naddr) {
		struct sockaddr_storage *ss = &c->addrs[c->iaddr++];
		socklen_t len = ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
		                                          : sizeof(struct sockaddr_in);
		int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

		addr_text(ss, c->addr, sizeof(c->addr));
		if (fd < 0) {
			saved = errno;
			continue;
		}
		if (connect(fd, (struct sockaddr *)ss, len) < 0 && errno != EINPROGRESS) {
			saved = errno;
			close(fd);
			continue;
		}
		c->st = P_CONNECT;
		wloop_watch(c->p->l, &c->up, fd, EPOLLOUT, on_up, c);
		return;
	}
	econn_reply_reason(c, 502, "Bad Gateway", "connecting to %s (%s) port %u: %s", c->host,
	             c->addr, c->port, strerror(saved ? saved : ECONNREFUSED));
}

static void on_connected(struct pconn *c)
{
	int e = 0;
	socklen_t el = sizeof(e);

	if (getsockopt(c->up.fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0)
		e = errno;
	if (e) {
		wloop_unwatch(c->p->l, &c->up);
		if (c->iaddr < c->naddr) {
			connect_next(c);
			return;
		}
		econn_reply_reason(c, 502, "Bad Gateway", "connecting to %s (%s) port %u: %s", c->host,
		             c->addr, c->port, strerror(e));
		return;
	}
	if (econn_start_relay(c) < 0)
		econn_reply_reason(c, 503, "Service Unavailable", "no pipe for the relay: %s",
		             strerror(errno));
}

static void set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)ss)->sin_port = htons(port);
}

/* The resolver's answer (resolve.h): every address checked again. */
static void on_resolved(void *arg, const char *msg, const struct sockaddr_storage *ans, size_t n)
{
	struct pconn *c = arg;
	struct sockaddr_storage cand[ERES_ANSWER];
	bool own[ERES_ANSWER];
	struct werr err = { 0 };
	char refused[INET6_ADDRSTRLEN] = "";
	bool refused_own = false;

	c->resolving = false;
	if (c->dead) {
		/* closed while the lookup ran (its sources are closed; a later
		 * event of this batch may still name them): it leaves its
		 * proxy's count now; that proxy may be gone (c->p NULL) */
		econn_unlink(c);
		return;
	}
	if (c->st != P_RESOLVE)     /* answered already (timed out) */
		return;
	if (msg) {
		econn_reply_reason(c, 502, "Bad Gateway", "resolving %s: %s", c->host, msg);
		return;
	}
	if (n > ERES_ANSWER)
		n = ERES_ANSWER;
	if (!n) {
		econn_reply_reason(c, 502, "Bad Gateway", "resolving %s: no address", c->host);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		cand[i] = ans[i];
		set_port(&cand[i], c->port);
	}
	/* the host's own addresses as they are now: a name that leads to one
	 * would reach every service of the host listening on 0.0.0.0 or :: */
	if (ehost_own(cand, n, own, &err) < 0) {
		econn_reply_reason(c, 502, "Bad Gateway", "resolving %s: %s", c->host, err.msg);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (wnet_allow_addr(c->p->conf.allow, c->p->conf.n_allow, c->host,
		                    (struct sockaddr *)&cand[i], own[i])) {
			if (c->naddr < N_ADDRS)
				c->addrs[c->naddr++] = cand[i];
		} else if (!refused[0]) {
			addr_text(&cand[i], refused, sizeof(refused));
			/* 127.0.0.1 is lo's: said as the special address it is */
			refused_own = own[i] && !wnet_addr_special((struct sockaddr *)&cand[i]);
		}
	}
	if (!c->naddr) {
		snprintf(c->addr, sizeof(c->addr), "%s", refused);
		c->allowed = false;
		if (refused[0])
			econn_refuse_special(c, refused, refused_own);
		else
			econn_reply_reason(c, 502, "Bad Gateway", "resolving %s: no address", c->host);
		return;
	}
	connect_next(c);
}

/* --- the request head ------------------------------------------------------------- */

static void got_head(struct pconn *c, size_t end)
{
	struct eproxy *p = c->p;
	const char *why = NULL;
	size_t rest = c->head_len - end;
	struct ehead h;
	unsigned char lit[16];
	int fam, rc = ehead_parse(c->head, end, &h, &why);

	c->request = h.request;
	snprintf(c->method, sizeof(c->method), "%s", h.method);
	snprintf(c->host, sizeof(c->host), "%s", h.host);
	c->port = h.port;
	if (rc < 0) {
		econn_reply_reason(c, 400, "Bad Request", "bad request: %s", why);
		return;
	}
	c->c2u.pre = h.up;         /* NULL for CONNECT */
	c->c2u.pre_len = h.up_len;
	/* bytes after the head (a TLS hello sent early, a request body) go
	 * upstream after the (rewritten) head */
	if (rest) {
		size_t have = c->c2u.pre_len;
		c->c2u.pre = realloc(c->c2u.pre, have + rest);
		if (!c->c2u.pre)
			abort();
		memcpy(c->c2u.pre + have, c->head + end, rest);
		c->c2u.pre_len = have + rest;
	}
	if (h.connect) {
		static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
		c->u2c.pre = xstrdup(ok);
		c->u2c.pre_len = sizeof(ok) - 1;
		c->u2c.pre_own = true;
	}
	wloop_rearm(p->l, &c->cli, 0);   /* nothing more is read until the relay */
	c->rule = wnet_allow_name(p->conf.allow, p->conf.n_allow, c->host, c->port);
	if (c->rule < 0) {
		econn_refuse_policy(c);
		return;
	}
	c->allowed = true;
	c->deadline_ms = econn_now_ms() + dial_ms(p);
	fam = strchr(c->host, ':') ? AF_INET6 : AF_INET;
	if (inet_pton(fam, c->host, lit) == 1) {
		struct sockaddr_storage ss = { .ss_family = (sa_family_t)fam };

		if (fam == AF_INET6)
			memcpy(&((struct sockaddr_in6 *)&ss)->sin6_addr, lit, 16);
		else
			memcpy(&((struct sockaddr_in *)&ss)->sin_addr, lit, 4);
		set_port(&ss, c->port);
		/* a literal: only a literal entry allows it, the host's own
		 * addresses included (no name entry matches a literal) */
		if (!wnet_allow_addr(p->conf.allow, p->conf.n_allow, c->host, (struct sockaddr *)&ss,
		                     false)) {
			c->allowed = false;
			c->rule = -1;
			econn_refuse_policy(c);
			return;
		}
		c->addrs[0] = ss;
		c->naddr = 1;
		connect_next(c);
		return;
	}
	c->st = P_RESOLVE;
	c->resolving = true;
	/* may call on_resolved before it returns (/etc/hosts): c is not
	 * touched after this */
	eres_lookup(p->conf.res, c->host, on_resolved, c);
}

static void read_head(struct pconn *c)
{
	ssize_t n = recv(c->cli.fd, c->head + c->head_len, HEAD_MAX - c->head_len, 0);
	size_t from, end;

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		if (c->head_len && !c->reason[0])
			snprintf(c->reason, sizeof(c->reason), "the client left before its request ended");
		econn_close(c);
		return;
	}
	if (n < 0)
		return;
	from = c->head_len > 3 ? c->head_len - 3 : 0;
	c->head_len += (size_t)n;
	if ((end = ehead_end(c->head, from, c->head_len))) {
		got_head(c, end);
		return;
	}
	if (c->head_len >= HEAD_MAX) {
		c->request = true;
		snprintf(c->method, sizeof(c->method), "?");
		econn_reply_reason(c, 431, "Request Header Fields Too Large",
		             "the request head is longer than %d bytes", HEAD_MAX);
	}
}

static void drain(struct pconn *c)
{
	char buf[4096];
	ssize_t n = recv(c->cli.fd, buf, sizeof(buf), 0);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0 || (c->drained += (size_t)n) > DRAIN_MAX)
		econn_close(c);
}

static void on_cli(struct wloop *l, struct wsrc *src, uint32_t ev)
{
	struct pconn *c = src->ctx;

	switch (c->st) {
	case P_HEAD:
		read_head(c);
		break;
	case P_RESOLVE:
	case P_CONNECT:
		/* nothing is read now (mask 0), but a reset is still reported,
		 * level-triggered, on every wait: end here, not spin */
		if (ev & (EPOLLERR | EPOLLHUP)) {
			snprintf(c->reason, sizeof(c->reason), "the client left before the connection");
			econn_close(c);
		}
		break;
	case P_RELAY:
		econn_pump(c);
		break;
	case P_REPLY: {
		struct pdir *d = &c->u2c;
		ssize_t n = send(c->cli.fd, d->pre + d->pre_off, d->pre_len - d->pre_off, MSG_NOSIGNAL);

		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			econn_close(c);
			return;
		}
		if (n > 0)
			d->pre_off += (size_t)n;
		if (d->pre_off == d->pre_len) {
			shutdown(c->cli.fd, SHUT_WR);
			c->st = P_DRAIN;
			c->deadline_ms = econn_now_ms() + DRAIN_MS;
			wloop_rearm(l, &c->cli, EPOLLIN);
		}
		break;
	}
	case P_DRAIN:
		drain(c);
		break;
	}
}

static void on_up(struct wloop *l, struct wsrc *src, uint32_t ev)
{
	struct pconn *c = src->ctx;

	if (c->st == P_CONNECT)
		on_connected(c);
	else if (c->st == P_RELAY)
		econn_pump(c);
}

/* --- the listener and the tick ------------------------------------------------------ */

static void tick_start(struct eproxy *p)
{
	if (!p->ticking) {
		wloop_timer_set(&p->tick, TICK_MS, TICK_MS);
		p->ticking = true;
	}
}

/* A connection beyond the cap: one non-blocking 503, closed at once,
 * holding nothing; audited within the cap. */
static void turn_away(struct eproxy *p, int fd)
{
	static const char body[] = "warden proxy: " BUSY_REASON "\n";
	struct wegress_rec r = { .method = "?", .rule = -1, .status = 503, .reason = BUSY_REASON };
	char busy[512];
	int bl = snprintf(busy, sizeof(busy),
	                  "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
	                  "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
	                  sizeof(body) - 1, body);

	(void)!send(fd, busy, (size_t)bl, MSG_NOSIGNAL | MSG_DONTWAIT);
	close(fd);
	econn_emit(p, &r);
}

static void on_accept(struct wloop *l, struct wsrc *src, uint32_t ev)
{
	struct eproxy *p = src->ctx;

	for (int i = 0; i < 64; i++) {
		int fd = accept4(src->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct pconn *c;

		if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
			/* the listener stays readable: off until the next tick,
			 * never a busy loop, never a warning per wakeup */
			if (!p->paused)
				warn(p, "proxy: accept: %s; pausing this proxy for %d ms",
				     strerror(errno), TICK_MS);
			p->paused = true;
			wloop_rearm(l, src, 0);
			tick_start(p);
			return;
		}
		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
				warn(p, "proxy: accept: %s", strerror(errno));
			return;
		}
		if (!admit(p)) {
			turn_away(p, fd);
			continue;
		}
		c = xcalloc(1, sizeof(*c));
		c->p = p;
		c->l = l;
		c->rule = -1;
		c->up.fd = -1;
		c->c2u.pr = c->c2u.pw = c->u2c.pr = c->u2c.pw = -1;
		c->head = xmalloc(HEAD_MAX + 1);
		c->start_ms = econn_now_ms();
		c->deadline_ms = c->start_ms + (p->conf.head_timeout_ms ? p->conf.head_timeout_ms
		                                                         : HEAD_MS);
		c->next = p->conns;
		if (p->conns)
			p->conns->prev = c;
		p->conns = c;
		p->nconns++;
		econn_charge();
		wloop_watch(l, &c->cli, fd, EPOLLIN, on_cli, c);
		tick_start(p);
	}
}

/* A relay silent both ways for econn_idle_ms() ends: held, it would keep its 6
 * fds and its place under MAX_CONNS for ever */
static void end_idle(struct pconn *c)
{
	snprintf(c->reason, sizeof(c->reason), "idle: no byte either way for %u ms", econn_idle_ms(c->p));
	econn_close(c);
}

static void on_tick(struct wloop *l, struct wsrc *src, uint32_t ev)
{
	struct eproxy *p = src->ctx;
	uint64_t exp, now = econn_now_ms();
	struct pconn *c, *next;

	(void)!read(src->fd, &exp, sizeof(exp));
	for (c = p->conns; c; c = next) {
		next = c->next;
		if (c->dead || !c->deadline_ms || now < c->deadline_ms)
			continue;
		switch (c->st) {
		case P_HEAD:
			c->request = c->head_len > 0;
			if (c->request)
				snprintf(c->method, sizeof(c->method), "?");
			econn_reply_reason(c, 408, "Request Timeout",
			             "the request head did not arrive in time");
			break;
		case P_RESOLVE:
		case P_CONNECT:
			econn_reply_reason(c, 504, "Gateway Timeout", "%s %s port %u took longer than %u ms",
			             c->st == P_RESOLVE ? "resolving" : "connecting to", c->host,
			             c->port, dial_ms(p));
			break;
		case P_REPLY:
		case P_DRAIN:
			econn_close(c);
			break;
		case P_RELAY:
			end_idle(c);
			break;
		}
	}
	if (p->paused) {
		p->paused = false;
		wloop_rearm(l, &p->lsn, EPOLLIN);
	}
	if (!p->conns) {
		wloop_timer_set(&p->tick, 0, 0);
		p->ticking = false;
	}
}

struct eproxy *eproxy_new(struct wloop *l, int listen_fd, const struct eproxy_conf *conf,
                          struct werr *err)
{
	struct eproxy *p;

	if (listen_fd < 0 || !conf || !conf->res) {
		werr_set(err, EINVAL, "proxy: no listening socket or no resolver");
		if (listen_fd >= 0)
			close(listen_fd);
		return NULL;
	}
	p = xcalloc(1, sizeof(*p));
	p->l = l;
	p->conf = *conf;
	p->lsn.fd = p->tick.fd = -1;
	(void)fcntl(listen_fd, F_SETFL, fcntl(listen_fd, F_GETFL) | O_NONBLOCK);
	if (wloop_watch(l, &p->lsn, listen_fd, EPOLLIN, on_accept, p) < 0) {
		werr_set(err, errno, "proxy: watching the listening socket");
		close(listen_fd);
		free(p);
		return NULL;
	}
	if (wloop_timer(l, &p->tick, EPOLLIN, on_tick, p) < 0) {
		werr_set(err, errno, "proxy: timerfd");
		wloop_unwatch(l, &p->lsn);
		free(p);
		return NULL;
	}
	p->gnext = g_proxies;
	g_proxies = p;
	g_nproxies++;
	return p;
}

uint64_t eproxy_free(struct eproxy *p)
{
	uint64_t dropped;

	if (!p)
		return 0;
	for (struct eproxy **pp = &g_proxies; *pp; pp = &(*pp)->gnext)
		if (*pp == p) {
			*pp = p->gnext;
			g_nproxies--;
			break;
		}
	for (struct pconn *c = p->conns, *next; c; c = next) {
		next = c->next;
		econn_close(c);
	}
	/* what is left is closed and waits for its lookup (the resolver's
	 * answer, or eres_free's), which frees it: it is no longer p's */
	for (struct pconn *c = p->conns, *next; c; c = next) {
		next = c->next;
		c->p = NULL;
		c->prev = c->next = NULL;
	}
	p->conns = NULL;
	p->nconns = 0;
	dropped = p->dropped;
	wloop_unwatch(p->l, &p->lsn);
	wloop_unwatch(p->l, &p->tick);
	wloop_free_later(p->l, p);
	return dropped;
}
