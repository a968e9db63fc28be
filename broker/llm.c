/* LLM clients: set-up, model names, the reply being built, and dispatch to
 * the providers (llm_openai.c, llm_anthropic.c, llm_replay.c). */
#include <curl/curl.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "http.h"
#include "llm_impl.h"
#include "warden/util.h"

#define CA_BUNDLE "/etc/ssl/certs/ca-certificates.crt"
#define CA_BUNDLE_MAX (8u << 20)

int llm_global_init(struct werr *err)
{
	static bool done;
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai = NULL;
	char *pem = NULL;
	size_t len = 0;
	struct werr e = { 0 };
	CURLcode rc;

	if (done)
		return 0;
	rc = curl_global_init(CURL_GLOBAL_DEFAULT);
	if (rc != CURLE_OK)
		return werr_set(err, 0, "curl_global_init: %s", curl_easy_strerror(rc));
	/* Landlock will hide /etc/ssl: keep the CA bundle in memory.  Without
	 * it, libcurl's own default applies (and fails later, clearly). */
	if (read_file_buf(CA_BUNDLE, CA_BUNDLE_MAX, &pem, &len, &e) == 0 && len <= CA_BUNDLE_MAX)
		http_set_ca_blob(pem, len);
	else
		free(pem);
	/* load glibc's name-service modules now, while they can be opened */
	if (getaddrinfo("localhost", "80", &hints, &ai) == 0)
		freeaddrinfo(ai);
	done = true;
	return 0;
}

void llm_config_free(struct llm_config *cfg)
{
	if (!cfg)
		return;
	free(cfg->provider);
	free(cfg->model);
	free(cfg->api_base);
	if (cfg->api_key) {
		explicit_bzero(cfg->api_key, strlen(cfg->api_key));
		free(cfg->api_key);
	}
	cfg->provider = cfg->model = cfg->api_base = cfg->api_key = NULL;
}

static const char model_forms[] =
	"use openai/MODEL, anthropic/MODEL, ollama/MODEL, replay:FILE, "
	"or a bare OpenAI model name such as gpt-4o";

int llm_parse_model(const char *spec, struct llm_config *cfg, struct werr *err)
{
	static const char *const providers[] = { "openai", "anthropic", "ollama" };
	const char *slash;
	char *prov = NULL, *model = NULL;

	if (!spec || !*spec)
		return werr_set(err, 0, "no model given: %s", model_forms);
	for (const char *p = spec; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return werr_set(err, 0, "model name contains a control character: %s",
			                model_forms);
	if (strncmp(spec, "replay:", 7) == 0) {
		if (!spec[7])
			return werr_set(err, 0, "replay: needs a file: replay:FILE (a saved conversation)");
		if (replay_preload(spec + 7, err) < 0)
			return -1;
		prov = xstrdup("replay");
		model = xstrdup(spec + 7);
		goto done;
	}
	slash = strchr(spec, '/');
	if (slash) {
		size_t pl = (size_t)(slash - spec);
		for (size_t i = 0; i < ARRAY_SIZE(providers); i++) {
			if (strlen(providers[i]) == pl && strncmp(spec, providers[i], pl) == 0) {
				if (!slash[1])
					return werr_set(err, 0, "model '%s' names no model after '%s/': %s",
					                spec, providers[i], model_forms);
				prov = xstrdup(providers[i]);
				model = xstrdup(slash + 1);
				goto done;
			}
		}
		/* "org/model" is a model name of an OpenAI-compatible server the
		 * user pointed --api-base at */
		if (cfg->api_base) {
			prov = xstrdup("openai");
			model = xstrdup(spec);
			goto done;
		}
		return werr_set(err, 0, "unknown provider '%.*s' in model '%s': %s (or give "
		                "--api-base for an OpenAI-compatible server)",
		                (int)(pl > 64 ? 64 : pl), spec, spec, model_forms);
	}
	/* a bare name: Anthropic's models by their family name, else OpenAI
	 * (or whatever --api-base serves) */
	if (strncmp(spec, "claude", 6) == 0 && !cfg->api_base)
		prov = xstrdup("anthropic");
	else
		prov = xstrdup("openai");
	model = xstrdup(spec);
done:
	free(cfg->provider);
	free(cfg->model);
	cfg->provider = prov;
	cfg->model = model;
	return 0;
}

/* ---- LMC helpers ---- */

const char *lmc_str(json_object *m, const char *key)
{
	json_object *v;

	if (m && json_object_is_type(m, json_type_object) &&
	    json_object_object_get_ex(m, key, &v) && json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	return "";
}

json_object *lmc_msg(const char *role, const char *type, const char *format,
                     const char *content)
{
	json_object *m = json_object_new_object();

	json_object_object_add(m, "role", json_object_new_string(role));
	json_object_object_add(m, "type", json_object_new_string(type));
	if (format)
		json_object_object_add(m, "format", json_object_new_string(format));
	json_object_object_add(m, "content", json_object_new_string(content ? content : ""));
	return m;
}

const char llm_tool_description[] =
	"Run code on the user's machine, inside warden's jail, and return its output "
	"(stdout and stderr). The jail's policy may deny files, network or system calls; "
	"a denial is reported in the output. State persists between calls of the same "
	"language.";

json_object *llm_tool_schema(void)
{
	json_object *s = json_object_new_object(), *props = json_object_new_object();
	json_object *lang = json_object_new_object(), *code = json_object_new_object();
	json_object *req = json_object_new_array();

	json_object_object_add(lang, "type", json_object_new_string("string"));
	json_object_object_add(lang, "description",
	                       json_object_new_string("The language: python, javascript, shell, ..."));
	json_object_object_add(code, "type", json_object_new_string("string"));
	json_object_object_add(code, "description", json_object_new_string("The code to run."));
	json_object_object_add(props, "language", lang);
	json_object_object_add(props, "code", code);
	json_object_array_add(req, json_object_new_string("language"));
	json_object_array_add(req, json_object_new_string("code"));
	json_object_object_add(s, "type", json_object_new_string("object"));
	json_object_object_add(s, "properties", props);
	json_object_object_add(s, "required", req);
	return s;
}

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

int turn_text(struct llm_turn *t, const char *s, size_t n, struct werr *err)
{
	if (n == 0)
		return 0;
	if (t->total + n > LLM_REPLY_MAX)
		return werr_set(err, 0, "the reply is larger than %u MiB", LLM_REPLY_MAX >> 20);
	if (t->text_len + n + 1 > t->text_cap) {
		size_t c = t->text_cap ? t->text_cap : 1024;
		while (c < t->text_len + n + 1)
			c *= 2;
		char *p = xmalloc(c);
		if (t->text_len)
			memcpy(p, t->text, t->text_len);
		free(t->text);
		t->text = p;
		t->text_cap = c;
	}
	memcpy(t->text + t->text_len, s, n);
	t->text_len += n;
	t->text[t->text_len] = '\0';
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

/* ---- one assistant turn ---- */

int llm_complete(const struct llm_config *cfg, const char *system, json_object *history,
                 const struct llm_events *ev, void *ctx, volatile sig_atomic_t *cancel,
                 json_object **out, struct werr *err)
{
	struct llm_stream s;
	int r;

	*out = NULL;
	if (!cfg || !cfg->provider || !cfg->model)
		return werr_set(err, 0, "no model configured: %s", model_forms);
	if (history && !json_object_is_type(history, json_type_array))
		return werr_set(err, 0, "the conversation is not a JSON array");
	llm_stream_init(&s, cfg->provider, ev, ctx);
	if (strcmp(cfg->provider, "openai") == 0 || strcmp(cfg->provider, "ollama") == 0) {
		r = openai_complete(cfg, system, history, &s, cancel, err);
	} else if (strcmp(cfg->provider, "anthropic") == 0) {
		r = anthropic_complete(cfg, system, history, &s, cancel, err);
	} else if (strcmp(cfg->provider, "replay") == 0) {
		r = replay_complete(cfg, history, &s.turn, cancel, err);
	} else {
		r = werr_set(err, 0, "unknown provider '%s': %s", cfg->provider, model_forms);
	}
	if (r < 0) {
		struct werr e2 = { 0 };
		/* keep what streamed: text, and tool calls whose arguments are whole */
		llm_stream_flush_calls(&s, true, &e2);
		http_redact(err->msg, sizeof(err->msg), cfg->api_key);
	}
	*out = turn_finish(&s.turn);
	llm_stream_free(&s);
	return r;
}
