/* warden serve: what a learning session's block was refused, as questions
 * its client answers (issue 23; docs/serve.md "Refusals and widening").
 *
 * A session opened with "learn": true (or every session, with serve
 * --learn) gets, after the result of a block that failed, one
 * confirmation per path or host the learner would allow, in Open
 * Interpreter's LMC shape ({"role":"computer","type":"confirmation",
 * "format":"widen",...}), each with an "ask" id; a dangerous one gets a
 * "refused" event that says why and how the person who runs warden can
 * allow it.  The client answers {"op":"widen","ask":ID,"answer":"yes"},
 * the broker asks the supervisor (WIDEN), and the "widened" event says
 * what it decided: serve never widens past what warden was started with
 * (supervisor/widen.c), whatever the client answers.  The client runs the
 * block again itself.  Only the questions of the session's last failed
 * block can be answered: a client names a question, never a path. */
#include <stdio.h>
#include <string.h>

#include "serve_int.h"
#include "warden/util.h"

void swiden_refusals(struct ssession *ss, const char *json)
{
	free(ss->refusals);
	ss->refusals = xstrdup(json ? json : "");
}

void swiden_after_result(struct ssession *ss, json_object *id, const char *language,
                         const struct wresult *res)
{
	char ask[32];

	brefusals_free(&ss->asks);
	if (ss->refusals && brefusals_block_failed(res) &&
	    brefusals_parse(ss->refusals, &ss->asks) == 0) {
		ss->asks_block = res->block;
		for (size_t i = 0; i < ss->asks.n_ask; i++) {
			const struct brefusal *r = &ss->asks.ask[i];
			json_object *ev = serve_lmc(ss, id, "computer", "confirmation");
			json_object *ct = json_object_new_object();
			_cleanup_free_ char *q = brefusal_question(r, ss->profile);

			snprintf(ask, sizeof(ask), "%u.%zu", res->block, i + 1);
			json_object_object_add(ev, "format", json_object_new_string("widen"));
			json_object_object_add(ct, "ask", json_object_new_string(ask));
			json_object_object_add(ct, "question", serve_jstr(q));
			json_object_object_add(ct, "op", serve_jstr(r->op));
			json_object_object_add(ct, "target", serve_jstr(r->target));
			json_object_object_add(ct, "kind", json_object_new_string(wwiden_kind_name(r->kind)));
			json_object_object_add(ct, "value", serve_jstr(r->value));
			json_object_object_add(ct, "restarts", serve_jstr(language));
			json_object_object_add(ev, "content", ct);
			serve_emit(ss->owner, ev);
		}
		for (size_t i = 0; i < ss->asks.n_bad; i++) {
			const struct brefusal *r = &ss->asks.bad[i];
			_cleanup_free_ char *msg = xasprintf(
				"the code tried to %s %s, which is dangerous (%s): warden serve never widens "
				"a session to it; only the person who starts warden can allow it, with a "
				"profile that grants it", brefusal_verb(r->kind), r->value, r->danger);

			serve_event(ss->owner, id, "refused", ss->audit_id, "op", serve_jstr(r->op),
			            "target", serve_jstr(r->target),
			            "kind", json_object_new_string(wwiden_kind_name(r->kind)),
			            "value", serve_jstr(r->value), "dangerous", serve_jstr(r->danger),
			            "message", serve_jstr(msg), (char *)NULL);
		}
	}
	free(ss->refusals);
	ss->refusals = NULL;
}

static const struct brefusal *swiden_find(const struct ssession *ss, const char *ask)
{
	unsigned block;
	size_t i;
	char tail;

	if (sscanf(ask, "%u.%zu%c", &block, &i, &tail) != 2 || block != ss->asks_block || i < 1 ||
	    i > ss->asks.n_ask)
		return NULL;
	return &ss->asks.ask[i - 1];
}

/* widen: a question of the session's last failed block, answered;
 * revoke: every widening dropped.  The supervisor decides (WIDENED). */
void swiden_request(struct serve *s, struct sclient *c, struct ssession *ss,
                    struct serve_req *q)
{
	const struct brefusal *r = NULL;
	struct werr err = { 0 };
	struct spending *p;

	if (q->op == SOP_WIDEN && !(r = swiden_find(ss, q->ask))) {
		serve_error(c, q->id, ss->audit_id, "no question \"%s\" in session \"%s\": only "
		            "those of its last failed block can be answered", q->ask, ss->audit_id);
		return;
	}
	if (q->op == SOP_WIDEN && !q->yes) {
		serve_event(c, q->id, "widened", ss->audit_id, "granted", json_object_new_boolean(0),
		            "status", json_object_new_string("declined"), "message",
		            serve_jstr("not allowed: it stays refused"), (char *)NULL);
		return;
	}
	if (!(p = serve_pending_new(s, c, q)))
		return;
	p->session = xstrdup(ss->audit_id);
	serve_pending_send(s, p, q->op == SOP_REVOKE
	             ? wproto_revoke(&s->b.c.out, p->req, ss->id, &err)
	             : wproto_widen(&s->b.c.out, p->req, ss->id, (uint8_t)r->kind, r->value,
	                            WVIA_SERVE, &err), &err);
}

void swiden_answered(struct sclient *c, json_object *id, const char *session,
                     bool revoke, const struct wmsg *m)
{
	static const char *const status[WW__N] = { "granted", "refused", "declined" };
	const char *text = m->text ? m->text : "";

	if (revoke) {
		serve_event(c, id, "revoked", session, "done", json_object_new_boolean(m->kind == WW_GRANTED),
		            "message", serve_jstr(text), (char *)NULL);
		return;
	}
	serve_event(c, id, "widened", session, "granted", json_object_new_boolean(m->kind == WW_GRANTED),
	            "status", json_object_new_string(status[m->kind < WW__N ? m->kind : WW_REFUSED]),
	            "value", m->kind == WW_GRANTED ? serve_jstr(text) : NULL,
	            "new_jail", json_object_new_boolean(!!(m->flags & WWIDENED_NEW_JAIL)),
	            "message", serve_jstr(m->kind == WW_GRANTED ? "allowed for this session; run the "
	                                  "block again (it runs in a new jail)" : text),
	            (char *)NULL);
}

void swiden_free(struct ssession *ss)
{
	brefusals_free(&ss->asks);
	free(ss->refusals);
	ss->refusals = NULL;
}
