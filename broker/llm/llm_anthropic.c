/* The Anthropic Messages API, streamed: POST {api_base}/messages with
 * "stream": true, x-api-key and anthropic-version headers.
 *
 * History mapping (llm.h): the system prompt is a separate field; an
 * assistant "code" message is a tool_use block (id "toolu_<position>"); the
 * run of "computer" messages after it is a tool_result block in the next
 * user turn (tool results first in that turn, as the API requires, and
 * "(no output)" for a call nobody answered).  Consecutive turns of one role
 * are merged (the API requires alternation) and the first turn is a user
 * turn.  Without tools, code is a fenced block in the assistant's text and
 * its output a user text "Output of the code: ...". */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "llm_provider.h"
#include "core/lmc.h"
#include "warden/util.h"

#define ANTHROPIC_VERSION "2023-06-01"

struct aconv {
	json_object *out;
	json_object *cur;           /* content array of the last message */
	bool cur_user;
	bool tools;
	json_object *pending;       /* tool_use ids awaiting a result (strings) */
	json_object *results;       /* the current user turn's tool_result blocks */
	size_t filled;
	json_object *last_block;    /* the block the previous computer message went to */
	bool vision;                /* images go to the model as image blocks */
};

static json_object *text_block(const char *s)
{
	json_object *b = json_object_new_object();
	json_object_object_add(b, "type", json_object_new_string("text"));
	json_object_object_add(b, "text", json_object_new_string(s));
	return b;
}

static void start_turn(struct aconv *c, bool user)
{
	json_object *m;

	if (c->cur && c->cur_user == user)
		return;
	if (!user && !c->cur) {
		/* the API wants a user turn first */
		start_turn(c, true);
		json_object_array_add(c->cur, text_block("(continue)"));
	}
	m = json_object_new_object();
	c->cur = json_object_new_array();
	c->cur_user = user;
	json_object_object_add(m, "role", json_object_new_string(user ? "user" : "assistant"));
	json_object_object_add(m, "content", c->cur);
	json_object_array_add(c->out, m);
	json_object_put(c->results);
	c->results = NULL;
	c->filled = 0;
	if (user && c->pending) {
		/* tool results come first in the user turn after the calls */
		c->results = json_object_new_array();
		for (size_t i = 0; i < json_object_array_length(c->pending); i++) {
			json_object *b = json_object_new_object();
			json_object_object_add(b, "type", json_object_new_string("tool_result"));
			json_object_object_add(b, "tool_use_id",
			                       json_object_get(json_object_array_get_idx(c->pending, i)));
			json_object_object_add(b, "content", json_object_new_string(LMC_NO_OUTPUT));
			json_object_array_add(c->cur, b);
			json_object_array_add(c->results, json_object_get(b));
		}
		json_object_put(c->pending);
		c->pending = NULL;
	}
}

static void extend(json_object *block, const char *key, const char *s, bool replace_placeholder)
{
	json_object *v;
	const char *old = "";
	char *acc;

	if (json_object_object_get_ex(block, key, &v))
		old = json_object_get_string(v);
	if (replace_placeholder && strcmp(old, LMC_NO_OUTPUT) == 0)
		old = "";
	acc = xasprintf("%s%s", old, s);
	json_object_object_add(block, key, json_object_new_string(*acc ? acc : LMC_NO_OUTPUT));
	free(acc);
}

static void aconv_msg(struct aconv *c, json_object *m, size_t pos)
{
	const char *role = lmc_str(m, "role"), *type = lmc_str(m, "type");
	const char *content = lmc_str(m, "content"), *format = lmc_str(m, "format");
	json_object *prev_block = c->last_block;

	c->last_block = NULL;
	if (strcmp(role, "user") == 0) {
		start_turn(c, true);
		json_object_array_add(c->cur, text_block(*content ? content : "(empty message)"));
	} else if (strcmp(role, "assistant") == 0 && strcmp(type, "code") == 0) {
		start_turn(c, false);
		if (!c->tools) {
			char *s = xasprintf("```%s\n%s\n```", *format ? format : "python", content);
			json_object_array_add(c->cur, text_block(s));
			free(s);
			return;
		}
		json_object *b = json_object_new_object(), *input = json_object_new_object();
		char id[32];
		snprintf(id, sizeof(id), "toolu_%zu", pos);
		json_object_object_add(input, "language",
		                       json_object_new_string(*format ? format : "python"));
		json_object_object_add(input, "code", json_object_new_string(content));
		json_object_object_add(b, "type", json_object_new_string("tool_use"));
		json_object_object_add(b, "id", json_object_new_string(id));
		json_object_object_add(b, "name", json_object_new_string(LLM_TOOL_NAME));
		json_object_object_add(b, "input", input);
		json_object_array_add(c->cur, b);
		if (!c->pending)
			c->pending = json_object_new_array();
		json_object_array_add(c->pending, json_object_new_string(id));
	} else if (strcmp(role, "assistant") == 0) {
		if (!*content)
			return;
		start_turn(c, false);
		json_object_array_add(c->cur, text_block(content));
	} else if (strcmp(role, "computer") == 0) {
		const char *media = lmc_image_media(m);
		if (strcmp(format, "active_line") == 0) {
			c->last_block = prev_block;
			return;
		}
		start_turn(c, true);
		if (media && c->vision) {
			/* after the tool results of the turn, as the API wants */
			json_object *b = json_object_new_object(), *src = json_object_new_object();
			json_object_object_add(src, "type", json_object_new_string("base64"));
			json_object_object_add(src, "media_type", json_object_new_string(media));
			json_object_object_add(src, "data", json_object_new_string(content));
			json_object_object_add(b, "type", json_object_new_string("image"));
			json_object_object_add(b, "source", src);
			json_object_array_add(c->cur, b);
			c->last_block = prev_block;
			return;
		}
		if (media)
			content = lmc_image_note;
		else if (strcmp(type, "console"))
			content = "";   /* html and other rich output: its text came on stdout */
		if (prev_block) {
			/* the same output, continued */
			bool is_result = strcmp(lmc_str(prev_block, "type"), "tool_result") == 0;
			extend(prev_block, is_result ? "content" : "text", content, is_result);
			c->last_block = prev_block;
		} else if (c->results && c->filled < json_object_array_length(c->results)) {
			json_object *b = json_object_array_get_idx(c->results, c->filled++);
			extend(b, "content", content, true);
			c->last_block = b;
		} else {
			char *s = xasprintf("Output of the code:\n%s", *content ? content : LMC_NO_OUTPUT);
			json_object *b = text_block(s);
			free(s);
			json_object_array_add(c->cur, b);
			c->last_block = b;
		}
	}
}

char *anthropic_request_body(const struct llm_config *cfg, const char *system,
                             json_object *history)
{
	json_object *req = json_object_new_object();
	struct aconv c = { .tools = cfg->tools, .vision = lmc_model_vision(cfg->model, cfg->vision) };
	char *s;

	c.out = json_object_new_array();
	for (size_t i = 0; history && i < json_object_array_length(history); i++) {
		json_object *m = json_object_array_get_idx(history, i);
		if (m && json_object_is_type(m, json_type_object))
			aconv_msg(&c, m, i);
	}
	if (c.pending)
		start_turn(&c, true);       /* answer calls nobody answered */
	if (!c.cur) {
		start_turn(&c, true);
		json_object_array_add(c.cur, text_block("(start)"));
	}
	/* no message may be empty */
	for (size_t i = 0; i < json_object_array_length(c.out); i++) {
		json_object *m = json_object_array_get_idx(c.out, i), *ct;
		if (json_object_object_get_ex(m, "content", &ct) && json_object_array_length(ct) == 0)
			json_object_array_add(ct, text_block("(empty)"));
	}
	json_object_put(c.results);
	json_object_put(c.pending);
	json_object_object_add(req, "model", json_object_new_string(cfg->model ? cfg->model : ""));
	json_object_object_add(req, "max_tokens",
	                       json_object_new_int(cfg->max_tokens > 0 ? cfg->max_tokens : 4096));
	if (system && *system)
		json_object_object_add(req, "system", json_object_new_string(system));
	json_object_object_add(req, "messages", c.out);
	json_object_object_add(req, "stream", json_object_new_boolean(1));
	if (cfg->tools) {
		json_object *tools = json_object_new_array(), *t = json_object_new_object();
		json_object_object_add(t, "name", json_object_new_string(LLM_TOOL_NAME));
		json_object_object_add(t, "description", json_object_new_string(llm_tool_description));
		json_object_object_add(t, "input_schema", llm_tool_schema());
		json_object_array_add(tools, t);
		json_object_object_add(req, "tools", tools);
	}
	if (cfg->temperature >= 0)
		json_object_object_add(req, "temperature", json_object_new_double(cfg->temperature));
	s = xstrdup(json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN |
	                                                JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(req);
	return s;
}

/* ---- the stream ---- */

enum { BLOCK_NONE, BLOCK_TEXT, BLOCK_TOOL, BLOCK_OTHER };

static int block_index(struct llm_stream *s, json_object *j, struct werr *err)
{
	json_object *iv;
	int64_t v;

	if (!json_object_object_get_ex(j, "index", &iv) || !json_object_is_type(iv, json_type_int))
		return werr_set(err, 0, "%s: a content block event without an index", s->who);
	v = json_object_get_int64(iv);
	if (v < 0 || v >= LLM_MAX_CALLS)
		return werr_set(err, 0, "%s: content block index %lld out of range (at most %d blocks)",
		                s->who, (long long)v, LLM_MAX_CALLS);
	return (int)v;
}

int anthropic_on_event(void *ctx, const char *event, const char *data, size_t len,
                       struct werr *err)
{
	struct llm_stream *s = ctx;
	json_object *j, *b, *d;
	const char *type;
	int r = -1, idx;

	s->events++;
	while (len > 0 && isspace((unsigned char)*data)) {
		data++;
		len--;
	}
	if (len == 0)
		return 0;
	if (!(j = llm_event_json(s, data, len, err)))
		return -1;
	type = llm_jstr(j, "type");
	if (!type)
		type = event;
	if (s->done && strcmp(type, "ping") != 0) {
		werr_set(err, 0, "%s: event '%.40s' after message_stop", s->who, type);
		goto out;
	}
	if (strcmp(type, "error") == 0) {
		json_object *e = NULL;
		json_object_object_get_ex(j, "error", &e);
		const char *et = llm_jstr(e, "type"), *m = llm_jstr(e, "message");
		werr_set(err, 0, "%s: %.60s%s%.300s", s->who, et ? et : "error", m ? ": " : "",
		         m ? m : "");
		goto out;
	} else if (strcmp(type, "content_block_start") == 0) {
		if ((idx = block_index(s, j, err)) < 0)
			goto out;
		if (s->block_kind[idx] != BLOCK_NONE) {
			werr_set(err, 0, "%s: content block %d started twice", s->who, idx);
			goto out;
		}
		json_object_object_get_ex(j, "content_block", &b);
		const char *bt = llm_jstr(b, "type");
		if (bt && strcmp(bt, "text") == 0) {
			const char *t = llm_jstr(b, "text");
			s->block_kind[idx] = BLOCK_TEXT;
			if (t && turn_text(&s->turn, t, strlen(t), err) < 0)
				goto out;
		} else if (bt && strcmp(bt, "tool_use") == 0) {
			int slot = s->n_calls;
			json_object *in;
			const char *args = NULL;
			s->block_kind[idx] = BLOCK_TOOL;
			s->block_call[idx] = slot;
			if (json_object_object_get_ex(b, "input", &in) &&
			    json_object_is_type(in, json_type_object) && json_object_object_length(in) > 0)
				args = json_object_to_json_string_ext(in, JSON_C_TO_STRING_PLAIN);
			if (llm_call_add(s, slot, llm_jstr(b, "id"), llm_jstr(b, "name") ? llm_jstr(b, "name") : "?",
			                 args, args ? strlen(args) : 0, err) < 0)
				goto out;
		} else {
			s->block_kind[idx] = BLOCK_OTHER;    /* thinking, ...: not shown */
		}
	} else if (strcmp(type, "content_block_delta") == 0) {
		if ((idx = block_index(s, j, err)) < 0)
			goto out;
		json_object_object_get_ex(j, "delta", &d);
		const char *dt = llm_jstr(d, "type");
		if (s->block_kind[idx] == BLOCK_NONE) {
			werr_set(err, 0, "%s: a delta for content block %d, which never started", s->who, idx);
			goto out;
		}
		if (dt && strcmp(dt, "text_delta") == 0 && s->block_kind[idx] == BLOCK_TEXT) {
			const char *t = llm_jstr(d, "text");
			if (t && turn_text(&s->turn, t, strlen(t), err) < 0)
				goto out;
		} else if (dt && strcmp(dt, "input_json_delta") == 0 && s->block_kind[idx] == BLOCK_TOOL) {
			const char *p = llm_jstr(d, "partial_json");
			if (p && llm_call_add(s, s->block_call[idx], NULL, NULL, p, strlen(p), err) < 0)
				goto out;
		}
	} else if (strcmp(type, "content_block_stop") == 0) {
		if ((idx = block_index(s, j, err)) < 0)
			goto out;
		if (s->block_kind[idx] == BLOCK_TOOL && llm_stream_flush_calls(s, false, err) < 0)
			goto out;
	} else if (strcmp(type, "message_delta") == 0) {
		const char *sr = NULL;
		if (json_object_object_get_ex(j, "delta", &d))
			sr = llm_jstr(d, "stop_reason");
		if (sr) {
			s->finished = true;
			snprintf(s->stop_reason, sizeof(s->stop_reason), "%s", sr);
		}
	} else if (strcmp(type, "message_stop") == 0) {
		s->done = true;
	}
	/* message_start, ping and unknown events: nothing to do */
	r = 0;
out:
	json_object_put(j);
	return r;
}

/* ---- the provider ---- */

const struct llm_provider llm_provider_anthropic = {
	.name = "anthropic", .prefix = "anthropic/", .needs = "a model",
	.default_base = "https://api.anthropic.com/v1", .default_port = 443,
	.request_body = anthropic_request_body,
	.post = {
		.path = "/messages", .key_header = "x-api-key: ",
		.extra_header = "anthropic-version: " ANTHROPIC_VERSION,
		.on_event = anthropic_on_event, .api = "the Anthropic API",
		.end_event = "message_stop",
	},
};
