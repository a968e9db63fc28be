/* The "chat" op: warden chat's turn loop for a session of the serve
 * protocol (serve_chat.h; docs/serve.md "Chat").
 *
 *   chat -> the model (its text streamed as LMC messages) -> each code
 *   block: a "confirmation" that waits for "approve" (unless -y), run in
 *   the session's jail (console messages as for "run"), its output fed
 *   back (head and tail) -> the model again, until it answers without
 *   code; then "turn_end".
 *
 * The model request blocks in libcurl, so it runs in a thread of its own
 * with a copy of the history; the thread hands its streamed text and its
 * end to the serve loop through a queue and the loop's wake fd.  It
 * touches nothing else: the loop owns the sessions, the clients and the
 * supervisor connection.  A session that goes while its model request runs
 * cancels the request and lets the thread end alone. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "chat/conv.h"
#include "core/langs.h"
#include "core/lmc.h"
#include "llm/extract.h"
#include "serve_chat.h"
#include "serve_int.h"
#include "warden/sanitize.h"
#include "warden/util.h"

#define DEFAULT_MODEL "openai/gpt-4o"
#define DEFAULT_MAX_OUTPUT 2800
#define DEFAULT_CONTEXT 32000
#define MAX_ROUNDS 40             /* model calls for one user message */

/* ---- the model's settings --------------------------------------------------- */

struct serve_chat_cfg *serve_chat_cfg_new(const struct chat_opts *o, struct werr *err)
{
	const struct chat_settings *s = &o->s;
	struct serve_chat_cfg *c = xcalloc(1, sizeof(*c));
	const char *env, *key;

	if (s->api_base)
		c->llm.api_base = xstrdup(s->api_base);
	if (llm_parse_model(s->model ? s->model : DEFAULT_MODEL, &c->llm, err) < 0) {
		werr_wrap(err, "--model");
		serve_chat_cfg_free(c);
		return NULL;
	}
	c->llm.tools = !o->no_tools;
	c->llm.vision = s->vision < 0 ? 0 : s->vision ? 1 : -1;
	c->llm.connect_timeout_ms = o->connect_ms ? o->connect_ms : 10000;
	c->llm.idle_timeout_ms = o->idle_ms ? o->idle_ms : 120000;
	c->llm.max_retries = 3;
	c->llm.max_tokens = (int)o->max_tokens;
	c->llm.temperature = o->temperature;
	c->llm.replay_delay_ms = o->replay_delay_ms;
	/* the key comes from the environment only: never from a request, and
	 * not from serve's command line either (ps shows it to everyone) */
	env = !strcmp(c->llm.provider, "anthropic") ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
	key = getenv(env);
	if (key && *key)
		c->llm.api_key = xstrdup(key);
	if (!c->llm.api_key && !c->llm.api_base &&
	    (!strcmp(c->llm.provider, "openai") || !strcmp(c->llm.provider, "anthropic"))) {
		werr_set(err, 0, "no API key for %s: set %s in warden's environment, or give "
		         "--api-base URL for a local model", c->llm.provider, env);
		serve_chat_cfg_free(c);
		return NULL;
	}
	c->auto_run = s->auto_run > 0;
	c->max_output = s->max_output > 0 ? s->max_output : DEFAULT_MAX_OUTPUT;
	c->context_window = s->context_window > 0 ? s->context_window : DEFAULT_CONTEXT;
	c->system_base = s->system_message ? xstrdup(s->system_message) : NULL;
	c->system_extra = s->system_message_append ? xstrdup(s->system_message_append) : NULL;
	return c;
}

void serve_chat_cfg_free(struct serve_chat_cfg *c)
{
	if (!c)
		return;
	llm_config_free(&c->llm);
	free(c->system_base);
	free(c->system_extra);
	free(c);
}

/* ---- the model request's thread ---------------------------------------------- */

enum { NEWS_TEXT, NEWS_CODE, NEWS_DONE };

struct sjob {
	const struct serve_chat_cfg *cfg;
	char *system;
	json_object *history;          /* the thread's own copy */
	volatile sig_atomic_t cancel;
	pthread_t th;
	/* the result, read by the loop after NEWS_DONE */
	json_object *out;
	int rc;
	struct werr err;
	struct schat *chat;            /* the loop's side; NULL when its session went */
	struct serve *s;
};

struct news {
	struct news *next;
	struct sjob *job;
	int kind;
	char *text;
	size_t len;
};

struct schat_hub {
	pthread_mutex_t mu;
	struct news *head, *tail;
	int wake_fd;
	unsigned threads;              /* running: serve_free waits for them */
};

static void post(struct sjob *j, int kind, const char *text, size_t len)
{
	struct schat_hub *h = j->s->hub;
	struct news *n = xcalloc(1, sizeof(*n));
	uint64_t one = 1;

	n->job = j;
	n->kind = kind;
	if (text) {
		n->text = xmalloc(len + 1);
		memcpy(n->text, text, len);
		n->text[len] = '\0';
		n->len = len;
	}
	pthread_mutex_lock(&h->mu);
	if (h->tail)
		h->tail->next = n;
	else
		h->head = n;
	h->tail = n;
	pthread_mutex_unlock(&h->mu);
	if (write(h->wake_fd, &one, sizeof(one)) < 0) {
		/* the counter is full: the loop has a wake-up pending anyway */
	}
}

static void ev_text(void *ctx, const char *s, size_t n)
{
	post(ctx, NEWS_TEXT, s, n);
}

static void ev_code_start(void *ctx, const char *language)
{
	post(ctx, NEWS_CODE, language ? language : "", language ? strlen(language) : 0);
}

static void *job_main(void *arg)
{
	static const struct llm_events ev = { ev_text, ev_code_start, NULL };
	struct sjob *j = arg;

	j->rc = llm_complete(&j->cfg->llm, j->system, j->history, &ev, j, &j->cancel, &j->out,
	                     &j->err);
	post(j, NEWS_DONE, NULL, 0);
	return NULL;
}

static void job_free(struct sjob *j)
{
	free(j->system);
	json_object_put(j->history);
	json_object_put(j->out);
	free(j);
}

void schat_hub_init(struct serve *s)
{
	s->hub = xcalloc(1, sizeof(*s->hub));
	pthread_mutex_init(&s->hub->mu, NULL);
	s->hub->wake_fd = s->wake_fd;
}

/* ---- a session's conversation --------------------------------------------------- */

enum cstate { CH_IDLE, CH_MODEL, CH_APPROVE, CH_RUN };

struct schat {
	struct ssession *ss;           /* whose */
	json_object *msgs;             /* the conversation, LMC */
	enum cstate state;
	json_object *turn_id;          /* the "chat" request's id during a turn */
	struct sjob *job;              /* CH_MODEL */
	bool in_text;                  /* an assistant text message is open */
	json_object *reply;            /* the model's messages being worked through */
	size_t next;
	int round;
	bool had_code;
	const char *why;               /* later blocks of this reply are not run: why */
	const char *end;               /* the turn ends after this reply: its reason */
	json_object *block;            /* CH_APPROVE, CH_RUN: the code message */
	unsigned approval;
	struct sbuf head, tail;        /* CH_RUN: the output, for the model */
	uint64_t total;
	size_t head_max, tail_max;
	json_object *rich;
	bool interrupted;
};

static bool turn_on(const struct ssession *ss)
{
	return ss->chat && ss->chat->state != CH_IDLE;
}

bool schat_busy(const struct ssession *ss)
{
	return turn_on(ss);
}

static void text_end(struct ssession *ss)
{
	struct schat *ch = ss->chat;

	if (!ch->in_text)
		return;
	{
		json_object *ev = serve_lmc(ss, ch->turn_id, "assistant", "message");
		json_object_object_add(ev, "end", json_object_new_boolean(1));
		serve_emit(ss->owner, ev);
	}
	ch->in_text = false;
}

static void end_turn(struct serve *s, struct ssession *ss, const char *reason)
{
	struct schat *ch = ss->chat;
	json_object *id = ch->turn_id;

	text_end(ss);
	ch->state = CH_IDLE;
	ch->turn_id = NULL;
	json_object_put(ch->reply);
	ch->reply = NULL;
	json_object_put(ch->block);
	ch->block = NULL;
	ss->last_ms = serve_now_ms();
	schat_turn_end(ss->owner, id, ss->audit_id, reason);
	json_object_put(id);
	(void)s;
}

/* Open Interpreter's end of a turn, {"role":"server","type":"status",
 * "content":"complete"}, as the serve protocol's event, with the reason:
 * done, declined, interrupted, error, rounds, closed or refused. */
void schat_turn_end(struct sclient *c, json_object *id, const char *session, const char *reason)
{
	serve_event(c, id, "turn_end", session,
	            "role", json_object_new_string("server"),
	            "type", json_object_new_string("status"),
	            "content", json_object_new_string("complete"),
	            "reason", json_object_new_string(reason), (char *)NULL);
}

static void console_note(struct schat *ch, const char *text)
{
	json_object_array_add(ch->msgs, lmc_msg("computer", "console", "output", text));
}

/* One model request, in its thread. */
static void ask_model(struct serve *s, struct ssession *ss)
{
	struct schat *ch = ss->chat;
	const struct serve_chat_cfg *cfg = s->cfg.chat;
	struct sjob *j = xcalloc(1, sizeof(*j));
	const char *langs = json_object_to_json_string_ext(ss->languages, JSON_C_TO_STRING_PLAIN);
	struct chat_prompt_in in = {
		.profile = ss->profile, .workspace = ss->workspace, .policy_json = ss->policy_json,
		.languages_json = langs, .system_base = cfg->system_base,
		.system_extra = cfg->system_extra, .tools = cfg->llm.tools,
		.max_output = cfg->max_output,
	};
	long reserve = cfg->llm.max_tokens > 0 ? cfg->llm.max_tokens : 1024, budget;
	json_object *hist;
	int e;

	j->cfg = cfg;
	j->s = s;
	j->chat = ch;
	j->system = chat_prompt_for(&in);
	budget = cfg->context_window - (long)conv_tokens_str(j->system) - reserve;
	hist = conv_trim(ch->msgs, (size_t)(budget < 500 ? 500 : budget));
	/* the thread's own copy: json-c's reference counts are not atomic */
	if (json_object_deep_copy(hist, &j->history, NULL) < 0)
		j->history = json_object_new_array();
	json_object_put(hist);
	ch->job = j;
	ch->state = CH_MODEL;
	ch->round++;
	e = pthread_create(&j->th, NULL, job_main, j);
	if (e) {
		ch->job = NULL;
		job_free(j);
		serve_error(ss->owner, ch->turn_id, ss->audit_id, "starting the model request: %s",
		            strerror(e));
		end_turn(s, ss, "error");
		return;
	}
	s->hub->threads++;
}

static void next_block(struct serve *s, struct ssession *ss);

static void run_block(struct serve *s, struct ssession *ss)
{
	struct schat *ch = ss->chat;
	struct srun *r = xcalloc(1, sizeof(*r));
	const char *lang = lmc_str(ch->block, "format"), *canon;
	const char *code = lmc_str(ch->block, "content");

	canon = blang_lookup(ss->languages, lang);
	ch->state = CH_RUN;
	sbuf_free(&ch->head);
	sbuf_free(&ch->tail);
	ch->total = 0;
	ch->head_max = (size_t)s->cfg.chat->max_output / 2;
	ch->tail_max = (size_t)s->cfg.chat->max_output - ch->head_max;
	json_object_put(ch->rich);
	ch->rich = json_object_new_array();
	r->id = json_object_get(ch->turn_id);
	r->language = xstrdup(canon ? canon : lang);
	r->code = xstrdup(code);
	r->code_len = strlen(code);
	r->approval = ch->approval;
	r->chat = true;
	s->submit(s, ss, r);
}

/* The model's next message: text is already shown, code is confirmed and
 * run (or not, with the reason told to the model). */
static void next_block(struct serve *s, struct ssession *ss)
{
	struct schat *ch = ss->chat;
	const struct serve_chat_cfg *cfg = s->cfg.chat;

	while (ch->reply && ch->next < json_object_array_length(ch->reply)) {
		json_object *m = json_object_get(json_object_array_get_idx(ch->reply, ch->next++));
		json_object *ev;

		json_object_array_add(ch->msgs, m);
		if (strcmp(lmc_str(m, "type"), "code"))
			continue;
		ch->had_code = true;
		/* the whole block, as Open Interpreter streams one */
		ev = serve_lmc(ss, ch->turn_id, "assistant", "code");
		json_object_object_add(ev, "format", serve_jstr(lmc_str(m, "format")));
		json_object_object_add(ev, "content", serve_jstr(lmc_str(m, "content")));
		serve_emit(ss->owner, ev);
		if (ch->why) {
			_cleanup_free_ char *t = xasprintf("%s%s", CONV_NOT_RUN, ch->why);
			console_note(ch, t);
			continue;
		}
		json_object_put(ch->block);
		ch->block = json_object_get(m);
		if (cfg->auto_run) {
			ch->approval = WAPPROVE_AUTO;
			run_block(s, ss);
			return;
		}
		/* Open Interpreter's confirmation; "approve" answers it */
		ev = serve_lmc(ss, ch->turn_id, "computer", "confirmation");
		json_object_object_add(ev, "format", json_object_new_string("execution"));
		{
			json_object *c = json_object_new_object();
			json_object_object_add(c, "type", json_object_new_string("code"));
			json_object_object_add(c, "format", serve_jstr(lmc_str(m, "format")));
			json_object_object_add(c, "content", serve_jstr(lmc_str(m, "content")));
			json_object_object_add(ev, "content", c);
		}
		serve_emit(ss->owner, ev);
		ch->state = CH_APPROVE;
		return;
	}
	/* the reply is worked through */
	json_object_put(ch->reply);
	ch->reply = NULL;
	if (ch->end) {
		end_turn(s, ss, ch->end);
		return;
	}
	if (!ch->had_code) {
		end_turn(s, ss, "done");
		return;
	}
	if (ch->round >= MAX_ROUNDS) {
		serve_error(ss->owner, ch->turn_id, ss->audit_id, "stopped after %d rounds of code "
		            "without a final answer; say how to go on", MAX_ROUNDS);
		end_turn(s, ss, "rounds");
		return;
	}
	ch->had_code = false;
	ask_model(s, ss);
}

/* The model's reply is complete (or cut short: what arrived is kept). */
static void model_done(struct serve *s, struct ssession *ss, struct sjob *j)
{
	struct schat *ch = ss->chat;
	json_object *raw = steal_pointer(&j->out);

	ch->job = NULL;
	text_end(ss);
	if (!raw)
		raw = json_object_new_array();
	if (!s->cfg.chat->llm.tools) {
		/* fenced blocks in the text become code messages */
		json_object *exp = json_object_new_array();

		for (size_t i = 0; i < json_object_array_length(raw); i++) {
			json_object *m = json_object_array_get_idx(raw, i);

			if (!strcmp(lmc_str(m, "type"), "message") &&
			    !strcmp(lmc_str(m, "role"), "assistant")) {
				json_object *parts = llm_extract_code(lmc_str(m, "content"));

				for (size_t k = 0; parts && k < json_object_array_length(parts); k++)
					json_object_array_add(exp, json_object_get(
						json_object_array_get_idx(parts, k)));
				json_object_put(parts);
			} else {
				json_object_array_add(exp, json_object_get(m));
			}
		}
		json_object_put(raw);
		raw = exp;
	}
	ch->reply = raw;
	ch->next = 0;
	ch->had_code = false;
	ch->why = NULL;
	ch->end = NULL;
	if (j->rc < 0) {
		if (j->cancel || ch->interrupted) {
			ch->why = "the user interrupted the reply.";
			ch->end = "interrupted";
		} else {
			/* the key never shows: http.c redacts it from every error */
			serve_error(ss->owner, ch->turn_id, ss->audit_id, "the model's reply failed: %s",
			            j->err.msg);
			ch->why = "the model's reply failed before this block was complete.";
			ch->end = "error";
		}
	}
	ch->state = CH_RUN;   /* working through the reply */
	next_block(s, ss);
}

void schat_on_wake(struct serve *s)
{
	struct schat_hub *h = s->hub;

	for (;;) {
		struct news *n;
		struct sjob *j;
		struct schat *ch;
		struct ssession *ss = NULL;

		pthread_mutex_lock(&h->mu);
		n = h->head;
		if (n) {
			h->head = n->next;
			if (!h->head)
				h->tail = NULL;
		}
		pthread_mutex_unlock(&h->mu);
		if (!n)
			return;
		j = n->job;
		ch = j->chat;
		ss = ch ? ch->ss : NULL;
		if (n->kind == NEWS_DONE) {
			pthread_join(j->th, NULL);
			h->threads--;
			if (ss)
				model_done(s, ss, j);
			job_free(j);
		} else if (ss && n->kind == NEWS_TEXT) {
			json_object *ev;

			if (!ch->in_text) {
				ev = serve_lmc(ss, ch->turn_id, "assistant", "message");
				json_object_object_add(ev, "start", json_object_new_boolean(1));
				serve_emit(ss->owner, ev);
				ch->in_text = true;
			}
			ev = serve_lmc(ss, ch->turn_id, "assistant", "message");
			json_object_object_add(ev, "content", serve_jstr_n(n->text, n->len));
			serve_emit(ss->owner, ev);
		} else if (ss && n->kind == NEWS_CODE) {
			text_end(ss);
		}
		free(n->text);
		free(n);
	}
}

void schat_hub_free(struct serve *s)
{
	struct schat_hub *h = s->hub;

	if (!h)
		return;
	/* every model request was cancelled with its session: wait for them */
	while (h->threads) {
		struct pollfd p = { .fd = h->wake_fd, .events = POLLIN };
		uint64_t v;

		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			break;
		while (read(h->wake_fd, &v, sizeof(v)) == (ssize_t)sizeof(v))
			;
		schat_on_wake(s);
	}
	pthread_mutex_destroy(&h->mu);
	free(h);
	s->hub = NULL;
}

/* ---- requests ------------------------------------------------------------------ */

void schat_request(struct serve *s, struct sclient *c, struct ssession *ss, struct serve_req *q)
{
	struct schat *ch;

	if (!s->cfg.chat) {
		serve_error(c, q->id, ss->audit_id, "this server has no model: start it with "
		            "--model (and --api-base for a local one) to chat");
		schat_turn_end(c, q->id, ss->audit_id, "refused");
		return;
	}
	if (turn_on(ss)) {
		serve_error(c, q->id, ss->audit_id, "session \"%s\" is in a chat turn already; wait "
		            "for its turn_end, or interrupt it", ss->audit_id);
		schat_turn_end(c, q->id, ss->audit_id, "refused");
		return;
	}
	if (ss->running || ss->q_head) {
		serve_error(c, q->id, ss->audit_id, "a block runs in session \"%s\"; chat after its "
		            "result", ss->audit_id);
		schat_turn_end(c, q->id, ss->audit_id, "refused");
		return;
	}
	if (!ss->chat) {
		ss->chat = xcalloc(1, sizeof(*ss->chat));
		ss->chat->ss = ss;
		ss->chat->msgs = json_object_new_array();
	}
	ch = ss->chat;
	ch->turn_id = json_object_get(q->id);
	ch->round = 0;
	ch->interrupted = false;
	json_object_array_add(ch->msgs, lmc_msg("user", "message", NULL, q->message));
	ask_model(s, ss);
}

void schat_approve(struct serve *s, struct sclient *c, struct ssession *ss, struct serve_req *q)
{
	struct schat *ch = ss->chat;

	if (!ch || ch->state != CH_APPROVE) {
		serve_error(c, q->id, ss->audit_id, "nothing in session \"%s\" waits for approval",
		            ss->audit_id);
		return;
	}
	serve_event(c, q->id, "approved", ss->audit_id,
	            "run", json_object_new_boolean(q->yes), (char *)NULL);
	if (!q->yes) {
		console_note(ch, CONV_DECLINED);
		ch->why = "the user declined an earlier block of this reply.";
		ch->end = "declined";
		ch->state = CH_RUN;
		next_block(s, ss);
		return;
	}
	ch->approval = WAPPROVE_USER;
	if (q->code && strcmp(q->code, lmc_str(ch->block, "content"))) {
		/* the conversation keeps what ran */
		json_object_object_add(ch->block, "content",
		                       json_object_new_string_len(q->code, (int)q->code_len));
		ch->approval = WAPPROVE_EDITED;
	}
	run_block(s, ss);
}

bool schat_interrupt(struct serve *s, struct ssession *ss)
{
	struct schat *ch = ss->chat;

	if (!turn_on(ss))
		return false;
	ch->interrupted = true;
	switch (ch->state) {
	case CH_MODEL:
		ch->job->cancel = 1;   /* its thread ends soon; model_done ends the turn */
		break;
	case CH_APPROVE:
		console_note(ch, CONV_NOT_RUN "the user interrupted at the approval.");
		ch->why = "the user interrupted an earlier block.";
		ch->end = "interrupted";
		ch->state = CH_RUN;
		next_block(s, ss);
		break;
	case CH_RUN:   /* serve.c interrupts the block; its end ends the turn */
	case CH_IDLE:
		break;
	}
	return true;
}

/* ---- the block's output, for the model --------------------------------------------- */

void schat_output(struct ssession *ss, const char *text, size_t n)
{
	struct schat *ch = ss->chat;

	if (!ch || ch->state != CH_RUN)
		return;
	ch->total += n;
	if (ch->head.len < ch->head_max) {
		size_t take = ch->head_max - ch->head.len;

		if (take > n)
			take = n;
		sbuf_add(&ch->head, text, take);
		text += take;
		n -= take;
	}
	if (!n)
		return;
	sbuf_add(&ch->tail, text, n);
	if (ch->tail.len > 2 * ch->tail_max + 4096) {
		size_t drop = ch->tail.len - ch->tail_max;

		memmove(ch->tail.d, ch->tail.d + drop, ch->tail.len - drop);
		ch->tail.len -= drop;
		ch->tail.d[ch->tail.len] = '\0';
	}
}

void schat_display(struct ssession *ss, const char *format, const uint8_t *data, size_t len)
{
	struct schat *ch = ss->chat;

	if (!ch || ch->state != CH_RUN)
		return;
	if (!strcmp(format, "html")) {
		json_object *t = serve_jstr_n((const char *)data, len);
		json_object_array_add(ch->rich, lmc_msg("computer", "code", "html",
		                                        json_object_get_string(t)));
		json_object_put(t);
	} else {
		_cleanup_free_ char *b64 = lmc_base64(data, len);
		json_object_array_add(ch->rich, lmc_msg("computer", "image",
		                                        !strcmp(format, "jpeg") ? "base64.jpeg"
		                                                                : "base64.png", b64));
	}
}

/* A cut that does not split a UTF-8 sequence: the start of the character
 * at or after p. */
static size_t utf8_fwd(const char *s, size_t len, size_t p)
{
	while (p < len && ((unsigned char)s[p] & 0xc0) == 0x80)
		p++;
	return p;
}

/* What the model reads of the output: all of it, or the head and the tail
 * with the size of what was left out (as warden chat tells it). */
static void collected(struct schat *ch, struct sbuf *b)
{
	size_t hl = ch->head.len;

	/* the head ends on a whole character */
	while (hl > 0 && ((unsigned char)ch->head.d[hl - 1] & 0x80)) {
		size_t st = hl - 1;
		unsigned char lead;
		size_t need;

		while (st > 0 && ((unsigned char)ch->head.d[st] & 0xc0) == 0x80)
			st--;
		lead = (unsigned char)ch->head.d[st];
		need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
		if (hl - st >= need)
			break;
		hl = st;
	}
	sbuf_add(b, ch->head.d ? ch->head.d : "", hl);
	if (ch->total <= ch->head_max + ch->tail_max) {
		sbuf_add(b, ch->head.d ? ch->head.d + hl : "", ch->head.len - hl);
		sbuf_add(b, ch->tail.d ? ch->tail.d : "", ch->tail.len);
	} else {
		size_t from = ch->tail.len > ch->tail_max ? ch->tail.len - ch->tail_max : 0;

		from = utf8_fwd(ch->tail.d, ch->tail.len, from);
		sbuf_addf(b, "\n\n[... %llu characters left out: the output had %llu characters "
		          "in all; here are the first and the last ...]\n\n",
		          (unsigned long long)(ch->total - hl - (ch->tail.len - from)),
		          (unsigned long long)ch->total);
		sbuf_add(b, ch->tail.d + from, ch->tail.len - from);
	}
}

/* The notes warden chat adds for the model after a block's output. */
static void result_notes(const struct wresult *res, struct sbuf *b)
{
	switch (res->reason) {
	case WB_EXITED:
		if (res->exit_code != 0)
			sbuf_addf(b, "\n[exit status %d]", res->exit_code);
		break;
	case WB_SIGNALED:
		sbuf_addf(b, "\n[killed by signal %u]", res->signal);
		break;
	case WB_INTERRUPTED:
		sbuf_adds(b, "\n[interrupted by the user (Ctrl-C)]");
		break;
	default:
		sbuf_addf(b, "\n[stopped by the jail: the policy's %s limit was reached]",
		          wblock_reason_name(res->reason));
		break;
	}
	if (res->message && *res->message && strcmp(res->message, wblock_reason_name(res->reason)))
		sbuf_addf(b, "\n[warden: %s]", res->message);
	if (res->n_denied) {
		sbuf_adds(b, "\n[the jail's policy denied these system calls: ");
		for (uint32_t i = 0; i < res->n_denied; i++)
			sbuf_addf(b, "%s%s ×%llu", i ? ", " : "", res->denied[i].name,
			          (unsigned long long)res->denied[i].count);
		sbuf_adds(b, ". This is the sandbox working as intended; do not try to get around "
		             "it]");
	}
	if (res->flags & WRES_TRUNCATED)
		sbuf_adds(b, "\n[the jail's output limit was reached: the middle of the output was "
		             "dropped]");
	if (res->flags & WRES_STATE_LOST)
		sbuf_adds(b, "\n[the session restarted: variables, imports and functions from "
		             "earlier blocks are gone]");
}

void schat_block_done(struct serve *s, struct ssession *ss, const struct wresult *res,
                      const char *error)
{
	struct schat *ch = ss->chat;
	struct sbuf b = { 0 };

	if (!ch || ch->state != CH_RUN || !ch->block)
		return;
	collected(ch, &b);
	if (!b.len)
		sbuf_adds(&b, LMC_NO_OUTPUT);
	if (res)
		result_notes(res, &b);
	else
		sbuf_addf(&b, "\n[warden: the block could not run: %s]", error ? error : "no reason");
	console_note(ch, b.d);
	sbuf_free(&b);
	for (size_t i = 0; i < json_object_array_length(ch->rich); i++)
		json_object_array_add(ch->msgs, json_object_get(json_object_array_get_idx(ch->rich, i)));
	json_object_put(ch->rich);
	ch->rich = NULL;
	json_object_put(ch->block);
	ch->block = NULL;
	if (ch->interrupted || (res && res->reason == WB_INTERRUPTED)) {
		ch->why = "the user interrupted an earlier block.";
		ch->end = "interrupted";
	} else if (!res && !ss->closing) {
		ch->why = "warden could not run an earlier block.";
		ch->end = "error";
	}
	if (ss->closing) {
		end_turn(s, ss, "closed");
		return;
	}
	next_block(s, ss);
}

void schat_free(struct serve *s, struct ssession *ss)
{
	struct schat *ch = ss->chat;

	if (!ch)
		return;
	if (ch->job) {
		/* its thread ends alone; the hub frees it */
		ch->job->chat = NULL;
		ch->job->cancel = 1;
		ch->job = NULL;
	}
	if (ch->state != CH_IDLE)
		end_turn(s, ss, "closed");
	ss->chat = NULL;
	json_object_put(ch->msgs);
	json_object_put(ch->rich);
	sbuf_free(&ch->head);
	sbuf_free(&ch->tail);
	free(ch);
}
