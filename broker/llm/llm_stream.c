/* The reply being built, streamed tool calls, and the one request helper
 * the providers share (llm_stream.h). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "extract.h"
#include "http.h"
#include "llm_stream.h"
#include "core/lmc.h"
#include "warden/util.h"

/* ---- the reply being built ---- */

void turn_init(struct llm_turn *t, const struct llm_events *ev, void *ctx)
{
	memset(t, 0, sizeof(*t));
	t->msgs = json_object_new_array();
	t->ev = ev;
	t->ctx = ctx;
}

void turn_free(struct llm_turn *t)
{
	json_object_put(t->msgs);
	free(t->text);
	memset(t, 0, sizeof(*t));
}

/* Appends n bytes to a NUL-terminated buffer of *len bytes, growing it. */
static void append(char **buf, size_t *len, size_t *cap, const char *p, size_t n)
{
	if (*len + n + 1 > *cap) {
		size_t c = *cap ? *cap : 256;
		while (c < *len + n + 1)
			c *= 2;
		char *b = xmalloc(c);
		if (*len)
			memcpy(b, *buf, *len);
		free(*buf);
		*buf = b;
		*cap = c;
	}
	memcpy(*buf + *len, p, n);
	*len += n;
	(*buf)[*len] = '\0';
}

int turn_text(struct llm_turn *t, const char *s, size_t n, struct werr *err)
{
	if (n == 0)
		return 0;
	if (t->total + n > LLM_REPLY_MAX)
		return werr_set(err, 0, "the reply is larger than %u MiB", LLM_REPLY_MAX >> 20);
	append(&t->text, &t->text_len, &t->text_cap, s, n);
	t->total += n;
	if (t->ev && t->ev->text)
		t->ev->text(t->ctx, s, n);
	return 0;
}

void turn_break(struct llm_turn *t)
{
	if (t->text_len > 0) {
		json_object_array_add(t->msgs, lmc_msg("assistant", "message", NULL, t->text));
	}
	t->text_len = 0;
	if (t->text)
		t->text[0] = '\0';
}

int turn_code(struct llm_turn *t, const char *language, const char *code, struct werr *err)
{
	size_t n = strlen(code);

	if (t->total + n > LLM_REPLY_MAX)
		return werr_set(err, 0, "the reply is larger than %u MiB", LLM_REPLY_MAX >> 20);
	t->total += n;
	turn_break(t);
	json_object_array_add(t->msgs, lmc_msg("assistant", "code", language, code));
	return 0;
}

json_object *turn_finish(struct llm_turn *t)
{
	turn_break(t);
	return steal_pointer(&t->msgs);
}

/* ---- streamed tool calls ---- */

void llm_stream_init(struct llm_stream *s, const char *who, const struct llm_events *ev,
                     void *ctx)
{
	memset(s, 0, sizeof(*s));
	s->who = who;
	turn_init(&s->turn, ev, ctx);
}

void llm_stream_free(struct llm_stream *s)
{
	for (int i = 0; i < s->n_calls; i++) {
		free(s->calls[i].id);
		free(s->calls[i].name);
		free(s->calls[i].args);
	}
	s->n_calls = 0;
	turn_free(&s->turn);
}

int llm_stream_flush_calls(struct llm_stream *s, bool complete_only, struct werr *err)
{
	for (int i = 0; i < s->n_calls; i++) {
		struct llm_call *c = &s->calls[i];
		_cleanup_free_ char *lang = NULL, *code = NULL;

		if (c->done)
			continue;
		c->done = true;
		if (!c->name && !c->args)
			continue;              /* an index the server skipped */
		if (complete_only) {
			/* a cut-off call is kept only if its arguments are whole */
			json_object *j = json_tokener_parse(c->args ? c->args : "");
			bool whole = j != NULL;
			json_object_put(j);
			if (!whole)
				continue;
		}
		if (llm_repair_call(c->name ? c->name : "", c->args ? c->args : "", &lang, &code) < 0) {
			/* not a code call: say so in the text, nothing is run */
			char note[160];
			const char *nm = c->name ? c->name : "";
			if (strncmp(nm, "functions.", 10) == 0)
				nm += 10;
			if (llm_is_language(nm) || strcmp(nm, LLM_TOOL_NAME) == 0)
				snprintf(note, sizeof(note),
				         "\n(the model called '%.64s' with arguments that are not valid)\n", nm);
			else
				snprintf(note, sizeof(note), "\n(the model called an unknown tool '%.64s')\n",
				         nm);
			if (turn_text(&s->turn, note, strlen(note), err) < 0)
				return -1;
			/* nothing is lost: the arguments as text, never run */
			if (c->args_len && (turn_text(&s->turn, c->args, c->args_len, err) < 0 ||
			                    turn_text(&s->turn, "\n", 1, err) < 0))
				return -1;
			continue;
		}
		if (!c->announced && s->turn.ev && s->turn.ev->code_start)
			s->turn.ev->code_start(s->turn.ctx, lang);
		c->announced = true;
		if (turn_code(&s->turn, lang, code, err) < 0)
			return -1;
	}
	return 0;
}

/* ---- streamed events ---- */

json_object *llm_event_json(const struct llm_stream *s, const char *data, size_t len,
                            struct werr *err)
{
	json_tokener *tok = json_tokener_new();
	json_object *j = json_tokener_parse_ex(tok, data, (int)len);
	size_t end = json_tokener_get_parse_end(tok);
	bool ok = j && json_tokener_get_error(tok) == json_tokener_success;

	json_tokener_free(tok);
	while (ok && end < len && isspace((unsigned char)data[end]))
		end++;
	if (!ok || end != len || !json_object_is_type(j, json_type_object)) {
		json_object_put(j);
		char shown[64];
		size_t k = 0;
		for (size_t i = 0; i < len && k + 1 < sizeof(shown); i++)
			shown[k++] = (data[i] >= 0x20 && data[i] < 0x7f) ? data[i] : '?';
		shown[k] = '\0';
		werr_set(err, 0, "%s: the server sent invalid JSON in the stream: %s%s", s->who,
		         shown, len > k ? "..." : "");
		return NULL;
	}
	return j;
}

const char *llm_jstr(json_object *o, const char *key)
{
	json_object *v;

	if (o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v) &&
	    json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	return NULL;
}

/* ev->code_start as soon as the language can be told. */
static void announce(struct llm_stream *s, struct llm_call *c)
{
	char lang[40];
	const char *p;
	size_t k = 0;

	if (c->announced || !s->turn.ev || !s->turn.ev->code_start)
		return;
	if (c->name && llm_is_language(c->name)) {
		c->announced = true;
		s->turn.ev->code_start(s->turn.ctx, c->name);
		return;
	}
	if (!c->args || !(p = strstr(c->args, "\"language\"")))
		return;
	p += 10;
	while (*p == ' ' || *p == ':' || *p == '\t' || *p == '\n')
		p++;
	if (*p != '"')
		return;
	for (p++; *p && *p != '"' && k + 1 < sizeof(lang); p++)
		lang[k++] = *p;
	if (*p != '"' || k == 0)
		return;
	lang[k] = '\0';
	c->announced = true;
	s->turn.ev->code_start(s->turn.ctx, lang);
}

int llm_call_add(struct llm_stream *s, int index, const char *id, const char *name,
                 const char *args, size_t args_len, struct werr *err)
{
	struct llm_call *c;

	if (index < 0 || index >= LLM_MAX_CALLS)
		return werr_set(err, 0, "%s: tool call index %d out of range (at most %d calls)",
		                s->who, index, LLM_MAX_CALLS);
	c = &s->calls[index];
	if (index >= s->n_calls)
		s->n_calls = index + 1;
	if (c->done)
		return werr_set(err, 0, "%s: tool call %d continued after it ended", s->who, index);
	if (id && !c->id)
		c->id = xstrdup(id);
	if (name && *name) {
		if (!c->name) {
			c->name = xstrdup(name);
		} else if (strlen(c->name) < 128) {
			char *n = xasprintf("%s%s", c->name, name);   /* some servers split names */
			free(c->name);
			c->name = n;
		}
	}
	if (args_len) {
		if (s->turn.total + args_len > LLM_REPLY_MAX)
			return werr_set(err, 0, "%s: the reply is larger than %u MiB", s->who,
			                LLM_REPLY_MAX >> 20);
		s->turn.total += args_len;
		append(&c->args, &c->args_len, &c->args_cap, args, args_len);
	}
	announce(s, c);
	return 0;
}


/* ---- the request ---- */

char *llm_base_url(const char *base)
{
	size_t n = strlen(base);
	while (n > 0 && base[n - 1] == '/')
		n--;
	char *s = xmalloc(n + 1);
	memcpy(s, base, n);
	s[n] = '\0';
	return s;
}

/* The one state of a request: the bytes go through the SSE parser to the
 * provider's event handler, which fills s. */
struct post_state {
	struct sse_parser sse;
	struct llm_stream *s;
};

static int on_data(void *ctx, const char *p, size_t n, struct werr *err)
{
	struct post_state *ps = ctx;
	return sse_feed(&ps->sse, p, n, err);
}

static void on_retry(void *ctx, int attempt, long wait_ms, const char *why)
{
	struct post_state *ps = ctx;
	const struct llm_events *ev = ps->s->turn.ev;
	if (ev && ev->retry)
		ev->retry(ps->s->turn.ctx, attempt, wait_ms, why);
}

int llm_stream_post(struct llm_stream *s, const struct llm_post *p, const char *default_base,
                    const struct llm_config *cfg, const char *body,
                    volatile sig_atomic_t *cancel, struct werr *err)
{
	_cleanup_free_ char *base = llm_base_url(cfg->api_base ? cfg->api_base : default_base);
	_cleanup_free_ char *url = xasprintf("%s%s", base, p->path);
	char *key = NULL;
	const char *headers[5];
	struct post_state ps = { .s = s };
	int n = 0, r = -1;

	headers[n++] = "Content-Type: application/json";
	headers[n++] = "Accept: text/event-stream";
	if (p->extra_header)
		headers[n++] = p->extra_header;
	if (cfg->api_key && *cfg->api_key) {
		key = xasprintf("%s%s", p->key_header, cfg->api_key);
		headers[n++] = key;
	}
	headers[n] = NULL;
	sse_init(&ps.sse, SSE_DEFAULT_MAX, p->on_event, s);
	struct http_req req = {
		.who = s->who, .url = url, .headers = headers, .body = body,
		.body_len = strlen(body), .connect_timeout_ms = cfg->connect_timeout_ms,
		.idle_timeout_ms = cfg->idle_timeout_ms, .max_retries = cfg->max_retries,
		.secret = cfg->api_key, .cancel = cancel, .on_data = on_data,
		.on_retry = on_retry, .ctx = &ps,
	};
	if (http_stream_post(&req, err) < 0)
		goto out;
	if (s->events == 0) {
		werr_set(err, 0, "%s: the server sent no events: is %s %s (check --api-base)?",
		         s->who, base, p->api);
		goto out;
	}
	if (!s->done && !(p->finish_ends && s->finished)) {
		werr_set(err, 0, "%s: the reply was cut off: the stream ended before %s", s->who,
		         p->end_event);
		goto out;
	}
	r = llm_stream_flush_calls(s, false, err);
out:
	sse_free(&ps.sse);
	if (key) {
		explicit_bzero(key, strlen(key));
		free(key);
	}
	return r;
}
