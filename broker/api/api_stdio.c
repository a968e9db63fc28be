/* warden serve --stdio: JSON lines on stdin/stdout, multiplexed onto the
 * supervisor connection (docs/serve.md has the protocol and an example).
 *
 * One poll loop watches stdin and the supervisor socket.  Requests are
 * parsed by api_stdio_parse.c.  What the supervisor refuses (a profile the
 * user did not allow, a workspace outside the served ones) comes back as
 * ERROR and becomes an error event of the request.  A language the session
 * does not have is refused here, with the list of the ones it has, and a
 * RUN is never sent while a block of the same session runs.
 *
 * Per session: at most one block runs; later runs wait in a bounded queue
 * and go out when the RESULT arrives.  Output is passed through
 * utf8_sanitize per stream, so the JSON is valid UTF-8 whatever the jail
 * prints.  Events are written one per line with blocking writes. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/broker.h"
#include "core/client.h"
#include "api_stdio.h"
#include "core/langs.h"
#include "core/lmc.h"
#include "core/utf8.h"
#include "warden/util.h"

#define SERVE_QUEUE_MAX 256                       /* queued runs per session */
#define SERVE_QUEUED_BYTES_MAX (64u * 1024 * 1024) /* queued code, all sessions */
#define SERVE_PENDING_MAX 1024                    /* opens/languages awaiting answers */
#define SERVE_READ_CHUNK (64u * 1024)
#define SERVE_SHUTDOWN_MS 5000                    /* stdin EOF: wait this long for CLOSED */

struct srun {
	struct srun *next;
	json_object *id;
	char *language;
	char *code;
	size_t code_len;
	uint32_t block;
};

struct ssession {
	struct ssession *next;
	uint32_t id;
	char *audit_id;
	json_object *languages;   /* the array from OPENED */
	struct srun *running;     /* NULL when idle */
	struct srun *q_head, *q_tail;
	unsigned queued;
	struct utf8_tail tail[2]; /* stdout, stderr */
	bool lines;               /* the running block sent an active line */
	bool closing;
	json_object *close_id;
};

struct spending {
	struct spending *next;
	uint32_t req;
	enum serve_op op;
	json_object *id;
	char *profile, *workspace;
	bool oneshot;
};

struct serve {
	struct bclient b;
	struct ssession *sessions;
	struct spending *pending;
	unsigned n_pending;
	size_t queued_bytes;
	char *line;
	size_t line_len;
	bool discarding;
	bool stdin_eof, out_broken;
};

/* ---- events ------------------------------------------------------------ */

/* A JSON string of valid UTF-8 from any bytes. */
static json_object *jstr_n(const char *s, size_t n)
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

static json_object *jstr(const char *s)
{
	return jstr_n(s ? s : "", s ? strlen(s) : 0);
}

static void emit(struct serve *s, json_object *ev)
{
	size_t n;
	const char *txt = json_object_to_json_string_length(
		ev, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
	char *line = xmalloc(n + 1);

	memcpy(line, txt, n);
	line[n] = '\n';
	if (!s->out_broken && write_all(STDOUT_FILENO, line, n + 1) < 0)
		s->out_broken = true;
	free(line);
	json_object_put(ev);
}

/* The one way an event is written:
 *   {"id":..,"event":name,"session":..,KEY:VALUE...}
 * id echoed (null when unknown), "session" only when session is not NULL,
 * then the KEY, VALUE pairs (const char *, json_object * owned; a NULL
 * value is JSON null) up to a NULL key. */
static void emit_event(struct serve *s, json_object *id, const char *name, const char *session,
                       ...)
{
	json_object *ev = json_object_new_object();
	const char *key;
	va_list ap;

	json_object_object_add(ev, "id", json_object_get(id));
	json_object_object_add(ev, "event", json_object_new_string(name));
	if (session)
		json_object_object_add(ev, "session", jstr(session));
	va_start(ap, session);
	while ((key = va_arg(ap, const char *)))
		json_object_object_add(ev, key, va_arg(ap, json_object *));
	va_end(ap);
	emit(s, ev);
}

static void emit_error(struct serve *s, json_object *id, const char *session, const char *fmt,
                       ...) __attribute__((format(printf, 4, 5)));

static void emit_error(struct serve *s, json_object *id, const char *session, const char *fmt,
                       ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	emit_event(s, id, "error", session, "message", jstr(msg), (char *)NULL);
}

/* The LMC console message of Open Interpreter, with our id and session. */
static json_object *console(struct ssession *ss, json_object *id)
{
	json_object *ev = json_object_new_object();

	json_object_object_add(ev, "id", json_object_get(id));
	json_object_object_add(ev, "session", jstr(ss->audit_id));
	json_object_object_add(ev, "role", json_object_new_string("computer"));
	json_object_object_add(ev, "type", json_object_new_string("console"));
	json_object_object_add(ev, "format", json_object_new_string("output"));
	return ev;
}

static void emit_console_mark(struct serve *s, struct ssession *ss, json_object *id,
                              const char *mark)
{
	json_object *ev = console(ss, id);

	json_object_object_add(ev, mark, json_object_new_boolean(1));
	emit(s, ev);
}

static void emit_content(struct serve *s, struct ssession *ss, json_object *id, int stream,
                         const char *text, size_t len)
{
	json_object *ev;

	if (len == 0)
		return;
	ev = console(ss, id);
	json_object_object_add(ev, "content", json_object_new_string_len(text, (int)len));
	json_object_object_add(ev, "stream",
	                       json_object_new_string(stream == WSTREAM_STDERR ? "stderr" : "stdout"));
	emit(s, ev);
}

/* ---- sessions, runs, pending requests ----------------------------------- */

static void srun_free(struct srun *r)
{
	if (!r)
		return;
	json_object_put(r->id);
	free(r->language);
	free(r->code);
	free(r);
}

static struct ssession *session_by_audit(struct serve *s, const char *audit_id)
{
	for (struct ssession *ss = s->sessions; ss; ss = ss->next)
		if (!strcmp(ss->audit_id, audit_id))
			return ss;
	return NULL;
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
			break;
		}
	srun_free(ss->running);
	while (ss->q_head) {
		struct srun *r = ss->q_head;
		ss->q_head = r->next;
		s->queued_bytes -= r->code_len;
		srun_free(r);
	}
	json_object_put(ss->languages);
	json_object_put(ss->close_id);
	free(ss->audit_id);
	free(ss);
}

static struct spending *pending_take(struct serve *s, uint32_t req)
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

static void pending_free(struct spending *p)
{
	if (!p)
		return;
	json_object_put(p->id);
	free(p->profile);
	free(p->workspace);
	free(p);
}

static int sup_send(struct serve *s)
{
	struct werr err = { 0 };

	if (wconn_flush_all(&s->b.c, &err) < 0) {
		emit_error(s, NULL, NULL, "writing to the supervisor: %s", err.msg);
		return -1;
	}
	return 0;
}

/* ---- blocks ------------------------------------------------------------- */

static void start_next(struct serve *s, struct ssession *ss);

static int start_run(struct serve *s, struct ssession *ss, struct srun *r)
{
	struct werr err = { 0 };

	r->block = s->b.next_block++;
	if (wproto_run(&s->b.c.out, ss->id, r->block, r->language, r->code, r->code_len, &err) < 0) {
		emit_error(s, r->id, ss->audit_id, "%s", err.msg);
		srun_free(r);
		return -1;
	}
	free(r->code);   /* sent: the supervisor has it */
	r->code = NULL;
	ss->running = r;
	memset(ss->tail, 0, sizeof(ss->tail));
	ss->lines = false;
	emit_console_mark(s, ss, r->id, "start");
	return sup_send(s);
}

/* Flush what the UTF-8 repair held back, close the console message. */
static void end_console(struct serve *s, struct ssession *ss)
{
	char buf[8];

	for (int i = 0; i < 2; i++) {
		size_t n = utf8_finish(&ss->tail[i], buf);
		emit_content(s, ss, ss->running->id, i + 1, buf, n);
	}
	if (ss->lines) {   /* Open Interpreter's "no line runs now" */
		json_object *ev = console(ss, ss->running->id);
		json_object_object_add(ev, "format", json_object_new_string("active_line"));
		json_object_object_add(ev, "content", NULL);
		emit(s, ev);
	}
	emit_console_mark(s, ss, ss->running->id, "end");
}

static void finish_result(struct serve *s, struct ssession *ss, struct wresult *res)
{
	struct srun *r = ss->running;
	json_object *denied = json_object_new_array();
	uint32_t i;

	end_console(s, ss);
	for (i = 0; i < res->n_denied && res->denied; i++) {
		json_object *d = json_object_new_object();
		json_object_object_add(d, "name", jstr(res->denied[i].name));
		json_object_object_add(d, "count", json_object_new_int64((int64_t)res->denied[i].count));
		json_object_array_add(denied, d);
	}
	emit_event(s, r->id, "result", ss->audit_id,
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
	           "message", jstr(res->message), (char *)NULL);
	srun_free(r);
	ss->running = NULL;
	start_next(s, ss);
}

static void finish_error(struct serve *s, struct ssession *ss, const char *msg)
{
	end_console(s, ss);
	emit_error(s, ss->running->id, ss->audit_id, "%s", msg);
	srun_free(ss->running);
	ss->running = NULL;
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

/* Queued runs of a session that is going away. */
static void fail_queue(struct serve *s, struct ssession *ss, const char *why)
{
	while (ss->q_head) {
		struct srun *r = ss->q_head;
		ss->q_head = r->next;
		ss->queued--;
		s->queued_bytes -= r->code_len;
		emit_error(s, r->id, ss->audit_id, "%s", why);
		srun_free(r);
	}
	ss->q_tail = NULL;
}

/* ---- requests from stdin ------------------------------------------------- */

/* A request that waits for the supervisor's answer; NULL (said) when too
 * many wait already. */
static struct spending *pending_new(struct serve *s, struct serve_req *q)
{
	struct spending *p;

	if (s->n_pending >= SERVE_PENDING_MAX) {
		emit_error(s, q->id, NULL, "%u requests are waiting for the supervisor; wait for "
		           "their answers", s->n_pending);
		return NULL;
	}
	p = xcalloc(1, sizeof(*p));
	p->req = s->b.next_req++;
	p->op = q->op;
	p->id = json_object_get(q->id);
	return p;
}

/* r: what queueing p's frame returned.  Sent and waiting, or said and freed. */
static void pending_send(struct serve *s, struct spending *p, int r, const struct werr *err)
{
	if (r < 0) {
		emit_error(s, p->id, NULL, "%s", err->msg);
		pending_free(p);
		return;
	}
	p->next = s->pending;
	s->pending = p;
	s->n_pending++;
	sup_send(s);
}

static void req_open(struct serve *s, struct serve_req *q)
{
	const char *profile = q->profile ? q->profile : s->b.default_profile;
	const char *workspace = q->workspace ? q->workspace : s->b.default_workspace;
	struct werr err = { 0 };
	struct spending *p = pending_new(s, q);

	if (!p)
		return;
	p->profile = profile ? xstrdup(profile) : NULL;
	p->workspace = workspace ? xstrdup(workspace) : NULL;
	p->oneshot = q->oneshot;
	pending_send(s, p, wproto_open(&s->b.c.out, p->req, profile, workspace,
	                               q->oneshot ? WOPEN_ONESHOT : 0, &err), &err);
}

static void req_languages(struct serve *s, struct serve_req *q)
{
	struct werr err = { 0 };
	struct spending *p = pending_new(s, q);

	if (p)
		pending_send(s, p, wproto_langs(&s->b.c.out, p->req, &err), &err);
}

static struct ssession *known_session(struct serve *s, struct serve_req *q)
{
	struct ssession *ss = session_by_audit(s, q->session);

	if (!ss)
		emit_error(s, q->id, q->session, "unknown session \"%s\" (open one with "
		           "{\"op\":\"open\"}, and use the \"session\" of its \"opened\" event)",
		           q->session);
	return ss;
}

static void req_run(struct serve *s, struct serve_req *q)
{
	struct ssession *ss = known_session(s, q);
	const char *lang = q->language;
	struct srun *r;

	if (!ss)
		return;
	if (ss->closing) {
		emit_error(s, q->id, ss->audit_id, "session \"%s\" is closing", ss->audit_id);
		return;
	}
	if (ss->languages && json_object_array_length(ss->languages) > 0) {
		lang = blang_lookup(ss->languages, q->language);
		if (!lang) {
			char list[1024];
			blang_list(ss->languages, list, sizeof(list));
			emit_error(s, q->id, ss->audit_id, "unknown language \"%s\"; available: %s",
			           q->language, list);
			return;
		}
	}
	if (ss->running && ss->queued >= SERVE_QUEUE_MAX) {
		emit_error(s, q->id, ss->audit_id, "session \"%s\" already has %u blocks waiting; "
		           "send more after their results", ss->audit_id, ss->queued);
		return;
	}
	if (ss->running && s->queued_bytes + q->code_len > SERVE_QUEUED_BYTES_MAX) {
		emit_error(s, q->id, ss->audit_id, "%zu bytes of code are already waiting; send "
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

static void req_interrupt(struct serve *s, struct serve_req *q)
{
	struct ssession *ss = known_session(s, q);
	struct werr err = { 0 };

	if (!ss)
		return;
	/* only while a block runs: there is nothing else to interrupt, and the
	 * block's result says "interrupted" */
	if (ss->running && !ss->closing) {
		if (wproto_interrupt(&s->b.c.out, ss->id, &err) < 0) {
			emit_error(s, q->id, ss->audit_id, "%s", err.msg);
			return;
		}
		if (sup_send(s) < 0)
			return;
	}
	emit_event(s, q->id, "ok", ss->audit_id,
	           "running", json_object_new_boolean(ss->running != NULL), (char *)NULL);
}

static void close_session(struct serve *s, struct ssession *ss, json_object *id)
{
	struct werr err = { 0 };

	ss->closing = true;
	ss->close_id = json_object_get(id);
	fail_queue(s, ss, "the session was closed before this block ran");
	if (wproto_close(&s->b.c.out, ss->id, &err) < 0) {
		emit_error(s, id, ss->audit_id, "%s", err.msg);
		return;
	}
	sup_send(s);
}

static void req_close(struct serve *s, struct serve_req *q)
{
	struct ssession *ss = known_session(s, q);

	if (!ss)
		return;
	if (ss->closing) {
		emit_error(s, q->id, ss->audit_id, "session \"%s\" is already closing", ss->audit_id);
		return;
	}
	close_session(s, ss, q->id);
}

static void handle_line(struct serve *s, const char *line, size_t len)
{
	struct serve_req q;
	char msg[512];
	int r = serve_parse_request(line, len, &q, msg, sizeof(msg));

	if (r < 0)
		emit_error(s, q.id, NULL, "%s", msg);
	else if (r == 0) {
		switch (q.op) {
		case SOP_OPEN: req_open(s, &q); break;
		case SOP_RUN: req_run(s, &q); break;
		case SOP_INTERRUPT: req_interrupt(s, &q); break;
		case SOP_CLOSE: req_close(s, &q); break;
		case SOP_LANGUAGES: req_languages(s, &q); break;
		case SOP_NONE: break;
		}
	}
	serve_req_free(&q);
}

/* Split what stdin gave into lines; a line over SERVE_LINE_MAX is reported
 * once and skipped up to its newline, never held. */
static void take_input(struct serve *s, const char *buf, size_t n)
{
	while (n > 0) {
		const char *nl = memchr(buf, '\n', n);
		size_t seg = nl ? (size_t)(nl - buf) : n;

		if (!s->discarding) {
			if (s->line_len + seg > SERVE_LINE_MAX) {
				emit_error(s, NULL, NULL, "a request line is longer than %u bytes; it was "
				           "skipped up to its newline (code blocks are limited to %u "
				           "bytes)", SERVE_LINE_MAX, WPROTO_CODE_MAX);
				s->discarding = true;
				s->line_len = 0;
			} else {
				memcpy(s->line + s->line_len, buf, seg);
				s->line_len += seg;
			}
		}
		if (!nl)
			return;
		if (!s->discarding)
			handle_line(s, s->line, s->line_len);
		s->discarding = false;
		s->line_len = 0;
		buf = nl + 1;
		n -= seg + 1;
	}
}

/* ---- frames from the supervisor ---------------------------------------- */

static void on_opened(struct serve *s, struct wmsg *m)
{
	struct spending *p = pending_take(s, m->req);
	struct ssession *ss;
	json_object *policy, *limits, *jail;

	if (!p)
		return;
	ss = xcalloc(1, sizeof(*ss));
	ss->id = m->session;
	ss->audit_id = xstrdup(m->audit_id ? m->audit_id : "");
	if (!*ss->audit_id || session_by_audit(s, ss->audit_id)) {
		/* the API names sessions by audit id: it must be unique */
		free(ss->audit_id);
		ss->audit_id = xasprintf("s%u", m->session);
	}
	ss->languages = blang_trusted_json(m->langs, json_type_array);
	if (!ss->languages)
		ss->languages = json_object_new_array();
	ss->next = s->sessions;
	s->sessions = ss;

	policy = blang_trusted_json(m->json, json_type_object);
	limits = blang_trusted_json(m->limits, json_type_object);
	/* where the policy came from, the Landlock ABI, the home in the
	 * workspace (proto.h): what chat's %info shows */
	jail = blang_trusted_json(m->jail, json_type_object);
	/* no "policy" key at all when the supervisor sent none */
	emit_event(s, p->id, "opened", ss->audit_id,
	           "profile", p->profile ? jstr(p->profile) : NULL,
	           "workspace", p->workspace ? jstr(p->workspace) : NULL,
	           "oneshot", json_object_new_boolean(p->oneshot),
	           "languages", json_object_get(ss->languages),
	           /* the supervisor always sends it: {} only if it did not */
	           "limits", limits ? limits : json_object_new_object(),
	           "jail", jail ? jail : json_object_new_object(),
	           policy ? "policy" : NULL, policy, (char *)NULL);
	pending_free(p);
	if (s->stdin_eof)
		close_session(s, ss, NULL);
}

static void on_langlist(struct serve *s, struct wmsg *m)
{
	struct spending *p = pending_take(s, m->req);
	json_object *langs;

	if (!p)
		return;
	langs = blang_trusted_json(m->langs, json_type_array);
	emit_event(s, p->id, "languages", NULL,
	           "languages", langs ? langs : json_object_new_array(), (char *)NULL);
	pending_free(p);
}

static void on_output(struct serve *s, struct wmsg *m)
{
	struct ssession *ss = session_by_id(s, m->session);
	int stream = m->stream == WSTREAM_STDERR ? WSTREAM_STDERR : WSTREAM_STDOUT;
	char *buf;
	size_t n;

	if (!ss || !ss->running || ss->running->block != m->block)
		return;
	buf = xmalloc(UTF8_OUT_MAX(m->data_len));
	n = utf8_sanitize(&ss->tail[stream - 1], m->data, m->data_len, buf);
	emit_content(s, ss, ss->running->id, stream, buf, n);
	free(buf);
}

/* Rich output as Open Interpreter's LMC messages: an image is
 * {"type":"image","format":"base64.png","content":BASE64}, HTML is
 * {"type":"code","format":"html","content":TEXT}. */
static void on_display(struct serve *s, struct wmsg *m)
{
	struct ssession *ss = session_by_id(s, m->session);
	json_object *ev;

	if (!ss || !ss->running || ss->running->block != m->block)
		return;
	ev = json_object_new_object();
	json_object_object_add(ev, "id", json_object_get(ss->running->id));
	json_object_object_add(ev, "session", jstr(ss->audit_id));
	json_object_object_add(ev, "role", json_object_new_string("computer"));
	if (strcmp(m->format, "html") == 0) {
		json_object_object_add(ev, "type", json_object_new_string("code"));
		json_object_object_add(ev, "format", json_object_new_string("html"));
		json_object_object_add(ev, "content", jstr_n((const char *)m->data, m->data_len));
	} else {
		char *b64 = lmc_base64(m->data, m->data_len);
		json_object_object_add(ev, "type", json_object_new_string("image"));
		json_object_object_add(ev, "format", json_object_new_string(
			strcmp(m->format, "jpeg") == 0 ? "base64.jpeg" : "base64.png"));
		json_object_object_add(ev, "content", json_object_new_string(b64));
		free(b64);
	}
	emit(s, ev);
}

/* {"type":"console","format":"active_line","content":N}; null at the end */
static void on_line(struct serve *s, struct wmsg *m)
{
	struct ssession *ss = session_by_id(s, m->session);
	json_object *ev;

	if (!ss || !ss->running || ss->running->block != m->block)
		return;
	ss->lines = true;
	ev = console(ss, ss->running->id);
	json_object_object_add(ev, "format", json_object_new_string("active_line"));
	json_object_object_add(ev, "content", json_object_new_int64(m->line));
	emit(s, ev);
}

static void on_audit(struct serve *s, struct wmsg *m)
{
	struct ssession *ss = session_by_id(s, m->session);

	if (!ss)
		return;
	emit_event(s, ss->running && ss->running->block == m->block ? ss->running->id : NULL,
	           "audit", ss->audit_id, "syscall", jstr(m->syscall),
	           "count", json_object_new_int64((int64_t)m->count), (char *)NULL);
}

static void on_result(struct serve *s, struct wmsg *m)
{
	struct ssession *ss = session_by_id(s, m->res.session);

	if (!ss || !ss->running || ss->running->block != m->res.block)
		return;
	finish_result(s, ss, &m->res);
}

static void on_error(struct serve *s, struct wmsg *m)
{
	const char *msg = m->text && *m->text ? m->text : "the supervisor refused the request";
	struct ssession *ss;
	struct spending *p;

	if (m->req && (p = pending_take(s, m->req))) {
		emit_error(s, p->id, NULL, "%s", msg);
		pending_free(p);
		return;
	}
	ss = m->session ? session_by_id(s, m->session) : NULL;
	if (!ss) {
		emit_error(s, NULL, NULL, "%s", msg);
		return;
	}
	if (ss->running && (m->block == ss->running->block || m->block == 0)) {
		finish_error(s, ss, msg);
		return;
	}
	emit_error(s, ss->closing ? ss->close_id : NULL, ss->audit_id, "%s", msg);
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
	emit_event(s, ss->close_id, "closed", ss->audit_id, (char *)NULL);
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
	default: break;   /* nothing else is addressed to serve */
	}
}

/* 0 ok, -1 the connection is gone or broken (error event emitted) */
static int read_supervisor(struct serve *s)
{
	struct werr err = { 0 };
	struct wmsg m = { 0 };
	int r;

	if (wconn_fill(&s->b.c, &err) < 0 && !s->b.c.eof) {
		emit_error(s, NULL, NULL, "reading from the supervisor: %s", err.msg);
		return -1;
	}
	/* frames already in, even at EOF */
	while ((r = wconn_next(&s->b.c, &m, &err)) > 0) {
		on_frame(s, &m);
		wmsg_free(&m);
	}
	if (r < 0) {
		emit_error(s, NULL, NULL, "a frame from the supervisor: %s", err.msg);
		return -1;
	}
	if (s->b.c.eof) {
		emit_error(s, NULL, NULL, "the supervisor closed the connection");
		return -1;
	}
	return 0;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void begin_shutdown(struct serve *s)
{
	struct ssession *ss, *next;

	s->stdin_eof = true;
	if (s->line_len > 0 && !s->discarding)
		handle_line(s, s->line, s->line_len);   /* a last line without newline */
	s->line_len = 0;
	for (ss = s->sessions; ss; ss = next) {
		next = ss->next;
		if (!ss->closing)
			close_session(s, ss, NULL);
	}
}

static void usage(FILE *f)
{
	fputs("usage: warden-broker serve --stdio\n"
	      "JSON lines on stdin and stdout; see docs/serve.md.\n", f);
}

int serve_main(int argc, char **argv, const struct bdirs *d)
{
	struct serve s = { 0 };
	struct werr err = { 0 };
	char *buf = NULL;
	long deadline = 0;
	int rc = 1, i;
	bool stdio = false;

	(void)d;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--stdio"))
			stdio = true;
		else if (!strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "warden-broker serve: unknown option '%s'\n", argv[i]);
			usage(stderr);
			return 125;
		}
	}
	if (!stdio) {
		fputs("warden-broker serve: only --stdio exists; add it\n", stderr);
		return 125;
	}
	if (bclient_init(&s.b, BROKER_SUP_FD, &err) < 0) {
		fprintf(stderr, "warden-broker: %s\n", err.msg);
		bclient_free(&s.b);
		return 125;
	}
	s.line = xmalloc(SERVE_LINE_MAX + 1);
	buf = xmalloc(SERVE_READ_CHUNK);

	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = s.stdin_eof ? -1 : STDIN_FILENO, .events = POLLIN },
			{ .fd = s.b.c.fd, .events = POLLIN },
		};
		int timeout = -1, pr;

		if (s.out_broken && !s.stdin_eof)
			begin_shutdown(&s);
		if (s.stdin_eof) {
			if (!s.sessions && !s.pending) {
				rc = s.out_broken ? 1 : 0;
				break;
			}
			if (!deadline)
				deadline = now_ms() + SERVE_SHUTDOWN_MS;
			timeout = (int)(deadline - now_ms());
			if (timeout <= 0) {
				rc = s.out_broken ? 1 : 0;
				break;
			}
		}
		pr = poll(pfd, 2, timeout);
		if (pr < 0) {
			if (errno == EINTR)
				continue;
			emit_error(&s, NULL, NULL, "poll: %s", strerror(errno));
			break;
		}
		if (pfd[1].revents) {
			if (read_supervisor(&s) < 0) {
				rc = 1;
				break;
			}
		}
		if (pfd[0].revents) {
			ssize_t n = read(STDIN_FILENO, buf, SERVE_READ_CHUNK);
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0)
				begin_shutdown(&s);
			else
				take_input(&s, buf, (size_t)n);
		}
	}
	while (s.sessions)
		session_remove(&s, s.sessions);
	while (s.pending) {
		struct spending *p = s.pending;
		s.pending = p->next;
		pending_free(p);
	}
	free(buf);
	free(s.line);
	bclient_free(&s.b);
	return rc;
}
