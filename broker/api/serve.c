/* The serve protocol over one supervisor connection, for any number of
 * clients (serve.h; docs/serve.md has the protocol and an example).
 *
 * Requests are parsed by api_stdio_parse.c.  What the supervisor refuses
 * (a profile the user did not allow, a workspace outside the served ones)
 * comes back as ERROR and becomes an error event of the request.  A
 * language the session does not have is refused here, with the list of the
 * ones it has, and a RUN is never sent while a block of the same session
 * runs.
 *
 * Per session: at most one block runs; later runs wait in a bounded queue
 * and go out when the RESULT arrives.  Output is passed through
 * utf8_sanitize per stream, so the JSON is valid UTF-8 whatever the jail
 * prints.
 *
 * Who sees what: a session's events go to the client that opened it, and a
 * request's session is looked up among that client's sessions only, so one
 * client can neither see nor touch another's (SECURITY.md G213). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "core/broker.h"
#include "core/langs.h"
#include "core/lmc.h"
#include "serve_int.h"
#include "warden/util.h"

#define SERVE_QUEUE_MAX 256                       /* queued runs per session */
#define SERVE_QUEUED_BYTES_MAX (64u * 1024 * 1024) /* queued code, all sessions */

/* The LMC console message of Open Interpreter, with our id and session. */
static json_object *console(struct ssession *ss, json_object *id)
{
	json_object *ev = serve_lmc(ss, id, "computer", "console");

	json_object_object_add(ev, "format", json_object_new_string("output"));
	return ev;
}

static void emit_console_mark(struct ssession *ss, json_object *id, const char *mark)
{
	json_object *ev = console(ss, id);

	json_object_object_add(ev, mark, json_object_new_boolean(1));
	serve_emit(ss->owner, ev);
}

static void emit_content(struct ssession *ss, json_object *id, int stream, const char *text,
                         size_t len)
{
	json_object *ev;

	if (len == 0)
		return;
	if (ss->running && ss->running->chat)
		schat_output(ss, text, len);
	ev = console(ss, id);
	json_object_object_add(ev, "content", json_object_new_string_len(text, (int)len));
	json_object_object_add(ev, "stream",
	                       json_object_new_string(stream == WSTREAM_STDERR ? "stderr" : "stdout"));
	serve_emit(ss->owner, ev);
}

/* ---- sessions, runs, pending requests ----------------------------------- */

void serve_srun_free(struct srun *r)
{
	if (!r)
		return;
	json_object_put(r->id);
	free(r->language);
	free(r->code);
	free(r);
}

/* A client's session by the id its events carry; never another client's. */
static struct ssession *session_of(struct serve *s, struct sclient *c, const char *audit_id)
{
	for (struct ssession *ss = s->sessions; ss; ss = ss->next)
		if (ss->owner == c && c && !strcmp(ss->audit_id, audit_id))
			return ss;
	return NULL;
}

static bool audit_id_taken(struct serve *s, const char *audit_id)
{
	for (struct ssession *ss = s->sessions; ss; ss = ss->next)
		if (!strcmp(ss->audit_id, audit_id))
			return true;
	return false;
}

static struct ssession *session_by_id(struct serve *s, uint32_t id)
{
	for (struct ssession *ss = s->sessions; ss; ss = ss->next)
		if (ss->id == id)
			return ss;
	return NULL;
}

static void session_remove(struct serve *s, struct ssession *ss)
{
	struct ssession **pp;

	for (pp = &s->sessions; *pp; pp = &(*pp)->next)
		if (*pp == ss) {
			*pp = ss->next;
			s->n_sessions--;
			break;
		}
	schat_free(s, ss);
	serve_srun_free(ss->running);
	while (ss->q_head) {
		struct srun *r = ss->q_head;
		ss->q_head = r->next;
		s->queued_bytes -= r->code_len;
		serve_srun_free(r);
	}
	swiden_free(ss);
	json_object_put(ss->languages);
	json_object_put(ss->close_id);
	free(ss->policy_json);
	free(ss->profile);
	free(ss->workspace);
	free(ss->audit_id);
	free(ss);
}

/* ---- blocks ------------------------------------------------------------- */

static void start_next(struct serve *s, struct ssession *ss);

static int start_run(struct serve *s, struct ssession *ss, struct srun *r)
{
	struct werr err = { 0 };

	r->block = s->b.next_block++;
	if (wproto_run_approved(&s->b.c.out, ss->id, r->block, r->language, r->code, r->code_len,
	                        r->approval, &err) < 0) {
		serve_error(ss->owner, r->id, ss->audit_id, "%s", err.msg);
		if (r->chat)
			schat_block_done(s, ss, NULL, err.msg);
		serve_srun_free(r);
		return -1;
	}
	free(r->code);   /* sent: the supervisor has it */
	r->code = NULL;
	ss->running = r;
	memset(ss->tail, 0, sizeof(ss->tail));
	ss->lines = false;
	emit_console_mark(ss, r->id, "start");
	return serve_send(s);
}

/* Flush what the UTF-8 repair held back, close the console message. */
static void end_console(struct ssession *ss)
{
	char buf[8];

	for (int i = 0; i < 2; i++) {
		size_t n = utf8_finish(&ss->tail[i], buf);
		emit_content(ss, ss->running->id, i + 1, buf, n);
	}
	if (ss->lines) {   /* Open Interpreter's "no line runs now" */
		json_object *ev = console(ss, ss->running->id);
		json_object_object_add(ev, "format", json_object_new_string("active_line"));
		json_object_object_add(ev, "content", NULL);
		serve_emit(ss->owner, ev);
	}
	emit_console_mark(ss, ss->running->id, "end");
}

static void finish_result(struct serve *s, struct ssession *ss, struct wresult *res)
{
	struct srun *r = ss->running;
	json_object *denied = json_object_new_array();
	uint32_t i;

	end_console(ss);
	for (i = 0; i < res->n_denied && res->denied; i++) {
		json_object *d = json_object_new_object();
		json_object_object_add(d, "name", serve_jstr(res->denied[i].name));
		json_object_object_add(d, "count", json_object_new_int64((int64_t)res->denied[i].count));
		json_object_array_add(denied, d);
	}
	serve_event(ss->owner, r->id, "result", ss->audit_id,
	            "exit_code", res->exit_code < 0 ? NULL : json_object_new_int(res->exit_code),
	            "signal", res->signal ? json_object_new_int64(res->signal) : NULL,
	            "reason", json_object_new_string(wblock_reason_name(res->reason)),
	            "wall_ms", json_object_new_int64((int64_t)res->wall_ms),
	            "cpu_ms", json_object_new_int64((int64_t)res->cpu_ms),
	            /* null when nothing measured it (no memory cgroup): never a false 0 */
	            "peak_memory_bytes", res->flags & WRES_NO_PEAK ? NULL
	                                 : json_object_new_int64((int64_t)res->peak_memory),
	            "output_bytes", json_object_new_int64((int64_t)res->output_bytes),
	            "truncated", json_object_new_boolean(!!(res->flags & WRES_TRUNCATED)),
	            "state_lost", json_object_new_boolean(!!(res->flags & WRES_STATE_LOST)),
	            "fresh_jail", json_object_new_boolean(!!(res->flags & WRES_FRESH)),
	            "denied_syscalls", denied,
	            "message", serve_jstr(res->message), (char *)NULL);
	swiden_after_result(ss, r->id, r->language, res);
	ss->running = NULL;
	ss->last_ms = serve_now_ms();
	if (r->chat)
		schat_block_done(s, ss, res, NULL);
	serve_srun_free(r);
	start_next(s, ss);
}

static void finish_error(struct serve *s, struct ssession *ss, const char *msg)
{
	struct srun *r = ss->running;

	end_console(ss);
	serve_error(ss->owner, r->id, ss->audit_id, "%s", msg);
	ss->running = NULL;
	ss->last_ms = serve_now_ms();
	if (r->chat)
		schat_block_done(s, ss, NULL, msg);
	serve_srun_free(r);
	start_next(s, ss);
}

static void start_next(struct serve *s, struct ssession *ss)
{
	while (!ss->running && !ss->closing && ss->q_head) {
		struct srun *r = ss->q_head;
		ss->q_head = r->next;
		if (!ss->q_head)
			ss->q_tail = NULL;
		r->next = NULL;
		ss->queued--;
		s->queued_bytes -= r->code_len;
		if (start_run(s, ss, r) < 0)
			return;
	}
}

static void serve_submit(struct serve *s, struct ssession *ss, struct srun *r)
{
	if (!ss->running) {
		start_run(s, ss, r);
		return;
	}
	if (ss->q_tail)
		ss->q_tail->next = r;
	else
		ss->q_head = r;
	ss->q_tail = r;
	ss->queued++;
	s->queued_bytes += r->code_len;
}

/* Queued runs of a session that is going away. */
static void fail_queue(struct serve *s, struct ssession *ss, const char *why)
{
	while (ss->q_head) {
		struct srun *r = ss->q_head;
		ss->q_head = r->next;
		ss->queued--;
		s->queued_bytes -= r->code_len;
		serve_error(ss->owner, r->id, ss->audit_id, "%s", why);
		serve_srun_free(r);
	}
	ss->q_tail = NULL;
}

/* ---- requests ------------------------------------------------------------ */

static void req_open(struct serve *s, struct sclient *c, struct serve_req *q)
{
	const char *profile = q->profile ? q->profile : s->b.default_profile;
	const char *workspace = q->workspace ? q->workspace : s->b.default_workspace;
	struct werr err = { 0 };
	struct spending *p = serve_pending_new(s, c, q);

	if (!p)
		return;
	p->profile = profile ? xstrdup(profile) : NULL;
	p->workspace = workspace ? xstrdup(workspace) : NULL;
	p->oneshot = q->oneshot;
	p->learn = q->learn;
	serve_pending_send(s, p, wproto_open(&s->b.c.out, p->req, profile, workspace,
	                               (q->oneshot ? WOPEN_ONESHOT : 0) |
	                               (q->learn ? WOPEN_LEARN : 0), &err), &err);
}

static void req_languages(struct serve *s, struct sclient *c, struct serve_req *q)
{
	struct werr err = { 0 };
	struct spending *p = serve_pending_new(s, c, q);

	if (p)
		serve_pending_send(s, p, wproto_langs(&s->b.c.out, p->req, &err), &err);
}

static struct ssession *known_session(struct serve *s, struct sclient *c, struct serve_req *q)
{
	struct ssession *ss = session_of(s, c, q->session);

	if (!ss)
		serve_error(c, q->id, q->session, "unknown session \"%s\" (open one with "
		            "{\"op\":\"open\"}, and use the \"session\" of its \"opened\" event)",
		            q->session);
	else
		ss->last_ms = serve_now_ms();
	return ss;
}

static void req_run(struct serve *s, struct sclient *c, struct serve_req *q)
{
	struct ssession *ss = known_session(s, c, q);
	const char *lang = q->language;
	struct srun *r;

	if (!ss)
		return;
	if (ss->closing) {
		serve_error(c, q->id, ss->audit_id, "session \"%s\" is closing", ss->audit_id);
		return;
	}
	if (schat_busy(ss)) {
		serve_error(c, q->id, ss->audit_id, "session \"%s\" is in a chat turn; run code "
		            "after its end (or interrupt it)", ss->audit_id);
		return;
	}
	if (ss->languages && json_object_array_length(ss->languages) > 0) {
		lang = blang_lookup(ss->languages, q->language);
		if (!lang) {
			char list[1024];
			blang_list(ss->languages, list, sizeof(list));
			serve_error(c, q->id, ss->audit_id, "unknown language \"%s\"; available: %s",
			            q->language, list);
			return;
		}
	}
	if (ss->running && ss->queued >= SERVE_QUEUE_MAX) {
		serve_error(c, q->id, ss->audit_id, "session \"%s\" already has %u blocks waiting; "
		            "send more after their results", ss->audit_id, ss->queued);
		return;
	}
	if (ss->running && s->queued_bytes + q->code_len > SERVE_QUEUED_BYTES_MAX) {
		serve_error(c, q->id, ss->audit_id, "%zu bytes of code are already waiting; send "
		            "more after their results", s->queued_bytes);
		return;
	}
	r = xcalloc(1, sizeof(*r));
	r->id = json_object_get(q->id);
	r->language = xstrdup(lang);
	r->code = steal_pointer(&q->code);
	if (!r->code)
		r->code = xstrdup("");
	r->code_len = q->code_len;
	r->approval = WAPPROVE_API;
	serve_submit(s, ss, r);
}

static void req_interrupt(struct serve *s, struct sclient *c, struct serve_req *q)
{
	struct ssession *ss = known_session(s, c, q);
	struct werr err = { 0 };
	bool chat;

	if (!ss)
		return;
	chat = schat_interrupt(s, ss);
	/* only while a block runs: there is nothing else to interrupt, and the
	 * block's result says "interrupted" */
	if (ss->running && !ss->closing) {
		if (wproto_interrupt(&s->b.c.out, ss->id, &err) < 0) {
			serve_error(c, q->id, ss->audit_id, "%s", err.msg);
			return;
		}
		if (serve_send(s) < 0)
			return;
	}
	serve_event(c, q->id, "ok", ss->audit_id,
	            "running", json_object_new_boolean(ss->running != NULL || chat), (char *)NULL);
}

static void close_session(struct serve *s, struct ssession *ss, json_object *id)
{
	struct werr err = { 0 };

	ss->closing = true;
	ss->close_id = json_object_get(id);
	fail_queue(s, ss, "the session was closed before this block ran");
	if (wproto_close(&s->b.c.out, ss->id, &err) < 0) {
		serve_error(ss->owner, id, ss->audit_id, "%s", err.msg);
		return;
	}
	serve_send(s);
}

static void req_close(struct serve *s, struct sclient *c, struct serve_req *q)
{
	struct ssession *ss = known_session(s, c, q);

	if (!ss)
		return;
	if (ss->closing) {
		serve_error(c, q->id, ss->audit_id, "session \"%s\" is already closing", ss->audit_id);
		return;
	}
	close_session(s, ss, q->id);
}

static void req_chat(struct serve *s, struct sclient *c, struct serve_req *q, bool approve)
{
	struct ssession *ss = known_session(s, c, q);

	if (ss && ss->closing)
		serve_error(c, q->id, ss->audit_id, "session \"%s\" is closing", ss->audit_id);
	if (!ss || ss->closing) {
		if (!approve)   /* every "chat" ends with turn_end */
			schat_turn_end(c, q->id, q->session, "refused");
		return;
	}
	if (approve)
		schat_approve(s, c, ss, q);
	else
		schat_request(s, c, ss, q);
}

void serve_client_request(struct sclient *c, const char *line, size_t len)
{
	struct serve *s = c->s;
	struct serve_req q;
	char msg[512];
	int r = serve_parse_request(line, len, &q, msg, sizeof(msg));

	if (r < 0)
		serve_error(c, q.id, NULL, "%s", msg);
	else if (r == 0 && c->shutdown)
		serve_error(c, q.id, NULL, "the server is shutting down");
	else if (r == 0) {
		switch (q.op) {
		case SOP_OPEN: req_open(s, c, &q); break;
		case SOP_RUN: req_run(s, c, &q); break;
		case SOP_INTERRUPT: req_interrupt(s, c, &q); break;
		case SOP_CLOSE: req_close(s, c, &q); break;
		case SOP_LANGUAGES: req_languages(s, c, &q); break;
		case SOP_CHAT: req_chat(s, c, &q, false); break;
		case SOP_APPROVE: req_chat(s, c, &q, true); break;
		case SOP_WIDEN:
		case SOP_REVOKE: {
			struct ssession *ss = known_session(s, c, &q);

			if (ss)
				swiden_request(s, c, ss, &q);
			break;
		}
		case SOP_NONE: break;
		}
	}
	serve_req_free(&q);
}

void serve_client_error(struct sclient *c, const char *msg)
{
	serve_error(c, NULL, NULL, "%s", msg);
}

/* ---- clients --------------------------------------------------------------- */

struct sclient *serve_client_new(struct serve *s, serve_emit_fn emit, void *ctx)
{
	struct sclient *c = xcalloc(1, sizeof(*c));

	c->s = s;
	c->emit = emit;
	c->ctx = ctx;
	c->next = s->clients;
	s->clients = c;
	return c;
}

void serve_client_shutdown(struct sclient *c)
{
	struct serve *s = c->s;
	struct ssession *ss, *next;

	c->shutdown = true;
	for (ss = s->sessions; ss; ss = next) {
		next = ss->next;
		if (ss->owner == c && !ss->closing)
			close_session(s, ss, NULL);
	}
}

bool serve_client_busy(const struct sclient *c)
{
	for (struct ssession *ss = c->s->sessions; ss; ss = ss->next)
		if (ss->owner == c)
			return true;
	for (struct spending *p = c->s->pending; p; p = p->next)
		if (p->owner == c)
			return true;
	return false;
}

void serve_client_gone(struct sclient *c)
{
	struct serve *s = c->s;
	struct sclient **pp;
	struct ssession *ss, *next;

	/* nothing more is said to it: its sessions close, their turns end */
	for (ss = s->sessions; ss; ss = next) {
		next = ss->next;
		if (ss->owner != c)
			continue;
		ss->owner = NULL;
		schat_free(s, ss);
		if (!ss->closing)
			close_session(s, ss, NULL);
	}
	for (struct spending *p = s->pending; p; p = p->next)
		if (p->owner == c)
			p->owner = NULL;
	for (pp = &s->clients; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	free(c);
}

unsigned serve_n_sessions(const struct serve *s)
{
	return s->n_sessions;
}

/* ---- idle sessions ------------------------------------------------------------ */

static bool idle_candidate(const struct ssession *ss)
{
	return !ss->closing && !ss->running && !ss->q_head && !schat_busy(ss);
}

long serve_timeout_ms(const struct serve *s)
{
	long now = serve_now_ms(), best = -1;

	if (!s->cfg.session_idle_s)
		return -1;
	for (struct ssession *ss = s->sessions; ss; ss = ss->next) {
		long left;

		if (!idle_candidate(ss))
			continue;
		left = ss->last_ms + (long)s->cfg.session_idle_s * 1000 - now;
		if (left < 0)
			left = 0;
		if (best < 0 || left < best)
			best = left;
	}
	return best;
}

/* Sessions nobody used for --session-idle end; their client hears why. */
void serve_tick(struct serve *s)
{
	long now = serve_now_ms();
	struct ssession *ss, *next;

	if (!s->cfg.session_idle_s)
		return;
	for (ss = s->sessions; ss; ss = next) {
		next = ss->next;
		if (!idle_candidate(ss) || now - ss->last_ms < (long)s->cfg.session_idle_s * 1000)
			continue;
		serve_event(ss->owner, NULL, "idle", ss->audit_id, "idle_seconds",
		            json_object_new_int64(s->cfg.session_idle_s), (char *)NULL);
		close_session(s, ss, NULL);
	}
}

/* ---- frames from the supervisor ---------------------------------------- */

static void on_opened(struct serve *s, struct wmsg *m)
{
	struct spending *p = serve_pending_take(s, m->req);
	struct ssession *ss;
	json_object *policy, *limits, *jail;

	if (!p)
		return;
	ss = xcalloc(1, sizeof(*ss));
	ss->owner = p->owner;
	ss->id = m->session;
	ss->audit_id = xstrdup(m->audit_id ? m->audit_id : "");
	if (!*ss->audit_id || audit_id_taken(s, ss->audit_id)) {
		/* the API names sessions by audit id: it must be unique */
		free(ss->audit_id);
		ss->audit_id = xasprintf("s%u", m->session);
	}
	ss->languages = blang_trusted_json(m->langs, json_type_array);
	if (!ss->languages)
		ss->languages = json_object_new_array();
	ss->policy_json = m->json ? xstrdup(m->json) : NULL;
	ss->profile = p->profile ? xstrdup(p->profile) : NULL;
	ss->workspace = p->workspace ? xstrdup(p->workspace) : NULL;
	ss->last_ms = serve_now_ms();
	ss->next = s->sessions;
	s->sessions = ss;
	s->n_sessions++;

	policy = blang_trusted_json(m->json, json_type_object);
	limits = blang_trusted_json(m->limits, json_type_object);
	/* where the policy came from, the Landlock ABI, the home in the
	 * workspace (proto.h): what chat's %info shows */
	jail = blang_trusted_json(m->jail, json_type_object);
	/* no "policy" key at all when the supervisor sent none */
	serve_event(ss->owner, p->id, "opened", ss->audit_id,
	            "profile", p->profile ? serve_jstr(p->profile) : NULL,
	            "workspace", p->workspace ? serve_jstr(p->workspace) : NULL,
	            "oneshot", json_object_new_boolean(p->oneshot),
	            "languages", json_object_get(ss->languages),
	            /* the supervisor always sends it: {} only if it did not */
	            "limits", limits ? limits : json_object_new_object(),
	            "jail", jail ? jail : json_object_new_object(),
	            policy ? "policy" : NULL, policy, (char *)NULL);
	serve_pending_free(p);
	/* a client gone, or whose input ended, while this was on its way */
	if (!ss->owner || ss->owner->shutdown)
		close_session(s, ss, NULL);
}

static void on_langlist(struct serve *s, struct wmsg *m)
{
	struct spending *p = serve_pending_take(s, m->req);
	json_object *langs;

	if (!p)
		return;
	langs = blang_trusted_json(m->langs, json_type_array);
	serve_event(p->owner, p->id, "languages", NULL,
	            "languages", langs ? langs : json_object_new_array(), (char *)NULL);
	serve_pending_free(p);
}

static struct ssession *running_session(struct serve *s, uint32_t session, uint32_t block)
{
	struct ssession *ss = session_by_id(s, session);

	return ss && ss->running && ss->running->block == block ? ss : NULL;
}

static void on_output(struct serve *s, struct wmsg *m)
{
	struct ssession *ss = running_session(s, m->session, m->block);
	int stream = m->stream == WSTREAM_STDERR ? WSTREAM_STDERR : WSTREAM_STDOUT;
	char *buf;
	size_t n;

	if (!ss)
		return;
	buf = xmalloc(UTF8_OUT_MAX(m->data_len));
	n = utf8_sanitize(&ss->tail[stream - 1], m->data, m->data_len, buf);
	emit_content(ss, ss->running->id, stream, buf, n);
	free(buf);
}

/* Rich output as Open Interpreter's LMC messages: an image is
 * {"type":"image","format":"base64.png","content":BASE64}, HTML is
 * {"type":"code","format":"html","content":TEXT}. */
static void on_display(struct serve *s, struct wmsg *m)
{
	struct ssession *ss = running_session(s, m->session, m->block);
	bool html;
	json_object *ev;

	if (!ss)
		return;
	if (ss->running->chat)
		schat_display(ss, m->format, m->data, m->data_len);
	html = strcmp(m->format, "html") == 0;
	ev = serve_lmc(ss, ss->running->id, "computer", html ? "code" : "image");
	if (html) {
		json_object_object_add(ev, "format", json_object_new_string("html"));
		json_object_object_add(ev, "content", serve_jstr_n((const char *)m->data, m->data_len));
	} else {
		char *b64 = lmc_base64(m->data, m->data_len);
		json_object_object_add(ev, "format", json_object_new_string(
			strcmp(m->format, "jpeg") == 0 ? "base64.jpeg" : "base64.png"));
		json_object_object_add(ev, "content", json_object_new_string(b64));
		free(b64);
	}
	serve_emit(ss->owner, ev);
}

/* {"type":"console","format":"active_line","content":N}; null at the end */
static void on_line(struct serve *s, struct wmsg *m)
{
	struct ssession *ss = running_session(s, m->session, m->block);
	json_object *ev;

	if (!ss)
		return;
	ss->lines = true;
	ev = console(ss, ss->running->id);
	json_object_object_add(ev, "format", json_object_new_string("active_line"));
	json_object_object_add(ev, "content", json_object_new_int64(m->line));
	serve_emit(ss->owner, ev);
}

static void on_audit(struct serve *s, struct wmsg *m)
{
	struct ssession *ss = session_by_id(s, m->session);

	if (!ss)
		return;
	serve_event(ss->owner, ss->running && ss->running->block == m->block ? ss->running->id : NULL,
	            "audit", ss->audit_id, "syscall", serve_jstr(m->syscall),
	            "count", json_object_new_int64((int64_t)m->count), (char *)NULL);
}

static void on_result(struct serve *s, struct wmsg *m)
{
	struct ssession *ss = running_session(s, m->res.session, m->res.block);

	if (ss)
		finish_result(s, ss, &m->res);
}

static void on_error(struct serve *s, struct wmsg *m)
{
	const char *msg = m->text && *m->text ? m->text : "the supervisor refused the request";
	struct ssession *ss;
	struct spending *p;

	if (m->req && (p = serve_pending_take(s, m->req))) {
		serve_error(p->owner, p->id, NULL, "%s", msg);
		serve_pending_free(p);
		return;
	}
	ss = m->session ? session_by_id(s, m->session) : NULL;
	if (!ss) {
		serve_orphan_error(s, msg);
		return;
	}
	if (ss->running && (m->block == ss->running->block || m->block == 0)) {
		finish_error(s, ss, msg);
		return;
	}
	serve_error(ss->owner, ss->closing ? ss->close_id : NULL, ss->audit_id, "%s", msg);
}

static void on_refusals(struct serve *s, struct wmsg *m)
{
	struct ssession *ss = running_session(s, m->session, m->block);

	if (ss)
		swiden_refusals(ss, m->text);
}

static void on_widened(struct serve *s, struct wmsg *m)
{
	struct spending *p = serve_pending_take(s, m->req);

	if (!p)
		return;
	swiden_answered(p->owner, p->id, p->session, p->op == SOP_REVOKE, m);
	serve_pending_free(p);
}

static void on_closed(struct serve *s, struct wmsg *m)
{
	struct ssession *ss = session_by_id(s, m->session);

	if (!ss)
		return;
	ss->closing = true;   /* nothing more starts in it */
	if (ss->running)
		finish_error(s, ss, "the session was closed while this block ran");
	fail_queue(s, ss, "the session was closed before this block ran");
	schat_free(s, ss);
	serve_event(ss->owner, ss->close_id, "closed", ss->audit_id, (char *)NULL);
	session_remove(s, ss);
}

static void on_frame(struct serve *s, struct wmsg *m)
{
	switch (m->type) {
	case WM_OPENED: on_opened(s, m); break;
	case WM_LANGLIST: on_langlist(s, m); break;
	case WM_OUTPUT: on_output(s, m); break;
	case WM_DISPLAY: on_display(s, m); break;
	case WM_LINE: on_line(s, m); break;
	case WM_AUDIT: on_audit(s, m); break;
	case WM_RESULT: on_result(s, m); break;
	case WM_ERROR: on_error(s, m); break;
	case WM_CLOSED: on_closed(s, m); break;
	case WM_REFUSALS: on_refusals(s, m); break;
	case WM_WIDENED: on_widened(s, m); break;
	default: break;   /* nothing else is addressed to serve */
	}
}

/* Every client hears that the server ends. */
static void fatal(struct serve *s, const char *msg)
{
	for (struct sclient *c = s->clients; c; c = c->next)
		serve_error(c, NULL, NULL, "%s", msg);
	if (!s->clients || !s->cfg.one_client)
		fprintf(stderr, "warden-broker: %s\n", msg);
}

int serve_on_supervisor(struct serve *s)
{
	struct werr err = { 0 };
	struct wmsg m = { 0 };
	int r;

	if (wconn_fill(&s->b.c, &err) < 0 && !s->b.c.eof) {
		werr_wrap(&err, "reading from the supervisor");
		fatal(s, err.msg);
		return -1;
	}
	/* frames already in, even at EOF */
	while ((r = wconn_next(&s->b.c, &m, &err)) > 0) {
		if (!s->frame_hook || !s->frame_hook(s->hook_ctx, &m))
			on_frame(s, &m);
		wmsg_free(&m);
	}
	if (r < 0) {
		werr_wrap(&err, "a frame from the supervisor");
		fatal(s, err.msg);
		return -1;
	}
	if (s->b.c.eof) {
		fatal(s, "the supervisor closed the connection");
		return -1;
	}
	return 0;
}

/* ---- the server ------------------------------------------------------------- */

struct serve *serve_new(int sup_fd, const struct serve_cfg *cfg, struct werr *err)
{
	struct serve *s = xcalloc(1, sizeof(*s));

	s->cfg = *cfg;
	s->submit = serve_submit;
	s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->wake_fd < 0) {
		werr_set(err, errno, "eventfd");
		free(s);
		return NULL;
	}
	if (bclient_init(&s->b, sup_fd, err) < 0) {
		bclient_free(&s->b);
		close(s->wake_fd);
		free(s);
		return NULL;
	}
	schat_hub_init(s);
	return s;
}

struct bclient *serve_bclient(struct serve *s)
{
	return &s->b;
}

void serve_set_frame_hook(struct serve *s, int (*hook)(void *ctx, const struct wmsg *m),
                          void *ctx)
{
	s->frame_hook = hook;
	s->hook_ctx = ctx;
}

int serve_sup_fd(const struct serve *s)
{
	return s->b.c.fd;
}

int serve_wake_fd(const struct serve *s)
{
	return s->wake_fd;
}

void serve_wake(struct serve *s)
{
	uint64_t v;

	while (read(s->wake_fd, &v, sizeof(v)) == (ssize_t)sizeof(v))
		;
	schat_on_wake(s);
}

void serve_free(struct serve *s)
{
	if (!s)
		return;
	while (s->clients)
		serve_client_gone(s->clients);
	while (s->sessions)
		session_remove(s, s->sessions);
	while (s->pending) {
		struct spending *p = s->pending;
		s->pending = p->next;
		serve_pending_free(p);
	}
	schat_hub_free(s);
	bclient_free(&s->b);
	close(s->wake_fd);
	free(s);
}
