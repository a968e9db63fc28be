/* MCP: what a learning session's block was refused, put to the person
 * (issue 23; docs/mcp.md "Refusals").  Never to the model: the question
 * goes to the client's user through elicitation, and a tool result's text
 * never holds a way to approve (no tool, no argument widens a session).
 *
 *   legacy eras: an elicitation/create request to the client (which
 *     declared the capability in initialize); the call waits; its answer
 *     arrives as a response on the connection;
 *   2026-07-28: the call is answered with an InputRequiredResult (the
 *     elicitation in inputRequests, a requestState of 128 random bits: the
 *     key to this question, kept here, bound to the session and to the
 *     call's code, used once, for ten minutes); the client retries the
 *     call with inputResponses;
 *   a client that cannot elicit: the first result, with a text that says
 *     what was refused and how a person can allow it.
 * Each "yes" becomes a WIDEN, which the supervisor decides within what
 * warden was started with (supervisor/widen.c); when something was
 * granted the block runs again in the widened session, and that run is
 * the call's answer.  mcp.c acts on what is resolved (melicit_resolved);
 * this file calls nothing above it. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "core/sanitize.h"
#include "mcp_int.h"
#include "warden/util.h"

#define ASK_TTL_MS (10 * 60 * 1000)
#define ELICIT_KEY "warden_widen"

struct mask {
	struct mask *next;
	struct msess *sess;
	struct mcall *call;        /* legacy: the running call that waits;
	                            * modern: the retry, once it came */
	bool modern;
	char state[33];            /* modern: requestState */
	char code_sha[65];         /* modern: the code the retry must carry */
	json_object *req_id;       /* legacy: our elicitation/create's id */
	struct mcp_conn *conn;     /* legacy: where it went (NULL: gone) */
	json_object *first;        /* the first run's tool result */
	struct brefusals asks;
	uint32_t reqs[BREFUSALS_MAX];   /* WIDENs sent, by req; 0 answered */
	unsigned waiting, granted;
	bool answered, resolved;
	struct sbuf note;          /* for the model: what the person allowed */
	long expires;
};

static bool random_hex(char *out, size_t bytes)
{
	unsigned char r[32];
	size_t got = 0;

	while (got < bytes) {
		ssize_t n = getrandom(r + got, bytes - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		got += (size_t)n;
	}
	for (size_t i = 0; i < bytes; i++)
		snprintf(out + 2 * i, 3, "%02x", r[i]);
	return true;
}

static void mask_free(struct mask *a)
{
	if (!a)
		return;
	json_object_put(a->req_id);
	json_object_put(a->first);
	brefusals_free(&a->asks);
	sbuf_free(&a->note);
	free(a);
}

/* A text item before the last one (structuredContent as JSON, which
 * stays last: mcp_run.c's tool_result). */
static void text_add(json_object *r, const char *text)
{
	json_object *content, *last, *t = json_object_new_object();
	size_t n;

	json_object_object_add(t, "type", json_object_new_string("text"));
	json_object_object_add(t, "text", mcp_jstr_n(text, strlen(text)));
	if (!json_object_object_get_ex(r, "content", &content) ||
	    !json_object_is_type(content, json_type_array) ||
	    !(n = json_object_array_length(content))) {
		json_object_put(t);
		return;
	}
	last = json_object_get(json_object_array_get_idx(content, n - 1));
	json_object_array_put_idx(content, n - 1, t);
	json_object_array_add(content, last);
}

/* The form: one yes/no per path or host (the schema's flat booleans). */
static json_object *elicit_params(const struct brefusals *q, const char *profile, bool modern)
{
	json_object *p = json_object_new_object(), *schema = json_object_new_object();
	json_object *props = json_object_new_object();
	struct sbuf msg = { 0 };

	sbuf_addf(&msg, "warden: code run through this MCP server was refused by its sandbox "
	          "(profile %s). Allow it for this session? The block then runs again in a new "
	          "jail (its state restarts).", profile ? profile : "?");
	for (size_t i = 0; i < q->n_ask; i++) {
		json_object *b = json_object_new_object();
		char key[32], *title = xasprintf("%s %s", brefusal_verb(q->ask[i].kind),
		                                 q->ask[i].value);
		char *desc = brefusal_question(&q->ask[i], profile);

		snprintf(key, sizeof(key), "allow_%zu", i + 1);
		sbuf_addf(&msg, "\n- %s", title);
		json_object_object_add(b, "type", json_object_new_string("boolean"));
		json_object_object_add(b, "title", mcp_jstr_n(title, strlen(title)));
		json_object_object_add(b, "description", mcp_jstr_n(desc, strlen(desc)));
		json_object_object_add(b, "default", json_object_new_boolean(0));
		json_object_object_add(props, key, b);
		free(title);
		free(desc);
	}
	json_object_object_add(schema, "type", json_object_new_string("object"));
	json_object_object_add(schema, "properties", props);
	if (modern)
		json_object_object_add(p, "mode", json_object_new_string("form"));
	json_object_object_add(p, "message", mcp_jstr_n(msg.d, msg.len));
	json_object_object_add(p, "requestedSchema", schema);
	sbuf_free(&msg);
	return p;
}

/* What a client that cannot ask its person gets, after the output: the
 * refusals, and how a person (never the model) can allow them. */
static void tell_refusals(json_object *r, const struct brefusals *q, const char *profile,
                          bool could_ask)
{
	struct sbuf t = { 0 };

	if (!q->n_ask && !q->n_bad)
		return;
	sbuf_addf(&t, "[warden: the sandbox (profile %s) refused:", profile ? profile : "?");
	for (size_t i = 0; i < q->n_ask; i++)
		sbuf_addf(&t, "\n- %s %s", brefusal_verb(q->ask[i].kind), q->ask[i].value);
	for (size_t i = 0; i < q->n_bad; i++)
		sbuf_addf(&t, "\n- %s %s: dangerous (%s)", brefusal_verb(q->bad[i].kind),
		          q->bad[i].value, q->bad[i].danger);
	if (q->n_ask && !could_ask)
		sbuf_adds(&t, "\nThis MCP client declared no elicitation, so warden could not ask "
		          "the person, and nothing was allowed.");
	sbuf_adds(&t, "\nOnly a person can allow it: with an MCP client that supports "
	          "elicitation (warden then asks them), or by starting warden with a profile "
	          "that grants it (--profile or --allow-profile NAME, --allow-workspace DIR, "
	          "--allow HOST). This is the sandbox working as intended; do not try to get "
	          "around it.]");
	text_add(r, t.d);
	sbuf_free(&t);
}

int melicit_offer(struct mcp_server *s, struct msess *ss, struct mcall *k, json_object *r,
                  bool failed)
{
	struct brefusals q;
	struct mask *a;
	char *refusals = k->refusals;

	k->refusals = NULL;
	if (!refusals || !failed || brefusals_parse(refusals, &q) < 0) {
		free(refusals);
		return MEL_NONE;
	}
	free(refusals);
	if (!q.n_ask || !k->elicit || k->cancelled || (!k->rp.modern && !k->rp.conn)) {
		tell_refusals(r, &q, ss->profile, false);
		brefusals_free(&q);
		return MEL_NONE;
	}
	a = xcalloc(1, sizeof(*a));
	a->sess = ss;
	a->asks = q;
	a->first = r;
	a->modern = k->rp.modern;
	a->expires = mcp_now_ms() + ASK_TTL_MS;
	for (size_t i = 0; i < q.n_bad; i++)   /* dangerous ones: said, never asked */
		tell_refusals(a->first, &(struct brefusals){ .bad = { q.bad[i] }, .n_bad = 1 },
		              ss->profile, true);
	if (a->modern) {
		json_object *ir = json_object_new_object(), *reqs = json_object_new_object();
		json_object *er = json_object_new_object();

		if (!random_hex(a->state, 16)) {
			a->first = NULL;
			mask_free(a);
			tell_refusals(r, &q, ss->profile, false);
			return MEL_NONE;
		}
		sha256_hex(k->code ? k->code : "", k->code ? k->code_len : 0, a->code_sha);
		json_object_object_add(er, "method", json_object_new_string("elicitation/create"));
		json_object_object_add(er, "params", elicit_params(&q, ss->profile, true));
		json_object_object_add(reqs, ELICIT_KEY, er);
		json_object_object_add(ir, "resultType", json_object_new_string("input_required"));
		json_object_object_add(ir, "inputRequests", reqs);
		json_object_object_add(ir, "requestState", json_object_new_string(a->state));
		mcp_answer(&k->rp, ir);
		a->next = s->asks;
		s->asks = a;
		return MEL_ANSWERED;
	}
	/* legacy: a request of ours to the client; the call waits */
	{
		json_object *msg = json_object_new_object();
		char id[48];

		snprintf(id, sizeof(id), "warden-elicit-%u", ++s->next_elicit);
		a->req_id = json_object_new_string(id);
		a->conn = k->rp.conn;
		a->call = k;
		json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
		json_object_object_add(msg, "id", json_object_get(a->req_id));
		json_object_object_add(msg, "method", json_object_new_string("elicitation/create"));
		json_object_object_add(msg, "params", elicit_params(&q, ss->profile, false));
		mcp_send(a->conn, msg);
		json_object_put(msg);
	}
	a->next = s->asks;
	s->asks = a;
	return MEL_WAITING;
}

/* The person's answer (an ElicitResult, or NULL: none): a WIDEN for each
 * yes; resolved at once when there is none. */
static void answered(struct mcp_server *s, struct mask *a, json_object *res)
{
	json_object *v, *content = NULL;
	struct werr err = { 0 };

	a->answered = true;
	if (res && json_object_object_get_ex(res, "action", &v) &&
	    json_object_is_type(v, json_type_string) && !strcmp(json_object_get_string(v), "accept"))
		json_object_object_get_ex(res, "content", &content);
	for (size_t i = 0; content && json_object_is_type(content, json_type_object) &&
	                   i < a->asks.n_ask; i++) {
		char key[32];

		snprintf(key, sizeof(key), "allow_%zu", i + 1);
		if (!json_object_object_get_ex(content, key, &v) ||
		    !json_object_is_type(v, json_type_boolean) || !json_object_get_boolean(v))
			continue;
		a->reqs[i] = s->b->next_req++;
		if (wproto_widen(&s->b->c.out, a->reqs[i], a->sess->id, (uint8_t)a->asks.ask[i].kind,
		                 a->asks.ask[i].value, WVIA_MCP, &err) < 0) {
			a->reqs[i] = 0;
			continue;
		}
		a->waiting++;
	}
	if (a->waiting)
		mcp_sup_flush(s);
	else {
		sbuf_adds(&a->note, "[warden: the person did not allow what the block was refused]");
		a->resolved = true;
	}
}

int melicit_response(struct mcp_server *s, struct mcp_conn *c, const struct mcp_msg *m)
{
	for (struct mask *a = s->asks; a; a = a->next) {
		if (a->modern || a->answered || a->conn != c || !m->id ||
		    !json_object_equal(a->req_id, m->id))
			continue;
		answered(s, a, m->result);
		return 1;
	}
	return 0;
}

int melicit_retry(struct mcp_server *s, struct mcall *k, const struct mcp_call *call)
{
	struct mask *a = NULL;
	json_object *res = NULL;
	char sha[65];

	for (a = s->asks; a; a = a->next)
		if (a->modern && !a->call && a->sess && !strcmp(a->state, call->request_state))
			break;
	sha256_hex(k->code ? k->code : "", k->code ? k->code_len : 0, sha);
	if (!a || strcmp(a->code_sha, sha) || a->sess->closing)
		return -1;
	a->call = k;
	k->sess = a->sess;
	if (call->input_responses)
		json_object_object_get_ex(call->input_responses, ELICIT_KEY, &res);
	answered(s, a, res && json_object_is_type(res, json_type_object) ? res : NULL);
	return 0;
}

int melicit_widened(struct mcp_server *s, const struct wmsg *m)
{
	for (struct mask *a = s->asks; a; a = a->next)
		for (size_t i = 0; i < a->asks.n_ask; i++) {
			_cleanup_free_ char *v = NULL;

			if (!a->reqs[i] || a->reqs[i] != m->req)
				continue;
			a->reqs[i] = 0;
			a->waiting--;
			v = wsan_str(m->text ? m->text : "", m->text ? strlen(m->text) : 0);
			if (m->kind == WW_GRANTED) {
				a->granted++;
				sbuf_addf(&a->note, "%s[warden: the person allowed the code to %s %s for this "
				          "session; the block ran again, in a new jail:]",
				          a->note.len ? "\n" : "", brefusal_verb(a->asks.ask[i].kind), v);
			} else {
				sbuf_addf(&a->note, "%s[warden: %s]", a->note.len ? "\n" : "", v);
			}
			if (!a->waiting)
				a->resolved = true;
			return 1;
		}
	return 0;
}

struct mask *melicit_resolved(struct mcp_server *s)
{
	for (struct mask **pp = &s->asks; *pp; pp = &(*pp)->next)
		if ((*pp)->resolved) {
			struct mask *a = *pp;
			*pp = a->next;
			return a;
		}
	return NULL;
}

void melicit_resolve(struct mcp_server *s, struct mask *a, struct melicit_out *out)
{
	out->sess = a->sess;
	out->call = a->call;
	out->rerun = a->granted > 0;
	out->note = a->note.len ? sbuf_steal(&a->note) : NULL;
	out->first = NULL;
	if (!out->rerun) {
		out->first = a->first;
		a->first = NULL;
		if (out->note)
			text_add(out->first, out->note);
	}
	out->legacy = !a->modern;
	mask_free(a);
	(void)s;
}

void melicit_tick(struct mcp_server *s, long now)
{
	for (struct mask **pp = &s->asks; *pp;) {
		struct mask *a = *pp;

		if (now < a->expires || a->answered) {
			pp = &a->next;
			continue;
		}
		if (!a->modern) {   /* nobody answered: the call gets its first result */
			sbuf_adds(&a->note, "[warden: nobody answered the question within 10 minutes]");
			a->answered = a->resolved = true;
			pp = &a->next;
			continue;
		}
		*pp = a->next;      /* a question nobody came back for */
		mask_free(a);
	}
}

long melicit_next(const struct mcp_server *s)
{
	long next = -1;

	for (const struct mask *a = s->asks; a; a = a->next)
		if (!a->answered && (next < 0 || a->expires < next))
			next = a->expires;
	return next;
}

void melicit_forget(struct mcp_server *s, struct msess *ss, struct mcp_conn *c)
{
	for (struct mask **pp = &s->asks; *pp;) {
		struct mask *a = *pp;

		if (c && a->conn == c)
			a->conn = NULL;   /* its answer cannot come: it expires */
		if (c && a->modern && a->call) {   /* a retry's answer goes nowhere now */
			if (a->call->rp.conn == c)
				a->call->rp.conn = NULL;
			if (a->call->rp.batch && a->call->rp.batch->conn == c)
				a->call->rp.batch->conn = NULL;
		}
		if ((ss && a->sess == ss) || (!ss && !c)) {
			if (a->modern && a->call) {
				/* a retry waiting for its WIDENs: answered by mcp.c */
				a->sess = NULL;
				a->resolved = true;
				pp = &a->next;
				continue;
			}
			*pp = a->next;     /* a legacy call: its session ends it */
			mask_free(a);
			continue;
		}
		pp = &a->next;
	}
}

void melicit_drop_call(struct mcp_server *s, struct mcall *k)
{
	for (struct mask **pp = &s->asks; *pp;) {
		struct mask *a = *pp;

		if (a->call == k) {
			*pp = a->next;
			mask_free(a);
			continue;
		}
		pp = &a->next;
	}
}
