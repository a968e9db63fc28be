/* OpenAI-compatible chat completions (OpenAI, ollama, llama.cpp, vLLM...),
 * streamed: POST {api_base}/chat/completions with "stream": true.
 *
 * History mapping (llm.h): consecutive assistant "message" and "code"
 * messages make one assistant message; each code is a tool call
 * execute(language, code) with id "call_<position in history>"; the run of
 * "computer" messages after it is the tool message answering it.  A call
 * left without output is answered "(no output)", as the API requires.
 * Without tools, code goes back as a fenced block in the assistant's text
 * and its output as a user message "Output of the code: ...". */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "llm_provider.h"
#include "core/lmc.h"
#include "warden/util.h"

struct oconv {
	json_object *out;          /* the messages array */
	bool tools;
	/* the assistant message being merged */
	bool have_asst;
	char *text;
	json_object *calls;        /* tool_calls array or NULL */
	json_object *results;      /* parallel: string or NULL */
	int n_calls, answered;
	int last_call;             /* the call the previous computer message answered, -1 */
	json_object *out_user;     /* the "Output of the code" user message to extend, or NULL */
	bool vision;               /* images go to the model as image_url parts */
	json_object *images;       /* content parts waiting for the next user message, or NULL */
};

/* The images of a run of outputs: one user message after the tool
 * messages (a tool message carries text only). */
static void flush_images(struct oconv *c)
{
	json_object *m, *parts = c->images;

	if (!parts)
		return;
	c->images = NULL;
	m = json_object_new_object();
	json_object_object_add(m, "role", json_object_new_string("user"));
	json_object_object_add(m, "content", parts);
	json_object_array_add(c->out, m);
}

static void append_text(char **dst, const char *s, const char *sep)
{
	char *n;

	if (!*dst) {
		*dst = xstrdup(s);
		return;
	}
	n = xasprintf("%s%s%s", *dst, sep, s);
	free(*dst);
	*dst = n;
}

static void oflush(struct oconv *c)
{
	json_object *m;

	if (!c->have_asst) {
		flush_images(c);
		return;
	}
	m = json_object_new_object();
	json_object_object_add(m, "role", json_object_new_string("assistant"));
	json_object_object_add(m, "content", c->text ? json_object_new_string(c->text) : NULL);
	if (c->calls)
		json_object_object_add(m, "tool_calls", c->calls);
	json_object_array_add(c->out, m);
	for (int i = 0; i < c->n_calls; i++) {
		json_object *call = json_object_array_get_idx(c->calls, (size_t)i), *id;
		json_object *r = json_object_array_get_idx(c->results, (size_t)i);
		const char *res = r ? json_object_get_string(r) : NULL;
		json_object *t = json_object_new_object();

		json_object_object_get_ex(call, "id", &id);
		json_object_object_add(t, "role", json_object_new_string("tool"));
		json_object_object_add(t, "tool_call_id", json_object_get(id));
		json_object_object_add(t, "content",
		                       json_object_new_string(res && *res ? res : LMC_NO_OUTPUT));
		json_object_array_add(c->out, t);
	}
	json_object_put(c->results);
	free(c->text);
	c->text = NULL;
	c->calls = c->results = NULL;
	c->n_calls = c->answered = 0;
	c->have_asst = false;
	flush_images(c);
}

static void plain(json_object *out, const char *role, const char *content)
{
	json_object *m = json_object_new_object();

	json_object_object_add(m, "role", json_object_new_string(role));
	json_object_object_add(m, "content", json_object_new_string(content));
	json_object_array_add(out, m);
}

static void oconv_msg(struct oconv *c, json_object *m, size_t pos)
{
	const char *role = lmc_str(m, "role"), *type = lmc_str(m, "type");
	const char *content = lmc_str(m, "content"), *format = lmc_str(m, "format");

	if (strcmp(role, "user") == 0) {
		oflush(c);
		plain(c->out, "user", content);
	} else if (strcmp(role, "assistant") == 0 && strcmp(type, "code") == 0) {
		if (c->n_calls > 0 && c->answered == c->n_calls)
			oflush(c);
		else if (!c->have_asst)
			flush_images(c);
		c->have_asst = true;
		if (!c->tools) {
			char *block = xasprintf("```%s\n%s\n```", *format ? format : "python", content);
			append_text(&c->text, block, "\n\n");
			free(block);
		} else {
			json_object *call = json_object_new_object(), *fn = json_object_new_object();
			json_object *args = json_object_new_object();
			char id[32];

			snprintf(id, sizeof(id), "call_%zu", pos);
			json_object_object_add(args, "language",
			                       json_object_new_string(*format ? format : "python"));
			json_object_object_add(args, "code", json_object_new_string(content));
			json_object_object_add(fn, "name", json_object_new_string(LLM_TOOL_NAME));
			json_object_object_add(fn, "arguments",
			                       json_object_new_string(json_object_to_json_string_ext(
			                               args, JSON_C_TO_STRING_PLAIN |
			                                     JSON_C_TO_STRING_NOSLASHESCAPE)));
			json_object_put(args);
			json_object_object_add(call, "id", json_object_new_string(id));
			json_object_object_add(call, "type", json_object_new_string("function"));
			json_object_object_add(call, "function", fn);
			if (!c->calls) {
				c->calls = json_object_new_array();
				c->results = json_object_new_array();
			}
			json_object_array_add(c->calls, call);
			json_object_array_add(c->results, NULL);
			c->n_calls++;
		}
	} else if (strcmp(role, "assistant") == 0) {
		if (c->n_calls > 0)
			oflush(c);
		else if (!c->have_asst)
			flush_images(c);
		c->have_asst = true;
		append_text(&c->text, content, "\n\n");
	} else if (strcmp(role, "computer") == 0) {
		const char *media = lmc_image_media(m);
		if (strcmp(format, "active_line") == 0)
			return;
		if (media && c->vision) {
			json_object *p = json_object_new_object(), *u = json_object_new_object();
			char *url = xasprintf("data:%s;base64,%s", media, content);
			if (!c->images) {
				json_object *t = json_object_new_object();
				c->images = json_object_new_array();
				json_object_object_add(t, "type", json_object_new_string("text"));
				json_object_object_add(t, "text", json_object_new_string(
					"The code produced this image:"));
				json_object_array_add(c->images, t);
			}
			json_object_object_add(u, "url", json_object_new_string(url));
			free(url);
			json_object_object_add(p, "type", json_object_new_string("image_url"));
			json_object_object_add(p, "image_url", u);
			json_object_array_add(c->images, p);
			return;
		}
		if (media)
			content = lmc_image_note;
		else if (strcmp(type, "console"))
			content = "";   /* html and other rich output: its text came on stdout */
		if (c->tools && (c->last_call >= 0 || c->answered < c->n_calls)) {
			int k = c->last_call >= 0 ? c->last_call : c->answered++;
			json_object *r = json_object_array_get_idx(c->results, (size_t)k);
			char *acc = r ? xstrdup(json_object_get_string(r)) : NULL;
			append_text(&acc, content, "");
			json_object_array_put_idx(c->results, (size_t)k, json_object_new_string(acc));
			free(acc);
			c->last_call = k;
			return;
		}
		oflush(c);
		if (c->out_user) {
			json_object *v;
			json_object_object_get_ex(c->out_user, "content", &v);
			char *acc = xstrdup(json_object_get_string(v));
			append_text(&acc, content, "");
			json_object_object_add(c->out_user, "content", json_object_new_string(acc));
			free(acc);
		} else {
			char *s = xasprintf("Output of the code:\n%s", *content ? content : LMC_NO_OUTPUT);
			plain(c->out, "user", s);
			free(s);
			c->out_user = json_object_array_get_idx(c->out,
			                                        json_object_array_length(c->out) - 1);
		}
		return;
	}
	/* anything but a computer message ends a run of outputs */
	c->last_call = -1;
	c->out_user = NULL;
}

char *openai_request_body(const struct llm_config *cfg, const char *system,
                          json_object *history)
{
	json_object *req = json_object_new_object();
	struct oconv c = { .tools = cfg->tools, .last_call = -1,
	                   .vision = lmc_model_vision(cfg->model, cfg->vision) };
	char *s;

	c.out = json_object_new_array();
	if (system && *system)
		plain(c.out, "system", system);
	for (size_t i = 0; history && i < json_object_array_length(history); i++) {
		json_object *m = json_object_array_get_idx(history, i);
		if (m && json_object_is_type(m, json_type_object))
			oconv_msg(&c, m, i);
	}
	oflush(&c);
	flush_images(&c);
	json_object_object_add(req, "model", json_object_new_string(cfg->model ? cfg->model : ""));
	json_object_object_add(req, "messages", c.out);
	json_object_object_add(req, "stream", json_object_new_boolean(1));
	if (cfg->tools) {
		json_object *tools = json_object_new_array(), *t = json_object_new_object();
		json_object *fn = json_object_new_object();
		json_object_object_add(fn, "name", json_object_new_string(LLM_TOOL_NAME));
		json_object_object_add(fn, "description", json_object_new_string(llm_tool_description));
		json_object_object_add(fn, "parameters", llm_tool_schema());
		json_object_object_add(t, "type", json_object_new_string("function"));
		json_object_object_add(t, "function", fn);
		json_object_array_add(tools, t);
		json_object_object_add(req, "tools", tools);
	}
	if (cfg->max_tokens > 0)
		json_object_object_add(req, "max_tokens", json_object_new_int(cfg->max_tokens));
	if (cfg->temperature >= 0)
		json_object_object_add(req, "temperature", json_object_new_double(cfg->temperature));
	s = xstrdup(json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN |
	                                                JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(req);
	return s;
}

/* ---- the stream ---- */

int openai_on_event(void *ctx, const char *event, const char *data, size_t len,
                    struct werr *err)
{
	struct llm_stream *s = ctx;
	json_object *j, *e, *choices, *ch, *delta, *tcs, *fr;
	int r = -1;

	s->events++;
	while (len > 0 && isspace((unsigned char)*data)) {
		data++;
		len--;
	}
	if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
		s->done = true;
		return 0;
	}
	if (len == 0)
		return 0;
	if (s->done)
		return werr_set(err, 0, "%s: data after [DONE] in the stream", s->who);
	if (!(j = llm_event_json(s, data, len, err)))
		return -1;
	if (json_object_object_get_ex(j, "error", &e)) {
		const char *m = json_object_is_type(e, json_type_string) ? json_object_get_string(e)
		                                                         : llm_jstr(e, "message");
		werr_set(err, 0, "%s: the server reported an error in the stream: %.300s", s->who,
		         m ? m : "(no message)");
		goto out;
	}
	if (!json_object_object_get_ex(j, "choices", &choices) ||
	    !json_object_is_type(choices, json_type_array) ||
	    json_object_array_length(choices) == 0) {
		r = 0;       /* usage chunks and the like */
		goto out;
	}
	ch = json_object_array_get_idx(choices, 0);
	if (!ch || !json_object_is_type(ch, json_type_object)) {
		r = 0;
		goto out;
	}
	if (json_object_object_get_ex(ch, "delta", &delta) &&
	    json_object_is_type(delta, json_type_object)) {
		const char *text = llm_jstr(delta, "content");
		if (text && turn_text(&s->turn, text, strlen(text), err) < 0)
			goto out;
		if (json_object_object_get_ex(delta, "tool_calls", &tcs) &&
		    json_object_is_type(tcs, json_type_array)) {
			for (size_t i = 0; i < json_object_array_length(tcs); i++) {
				json_object *tc = json_object_array_get_idx(tcs, i), *iv, *fn = NULL;
				int index = (int)i;
				const char *args;

				if (!tc || !json_object_is_type(tc, json_type_object))
					continue;
				if (json_object_object_get_ex(tc, "index", &iv)) {
					if (!json_object_is_type(iv, json_type_int)) {
						werr_set(err, 0, "%s: a tool call's index is not a number", s->who);
						goto out;
					}
					int64_t v = json_object_get_int64(iv);
					index = v < 0 || v > LLM_MAX_CALLS ? LLM_MAX_CALLS : (int)v;
				}
				json_object_object_get_ex(tc, "function", &fn);
				args = llm_jstr(fn, "arguments");
				/* an object instead of a string (some local servers) */
				if (!args && fn) {
					json_object *a;
					if (json_object_object_get_ex(fn, "arguments", &a) &&
					    json_object_is_type(a, json_type_object))
						args = json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN);
				}
				if (llm_call_add(s, index, llm_jstr(tc, "id"), llm_jstr(fn, "name"), args,
				                 args ? strlen(args) : 0, err) < 0)
					goto out;
			}
		}
	}
	if (json_object_object_get_ex(ch, "finish_reason", &fr) &&
	    json_object_is_type(fr, json_type_string)) {
		s->finished = true;
		snprintf(s->stop_reason, sizeof(s->stop_reason), "%s", json_object_get_string(fr));
	}
	r = 0;
out:
	json_object_put(j);
	return r;
}

/* ---- the providers ---- */

#define OPENAI_POST { \
	.path = "/chat/completions", .key_header = "Authorization: Bearer ", \
	.on_event = openai_on_event, .api = "an OpenAI-compatible API that streams", \
	.end_event = "[DONE]", .finish_ends = true, \
}

const struct llm_provider llm_provider_openai = {
	.name = "openai", .prefix = "openai/", .needs = "a model",
	.default_base = "https://api.openai.com/v1", .default_port = 443,
	.request_body = openai_request_body, .post = OPENAI_POST,
};

/* ollama serves the same API on the same machine */
const struct llm_provider llm_provider_ollama = {
	.name = "ollama", .prefix = "ollama/", .needs = "a model",
	.default_base = "http://localhost:11434/v1", .default_port = 11434,
	.request_body = openai_request_body, .post = OPENAI_POST,
};
