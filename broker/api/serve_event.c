/* The serve protocol's events: JSON objects of valid UTF-8, written to
 * the one client they belong to (serve_int.h).  Below serve.c and
 * serve_chat.c, which both speak through it. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "serve_int.h"
#include "warden/util.h"

long serve_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

json_object *serve_jstr_n(const char *s, size_t n)
{
	struct utf8_tail t = { 0 };
	char *buf;
	size_t len;
	json_object *o;

	if (utf8_valid(s, n))
		return json_object_new_string_len(s, (int)n);
	buf = xmalloc(UTF8_OUT_MAX(n));
	len = utf8_sanitize(&t, (const uint8_t *)s, n, buf);
	len += utf8_finish(&t, buf + len);
	o = json_object_new_string_len(buf, (int)len);
	free(buf);
	return o;
}

json_object *serve_jstr(const char *s)
{
	return serve_jstr_n(s ? s : "", s ? strlen(s) : 0);
}

void serve_emit(struct sclient *c, json_object *ev)
{
	size_t n;
	const char *txt;

	if (c) {
		txt = json_object_to_json_string_length(
			ev, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
		c->emit(c->ctx, txt, n);
	}
	json_object_put(ev);
}

static void vevent(struct sclient *c, json_object *id, const char *name, const char *session,
                   va_list ap)
{
	json_object *ev = json_object_new_object();
	const char *key;

	json_object_object_add(ev, "id", json_object_get(id));
	json_object_object_add(ev, "event", json_object_new_string(name));
	if (session)
		json_object_object_add(ev, "session", serve_jstr(session));
	while ((key = va_arg(ap, const char *)))
		json_object_object_add(ev, key, va_arg(ap, json_object *));
	serve_emit(c, ev);
}

/* The one way an event is written:
 *   {"id":..,"event":name,"session":..,KEY:VALUE...}
 * id echoed (null when unknown), "session" only when session is not NULL,
 * then the KEY, VALUE pairs (const char *, json_object * owned; a NULL
 * value is JSON null) up to a NULL key. */
void serve_event(struct sclient *c, json_object *id, const char *name, const char *session,
                 ...)
{
	va_list ap;

	va_start(ap, session);
	vevent(c, id, name, session, ap);
	va_end(ap);
}

void serve_error(struct sclient *c, json_object *id, const char *session, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	serve_event(c, id, "error", session, "message", serve_jstr(msg), (char *)NULL);
}

json_object *serve_lmc(struct ssession *ss, json_object *id, const char *role, const char *type)
{
	json_object *ev = json_object_new_object();

	json_object_object_add(ev, "id", json_object_get(id));
	json_object_object_add(ev, "session", serve_jstr(ss->audit_id));
	json_object_object_add(ev, "role", json_object_new_string(role));
	json_object_object_add(ev, "type", json_object_new_string(type));
	return ev;
}


/* ---- the supervisor connection: requests that wait for its answer ---- */

#define SERVE_PENDING_MAX 1024                    /* opens/languages awaiting answers */

/* An error tied to no client's request: one client (stdio) gets it; with
 * many, it is the server's own news and goes to its stderr. */
void serve_orphan_error(struct serve *s, const char *msg)
{
	if (s->cfg.one_client && s->clients) {
		serve_error(s->clients, NULL, NULL, "%s", msg);
		return;
	}
	fprintf(stderr, "warden-broker: %s\n", msg);
}

struct spending *serve_pending_take(struct serve *s, uint32_t req)
{
	struct spending **pp;

	for (pp = &s->pending; *pp; pp = &(*pp)->next)
		if ((*pp)->req == req) {
			struct spending *p = *pp;
			*pp = p->next;
			s->n_pending--;
			return p;
		}
	return NULL;
}

void serve_pending_free(struct spending *p)
{
	if (!p)
		return;
	json_object_put(p->id);
	free(p->profile);
	free(p->workspace);
	free(p->session);
	free(p);
}

int serve_send(struct serve *s)
{
	struct werr err = { 0 };

	if (wconn_flush_all(&s->b.c, &err) < 0) {
		serve_orphan_error(s, "writing to the supervisor failed");
		fprintf(stderr, "warden-broker: writing to the supervisor: %s\n", err.msg);
		return -1;
	}
	return 0;
}

/* A request that waits for the supervisor's answer; NULL (said) when too
 * many wait already. */
struct spending *serve_pending_new(struct serve *s, struct sclient *c, struct serve_req *q)
{
	struct spending *p;

	if (s->n_pending >= SERVE_PENDING_MAX) {
		serve_error(c, q->id, NULL, "%u requests are waiting for the supervisor; wait for "
		            "their answers", s->n_pending);
		return NULL;
	}
	p = xcalloc(1, sizeof(*p));
	p->owner = c;
	p->req = s->b.next_req++;
	p->op = q->op;
	p->id = json_object_get(q->id);
	return p;
}

/* r: what queueing p's frame returned.  Sent and waiting, or said and freed. */
void serve_pending_send(struct serve *s, struct spending *p, int r, const struct werr *err)
{
	if (r < 0) {
		serve_error(p->owner, p->id, NULL, "%s", err->msg);
		serve_pending_free(p);
		return;
	}
	p->next = s->pending;
	s->pending = p;
	s->n_pending++;
	serve_send(s);
}

