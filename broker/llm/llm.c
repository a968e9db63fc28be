/* LLM clients: set-up, model names, and dispatch to the providers through
 * their table (llm_provider.h).  The top of the LLM code: nothing below
 * calls back into it. */
#include <curl/curl.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "http.h"
#include "llm.h"
#include "llm_provider.h"
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

/* The providers, in the order model specs are matched. */
static const struct llm_provider *const providers[] = {
	&llm_provider_openai, &llm_provider_anthropic, &llm_provider_ollama, &llm_provider_replay,
};

static const struct llm_provider *provider_named(const char *name)
{
	for (size_t i = 0; name && i < ARRAY_SIZE(providers); i++)
		if (strcmp(providers[i]->name, name) == 0)
			return providers[i];
	return NULL;
}

static const struct llm_provider *provider_of_spec(const char *spec)
{
	for (size_t i = 0; spec && i < ARRAY_SIZE(providers); i++)
		if (strncmp(spec, providers[i]->prefix, strlen(providers[i]->prefix)) == 0)
			return providers[i];
	return NULL;
}

const char *llm_default_base(const char *provider)
{
	const struct llm_provider *p = provider_named(provider);

	return p && p->default_base ? p->default_base : "";
}

long llm_model_port(const char *spec)
{
	const struct llm_provider *p = provider_of_spec(spec);

	return p ? p->default_port : 0;
}

int llm_parse_model(const char *spec, struct llm_config *cfg, struct werr *err)
{
	const struct llm_provider *p;
	const char *slash;
	char *prov = NULL, *model = NULL;

	if (!spec || !*spec)
		return werr_set(err, 0, "no model given: %s", model_forms);
	for (const char *c = spec; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return werr_set(err, 0, "model name contains a control character: %s",
			                model_forms);
	if ((p = provider_of_spec(spec))) {
		const char *rest = spec + strlen(p->prefix);

		if (!*rest)
			return werr_set(err, 0, "model '%s' needs %s after '%s': %s", spec, p->needs,
			                p->prefix, model_forms);
		if (p->preload && p->preload(rest, err) < 0)
			return -1;
		prov = xstrdup(p->name);
		model = xstrdup(rest);
		goto done;
	}
	slash = strchr(spec, '/');
	if (slash) {
		size_t pl = (size_t)(slash - spec);

		/* "org/model" is a model name of an OpenAI-compatible server the
		 * user pointed --api-base at */
		if (cfg->api_base) {
			prov = xstrdup(llm_provider_openai.name);
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
		prov = xstrdup(llm_provider_anthropic.name);
	else
		prov = xstrdup(llm_provider_openai.name);
	model = xstrdup(spec);
done:
	free(cfg->provider);
	free(cfg->model);
	cfg->provider = prov;
	cfg->model = model;
	return 0;
}

/* ---- one assistant turn ---- */

int llm_complete(const struct llm_config *cfg, const char *system, json_object *history,
                 const struct llm_events *ev, void *ctx, volatile sig_atomic_t *cancel,
                 json_object **out, struct werr *err)
{
	const struct llm_provider *p;
	struct llm_stream s;
	int r;

	*out = NULL;
	if (!cfg || !cfg->provider || !cfg->model)
		return werr_set(err, 0, "no model configured: %s", model_forms);
	if (history && !json_object_is_type(history, json_type_array))
		return werr_set(err, 0, "the conversation is not a JSON array");
	p = provider_named(cfg->provider);
	llm_stream_init(&s, cfg->provider, ev, ctx);
	if (!p) {
		r = werr_set(err, 0, "unknown provider '%s': %s", cfg->provider, model_forms);
	} else if (p->complete) {
		r = p->complete(cfg, history, &s, cancel, err);
	} else {
		_cleanup_free_ char *body = p->request_body(cfg, system, history);

		r = llm_stream_post(&s, &p->post, p->default_base, cfg, body, cancel, err);
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
