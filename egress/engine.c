/* The allowlisting egress proxy (proxy.h, docs/design.md "Network").
 *
 * Every byte that arrives here comes from the jail.  A connection goes
 *
 *   HEAD     reading the request head into a fixed 16 KiB buffer (level-
 *            triggered EPOLLIN); past the bound: 431; not finished within
 *            head_timeout_ms: 408
 *   RESOLVE  the name matched an entry: c-ares looks it up, its sockets
 *            in this same loop (a slow resolver stalls nothing else)
 *   CONNECT  a non-blocking connect to the first address wnet_allow_addr
 *            allows, then the next; within dial_ms() (DIAL_MS), else 504
 *   RELAY    both directions through a pipe each (splice: the payload is
 *            never copied into this process, and a pipe holds at most
 *            64 KiB, so memory is flat however much flows), edge-triggered;
 *            no byte either way for idle_ms() (IDLE_MS): closed
 *   REPLY    the proxy's own answer (403, 502, ...) written, then
 *   DRAIN    what the client still sends is read and dropped (bounded), so
 *            the answer is not lost to a reset, then closed.
 *
 * Each connection is audited once, as event "net", when it ends; at most
 * AUDIT_MAX records per proxy, then one "net_dropped" at the end.
 * One request per connection: the proxy sends "Connection: close" upstream
 * and relays bytes as they come after the head, so a second request on the
 * same connection can only reach the same (allowed) destination. */
#include <arpa/inet.h>
#include <ares.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hostaddr.h"
#include "proxy.h"
#include "sv.h"
#include "warden/log.h"
#include "warden/netallow.h"
#include "warden/util.h"

#define MAX_CONNS 256            /* per proxy; beyond: 503 */
#define HEAD_MAX 16384           /* request head bound; beyond: 431 */
#define HEAD_MS 10000            /* a client must finish its head within this */
#define DIAL_MS 30000            /* resolve and connect within this */
#define IDLE_MS 300000           /* a relayed connection silent both ways this long
                                    is closed (5 min; a client that means to wait
                                    longer sends a keepalive meanwhile) */
#define DRAIN_MS 2000            /* after an answer, read and drop at most this long */
#define DRAIN_MAX (256u * 1024)  /* and at most this much */
#define TICK_MS 250              /* deadlines and c-ares' timeouts */
#define AUDIT_MAX 4096           /* "net" records per proxy */
#define N_ADDRS 8                /* resolved addresses tried */
#define N_ANSWER 32              /* addresses of an answer considered */
#define CONN_FDS 6               /* what a relayed connection holds at most: its
                                    socket, the upstream's, two pipes */
#define GUARANTEED 4             /* connections each live proxy can always open,
                                    however much the others hold */
#define PIPE_CAP 65536           /* bytes in flight per direction: the default pipe;
                                    256 x 2 x 64 KiB stays under the per-user
                                    pipe-user-pages-soft (64 MiB) */

enum pst { P_HEAD, P_RESOLVE, P_CONNECT, P_RELAY, P_REPLY, P_DRAIN };

struct pdir {                    /* one direction of the relay */
	int pr, pw;                  /* its pipe */
	size_t inpipe;
	bool eof, shut;              /* source ended; destination shut for writing */
	char *pre;                   /* written to the destination first */
	size_t pre_len, pre_off;
	bool pre_own;                /* the proxy's own words, not counted */
};

struct pconn {
	struct wproxy *p;
	struct pconn *prev, *next;
	struct wsrc cli, up;
	enum pst st;
	bool resolving;              /* a c-ares query holds this pointer */
	bool dead;                   /* closed; freed when no query holds it */
	bool request;                /* a request line was read: audit it */
	bool allowed;
	char *head;
	size_t head_len, drained;
	char method[17];
	char host[256];
	uint16_t port;
	int rule;
	int status;                  /* the proxy's answer: 200, 403, ... */
	char reason[512];
	struct sockaddr_storage addrs[N_ADDRS];
	size_t naddr, iaddr;
	char addr[INET6_ADDRSTRLEN];
	struct pdir c2u, u2c;
	uint64_t up_bytes, down_bytes, start_ms, deadline_ms;
};

struct psock {                   /* one of c-ares' sockets */
	struct wsrc src;
	struct psock *next;
	struct wproxy *p;
};

struct wproxy {
	struct wproxy *gnext;        /* every live proxy of this process */
	bool paused;                 /* the listener is off until the next tick (EMFILE) */
	struct wloop *l;
	struct wproxy_conf conf;
	struct wsrc lsn, tick;
	bool ticking;
	ares_channel ch;
	bool ch_ok;
	struct psock *socks;
	struct pconn *conns;
	size_t nconns;
	uint64_t audited, dropped;
};

/* The fds every proxy of this process holds together are bounded: a jail
 * that floods its proxy must never take the fds the supervisor needs for
 * its sessions, its audit log or another jail's proxy.  The budget is the
 * open-files limit less g_reserve (the server sets it from its sessions:
 * wproxy_reserve_fds); each connection is charged CONN_FDS from its accept
 * to its end, and a connection is admitted only if, after it, GUARANTEED
 * connections of every other live proxy would still fit. */
static struct wproxy *g_proxies;
static size_t g_held;            /* fds charged to connections */
static size_t g_reserve = 64;    /* fds kept for the rest of the process */
static size_t g_limit;           /* RLIMIT_NOFILE's soft limit */

void wproxy_reserve_fds(size_t fds)
{
	g_reserve = fds;
}

static bool admit(const struct wproxy *p)
{
	size_t need = CONN_FDS, budget = g_limit > g_reserve ? g_limit - g_reserve : 0;

	if (p->nconns >= MAX_CONNS)
		return false;
	for (const struct wproxy *q = g_proxies; q; q = q->gnext)
		if (q != p && q->nconns < GUARANTEED)
			need += (GUARANTEED - q->nconns) * CONN_FDS;
	return g_held + need <= budget;
}

static void pump(struct pconn *c);
static void on_cli(struct wloop *l, struct wsrc *src, uint32_t ev);
static void on_up(struct wloop *l, struct wsrc *src, uint32_t ev);

/* --- ending a connection ---------------------------------------------------- */

static uint64_t audit_max(const struct wproxy *p)
{
	return p->conf.audit_max ? p->conf.audit_max : AUDIT_MAX;
}

static uint32_t dial_ms(const struct wproxy *p)
{
	return p->conf.dial_timeout_ms ? p->conf.dial_timeout_ms : DIAL_MS;
}

static uint32_t idle_ms(const struct wproxy *p)
{
	return p->conf.relay_idle_ms ? p->conf.relay_idle_ms : IDLE_MS;
}

static void audit_conn(struct pconn *c)
{
	struct wproxy *p = c->p;
	json_object *r;

	if (!c->request || !p->conf.audit)
		return;
	if (p->audited >= audit_max(p)) {
		p->dropped++;
		return;
	}
	p->audited++;
	r = json_object_new_object();
	if (p->conf.audit_session)
		json_object_object_add(r, "session", json_object_new_string(p->conf.audit_session));
	json_object_object_add(r, "method", json_object_new_string(c->method));
	json_object_object_add(r, "host", json_object_new_string(c->host));
	json_object_object_add(r, "port", json_object_new_int(c->port));
	if (c->addr[0])
		json_object_object_add(r, "address", json_object_new_string(c->addr));
	json_object_object_add(r, "allowed", json_object_new_boolean(c->allowed));
	if (c->rule >= 0 && (size_t)c->rule < p->conf.pol->net_allow.n)
		json_object_object_add(r, "rule",
		                       json_object_new_string(p->conf.pol->net_allow.v[c->rule]));
	json_object_object_add(r, "status", json_object_new_int(c->status));
	if (c->reason[0])
		json_object_object_add(r, "reason", json_object_new_string(c->reason));
	json_object_object_add(r, "bytes_up", json_object_new_int64((int64_t)c->up_bytes));
	json_object_object_add(r, "bytes_down", json_object_new_int64((int64_t)c->down_bytes));
	json_object_object_add(r, "duration_ms",
	                       json_object_new_int64((int64_t)(sv_now_ms() - c->start_ms)));
	waudit_emit(p->conf.audit, "net", r);
}

static void dir_free(struct pdir *d)
{
	closep(&d->pr);
	closep(&d->pw);
	free(d->pre);
	d->pre = NULL;
}

static void pc_close(struct pconn *c)
{
	struct wproxy *p = c->p;

	if (c->dead)
		return;
	audit_conn(c);
	c->dead = true;
	if (c->cli.fd >= 0)
		wloop_unwatch(p->l, &c->cli);
	if (c->up.fd >= 0)
		wloop_unwatch(p->l, &c->up);
	dir_free(&c->c2u);
	dir_free(&c->u2c);
	free(c->head);
	c->head = NULL;
	if (c->prev)
		c->prev->next = c->next;
	else
		p->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	p->nconns--;
	g_held -= CONN_FDS;
	/* the sources inside c may be named by a later event of this batch;
	 * a pending query still holds c: its callback frees it */
	if (!c->resolving)
		wloop_free_later(p->l, c);
}

/* The proxy's own answer: written, then the rest of the client's bytes
 * drained for a moment, then closed. */
static void reply(struct pconn *c, int status, const char *text, const char *body)
{
	struct pdir *d = &c->u2c;
	size_t blen = strlen(body);
	int n;

	c->status = status;
	if (c->up.fd >= 0)
		wloop_unwatch(c->p->l, &c->up);
	free(d->pre);
	d->pre = xmalloc(blen + 256);
	n = snprintf(d->pre, blen + 256,
	             "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
	             "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
	             status, text, blen, body);
	d->pre_len = n > 0 ? (size_t)n : 0;
	d->pre_off = 0;
	d->pre_own = true;
	c->st = P_REPLY;
	c->deadline_ms = sv_now_ms() + HEAD_MS;
	wloop_rearm(c->p->l, &c->cli, EPOLLOUT);
}

static void reply_reason(struct pconn *c, int status, const char *text, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void reply_reason(struct pconn *c, int status, const char *text, const char *fmt, ...)
{
	char body[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->reason, sizeof(c->reason), fmt, ap);
	va_end(ap);
	snprintf(body, sizeof(body), "warden proxy: %s\n", c->reason);
	reply(c, status, text, body);
}

/* host:port as an entry writes it ("[::1]:8080" for IPv6) */
static void entry_of(const struct pconn *c, char *out, size_t len)
{
	snprintf(out, len, strchr(c->host, ':') ? "[%s]:%u" : "%s:%u", c->host, c->port);
}

static void refuse_policy(struct pconn *c)
{
	const struct wpolicy *pol = c->p->conf.pol;
	char ent[300], body[2048];

	entry_of(c, ent, sizeof(ent));
	snprintf(c->reason, sizeof(c->reason), "%s is not in the allowlist", ent);
	snprintf(body, sizeof(body),
	         "warden proxy: %s is not allowed by the policy \"%s\" (%s).\n"
	         "To allow it, run with:\n"
	         "    --allow %s\n"
	         "or add it to the policy's network section:\n"
	         "    \"network\": { \"mode\": \"proxy\", \"allow\": [..., \"%s\"] }\n",
	         ent, pol->name ? pol->name : "?", pol->source ? pol->source : "?", ent, ent);
	reply(c, 403, "Forbidden", body);
}

/* addr: the first address the name resolved to that no entry allows;
 * own: it is one of the host's own (else it is special) */
static void refuse_special(struct pconn *c, const char *addr, bool own)
{
	const struct wpolicy *pol = c->p->conf.pol;
	const char *what = own ? "an address of one of this host's own interfaces"
	                       : "a loopback, private, link-local, multicast or reserved address";
	char ent[300], body[2048];

	entry_of(c, ent, sizeof(ent));
	snprintf(c->reason, sizeof(c->reason), "%s resolved only to addresses no name can allow (%s%s)",
	         c->host, addr, own ? ", the host's own" : "");
	snprintf(body, sizeof(body),
	         "warden proxy: %s resolved to %s, %s.\n"
	         "No name can allow such an address, whatever the policy \"%s\" (%s) says: a name\n"
	         "that resolves there (DNS rebinding) would reach the host's own services.\n"
	         "Only an entry naming the address itself allows it; if that is meant, use\n"
	         "    --allow %s%s%s:%u\n"
	         "and connect to that address instead of the name.\n",
	         c->host, addr, what, pol->name ? pol->name : "?", pol->source ? pol->source : "?",
	         strchr(addr, ':') ? "[" : "", addr, strchr(addr, ':') ? "]" : "", c->port);
	reply(c, 403, "Forbidden", body);
}

/* --- relaying ----------------------------------------------------------------- */

/* One step of direction d from src to dst: -1 on a hard error, else
 * whether anything moved. */
static int dir_step(struct pdir *d, int src, int dst, uint64_t *count)
{
	ssize_t n;
	int moved = 0;

	if (d->pre_off < d->pre_len) {
		n = send(dst, d->pre + d->pre_off, d->pre_len - d->pre_off, MSG_NOSIGNAL);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		d->pre_off += (size_t)n;
		if (!d->pre_own)
			*count += (uint64_t)n;
		return 1;
	}
	if (d->inpipe > 0) {
		n = splice(d->pr, NULL, dst, NULL, d->inpipe, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		if (n > 0) {
			d->inpipe -= (size_t)n;
			*count += (uint64_t)n;
			moved = 1;
		}
	}
	if (!d->eof && d->inpipe < PIPE_CAP) {
		n = splice(src, NULL, d->pw, NULL, PIPE_CAP - d->inpipe,
		           SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
		if (n == 0) {
			d->eof = true;
			moved = 1;
		} else if (n > 0) {
			d->inpipe += (size_t)n;
			moved = 1;
		} else if (errno != EAGAIN && errno != EINTR) {
			return -1;
		}
	}
	if (d->eof && d->inpipe == 0 && !d->shut) {
		shutdown(dst, SHUT_WR);
		d->shut = true;
		moved = 1;
	}
	return moved;
}

static void pump(struct pconn *c)
{
	bool moved = false;
	int a, b;

	do {
		a = c->c2u.shut ? 0 : dir_step(&c->c2u, c->cli.fd, c->up.fd, &c->up_bytes);
		b = c->u2c.shut ? 0 : dir_step(&c->u2c, c->up.fd, c->cli.fd, &c->down_bytes);
		if (a < 0 || b < 0) {
			if (!c->reason[0])
				snprintf(c->reason, sizeof(c->reason), "relay: %s", strerror(errno));
			pc_close(c);
			return;
		}
		moved = moved || a || b;
	} while (a || b);
	if (c->c2u.shut && c->u2c.shut) {
		pc_close(c);
		return;
	}
	/* the idle limit counts from the last byte either way */
	if (moved)
		c->deadline_ms = sv_now_ms() + idle_ms(c->p);
}

static int start_relay(struct pconn *c)
{
	int a[2], b[2];

	if (pipe2(a, O_NONBLOCK | O_CLOEXEC) < 0)
		return -1;
	if (pipe2(b, O_NONBLOCK | O_CLOEXEC) < 0) {
		close(a[0]);
		close(a[1]);
		return -1;
	}
	c->c2u.pr = a[0];
	c->c2u.pw = a[1];
	c->u2c.pr = b[0];
	c->u2c.pw = b[1];
	(void)fcntl(a[1], F_SETPIPE_SZ, PIPE_CAP);
	(void)fcntl(b[1], F_SETPIPE_SZ, PIPE_CAP);
	c->st = P_RELAY;
	c->status = 200;
	c->deadline_ms = sv_now_ms() + idle_ms(c->p);
	free(c->head);
	c->head = NULL;
	/* edge-triggered from now on: pump() always goes on until EAGAIN or
	 * a full pipe, and a full pipe is drained in the same pump */
	wloop_rearm(c->p->l, &c->cli, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET);
	wloop_rearm(c->p->l, &c->up, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET);
	pump(c);
	return 0;
}

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
	reply_reason(c, 502, "Bad Gateway", "connecting to %s (%s) port %u: %s", c->host,
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
		reply_reason(c, 502, "Bad Gateway", "connecting to %s (%s) port %u: %s", c->host,
		             c->addr, c->port, strerror(e));
		return;
	}
	if (start_relay(c) < 0)
		reply_reason(c, 503, "Service Unavailable", "no pipe for the relay: %s",
		             strerror(errno));
}

static void on_resolved(void *arg, int status, int timeouts, struct ares_addrinfo *res)
{
	struct pconn *c = arg;
	const struct wstrv *al = &c->p->conf.pol->net_allow;
	struct sockaddr_storage cand[N_ANSWER];
	bool own[N_ANSWER];
	size_t ncand = 0;
	struct werr err = { 0 };
	char refused[INET6_ADDRSTRLEN] = "";
	bool refused_own = false;

	c->resolving = false;
	if (c->dead) {
		/* closed while the query ran (its sources are closed; a later
		 * event of this batch may still name them) */
		wloop_free_later(c->p->l, c);
		if (res)
			ares_freeaddrinfo(res);
		return;
	}
	if (c->st != P_RESOLVE) {   /* answered already (timed out) */
		if (res)
			ares_freeaddrinfo(res);
		return;
	}
	if (status != ARES_SUCCESS || !res) {
		reply_reason(c, 502, "Bad Gateway", "resolving %s: %s", c->host, ares_strerror(status));
		if (res)
			ares_freeaddrinfo(res);
		return;
	}
	for (struct ares_addrinfo_node *n = res->nodes; n && ncand < N_ANSWER; n = n->ai_next) {
		struct sockaddr_storage *ss = &cand[ncand];

		memset(ss, 0, sizeof(*ss));
		if (n->ai_family == AF_INET && n->ai_addrlen >= sizeof(struct sockaddr_in)) {
			memcpy(ss, n->ai_addr, sizeof(struct sockaddr_in));
			((struct sockaddr_in *)ss)->sin_port = htons(c->port);
		} else if (n->ai_family == AF_INET6 && n->ai_addrlen >= sizeof(struct sockaddr_in6)) {
			memcpy(ss, n->ai_addr, sizeof(struct sockaddr_in6));
			((struct sockaddr_in6 *)ss)->sin6_port = htons(c->port);
		} else {
			continue;
		}
		ncand++;
	}
	ares_freeaddrinfo(res);
	/* the host's own addresses as they are now: a name that leads to one
	 * would reach every service of the host listening on 0.0.0.0 or :: */
	if (sv_host_own(cand, ncand, own, &err) < 0) {
		reply_reason(c, 502, "Bad Gateway", "resolving %s: %s", c->host, err.msg);
		return;
	}
	for (size_t i = 0; i < ncand; i++) {
		if (wnet_allow_addr(al->v, al->n, c->host, (struct sockaddr *)&cand[i], own[i])) {
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
			refuse_special(c, refused, refused_own);
		else
			reply_reason(c, 502, "Bad Gateway", "resolving %s: no address", c->host);
		return;
	}
	connect_next(c);
}

/* --- the request head ------------------------------------------------------------- */

static bool host_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '.' || ch == '-' || ch == '_';
}

/* "host[:port]" or "[v6][:port]" of length len into c->host and c->port
 * (def when absent; 0: required).  Lower-cased. */
static int parse_authority(struct pconn *c, const char *a, size_t len, uint16_t def)
{
	const char *hs = a, *he, *ps = NULL;
	size_t hl;

	if (len && a[0] == '[') {
		const char *close = memchr(a, ']', len);

		if (!close)
			return -1;
		hs = a + 1;
		he = close;
		for (const char *q = hs; q < he; q++)
			if (!((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'f') ||
			      (*q >= 'A' && *q <= 'F') || *q == ':' || *q == '.'))
				return -1;
		if (close + 1 < a + len) {
			if (close[1] != ':')
				return -1;
			ps = close + 2;
		}
	} else {
		const char *colon = memchr(a, ':', len);

		he = colon ? colon : a + len;
		if (colon)
			ps = colon + 1;
		for (const char *q = hs; q < he; q++)
			if (!host_char(*q))
				return -1;
	}
	hl = (size_t)(he - hs);
	if (hl == 0 || hl > 253)
		return -1;
	for (size_t i = 0; i < hl; i++)
		c->host[i] = (char)(hs[i] >= 'A' && hs[i] <= 'Z' ? hs[i] + 32 : hs[i]);
	c->host[hl] = '\0';
	if (hl > 1 && c->host[hl - 1] == '.')
		c->host[hl - 1] = '\0';
	if (!ps) {
		if (!def)
			return -1;
		c->port = def;
		return 0;
	}
	unsigned long v = 0;
	size_t pl = (size_t)(a + len - ps);
	if (pl == 0 || pl > 5)
		return -1;
	for (size_t i = 0; i < pl; i++) {
		if (ps[i] < '0' || ps[i] > '9')
			return -1;
		v = v * 10 + (unsigned long)(ps[i] - '0');
	}
	if (v < 1 || v > 65535)
		return -1;
	c->port = (uint16_t)v;
	return 0;
}

static bool header_is(const char *line, size_t len, const char *name)
{
	size_t n = strlen(name);

	return len > n && line[n] == ':' && !strncasecmp(line, name, n);
}

/* The head is head[0..end): a request line and header lines, each ending
 * in "\r\n" (or "\n"), then an empty line; a CR anywhere else, or any
 * other control byte but a tab in a header value, is refused.  For
 * absolute-URI requests the upstream head is built into c2u.pre: the
 * request line in origin form, the client's headers without the hop-by-hop
 * and proxy ones and without Host, then Host (from the URL, which is what
 * was checked) and Connection: close. */
static int parse_head(struct pconn *c, size_t end, const char **why)
{
	char *h = c->head, *eol = memchr(h, '\n', end), *sp1, *sp2;
	size_t ll, i, ml, tl, auth_len, out_len = 0, cap;
	const char *target, *path, *auth;
	bool is_connect;
	char *out;

	ll = (size_t)(eol - h);
	if (ll && h[ll - 1] == '\r')
		ll--;
	for (i = 0; i < end; i++) {
		unsigned char ch = (unsigned char)h[i];

		/* CR only as the first half of a line end: a bare CR ends a line
		 * for some parsers upstream and not for others, so "X-A: 1\rHost:
		 * evil" would be a second Host line there */
		if (ch == '\r' && (i + 1 == end || h[i + 1] != '\n')) {
			*why = "a CR not followed by LF in the request head";
			return -1;
		}
		/* a tab only inside a header value (RFC 9112), never in the
		 * request line, whose fields some servers split at any blank */
		if ((ch < 0x20 && ch != '\r' && ch != '\n' && (ch != '\t' || i < ll)) || ch == 0x7f) {
			*why = "a control byte in the request head";
			return -1;
		}
	}
	sp1 = memchr(h, ' ', ll);
	sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(h + ll - sp1 - 1)) : NULL;
	if (!sp1 || !sp2 || memchr(sp2 + 1, ' ', (size_t)(h + ll - sp2 - 1))) {
		*why = "the request line is not \"METHOD TARGET HTTP/1.1\"";
		return -1;
	}
	ml = (size_t)(sp1 - h);
	if (ml == 0 || ml >= sizeof(c->method)) {
		*why = "the method is empty or too long";
		return -1;
	}
	for (i = 0; i < ml; i++)
		if (h[i] < 'A' || h[i] > 'Z') {
			*why = "the method is not upper-case letters";
			return -1;
		}
	memcpy(c->method, h, ml);
	c->method[ml] = '\0';
	if ((size_t)(h + ll - sp2 - 1) != 8 ||
	    (strncmp(sp2 + 1, "HTTP/1.1", 8) && strncmp(sp2 + 1, "HTTP/1.0", 8))) {
		*why = "the version is not HTTP/1.0 or HTTP/1.1";
		return -1;
	}
	target = sp1 + 1;
	tl = (size_t)(sp2 - target);
	is_connect = !strcmp(c->method, "CONNECT");
	c->request = true;
	if (is_connect) {
		if (parse_authority(c, target, tl, 0) < 0) {
			*why = "CONNECT needs host:port";
			return -1;
		}
		return 0;
	}
	if (tl < 7 || strncasecmp(target, "http://", 7)) {
		*why = "the target is not an absolute http:// URL (for https, the client "
		       "must use CONNECT)";
		return -1;
	}
	auth = target + 7;
	for (auth_len = 0; auth_len < tl - 7; auth_len++)
		if (strchr("/?#", auth[auth_len]))
			break;
	if (memchr(auth, '@', auth_len)) {
		*why = "credentials in the URL";
		return -1;
	}
	if (parse_authority(c, auth, auth_len, 80) < 0) {
		*why = "the URL's host[:port] is not valid";
		return -1;
	}
	path = auth + auth_len;
	cap = 2 * end + auth_len + 128;   /* a "\n" line end becomes "\r\n" */
	out = xmalloc(cap);
	out_len = (size_t)snprintf(out, cap, "%s %s%.*s %.8s\r\n", c->method,
	                           (path < sp2 && *path == '/') ? "" : "/",
	                           (int)(sp2 - path), path, sp2 + 1);
	for (char *line = eol + 1; line < h + end;) {
		char *nl = memchr(line, '\n', (size_t)(h + end - line));
		size_t len = (size_t)(nl - line);

		if (len && line[len - 1] == '\r')
			len--;
		if (len == 0)
			break;
		if (line[0] == ' ' || line[0] == '\t' || !memchr(line, ':', len)) {
			free(out);
			*why = "a header line is folded or has no ':'";
			return -1;
		}
		/* the name is an HTTP token right up to the ':': "Host : x" is
		 * not dropped as Host here, and a lenient server upstream could
		 * read it as a second Host */
		for (i = 0; line[i] != ':'; i++)
			if (!isalnum((unsigned char)line[i]) && !strchr("!#$%&'*+-.^_`|~", line[i])) {
				free(out);
				*why = "a header name is not an HTTP token (no space before ':')";
				return -1;
			}
		if (i == 0) {
			free(out);
			*why = "a header name is empty";
			return -1;
		}
		if (!header_is(line, len, "Host") && !header_is(line, len, "Connection") &&
		    !header_is(line, len, "Proxy-Connection") && !header_is(line, len, "Keep-Alive") &&
		    !header_is(line, len, "Proxy-Authorization")) {
			memcpy(out + out_len, line, len);
			out_len += len;
			memcpy(out + out_len, "\r\n", 2);
			out_len += 2;
		}
		line = nl + 1;
	}
	out_len += (size_t)snprintf(out + out_len, cap - out_len, "Host: %.*s\r\nConnection: close\r\n\r\n",
	                            (int)auth_len, auth);
	c->c2u.pre = out;
	c->c2u.pre_len = out_len;
	return 0;
}

static void got_head(struct pconn *c, size_t end)
{
	struct wproxy *p = c->p;
	const struct wstrv *al = &p->conf.pol->net_allow;
	const char *why = NULL;
	size_t rest = c->head_len - end;
	unsigned char lit[16];
	int fam;

	if (parse_head(c, end, &why) < 0) {
		reply_reason(c, 400, "Bad Request", "bad request: %s", why);
		return;
	}
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
	if (!strcmp(c->method, "CONNECT")) {
		static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
		c->u2c.pre = xstrdup(ok);
		c->u2c.pre_len = sizeof(ok) - 1;
		c->u2c.pre_own = true;
	}
	wloop_rearm(p->l, &c->cli, 0);   /* nothing more is read until the relay */
	c->rule = wnet_allow_name(al->v, al->n, c->host, c->port);
	if (c->rule < 0) {
		refuse_policy(c);
		return;
	}
	c->allowed = true;
	c->deadline_ms = sv_now_ms() + dial_ms(p);
	fam = strchr(c->host, ':') ? AF_INET6 : AF_INET;
	if (inet_pton(fam, c->host, lit) == 1) {
		struct sockaddr_storage ss = { .ss_family = (sa_family_t)fam };

		if (fam == AF_INET6) {
			memcpy(&((struct sockaddr_in6 *)&ss)->sin6_addr, lit, 16);
			((struct sockaddr_in6 *)&ss)->sin6_port = htons(c->port);
		} else {
			memcpy(&((struct sockaddr_in *)&ss)->sin_addr, lit, 4);
			((struct sockaddr_in *)&ss)->sin_port = htons(c->port);
		}
		/* a literal: only a literal entry allows it, the host's own
		 * addresses included (no name entry matches a literal) */
		if (!wnet_allow_addr(al->v, al->n, c->host, (struct sockaddr *)&ss, false)) {
			c->allowed = false;
			c->rule = -1;
			refuse_policy(c);
			return;
		}
		c->addrs[0] = ss;
		c->naddr = 1;
		connect_next(c);
		return;
	}
	if (!p->ch_ok) {
		reply_reason(c, 502, "Bad Gateway", "resolving %s: the resolver is not available",
		             c->host);
		return;
	}
	struct ares_addrinfo_hints hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	c->st = P_RESOLVE;
	c->resolving = true;
	/* may call on_resolved before it returns (/etc/hosts): c is not
	 * touched after this */
	ares_getaddrinfo(p->ch, c->host, NULL, &hints, on_resolved, c);
}

static void read_head(struct pconn *c)
{
	ssize_t n = recv(c->cli.fd, c->head + c->head_len, HEAD_MAX - c->head_len, 0);
	size_t from;

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		if (c->head_len && !c->reason[0])
			snprintf(c->reason, sizeof(c->reason), "the client left before its request ended");
		pc_close(c);
		return;
	}
	if (n < 0)
		return;
	from = c->head_len > 3 ? c->head_len - 3 : 0;
	c->head_len += (size_t)n;
	for (size_t i = from; i < c->head_len; i++) {
		if (c->head[i] != '\n')
			continue;
		if (i >= 1 && c->head[i - 1] == '\n') {
			got_head(c, i + 1);
			return;
		}
		if (i >= 2 && c->head[i - 1] == '\r' && c->head[i - 2] == '\n') {
			got_head(c, i + 1);
			return;
		}
	}
	if (c->head_len >= HEAD_MAX) {
		c->request = true;
		snprintf(c->method, sizeof(c->method), "?");
		reply_reason(c, 431, "Request Header Fields Too Large",
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
		pc_close(c);
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
			pc_close(c);
		}
		break;
	case P_RELAY:
		pump(c);
		break;
	case P_REPLY: {
		struct pdir *d = &c->u2c;
		ssize_t n = send(c->cli.fd, d->pre + d->pre_off, d->pre_len - d->pre_off, MSG_NOSIGNAL);

		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			pc_close(c);
			return;
		}
		if (n > 0)
			d->pre_off += (size_t)n;
		if (d->pre_off == d->pre_len) {
			shutdown(c->cli.fd, SHUT_WR);
			c->st = P_DRAIN;
			c->deadline_ms = sv_now_ms() + DRAIN_MS;
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
		pump(c);
}

/* --- the listener, the tick, the resolver's sockets -------------------------------- */

static void tick_start(struct wproxy *p)
{
	if (!p->ticking) {
		wloop_timer_set(&p->tick, TICK_MS, TICK_MS);
		p->ticking = true;
	}
}

static void on_accept(struct wloop *l, struct wsrc *src, uint32_t ev)
{
	struct wproxy *p = src->ctx;

	for (int i = 0; i < 64; i++) {
		int fd = accept4(src->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct pconn *c;

		if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
			/* the listener stays readable: off until the next tick,
			 * never a busy loop, never a warning per wakeup */
			if (!p->paused)
				wlog_warn("proxy: accept: %s; pausing this proxy for %d ms",
				          strerror(errno), TICK_MS);
			p->paused = true;
			wloop_rearm(l, src, 0);
			tick_start(p);
			return;
		}
		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
				wlog_warn("proxy: accept: %s", strerror(errno));
			return;
		}
		if (!admit(p)) {
			/* best effort, never waits: this connection holds nothing */
			static const char body[] = "warden proxy: too many connections at once (at most 256, "
			                           "and the supervisor's open-files budget)\n";
			char busy[512];
			int bl = snprintf(busy, sizeof(busy),
			                  "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
			                  "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
			                  sizeof(body) - 1, body);
			(void)!send(fd, busy, (size_t)bl, MSG_NOSIGNAL | MSG_DONTWAIT);
			close(fd);
			if (p->conf.audit && p->audited < audit_max(p)) {
				json_object *r = json_object_new_object();
				p->audited++;
				if (p->conf.audit_session)
					json_object_object_add(r, "session",
					                       json_object_new_string(p->conf.audit_session));
				json_object_object_add(r, "method", json_object_new_string("?"));
				json_object_object_add(r, "host", json_object_new_string(""));
				json_object_object_add(r, "port", json_object_new_int(0));
				json_object_object_add(r, "allowed", json_object_new_boolean(false));
				json_object_object_add(r, "status", json_object_new_int(503));
				json_object_object_add(r, "reason", json_object_new_string(
					"too many connections at once (at most 256, and the supervisor's "
					"open-files budget)"));
				json_object_object_add(r, "bytes_up", json_object_new_int(0));
				json_object_object_add(r, "bytes_down", json_object_new_int(0));
				json_object_object_add(r, "duration_ms", json_object_new_int(0));
				waudit_emit(p->conf.audit, "net", r);
			} else if (p->conf.audit) {
				p->dropped++;
			}
			continue;
		}
		c = xcalloc(1, sizeof(*c));
		c->p = p;
		c->rule = -1;
		c->up.fd = -1;
		c->c2u.pr = c->c2u.pw = c->u2c.pr = c->u2c.pw = -1;
		c->head = xmalloc(HEAD_MAX + 1);
		c->start_ms = sv_now_ms();
		c->deadline_ms = c->start_ms + (p->conf.head_timeout_ms ? p->conf.head_timeout_ms
		                                                         : HEAD_MS);
		c->next = p->conns;
		if (p->conns)
			p->conns->prev = c;
		p->conns = c;
		p->nconns++;
		g_held += CONN_FDS;
		wloop_watch(l, &c->cli, fd, EPOLLIN, on_cli, c);
		tick_start(p);
	}
}

/* A relay silent both ways for idle_ms() ends: held, it would keep its 6
 * fds and its place under MAX_CONNS for ever */
static void end_idle(struct pconn *c)
{
	snprintf(c->reason, sizeof(c->reason), "idle: no byte either way for %u ms", idle_ms(c->p));
	pc_close(c);
}

static void on_tick(struct wloop *l, struct wsrc *src, uint32_t ev)
{
	struct wproxy *p = src->ctx;
	uint64_t exp, now = sv_now_ms();
	struct pconn *c, *next;

	(void)!read(src->fd, &exp, sizeof(exp));
	if (p->ch_ok)
		ares_process_fd(p->ch, ARES_SOCKET_BAD, ARES_SOCKET_BAD);   /* its timeouts */
	for (c = p->conns; c; c = next) {
		next = c->next;
		if (!c->deadline_ms || now < c->deadline_ms)
			continue;
		switch (c->st) {
		case P_HEAD:
			c->request = c->head_len > 0;
			if (c->request)
				snprintf(c->method, sizeof(c->method), "?");
			reply_reason(c, 408, "Request Timeout",
			             "the request head did not arrive in time");
			break;
		case P_RESOLVE:
		case P_CONNECT:
			reply_reason(c, 504, "Gateway Timeout", "%s %s port %u took longer than %u ms",
			             c->st == P_RESOLVE ? "resolving" : "connecting to", c->host,
			             c->port, dial_ms(p));
			break;
		case P_REPLY:
		case P_DRAIN:
			pc_close(c);
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

static void on_ares(struct wloop *l, struct wsrc *src, uint32_t ev)
{
	struct psock *s = src->ctx;
	int fd = src->fd;

	ares_process_fd(s->p->ch, ev & (EPOLLIN | EPOLLHUP | EPOLLERR) ? fd : ARES_SOCKET_BAD,
	                ev & EPOLLOUT ? fd : ARES_SOCKET_BAD);
}

static void ares_sock_cb(void *data, ares_socket_t fd, int readable, int writable)
{
	struct wproxy *p = data;
	struct psock **pp, *s;
	uint32_t ev = (readable ? EPOLLIN : 0) | (writable ? EPOLLOUT : 0);

	for (pp = &p->socks; *pp && (*pp)->src.fd != fd; pp = &(*pp)->next)
		;
	s = *pp;
	if (!ev) {
		if (s) {
			*pp = s->next;
			wloop_forget(p->l, &s->src);   /* c-ares closes it */
			wloop_free_later(p->l, s);
		}
		return;
	}
	if (s) {
		wloop_rearm(p->l, &s->src, ev);
		return;
	}
	s = xcalloc(1, sizeof(*s));
	s->p = p;
	s->next = p->socks;
	p->socks = s;
	wloop_watch(p->l, &s->src, fd, ev, on_ares, s);
	tick_start(p);
}

struct wproxy *wproxy_new(struct wloop *l, int listen_fd, const struct wproxy_conf *conf,
                          struct werr *err)
{
	struct wproxy *p;
	struct ares_options opts = { 0 };
	int rc;

	if (listen_fd < 0 || !conf || !conf->pol) {
		werr_set(err, EINVAL, "proxy: no listening socket or no policy");
		if (listen_fd >= 0)
			close(listen_fd);
		return NULL;
	}
	/* A relayed connection holds 6 fds (2 sockets, 2 pipes): 256 of them
	 * need more than the usual soft limit of 1024.  Use what we are given
	 * (the soft limit up to the hard one, as the session server does);
	 * a jail gets its policy's open_files (jail/enter.c). */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		g_limit = rl.rlim_cur == RLIM_INFINITY ? (size_t)-1 / 2 : (size_t)rl.rlim_cur;
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
	/* c-ares reads /etc/resolv.conf and /etc/hosts of the supervisor's
	 * mount namespace, never the jail's; its sockets join this loop
	 * through the socket-state callback */
	opts.sock_state_cb = ares_sock_cb;
	opts.sock_state_cb_data = p;
	/* the name looked up is the name checked, never that name with a
	 * search domain of resolv.conf appended (a different name, whose
	 * answer no entry allowed): no search domains at all (c-ares 1.18's
	 * getaddrinfo ignores ARES_FLAG_NOSEARCH; a trailing dot would skip
	 * /etc/hosts) */
	opts.flags = ARES_FLAG_NOSEARCH;
	opts.domains = NULL;
	opts.ndomains = 0;
	rc = ares_library_init(ARES_LIB_INIT_ALL);
	if (rc == ARES_SUCCESS)
		rc = ares_init_options(&p->ch, &opts,
		                       ARES_OPT_SOCK_STATE_CB | ARES_OPT_FLAGS | ARES_OPT_DOMAINS);
	if (rc != ARES_SUCCESS)
		wlog_warn("proxy: the resolver (c-ares) did not start: %s; names will not resolve "
		          "(check /etc/resolv.conf)", ares_strerror(rc));
	else
		p->ch_ok = true;
	p->gnext = g_proxies;
	g_proxies = p;
	return p;
}

void wproxy_free(struct wproxy *p)
{
	if (!p)
		return;
	for (struct wproxy **pp = &g_proxies; *pp; pp = &(*pp)->gnext)
		if (*pp == p) {
			*pp = p->gnext;
			break;
		}
	while (p->conns)
		pc_close(p->conns);
	/* calls every pending query's callback (ARES_EDESTRUCTION): each frees
	 * its closed connection; and the socket callback for each socket */
	if (p->ch_ok)
		ares_destroy(p->ch);
	while (p->socks) {
		struct psock *s = p->socks;
		p->socks = s->next;
		wloop_forget(p->l, &s->src);
		wloop_free_later(p->l, s);
	}
	if (p->dropped && p->conf.audit) {
		json_object *r = json_object_new_object();
		if (p->conf.audit_session)
			json_object_object_add(r, "session", json_object_new_string(p->conf.audit_session));
		json_object_object_add(r, "dropped", json_object_new_int64((int64_t)p->dropped));
		json_object_object_add(r, "limit", json_object_new_int64((int64_t)audit_max(p)));
		waudit_emit(p->conf.audit, "net_dropped", r);
	}
	wloop_unwatch(p->l, &p->lsn);
	wloop_unwatch(p->l, &p->tick);
	wloop_free_later(p->l, p);
}
