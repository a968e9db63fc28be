/* The MCP core (mcp.h): messages in, answers out, sessions on the
 * supervisor connection.  The tools' calls are mcp_run.c's; what the tools
 * say about themselves is mcp_tools.c's.
 *
 * Eras (docs/specification/2026-07-28/basic/versioning "A dual-era
 * server"): a request with the modern _meta is served statelessly, as
 * 2026-07-28; initialize selects a legacy revision for its connection.
 * Both may share one connection.  Answers of the modern era carry
 * resultType "complete" and the server's identity in _meta; legacy ones
 * carry neither (their schemas have no such members): mcp_reply.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "core/langs.h"
#include "mcp_int.h"
#include "warden/util.h"

static void answer_decode_error(struct mreply *rp, const struct mcp_error *e)
{
	json_object *data = NULL;

	if (e->code == MCP_E_VERSION) {
		static const char *const all[] = { MCP_MODERN_VERSION, MCP_LEGACY_VERSIONS };
		json_object *sup = json_object_new_array();
		for (size_t i = 0; i < ARRAY_SIZE(all); i++)
			json_object_array_add(sup, json_object_new_string(all[i]));
		data = json_object_new_object();
		json_object_object_add(data, "supported", sup);
		json_object_object_add(data, "requested",
		                       mcp_jstr_n(e->requested, strlen(e->requested)));
	}
	mcp_answer_error(rp, e->code, e->msg, data);
}

/* ---- sessions ----------------------------------------------------------- */

struct msess *mcp_sess_by_handle(struct mcp_server *s, const char *handle)
{
	for (struct msess *ss = s->sessions; ss; ss = ss->next)
		if (!strcmp(ss->handle, handle))
			return ss;
	return NULL;
}

struct msess *mcp_sess_by_id(struct mcp_server *s, uint32_t id)
{
	for (struct msess *ss = s->sessions; ss; ss = ss->next)
		if (ss->id == id)
			return ss;
	return NULL;
}

/* 128 random bits as hex: a handle is the only key to a session, and over
 * HTTP every holder of the listener's token could try to guess one.
 * getrandom blocks only before the kernel's pool is initialised. */
static int new_handle(char out[2 * MCP_HANDLE_BYTES + 1])
{
	unsigned char r[MCP_HANDLE_BYTES];
	size_t got = 0;

	while (got < sizeof(r)) {
		ssize_t n = getrandom(r + got, sizeof(r) - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof(r); i++)
		snprintf(out + 2 * i, 3, "%02x", r[i]);
	return 0;
}

static struct msess *sess_add(struct mcp_server *s, uint32_t id, const char *audit_id,
                              const char *langs, const char *profile, const char *workspace)
{
	struct msess *ss = xcalloc(1, sizeof(*ss));

	if (new_handle(ss->handle) < 0) {
		free(ss);
		return NULL;
	}
	ss->id = id;
	ss->audit_id = xstrdup(audit_id ? audit_id : "");
	ss->profile = xstrdup(profile ? profile : "");
	ss->workspace = xstrdup(workspace ? workspace : "");
	ss->languages = blang_trusted_json(langs, json_type_array);
	if (!ss->languages)
		ss->languages = json_object_new_array();
	ss->last_used = mcp_now_ms();
	ss->next = s->sessions;
	s->sessions = ss;
	return ss;
}

static void sess_remove(struct mcp_server *s, struct msess *ss)
{
	melicit_forget(s, ss, NULL);
	for (struct msess **pp = &s->sessions; *pp; pp = &(*pp)->next)
		if (*pp == ss) {
			*pp = ss->next;
			break;
		}
	for (struct mcp_conn *c = s->conns; c; c = c->next)
		if (c->dflt == ss)
			c->dflt = NULL;
	if (ss->close_answer)
		mcp_reply_drop(&ss->close_rp);
	json_object_put(ss->languages);
	free(ss->audit_id);
	free(ss->profile);
	free(ss->workspace);
	free(ss);
}

/* Queued and running calls get their answers; CLOSE goes out.  The
 * session stays in the table until CLOSED. */
void mcp_sess_close(struct mcp_server *s, struct msess *ss)
{
	struct werr err = { 0 };

	if (ss->closing)
		return;
	ss->closing = true;
	while (ss->q_head) {
		struct mcall *k = ss->q_head;
		ss->q_head = k->next;
		ss->queued--;
		s->n_waiting--;
		mcall_fail(k, "session %s was closed before this block ran", ss->handle);
		mcall_free(k);
	}
	ss->q_tail = NULL;
	if (wproto_close(&s->b->c.out, ss->id, &err) < 0) {
		fprintf(stderr, "warden-broker: %s\n", err.msg);
		return;
	}
	mcp_sup_flush(s);
}

int mcp_open(struct mcp_server *s, struct mreply *rp, struct mcp_conn *for_conn,
             const char *profile, const char *workspace, struct mcall *waiting)
{
	struct werr err = { 0 };
	struct mopen *o;

	if (!profile)
		profile = s->b->default_profile;
	if (!workspace)
		workspace = s->b->default_workspace;
	o = xcalloc(1, sizeof(*o));
	o->req = s->b->next_req++;
	if (rp) {   /* taken: the caller's copy answers nothing now */
		o->rp = *rp;
		memset(rp, 0, sizeof(*rp));
	}
	o->for_conn = for_conn;
	o->profile = profile ? xstrdup(profile) : NULL;
	o->workspace = workspace ? xstrdup(workspace) : NULL;
	o->w_head = o->w_tail = waiting;
	if (wproto_open(&s->b->c.out, o->req, profile, workspace, 0, &err) < 0) {
		if (rp)
			mcp_answer_error(&o->rp, MCP_E_INTERNAL, err.msg, NULL);
		if (waiting) {
			mcall_fail(waiting, "%s", err.msg);
			mcall_free(waiting);
		}
		free(o->profile);
		free(o->workspace);
		free(o);
		return -1;
	}
	if (for_conn)
		for_conn->dflt_opening = o;
	o->next = s->opens;
	s->opens = o;
	s->n_waiting++;
	mcp_sup_flush(s);
	return 0;
}

static struct mopen *open_take(struct mcp_server *s, uint32_t req)
{
	for (struct mopen **pp = &s->opens; *pp; pp = &(*pp)->next)
		if ((*pp)->req == req) {
			struct mopen *o = *pp;
			*pp = o->next;
			s->n_waiting--;
			if (o->for_conn && o->for_conn->dflt_opening == o)
				o->for_conn->dflt_opening = NULL;
			return o;
		}
	return NULL;
}

static void open_free(struct mopen *o)
{
	free(o->profile);
	free(o->workspace);
	free(o);
}

/* ---- the supervisor's frames ---------------------------------------------- */

static void on_opened(struct mcp_server *s, struct mopen *o, const struct wmsg *m)
{
	struct msess *ss = sess_add(s, m->session, m->audit_id, m->langs, o->profile, o->workspace);

	if (!ss) {
		struct werr err = { 0 };
		if (o->rp.id || o->rp.batch)
			mcp_answer_error(&o->rp, MCP_E_INTERNAL, "no random bytes for a session handle",
			                 NULL);
		while (o->w_head) {
			struct mcall *k = o->w_head;
			o->w_head = k->next;
			s->n_waiting--;
			mcall_fail(k, "no random bytes for a session handle");
			mcall_free(k);
		}
		if (wproto_close(&s->b->c.out, m->session, &err) == 0)
			mcp_sup_flush(s);
		return;
	}
	ss->given = true;
	if (o->for_conn) {
		o->for_conn->dflt = ss;
		ss->owner = o->for_conn;
	}
	if (o->rp.id || o->rp.batch)
		mrun_opened(s, ss, &o->rp);
	while (o->w_head) {
		struct mcall *k = o->w_head;
		o->w_head = k->next;
		k->next = NULL;
		s->n_waiting--;
		mrun_enqueue(s, ss, k);
	}
	if (s->closing_all)   /* opened after the end began: it ends too */
		mcp_sess_close(s, ss);
}

static void on_open_error(struct mcp_server *s, struct mopen *o, const char *msg)
{
	if (o->rp.id || o->rp.batch) {
		struct mcall k = { .rp = o->rp, .tool = MCP_T_OPEN_SESSION };
		o->rp.id = NULL;
		o->rp.batch = NULL;
		mcall_fail(&k, "the session could not open: %s", msg);
	}
	while (o->w_head) {
		struct mcall *k = o->w_head;
		o->w_head = k->next;
		s->n_waiting--;
		mcall_fail(k, "the session could not open: %s", msg);
		mcall_free(k);
	}
}

static void on_closed(struct mcp_server *s, struct msess *ss)
{
	ss->closing = true;
	if (ss->running)
		mrun_error(s, ss, "the session was closed while this block ran");
	while (ss->q_head) {
		struct mcall *k = ss->q_head;
		ss->q_head = k->next;
		ss->queued--;
		s->n_waiting--;
		mcall_fail(k, "session %s was closed before this block ran", ss->handle);
		mcall_free(k);
	}
	if (ss->close_answer) {
		json_object *r = json_object_new_object(), *sc = json_object_new_object(),
		            *content = json_object_new_array(), *t = json_object_new_object();
		json_object_object_add(sc, "session", json_object_new_string(ss->handle));
		json_object_object_add(sc, "closed", json_object_new_boolean(1));
		json_object_object_add(t, "type", json_object_new_string("text"));
		json_object_object_add(t, "text", json_object_new_string(
			json_object_to_json_string_ext(sc, JSON_C_TO_STRING_PLAIN)));
		json_object_array_add(content, t);
		json_object_object_add(r, "content", content);
		json_object_object_add(r, "structuredContent", sc);
		json_object_object_add(r, "isError", json_object_new_boolean(0));
		ss->close_answer = false;
		mcp_answer(&ss->close_rp, r);
	}
	sess_remove(s, ss);
}

/* Questions to persons that are settled (mcp_elicit.c): the call gets its
 * first result, or its block runs again in the widened session. */
static void resolve(struct mcp_server *s)
{
	struct mask *a;

	while ((a = melicit_resolved(s))) {
		struct melicit_out o;
		struct mcall *k;

		melicit_resolve(s, a, &o);
		k = o.call;
		if (!k) {
			json_object_put(o.first);
			free(o.note);
			continue;
		}
		if (!o.sess) {   /* a retry whose session closed meanwhile */
			json_object_put(o.first);
			free(o.note);
			mcall_fail(k, "the session was closed before this block could run again");
			mcall_free(k);
		} else if (o.legacy && (k->cancelled || !o.rerun)) {
			if (!k->cancelled)
				mcp_answer(&k->rp, o.first);
			else
				json_object_put(o.first);
			free(o.note);
			mrun_finish(s, o.sess);
		} else if (o.legacy) {
			mrun_rerun(s, o.sess, k, o.note);
		} else if (o.rerun) {
			free(k->note);
			k->note = o.note;
			mrun_enqueue(s, o.sess, k);
		} else {
			mcp_answer(&k->rp, o.first);
			free(o.note);
			mcall_free(k);
		}
	}
}

int mcp_server_frame(struct mcp_server *s, const struct wmsg *m)
{
	struct msess *ss;
	struct mopen *o;

	switch (m->type) {
	case WM_OPENED:
		if (!(o = open_take(s, m->req)))
			return 0;
		on_opened(s, o, m);
		open_free(o);
		return 1;
	case WM_ERROR:
		if (m->req && (o = open_take(s, m->req))) {
			on_open_error(s, o, m->text && *m->text ? m->text : "the supervisor refused");
			open_free(o);
			return 1;
		}
		if (!m->session || !(ss = mcp_sess_by_id(s, m->session)))
			return 0;
		if (ss->running && (m->block == ss->running->block || m->block == 0))
			mrun_error(s, ss, m->text && *m->text ? m->text : "the supervisor refused");
		else
			fprintf(stderr, "warden-broker: session %s: %s\n", ss->audit_id,
			        m->text ? m->text : "");
		return 1;
	case WM_OUTPUT:
	case WM_DISPLAY:
	case WM_LINE:
	case WM_AUDIT:
		if (!(ss = mcp_sess_by_id(s, m->session)))
			return 0;
		if (ss->running && ss->running->block == m->block) {
			if (m->type == WM_OUTPUT)
				mrun_output(ss->running, m->stream, m->data, m->data_len);
			else if (m->type == WM_DISPLAY)
				mrun_display(ss->running, m->format, m->data, m->data_len);
		}
		return 1;   /* lines and audit events: the result carries what matters */
	case WM_REFUSALS:
		if (!(ss = mcp_sess_by_id(s, m->session)))
			return 0;
		if (ss->running && ss->running->block == m->block) {
			free(ss->running->refusals);
			ss->running->refusals = xstrdup(m->text ? m->text : "");
		}
		return 1;
	case WM_WIDENED:
		if (!melicit_widened(s, m))
			return 0;
		resolve(s);
		return 1;
	case WM_RESULT:
		if (!(ss = mcp_sess_by_id(s, m->res.session)))
			return 0;
		if (ss->running && ss->running->block == m->res.block)
			mrun_result(s, ss, &m->res);
		return 1;
	case WM_CLOSED:
		if (!(ss = mcp_sess_by_id(s, m->session)))
			return 0;
		on_closed(s, ss);
		return 1;
	default:
		return 0;
	}
}

/* ---- messages ------------------------------------------------------------- */

static void do_initialize(struct mcp_conn *c, struct mreply *rp, const struct mcp_msg *m)
{
	json_object *r = json_object_new_object();

	/* the client's version when this server speaks it, else our latest
	 * (2025-11-25 lifecycle, "Version Negotiation") */
	snprintf(c->legacy, sizeof(c->legacy), "%s",
	         mcp_legacy_version(m->version) ? m->version : MCP_LEGACY_LATEST);
	/* elicitation is a revision of 2025-06-18 and later */
	c->elicit = m->elicit && strcmp(c->legacy, "2025-03-26");
	json_object_object_add(r, "protocolVersion", json_object_new_string(c->legacy));
	json_object_object_add(r, "capabilities", mtools_capabilities());
	json_object_object_add(r, "serverInfo", mtools_server_info(c->srv));
	json_object_object_add(r, "instructions", json_object_new_string(c->srv->instructions));
	mcp_answer(rp, r);
}

static void do_discover(struct mcp_conn *c, struct mreply *rp)
{
	static const char *const all[] = { MCP_MODERN_VERSION, MCP_LEGACY_VERSIONS };
	json_object *r = json_object_new_object(), *v = json_object_new_array();

	for (size_t i = 0; i < ARRAY_SIZE(all); i++)
		json_object_array_add(v, json_object_new_string(all[i]));
	json_object_object_add(r, "supportedVersions", v);
	json_object_object_add(r, "capabilities", mtools_capabilities());
	json_object_object_add(r, "instructions", json_object_new_string(c->srv->instructions));
	json_object_object_add(r, "ttlMs", json_object_new_int(MCP_LIST_TTL_MS));
	json_object_object_add(r, "cacheScope", json_object_new_string("private"));
	mcp_answer(rp, r);
}

static void do_tools_list(struct mcp_conn *c, struct mreply *rp)
{
	json_object *r = json_object_new_object();

	json_object_object_add(r, "tools", mtools_list(c->srv));
	if (rp->modern) {
		/* the list is the same for every caller, but it names this
		 * machine's workspace: no shared caches */
		json_object_object_add(r, "ttlMs", json_object_new_int(MCP_LIST_TTL_MS));
		json_object_object_add(r, "cacheScope", json_object_new_string("private"));
	}
	mcp_answer(rp, r);
}

static bool id_equal(json_object *a, json_object *b)
{
	if (!a || !b || json_object_get_type(a) != json_object_get_type(b))
		return false;
	if (json_object_is_type(a, json_type_int))
		return json_object_get_int64(a) == json_object_get_int64(b);
	return json_object_get_string_len(a) == json_object_get_string_len(b) &&
	       !memcmp(json_object_get_string(a), json_object_get_string(b),
	               (size_t)json_object_get_string_len(a));
}

/* notifications/cancelled: the call is never answered; a running block is
 * interrupted (its session keeps its state), a waiting one never runs. */
static void do_cancel(struct mcp_conn *c, json_object *id)
{
	struct mcp_server *s = c->srv;

	for (struct msess *ss = s->sessions; ss; ss = ss->next) {
		struct mcall **pp;
		if (ss->running && ss->running->rp.conn == c && id_equal(ss->running->rp.id, id) &&
		    !ss->running->cancelled) {
			ss->running->cancelled = true;
			mcp_reply_drop(&ss->running->rp);
			mrun_interrupt(s, ss);   /* the block stops, the session stays */
			return;
		}
		for (pp = &ss->q_head; *pp; pp = &(*pp)->next)
			if ((*pp)->rp.conn == c && id_equal((*pp)->rp.id, id)) {
				struct mcall *k = *pp;
				*pp = k->next;
				if (ss->q_tail == k) {
					ss->q_tail = NULL;
					for (struct mcall *q = ss->q_head; q; q = q->next)
						ss->q_tail = q;
				}
				ss->queued--;
				s->n_waiting--;
				mcp_reply_drop(&k->rp);
				mcall_free(k);
				return;
			}
	}
	for (struct mopen *o = s->opens; o; o = o->next) {
		if (o->rp.conn == c && id_equal(o->rp.id, id)) {
			mcp_reply_drop(&o->rp);   /* the session opens all the same */
			return;
		}
		for (struct mcall **pp = &o->w_head; *pp; pp = &(*pp)->next)
			if ((*pp)->rp.conn == c && id_equal((*pp)->rp.id, id)) {
				struct mcall *k = *pp;
				*pp = k->next;
				if (o->w_tail == k) {
					o->w_tail = NULL;
					for (struct mcall *q = o->w_head; q; q = q->next)
						o->w_tail = q;
				}
				s->n_waiting--;
				mcp_reply_drop(&k->rp);
				mcall_free(k);
				return;
			}
	}
	/* unknown or already answered: ignored (cancellation, "Error Handling") */
}

static void do_call(struct mcp_conn *c, struct mreply *rp, struct mcp_msg *m)
{
	struct mcp_server *s = c->srv;
	struct mcall *k;
	struct msess *ss;

	if (s->n_waiting >= MCP_CALLS_MAX) {
		mcp_answer_error(rp, MCP_E_INTERNAL, "too many calls are waiting; send more after "
		                 "their answers", NULL);
		return;
	}
	switch (m->call.tool) {
	case MCP_T_OPEN_SESSION:
		mcp_open(s, rp, NULL, m->call.profile, m->call.workspace, NULL);
		return;
	case MCP_T_CLOSE_SESSION:
		ss = mcp_sess_by_handle(s, m->call.session);
		k = mcall_new(rp, &m->call);
		if (!ss || ss->closing) {
			mcall_fail(k, "unknown session \"%s\" (closed already, or never opened)",
			           m->call.session);
			mcall_free(k);
			return;
		}
		ss->close_rp = k->rp;
		memset(&k->rp, 0, sizeof(k->rp));
		ss->close_answer = true;
		mcall_free(k);
		mcp_sess_close(s, ss);
		return;
	case MCP_T_RUN_CODE:
		k = mcall_new(rp, &m->call);
		k->elicit = m->modern ? m->elicit : c->elicit;
		if (m->call.request_state) {
			/* the retry after input_required: in the question's session */
			if (!m->modern || melicit_retry(s, k, &m->call) < 0) {
				mcall_fail(k, "requestState does not name a question of this server for "
				           "this code (it was answered already, expired after 10 minutes, "
				           "or its session closed): call run_code again without it");
				mcall_free(k);
				return;
			}
			resolve(s);
			return;
		}
		if (m->call.session) {
			ss = mcp_sess_by_handle(s, m->call.session);
			if (!ss || ss->closing) {
				mcall_fail(k, "unknown session \"%s\": it was closed, or never opened; "
				           "leave \"session\" out, or call open_session for a new one",
				           m->call.session);
				mcall_free(k);
				return;
			}
			mrun_enqueue(s, ss, k);
			return;
		}
		if (c->flags & MCP_CONN_DEFAULT_SESSION) {
			if (c->dflt && !c->dflt->closing) {
				mrun_enqueue(s, c->dflt, k);
				return;
			}
			if (c->dflt_opening) {   /* the connection's session is on its way */
				if (c->dflt_opening->w_tail)
					c->dflt_opening->w_tail->next = k;
				else
					c->dflt_opening->w_head = k;
				c->dflt_opening->w_tail = k;
				s->n_waiting++;
				return;
			}
		}
		/* the session mcp_server_start opened, if nobody has it yet */
		for (ss = s->sessions; ss; ss = ss->next)
			if (!ss->given && !ss->closing)
				break;
		if (ss) {
			ss->given = true;
			if (c->flags & MCP_CONN_DEFAULT_SESSION) {
				c->dflt = ss;
				ss->owner = c;
			}
			mrun_enqueue(s, ss, k);
			return;
		}
		s->n_waiting++;
		mcp_open(s, NULL, c->flags & MCP_CONN_DEFAULT_SESSION ? c : NULL, NULL, NULL, k);
		return;
	case MCP_T_NONE:
		break;
	}
	mcp_answer_error(rp, MCP_E_PARAMS, "unknown tool", NULL);
}

static void handle_msg(struct mcp_conn *c, json_object *o, struct mbatch *bt)
{
	struct mreply rp = { .conn = bt ? NULL : c, .batch = NULL };
	struct mcp_error e;
	struct mcp_msg m;
	int r = mcp_decode(o, &m, &e);
	/* requests are answered, and so is what is not even a notification;
	 * a notification never is, even a malformed one */
	bool answer = m.kind == MCP_K_REQUEST || (r < 0 && m.kind == MCP_K_NONE);

	if (answer) {
		rp.id = json_object_get(m.id);
		rp.modern = m.modern;
		if (bt) {
			rp.batch = bt;
			bt->waiting++;
		}
	}
	if (r < 0) {
		if (answer)
			answer_decode_error(&rp, &e);
		mcp_reply_drop(&rp);
		mcp_msg_free(&m);
		return;
	}
	if (m.kind != MCP_K_REQUEST) {
		if (m.method == MCP_M_CANCELLED)
			do_cancel(c, m.cancel_id);
		if (m.kind == MCP_K_RESPONSE && melicit_response(c->srv, c, &m))
			resolve(c->srv);
		/* notifications/initialized, responses, unknown notifications: nothing */
		mcp_msg_free(&m);
		return;
	}
	/* a legacy request needs its connection initialized first */
	if (!m.modern && !c->legacy[0] && m.method != MCP_M_INITIALIZE && m.method != MCP_M_PING) {
		mcp_answer_error(&rp, MCP_E_PARAMS, "send initialize first (legacy revisions), or "
		                 "give every request params._meta with "
		                 "\"io.modelcontextprotocol/protocolVersion\":\"" MCP_MODERN_VERSION
		                 "\" and \"io.modelcontextprotocol/clientCapabilities\"", NULL);
		mcp_msg_free(&m);
		return;
	}
	switch (m.method) {
	case MCP_M_INITIALIZE: do_initialize(c, &rp, &m); break;
	case MCP_M_PING: mcp_answer(&rp, json_object_new_object()); break;
	case MCP_M_DISCOVER: do_discover(c, &rp); break;
	case MCP_M_TOOLS_LIST: do_tools_list(c, &rp); break;
	case MCP_M_TOOLS_CALL: do_call(c, &rp, &m); break;
	case MCP_M_INITIALIZED:
	case MCP_M_CANCELLED:
	case MCP_M_UNKNOWN:
		mcp_answer_error(&rp, MCP_E_METHOD, "Method not found", NULL);
		break;
	}
	mcp_reply_drop(&rp);   /* answered (or handed on) already: a no-op then */
	mcp_msg_free(&m);
}

void mcp_conn_line(struct mcp_conn *c, const char *line, size_t len)
{
	struct mreply rp = { .conn = c };
	struct mcp_error e;
	json_object *root;
	struct mbatch *bt;
	size_t i, n;
	int r = mcp_decode_line(line, len, &root, &e);

	if (r == 1)
		return;
	if (r < 0) {
		answer_decode_error(&rp, &e);
		return;
	}
	if (!json_object_is_type(root, json_type_array)) {
		handle_msg(c, root, NULL);
		json_object_put(root);
		return;
	}
	if (strcmp(c->legacy, MCP_BATCH_VERSION)) {
		mcp_answer_error(&rp, MCP_E_INVALID_REQUEST, "a batch (a JSON array) is part of "
		                 "revision " MCP_BATCH_VERSION " only: send one message per line",
		                 NULL);
		json_object_put(root);
		return;
	}
	bt = xcalloc(1, sizeof(*bt));
	bt->conn = c;
	bt->answers = json_object_new_array();
	bt->waiting = 1;   /* held until every member was handled */
	n = json_object_array_length(root);
	for (i = 0; i < n; i++)
		handle_msg(c, json_object_array_get_idx(root, i), bt);
	mcp_batch_release(bt);
	json_object_put(root);
}

/* ---- connections, the server ---------------------------------------------- */

struct mcp_conn *mcp_conn_new(struct mcp_server *s, unsigned flags, mcp_send_fn send, void *ctx)
{
	struct mcp_conn *c = xcalloc(1, sizeof(*c));

	c->srv = s;
	c->flags = flags;
	c->send = send;
	c->ctx = ctx;
	c->next = s->conns;
	s->conns = c;
	return c;
}

/* Everything that would answer to c answers to no one. */
static void forget_conn(struct mcp_server *s, struct mcp_conn *c, struct mreply *rp)
{
	if (rp->conn == c)
		rp->conn = NULL;
	if (rp->batch && rp->batch->conn == c)
		rp->batch->conn = NULL;
	(void)s;
}

void mcp_conn_free(struct mcp_conn *c)
{
	struct mcp_server *s;

	if (!c)
		return;
	s = c->srv;
	for (struct msess *ss = s->sessions; ss; ss = ss->next) {
		if (ss->running && (ss->running->rp.conn == c ||
		                    (ss->running->rp.batch && ss->running->rp.batch->conn == c)) &&
		    !ss->running->cancelled) {
			ss->running->cancelled = true;   /* its client is gone */
			forget_conn(s, c, &ss->running->rp);
			mrun_interrupt(s, ss);
		}
		for (struct mcall *k = ss->q_head; k; k = k->next)
			forget_conn(s, c, &k->rp);
		if (ss->close_answer)
			forget_conn(s, c, &ss->close_rp);
		if (ss->owner == c) {
			ss->owner = NULL;
			mcp_sess_close(s, ss);
		}
	}
	for (struct mopen *o = s->opens; o; o = o->next) {
		forget_conn(s, c, &o->rp);
		for (struct mcall *k = o->w_head; k; k = k->next)
			forget_conn(s, c, &k->rp);
		if (o->for_conn == c)
			o->for_conn = NULL;
	}
	melicit_forget(s, NULL, c);
	for (struct mcp_conn **pp = &s->conns; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	free(c);
}

struct mcp_server *mcp_server_new(struct bclient *b, const struct mcp_opts *o)
{
	struct mcp_server *s = xcalloc(1, sizeof(*s));

	s->b = b;
	if (o)
		s->o = *o;
	if (!s->o.output_max)
		s->o.output_max = MCP_OUTPUT_MAX;
	if (!s->o.server_version)
		s->o.server_version = "0";
	return s;
}

int mcp_server_start(struct mcp_server *s, struct werr *err)
{
	struct bsession first;

	if (bclient_open(s->b, NULL, NULL, 0, &first, err) < 0)
		return -1;
	if (mtools_facts(s, &first, err) < 0 ||
	    !sess_add(s, first.id, first.audit_id, first.languages_json, s->b->default_profile,
	              s->b->default_workspace)) {
		if (!err->msg[0])
			werr_set(err, 0, "no random bytes for a session handle");
		bsession_free(&first);
		return -1;
	}
	bsession_free(&first);
	return 0;
}

bool mcp_server_done(const struct mcp_server *s)
{
	return !s->sessions && !s->opens;
}

void mcp_server_close_all(struct mcp_server *s)
{
	s->closing_all = true;
	for (struct msess *ss = s->sessions; ss; ss = ss->next)
		mcp_sess_close(s, ss);
}

void mcp_server_close_untaken(struct mcp_server *s)
{
	for (struct msess *ss = s->sessions; ss; ss = ss->next)
		if (!ss->given)
			mcp_sess_close(s, ss);
}

int mcp_server_timeout(const struct mcp_server *s, long now)
{
	long next = -1;

	for (const struct msess *ss = s->sessions; ss; ss = ss->next) {
		long t = -1;
		if (ss->running && ss->running->deadline && !ss->running->interrupted)
			t = ss->running->deadline;
		else if (s->o.idle_ms && !ss->running && !ss->closing && !ss->owner)
			t = ss->last_used + (long)s->o.idle_ms;
		if (t >= 0 && (next < 0 || t < next))
			next = t;
	}
	{
		long a = melicit_next(s);

		if (a >= 0 && (next < 0 || a < next))
			next = a;
	}
	if (next < 0)
		return -1;
	return next <= now ? 0 : (int)(next - now > 60000 ? 60000 : next - now);
}

void mcp_server_tick(struct mcp_server *s, long now)
{
	for (struct msess *ss = s->sessions; ss; ss = ss->next) {
		struct mcall *k = ss->running;
		if (k && k->deadline && !k->interrupted && now >= k->deadline) {
			k->timed_out = true;
			mrun_interrupt(s, ss);
		} else if (s->o.idle_ms && !k && !ss->closing && !ss->owner &&
		           now - ss->last_used >= (long)s->o.idle_ms) {
			mcp_sess_close(s, ss);
		}
	}
	melicit_tick(s, now);
	resolve(s);
}

void mcp_server_free(struct mcp_server *s)
{
	if (!s)
		return;
	while (s->conns)
		mcp_conn_free(s->conns);
	melicit_forget(s, NULL, NULL);
	resolve(s);
	while (s->opens) {
		struct mopen *o = s->opens;
		s->opens = o->next;
		mcp_reply_drop(&o->rp);
		while (o->w_head) {
			struct mcall *k = o->w_head;
			o->w_head = k->next;
			mcall_free(k);
		}
		open_free(o);
	}
	while (s->sessions) {
		struct msess *ss = s->sessions;
		if (ss->running)
			mcall_free(ss->running);
		while (ss->q_head) {
			struct mcall *k = ss->q_head;
			ss->q_head = k->next;
			mcall_free(k);
		}
		ss->running = NULL;
		sess_remove(s, ss);
	}
	json_object_put(s->policy);
	json_object_put(s->limits);
	json_object_put(s->languages);
	free(s->profile);
	free(s->workspace);
	free(s->run_code_desc);
	free(s->instructions);
	free(s);
}
