/* The egress engine's relay and its own answers (conn.h).
 *
 * RELAY    both directions through a pipe each (splice: the payload is
 *          never copied into this process, and a pipe holds at most 64 KiB,
 *          so memory is flat however much flows), edge-triggered; no byte
 *          either way for the idle limit: closed (engine.c's tick)
 * REPLY    the proxy's own answer (403, 502, ...) written, then
 * DRAIN    what the client still sends is read and dropped (bounded, by
 *          engine.c), so the answer is not lost to a reset, then closed. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conn.h"
#include "warden/util.h"

/* The proxy's own answer: written, then the rest of the client's bytes
 * drained for a moment, then closed. */
void econn_reply(struct pconn *c, int status, const char *text, const char *body)
{
	struct pdir *d = &c->u2c;
	size_t blen = strlen(body);
	int n;

	c->status = status;
	/* its record goes now, before the client can read the answer: what
	 * the program does next (end its run or block) cannot overtake it
	 * (a learner reads the refusals when the run or block ends) */
	econn_audit(c);
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
	c->deadline_ms = econn_now_ms() + HEAD_MS;
	wloop_rearm(c->p->l, &c->cli, EPOLLOUT);
}

void econn_reply_reason(struct pconn *c, int status, const char *text, const char *fmt, ...)
{
	char body[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->reason, sizeof(c->reason), fmt, ap);
	va_end(ap);
	snprintf(body, sizeof(body), "warden proxy: %s\n", c->reason);
	econn_reply(c, status, text, body);
}

/* host:port as an entry writes it ("[::1]:8080" for IPv6) */
static void entry_of(const struct pconn *c, char *out, size_t len)
{
	snprintf(out, len, strchr(c->host, ':') ? "[%s]:%u" : "%s:%u", c->host, c->port);
}

void econn_refuse_policy(struct pconn *c)
{
	const struct eproxy_conf *pc = &c->p->conf;
	char ent[300], body[2048];

	entry_of(c, ent, sizeof(ent));
	snprintf(c->reason, sizeof(c->reason), "%s is not in the allowlist", ent);
	snprintf(body, sizeof(body),
	         "warden proxy: %s is not allowed by the policy \"%s\" (%s).\n"
	         "To allow it, run with:\n"
	         "    --allow %s\n"
	         "or add it to the policy's network section:\n"
	         "    \"network\": { \"mode\": \"proxy\", \"allow\": [..., \"%s\"] }\n",
	         ent, pc->name ? pc->name : "?", pc->source ? pc->source : "?", ent, ent);
	econn_reply(c, 403, "Forbidden", body);
}

/* addr: the first address the name resolved to that no entry allows;
 * own: it is one of the host's own (else it is special) */
void econn_refuse_special(struct pconn *c, const char *addr, bool own)
{
	const struct eproxy_conf *pc = &c->p->conf;
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
	         c->host, addr, what, pc->name ? pc->name : "?", pc->source ? pc->source : "?",
	         strchr(addr, ':') ? "[" : "", addr, strchr(addr, ':') ? "]" : "", c->port);
	econn_reply(c, 403, "Forbidden", body);
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

void econn_pump(struct pconn *c)
{
	bool moved = false;
	int a, b;

	do {
		a = c->c2u.shut ? 0 : dir_step(&c->c2u, c->cli.fd, c->up.fd, &c->up_bytes);
		b = c->u2c.shut ? 0 : dir_step(&c->u2c, c->up.fd, c->cli.fd, &c->down_bytes);
		if (a < 0 || b < 0) {
			if (!c->reason[0])
				snprintf(c->reason, sizeof(c->reason), "relay: %s", strerror(errno));
			econn_close(c);
			return;
		}
		moved = moved || a || b;
	} while (a || b);
	if (c->c2u.shut && c->u2c.shut) {
		econn_close(c);
		return;
	}
	/* the idle limit counts from the last byte either way */
	if (moved)
		c->deadline_ms = econn_now_ms() + econn_idle_ms(c->p);
}

int econn_start_relay(struct pconn *c)
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
	c->deadline_ms = econn_now_ms() + econn_idle_ms(c->p);
	free(c->head);
	c->head = NULL;
	/* edge-triggered from now on: econn_pump() always goes on until EAGAIN or
	 * a full pipe, and a full pipe is drained in the same pump */
	wloop_rearm(c->p->l, &c->cli, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET);
	wloop_rearm(c->p->l, &c->up, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET);
	econn_pump(c);
	return 0;
}
