/* A connection's end, below both halves of the engine (conn.h): engine.c
 * accepts and decides, relay.c relays and answers, and either may end a
 * connection here -- audited once, within the proxy's cap, its fds given
 * back to the process's budget. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "conn.h"
#include "warden/util.h"

#define AUDIT_MAX 4096           /* records per proxy */

static size_t g_held;            /* fds charged to connections (engine.c's budget) */

size_t econn_fds_held(void)
{
	return g_held;
}

void econn_charge(void)
{
	g_held += CONN_FDS;
}

uint64_t econn_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* --- ending a connection ---------------------------------------------------- */

static uint64_t audit_max(const struct eproxy *p)
{
	return p->conf.audit_max ? p->conf.audit_max : AUDIT_MAX;
}

uint32_t econn_idle_ms(const struct eproxy *p)
{
	return p->conf.relay_idle_ms ? p->conf.relay_idle_ms : IDLE_MS;
}

/* Hand r to the audit callback, within the cap.  Only printable ASCII
 * reaches the record (wegress_text_ok): the reason holds strerror's and
 * c-ares' words, which are, but a byte that is not becomes '?'. */
void econn_emit(struct eproxy *p, struct wegress_rec *r)
{
	if (!p->conf.audit)
		return;
	if (p->audited >= audit_max(p)) {
		p->dropped++;
		return;
	}
	p->audited++;
	for (char *q = r->reason; *q; q++)
		if (*q < 0x20 || *q > 0x7e)
			*q = '?';
	p->conf.audit(p->conf.ctx, r);
}

void econn_audit(struct pconn *c)
{
	struct wegress_rec r = { 0 };

	if (!c->request || c->audited)
		return;
	c->audited = true;
	snprintf(r.method, sizeof(r.method), "%s", c->method);
	snprintf(r.host, sizeof(r.host), "%.*s", WEGRESS_HOST_MAX, c->host);
	r.port = c->port;
	snprintf(r.address, sizeof(r.address), "%s", c->addr);
	r.allowed = c->allowed;
	r.rule = c->rule >= 0 && (size_t)c->rule < c->p->conf.n_allow ? c->rule : -1;
	r.status = (uint16_t)c->status;
	snprintf(r.reason, sizeof(r.reason), "%s", c->reason);
	r.bytes_up = c->up_bytes;
	r.bytes_down = c->down_bytes;
	r.duration_ms = econn_now_ms() - c->start_ms;
	econn_emit(c->p, &r);
}

static void dir_free(struct pdir *d)
{
	closep(&d->pr);
	closep(&d->pw);
	free(d->pre);
	d->pre = NULL;
}

void econn_close(struct pconn *c)
{
	struct eproxy *p = c->p;

	if (c->dead)
		return;
	econn_audit(c);
	c->dead = true;
	if (c->cli.fd >= 0)
		wloop_unwatch(p->l, &c->cli);
	if (c->up.fd >= 0)
		wloop_unwatch(p->l, &c->up);
	dir_free(&c->c2u);
	dir_free(&c->u2c);
	free(c->head);
	c->head = NULL;
	g_held -= CONN_FDS;
	/* a pending lookup still holds c: it stays listed, and counted against
	 * the proxy's MAX_CONNS, until its callback ends it (econn_unlink):
	 * else a client that resets during its lookups piles them up, each
	 * with its memory and its queries, past every cap */
	if (!c->resolving)
		econn_unlink(c);
}

void econn_unlink(struct pconn *c)
{
	struct eproxy *p = c->p;

	if (p) {
		if (c->prev)
			c->prev->next = c->next;
		else
			p->conns = c->next;
		if (c->next)
			c->next->prev = c->prev;
		p->nconns--;
	}
	/* the sources inside c may be named by a later event of this batch */
	wloop_free_later(c->l, c);
}
