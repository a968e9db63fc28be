/* The MCP tools' calls (mcp_int.h): run_code in a session, and the answers
 * of all three tools.
 *
 * A run_code call waits in its session's queue (one block runs at a time
 * per session, as in serve), goes out as RUN, collects the block's output
 * (head and tail of MCP_OUTPUT_MAX, UTF-8 repaired per stream) and images,
 * and is answered when the RESULT comes: content = the output as text,
 * every image as ImageContent, then structuredContent serialized (the
 * spec's advice for clients that read only content: the model sees the
 * session handle and the exit there); isError when the block did not
 * exit 0.  A cancelled call is never answered: its block is interrupted
 * and its RESULT dropped. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/langs.h"
#include "core/lmc.h"
#include "mcp_int.h"
#include "warden/util.h"

/* ---- output ------------------------------------------------------------- */

static void mout_add(struct mout *o, const char *p, size_t n)
{
	o->total += n;
	if (n && !o->head) {
		o->head = xmalloc(o->half);
		o->ring = xmalloc(o->half);
	}
	if (o->head_len < o->half) {
		size_t take = n < o->half - o->head_len ? n : o->half - o->head_len;
		memcpy(o->head + o->head_len, p, take);
		o->head_len += take;
		p += take;
		n -= take;
	}
	if (n >= o->half) {
		memcpy(o->ring, p + n - o->half, o->half);
		o->ring_len = o->half;
		o->ring_pos = 0;
		return;
	}
	while (n) {
		size_t room = o->half - o->ring_pos, t = n < room ? n : room;
		memcpy(o->ring + o->ring_pos, p, t);
		o->ring_pos = (o->ring_pos + t) % o->half;
		o->ring_len = o->ring_len + t > o->half ? o->half : o->ring_len + t;
		p += t;
		n -= t;
	}
}

/* The text for the model, malloc'd: all of it, or head, a note, tail. */
static char *mout_text(struct mout *o, size_t *len)
{
	size_t cap = o->head_len + o->ring_len + 128, n = 0, start, i, hl = o->head_len;
	uint64_t left = o->total - o->head_len - o->ring_len;
	char *t = xmalloc(cap);

	if (left > 0) {   /* a cut: no half character before it (its last one goes) */
		while (hl > 0 && ((unsigned char)o->head[hl - 1] & 0xC0) == 0x80)
			hl--;
		if (hl > 0 && (unsigned char)o->head[hl - 1] >= 0xC0)
			hl--;
	}
	memcpy(t, o->head, hl);
	n = hl;
	if (left > 0)
		n += (size_t)snprintf(t + n, cap - n, "\n[warden: %llu bytes of output left out "
		                      "here]\n", (unsigned long long)(left + o->head_len - hl));
	start = o->ring_len < o->half ? 0 : o->ring_pos;
	i = 0;
	if (left > 0)   /* the tail starts on a character */
		while (i < o->ring_len && ((unsigned char)o->ring[(start + i) % o->half] & 0xC0) == 0x80)
			i++;
	for (; i < o->ring_len; i++)
		t[n++] = o->ring[(start + i) % o->half];
	*len = n;
	return t;
}

static void mout_free(struct mout *o)
{
	free(o->head);
	free(o->ring);
	memset(o, 0, sizeof(*o));
}

/* ---- calls ---------------------------------------------------------------- */

struct mcall *mcall_new(struct mreply *rp, struct mcp_call *c)
{
	struct mcall *k = xcalloc(1, sizeof(*k));

	k->rp = *rp;
	memset(rp, 0, sizeof(*rp));
	k->tool = c->tool;
	k->language = steal_pointer(&c->language);
	k->code = steal_pointer(&c->code);
	k->code_len = c->code_len;
	k->timeout_ms = c->timeout_ms;
	return k;
}

void mcall_free(struct mcall *k)
{
	if (!k)
		return;
	mcp_reply_drop(&k->rp);
	free(k->language);
	free(k->code);
	mout_free(&k->out);
	json_object_put(k->images);
	free(k->refusals);
	free(k->note);
	free(k);
}

static json_object *text_item(const char *text, size_t len)
{
	json_object *t = json_object_new_object();

	json_object_object_add(t, "type", json_object_new_string("text"));
	json_object_object_add(t, "text", mcp_jstr_n(text, len));
	return t;
}

/* {content: [text..., JSON of sc], structuredContent: sc, isError} (sc taken) */
static json_object *tool_result(json_object *content, json_object *sc, bool is_error)
{
	json_object *r = json_object_new_object();
	const char *js = json_object_to_json_string_ext(sc, JSON_C_TO_STRING_PLAIN |
	                                                JSON_C_TO_STRING_NOSLASHESCAPE);

	json_object_array_add(content, text_item(js, strlen(js)));
	json_object_object_add(r, "content", content);
	json_object_object_add(r, "structuredContent", sc);
	json_object_object_add(r, "isError", json_object_new_boolean(is_error));
	return r;
}

void mcall_fail(struct mcall *k, const char *fmt, ...)
{
	json_object *content = json_object_new_array(), *sc = json_object_new_object();
	char msg[1024];
	va_list ap;

	if (!k->rp.id && !k->rp.batch)
		return;   /* nobody is waiting for it */
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_array_add(content, text_item(msg, strlen(msg)));
	if (k->sess)
		json_object_object_add(sc, "session", json_object_new_string(k->sess->handle));
	json_object_object_add(sc, "error", mcp_jstr_n(msg, strlen(msg)));
	mcp_answer(&k->rp, tool_result(content, sc, true));
}

static void start_next(struct mcp_server *s, struct msess *ss);

static void start(struct mcp_server *s, struct msess *ss, struct mcall *k)
{
	struct werr err = { 0 };

	k->block = s->b->next_block++;
	if (wproto_run(&s->b->c.out, ss->id, k->block, k->language, k->code, k->code_len,
	               &err) < 0) {
		mcall_fail(k, "%s", err.msg);
		mcall_free(k);
		return;
	}
	/* the code is kept: a block refused something runs again once the
	 * person allowed it (mcp_elicit.c) */
	k->out.half = s->o.output_max / 2;
	ss->running = k;
	if (k->timeout_ms)
		k->deadline = mcp_now_ms() + (long)k->timeout_ms;
	mcp_sup_flush(s);
}

static void start_next(struct mcp_server *s, struct msess *ss)
{
	while (!ss->running && !ss->closing && ss->q_head) {
		struct mcall *k = ss->q_head;
		ss->q_head = k->next;
		if (!ss->q_head)
			ss->q_tail = NULL;
		k->next = NULL;
		ss->queued--;
		s->n_waiting--;
		start(s, ss, k);
	}
}

void mrun_enqueue(struct mcp_server *s, struct msess *ss, struct mcall *k)
{
	const char *lang;

	k->sess = ss;
	ss->last_used = mcp_now_ms();
	lang = json_object_array_length(ss->languages) ? blang_lookup(ss->languages, k->language)
	                                               : k->language;
	if (!lang) {
		char list[1024];
		blang_list(ss->languages, list, sizeof(list));
		mcall_fail(k, "unknown language \"%s\"; this session has: %s", k->language, list);
		mcall_free(k);
		return;
	}
	if (lang != k->language) {
		free(k->language);
		k->language = xstrdup(lang);
	}
	if (!ss->running) {
		start(s, ss, k);
		return;
	}
	if (ss->queued >= MCP_QUEUE_MAX) {
		mcall_fail(k, "session %s already has %u blocks waiting; send more after their "
		           "answers", ss->handle, ss->queued);
		mcall_free(k);
		return;
	}
	if (ss->q_tail)
		ss->q_tail->next = k;
	else
		ss->q_head = k;
	ss->q_tail = k;
	ss->queued++;
	s->n_waiting++;
}

void mrun_output(struct mcall *k, int stream, const uint8_t *p, size_t n)
{
	int i = stream == WSTREAM_STDERR ? 1 : 0;
	char *buf;
	size_t len;

	if (k->cancelled || !n)
		return;
	buf = xmalloc(UTF8_OUT_MAX(n));
	len = utf8_sanitize(&k->out.tail[i], p, n, buf);
	mout_add(&k->out, buf, len);
	free(buf);
}

void mrun_display(struct mcall *k, const char *format, const uint8_t *p, size_t n)
{
	json_object *img;
	char *b64;

	if (k->cancelled)
		return;
	if (!format || (strcmp(format, "png") && strcmp(format, "jpeg")))
		return;   /* HTML: MCP has no such content, and its text repr is on stdout */
	b64 = lmc_base64(p, n);
	img = json_object_new_object();
	json_object_object_add(img, "type", json_object_new_string("image"));
	json_object_object_add(img, "data", json_object_new_string(b64));
	json_object_object_add(img, "mimeType", json_object_new_string(
		strcmp(format, "png") ? "image/jpeg" : "image/png"));
	free(b64);
	if (!k->images)
		k->images = json_object_new_array();
	json_object_array_add(k->images, img);
}

void mrun_interrupt(struct mcp_server *s, struct msess *ss)
{
	struct werr err = { 0 };

	if (!ss->running || ss->running->interrupted)
		return;
	ss->running->interrupted = true;
	if (wproto_interrupt(&s->b->c.out, ss->id, &err) < 0) {
		fprintf(stderr, "warden-broker: %s\n", err.msg);
		return;
	}
	mcp_sup_flush(s);
}

/* The block's text (what the UTF-8 repair held back included), then its
 * images, into content. */
static json_object *block_content(struct mcall *k)
{
	json_object *content = json_object_new_array();
	char tail[16], *text;
	size_t len;

	if (k->note)   /* what the person allowed, before this run */
		json_object_array_add(content, text_item(k->note, strlen(k->note)));
	for (int i = 0; i < 2; i++) {
		size_t n = utf8_finish(&k->out.tail[i], tail);
		if (n)
			mout_add(&k->out, tail, n);
	}
	text = mout_text(&k->out, &len);
	if (len)
		json_object_array_add(content, text_item(text, len));
	else
		json_object_array_add(content, text_item(LMC_NO_OUTPUT, strlen(LMC_NO_OUTPUT)));
	free(text);
	for (size_t i = 0; k->images && i < json_object_array_length(k->images); i++)
		json_object_array_add(content, json_object_get(json_object_array_get_idx(k->images, i)));
	return content;
}

static void finish(struct mcp_server *s, struct msess *ss)
{
	melicit_drop_call(s, ss->running);
	mcall_free(ss->running);
	ss->running = NULL;
	ss->last_used = mcp_now_ms();
	start_next(s, ss);
}

void mrun_result(struct mcp_server *s, struct msess *ss, const struct wresult *res)
{
	struct mcall *k = ss->running;
	json_object *sc, *denied;
	char msg[256];
	bool bad;

	if (k->cancelled) {
		finish(s, ss);
		return;
	}
	sc = json_object_new_object();
	denied = json_object_new_array();
	for (uint32_t i = 0; res->denied && i < res->n_denied; i++) {
		json_object *d = json_object_new_object();
		const char *name = res->denied[i].name ? res->denied[i].name : "unknown";
		json_object_object_add(d, "name", mcp_jstr_n(name, strlen(name)));
		json_object_object_add(d, "count", json_object_new_int64((int64_t)res->denied[i].count));
		json_object_array_add(denied, d);
	}
	bad = res->reason != WB_EXITED || res->exit_code != 0;
	snprintf(msg, sizeof(msg), "%s", res->message ? res->message : "");
	if (k->timed_out)
		snprintf(msg, sizeof(msg), "interrupted: the call's timeout of %u.%03u s passed (the "
		         "session keeps its state)", k->timeout_ms / 1000, k->timeout_ms % 1000);
	json_object_object_add(sc, "session", json_object_new_string(ss->handle));
	json_object_object_add(sc, "language", json_object_new_string(k->language));
	json_object_object_add(sc, "exit_code", res->exit_code < 0 ? NULL
	                       : json_object_new_int(res->exit_code));
	json_object_object_add(sc, "signal", res->signal ? json_object_new_int64(res->signal) : NULL);
	json_object_object_add(sc, "reason", json_object_new_string(wblock_reason_name(res->reason)));
	json_object_object_add(sc, "timed_out", json_object_new_boolean(k->timed_out));
	json_object_object_add(sc, "wall_ms", json_object_new_int64((int64_t)res->wall_ms));
	json_object_object_add(sc, "cpu_ms", json_object_new_int64((int64_t)res->cpu_ms));
	/* null when nothing measured it (no memory cgroup): never a false 0 */
	json_object_object_add(sc, "peak_memory_bytes", res->flags & WRES_NO_PEAK ? NULL
	                       : json_object_new_int64((int64_t)res->peak_memory));
	json_object_object_add(sc, "output_bytes", json_object_new_int64((int64_t)res->output_bytes));
	json_object_object_add(sc, "truncated", json_object_new_boolean(
		(res->flags & WRES_TRUNCATED) || k->out.total > k->out.head_len + k->out.ring_len));
	json_object_object_add(sc, "state_lost", json_object_new_boolean(!!(res->flags & WRES_STATE_LOST)));
	json_object_object_add(sc, "fresh_jail", json_object_new_boolean(!!(res->flags & WRES_FRESH)));
	json_object_object_add(sc, "denied_syscalls", denied);
	json_object_object_add(sc, "images", json_object_new_int(
		k->images ? (int)json_object_array_length(k->images) : 0));
	json_object_object_add(sc, "message", mcp_jstr_n(msg, strlen(msg)));
	json_object_object_add(sc, "audit_session", mcp_jstr_n(ss->audit_id, strlen(ss->audit_id)));
	{
		json_object *r = tool_result(block_content(k), sc, bad);

		switch (melicit_offer(s, ss, k, r, bad)) {
		case MEL_WAITING:
			return;   /* the person is asked; the call stays the running one */
		case MEL_ANSWERED:
			break;
		default:
			mcp_answer(&k->rp, r);
			break;
		}
	}
	finish(s, ss);
}

void mrun_finish(struct mcp_server *s, struct msess *ss)
{
	if (ss->running)
		finish(s, ss);
}

void mrun_rerun(struct mcp_server *s, struct msess *ss, struct mcall *k, char *note)
{
	free(k->note);
	k->note = note;
	mout_free(&k->out);
	json_object_put(k->images);
	k->images = NULL;
	k->timed_out = k->interrupted = false;
	k->deadline = 0;
	ss->running = NULL;
	start(s, ss, k);
}

void mrun_error(struct mcp_server *s, struct msess *ss, const char *msg)
{
	struct mcall *k = ss->running;

	if (!k->cancelled && (k->rp.id || k->rp.batch)) {
		json_object *content = block_content(k), *sc = json_object_new_object();
		json_object_array_add(content, text_item(msg, strlen(msg)));
		json_object_object_add(sc, "session", json_object_new_string(ss->handle));
		json_object_object_add(sc, "error", mcp_jstr_n(msg, strlen(msg)));
		mcp_answer(&k->rp, tool_result(content, sc, true));
	}
	finish(s, ss);
}

void mrun_opened(struct mcp_server *s, struct msess *ss, struct mreply *rp)
{
	json_object *sc = json_object_new_object(), *names = json_object_new_array(),
	            *content = json_object_new_array();
	char text[256];

	(void)s;
	for (size_t i = 0; i < json_object_array_length(ss->languages); i++) {
		json_object *l = json_object_array_get_idx(ss->languages, i), *n;
		if (json_object_object_get_ex(l, "name", &n))
			json_object_array_add(names, json_object_get(n));
	}
	json_object_object_add(sc, "session", json_object_new_string(ss->handle));
	json_object_object_add(sc, "profile", mcp_jstr_n(ss->profile, strlen(ss->profile)));
	json_object_object_add(sc, "workspace", mcp_jstr_n(ss->workspace, strlen(ss->workspace)));
	json_object_object_add(sc, "languages", names);
	json_object_object_add(sc, "audit_session", mcp_jstr_n(ss->audit_id, strlen(ss->audit_id)));
	snprintf(text, sizeof(text), "Opened session %s: pass it as \"session\" to run_code to "
	         "keep its state.", ss->handle);
	json_object_array_add(content, text_item(text, strlen(text)));
	mcp_answer(rp, tool_result(content, sc, false));
}
