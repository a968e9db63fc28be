/* warden chat's options (chat.h): parsed once, before the broker confines
 * itself, into struct chat_opts; the files and ports that must be known
 * before confinement. */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "chat.h"
#include "chat_int.h"
#include "config.h"
#include "conv.h"
#include "llm/llm.h"
#include "core/sanitize.h"
#include "ui.h"
#include "warden/broker_start.h"
#include "warden/chat_args.h"
#include "warden/util.h"

/* ---- options ---- */

const char chat_usage_text[] =
	"usage: warden chat [OPTIONS] [MESSAGE]\n"
	"Chat with an LLM; every piece of code it writes runs in a warden jail.\n"
	"MESSAGE: answer it and exit.  Stdin not a terminal: each line is a message.\n"
	"\n"
	"  -m, --model PROV/NAME      e.g. openai/gpt-4o, ollama/llama3, replay:FILE\n"
	"      --api-base URL         an OpenAI-compatible server (local models)\n"
	"      --api-key KEY          else $OPENAI_API_KEY / $ANTHROPIC_API_KEY\n"
	"  -y, --auto-run             run code unasked   (-v, --verbose; -h, --help)\n"
	"      --profile NAME         a chat profile from ~/.config/warden/config.json\n"
	"      --sandbox-profile NAME the jail's policy profile (%profile switches it)\n"
	"      --no-tools             the model writes ```fenced``` code, not tool calls\n"
	"      --max-output N  --context-window N  --max-tokens N  --temperature T\n"
	"      --resume [ID|FILE]     continue a saved conversation (default: the latest)\n"
	"      --conversations        list saved conversations; pick one to resume\n"
	"      --export-script FILE   with --resume: the approved code as a shell script\n"
	"      --jupyter [NAME|-]     with --resume: the conversation as a notebook\n"
	"      --system-message[-append] TEXT  replace (add to) warden's instructions\n"
	"      --connect-timeout DUR  --idle-timeout DUR (10s, 2m)  --oneshot  --no-learn\n"
	"      --workspace DIR        the jail's workspace (default: .)\n"
	"      --allow-workspace DIR  --allow-profile NAME   more a session may use\n"
	"      --net MODE  --allow HOST[:PORT]   network: none, loopback or proxy\n"
	"      --policy FILE  --audit-log FILE   the default policy; the audit's file\n"
	"\n"
	"At the prompt: %help; Ctrl-C interrupts, Ctrl-D exits.  All: man warden-chat\n";

void chat_opts_free(struct chat_opts *o)
{
	chat_settings_free(&o->s);
	if (o->api_key) {
		explicit_bzero(o->api_key, strlen(o->api_key));
		free(o->api_key);
	}
	free(o->profile);
	free(o->export_script);
	free(o->jupyter);
	free(o->resume);
	free(o->message);
	if (o->export_fd >= 0)
		close(o->export_fd);
	free(o->export_path);
	json_object_put(o->resume_msgs);
	free(o->resume_path);
	free(o->demo_path);
	memset(o, 0, sizeof(*o));
	o->export_fd = -1;
}

int chat_bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int chat_bad(const char *fmt, ...)
{
	va_list ap;
	char *m = NULL, *clean;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&m, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -1;
	clean = wsan_str(m, (size_t)r);
	fprintf(stderr, "warden chat: %s (see warden chat --help)\n", clean);
	free(clean);
	free(m);
	return -1;
}

static int num_arg(const char *opt, const char *v, long min, long max, long *out)
{
	uint64_t n;
	struct werr err = { 0 };

	if (parse_u64(v, &n, &err) < 0 || n < (uint64_t)min || n > (uint64_t)max)
		return chat_bad("%s needs a whole number from %ld to %ld, not '%s'", opt, min, max, v);
	*out = (long)n;
	return 0;
}

static int dur_arg(const char *opt, const char *v, long *out)
{
	uint64_t ms;
	struct werr err = { 0 };

	if (parse_duration_ms(v, &ms, &err) < 0 || ms == 0 || ms > 24ull * 3600 * 1000)
		return chat_bad("%s needs a duration such as 10s or 2m, not '%s'", opt, v);
	*out = (long)ms;
	return 0;
}

static bool looks_like_file(const char *s)
{
	size_t n = strlen(s);

	return s[0] != '-' && (strchr(s, '/') || (n > 5 && !strcmp(s + n - 5, ".json")));
}

/* 0 ok, -1 bad (message printed). */
static int parse_opts(int argc, char **argv, struct chat_opts *o)
{
	struct sbuf msg = { 0 };
	int c;

	chat_settings_init(&o->s);
	o->temperature = -1;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, WCHAT_SHORTOPTS, wchat_longopts(WCA_CHAT), NULL)) != -1) {
		long n;

		switch (c) {
		case WCA_MODEL:
			free(o->s.model);
			o->s.model = xstrdup(optarg);
			break;
		case WCA_API_BASE:
			free(o->s.api_base);
			o->s.api_base = xstrdup(optarg);
			break;
		case WCA_API_KEY:
			free(o->api_key);
			o->api_key = xstrdup(optarg);
			break;
		case WCA_AUTO_RUN:
			o->s.auto_run = 1;
			break;
		case WCA_PROFILE:
			free(o->profile);
			o->profile = xstrdup(optarg);
			break;
		case WCA_SANDBOX:
			free(o->s.sandbox_profile);
			o->s.sandbox_profile = xstrdup(optarg);
			break;
		case WCA_NO_TOOLS:
			o->no_tools = true;
			break;
		case WCA_MAX_OUTPUT:
			if (num_arg("--max-output", optarg, 100, 10000000, &n) < 0)
				goto fail;
			o->s.max_output = n;
			break;
		case WCA_CONTEXT:
			if (num_arg("--context-window", optarg, 500, 100000000, &n) < 0)
				goto fail;
			o->s.context_window = n;
			break;
		case WCA_MAX_TOKENS:
			if (num_arg("--max-tokens", optarg, 1, 10000000, &n) < 0)
				goto fail;
			o->max_tokens = n;
			break;
		case WCA_TEMP: {
			char *end = NULL;

			errno = 0;
			o->temperature = strtod(optarg, &end);
			if (errno || !end || *end || end == optarg || o->temperature < 0 ||
			    o->temperature > 2) {
				chat_bad("--temperature needs a number from 0 to 2, not '%s'", optarg);
				goto fail;
			}
			break;
		}
		case WCA_RESUME:
			o->resume_set = true;
			free(o->resume);
			o->resume = NULL;
			if (optarg)
				o->resume = xstrdup(optarg);
			else if (optind < argc && looks_like_file(argv[optind]))
				o->resume = xstrdup(argv[optind++]);
			break;
		case WCA_EXPORT:
			free(o->export_script);
			o->export_script = xstrdup(optarg);
			break;
		case WCA_JUPYTER:
			/* its NAME is optional: the next word, unless an option */
			o->jupyter_set = true;
			free(o->jupyter);
			o->jupyter = NULL;
			if (optarg)
				o->jupyter = xstrdup(optarg);
			else if (optind < argc && (argv[optind][0] != '-' || !strcmp(argv[optind], "-")))
				o->jupyter = xstrdup(argv[optind++]);
			break;
		case WCA_SYSMSG:
			free(o->s.system_message);
			o->s.system_message = xstrdup(optarg);
			break;
		case WCA_SYSMSG_APPEND:
			free(o->s.system_message_append);
			o->s.system_message_append = xstrdup(optarg);
			break;
		case WCA_CONVERSATIONS:
			o->conversations = true;
			break;
		case WCA_VERBOSE:
			o->verbose = true;
			break;
		case WCA_CONNECT:
			if (dur_arg("--connect-timeout", optarg, &o->connect_ms) < 0)
				goto fail;
			break;
		case WCA_IDLE:
			if (dur_arg("--idle-timeout", optarg, &o->idle_ms) < 0)
				goto fail;
			break;
		case WCA_NO_LEARN:
			o->no_learn = true;
			break;
		case WCA_ONESHOT:
			o->oneshot = true;
			break;
		case WCA_REPLAY_DELAY:
			if (num_arg("--replay-delay", optarg, 0, 10000, &o->replay_delay_ms) < 0)
				goto fail;
			break;
		case WCA_HELP:
			o->help = true;
			break;
		case ':':
			chat_bad("%s needs a value", argv[optind - 1]);
			goto fail;
		default:
			if (optopt > 0 && optopt < 256)
				chat_bad("unknown option -%c", optopt);
			else
				chat_bad("unknown option %s", argv[optind - 1]);
			goto fail;
		}
	}
	for (int i = optind; i < argc; i++) {
		if (msg.len)
			sbuf_addc(&msg, ' ');
		sbuf_adds(&msg, argv[i]);
	}
	if (msg.len)
		o->message = sbuf_steal(&msg);
	sbuf_free(&msg);
	return 0;
fail:
	sbuf_free(&msg);
	return -1;
}

/* ---- before confinement ---- */

static void add_port(uint16_t *ports, size_t *n, long port)
{
	if (port <= 0 || port > 65535 || *n >= CHAT_PORTS_MAX)
		return;
	for (size_t i = 0; i < *n; i++)
		if (ports[i] == port)
			return;
	ports[(*n)++] = (uint16_t)port;
}

/* The port a URL names, or its scheme's default (curl's parser, the one
 * that will connect); dflt when the URL has neither. */
static long url_port(const char *url, long dflt)
{
	CURLU *u = curl_url();
	char *port = NULL;
	long r = dflt;

	if (!u)
		return dflt;
	/* CURLU_GUESS_SCHEME: proxies are often given as host:port */
	if (curl_url_set(u, CURLUPART_URL, url, CURLU_GUESS_SCHEME | CURLU_NON_SUPPORT_SCHEME) ==
	        CURLUE_OK &&
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK && port)
		r = strtol(port, NULL, 10);
	curl_free(port);
	curl_url_cleanup(u);
	return r;
}

static void chat_ports(const struct chat_settings *s, uint16_t *ports, size_t *n)
{
	static const char *const proxy_vars[] = { "https_proxy", "HTTPS_PROXY", "http_proxy",
	                                          "HTTP_PROXY", "all_proxy", "ALL_PROXY" };

	add_port(ports, n, 443);
	add_port(ports, n, 80);
	add_port(ports, n, 53);   /* a resolver falls back to TCP for long answers */
	if (s && s->api_base)
		add_port(ports, n, url_port(s->api_base, 0));
	else if (s && s->model)
		add_port(ports, n, llm_model_port(s->model));   /* ollama's 11434 */
	for (size_t i = 0; i < ARRAY_SIZE(proxy_vars); i++) {
		const char *v = getenv(proxy_vars[i]);

		if (v && *v)
			add_port(ports, n, url_port(v, 1080));   /* curl's default proxy port */
	}
}

void chat_preload(int argc, char **argv, const struct bdirs *d, struct chat_opts *o,
                  uint16_t *ports, size_t *n_ports)
{
	chat_load_opts(argc, argv, d, o, ports, n_ports);
	if (!o->bad && !o->export_script && !o->jupyter_set && !o->help)
		ui_preinit();
	if (!o->bad)
		o->demo_path = getenv(WBROKER_ENV_DEMO) && getenv(WBROKER_ENV_DEMO)[0] == '/' ?
		               xstrdup(getenv(WBROKER_ENV_DEMO)) : NULL;   /* the supervisor's */
}

void chat_load_opts(int argc, char **argv, const struct bdirs *d, struct chat_opts *o,
                    uint16_t *ports, size_t *n_ports)
{
	struct chat_settings cfg;

	memset(o, 0, sizeof(*o));
	o->export_fd = -1;
	*n_ports = 0;
	if (parse_opts(argc, argv, o) < 0) {
		o->bad = true;
		chat_ports(NULL, ports, n_ports);
		return;
	}
	if (config_load(d->config, o->profile, &cfg, &o->config_err) < 0) {
		o->config_bad = true;
		chat_ports(&o->s, ports, n_ports);
	} else {
		/* the command line wins over config.json */
		chat_settings_merge(&cfg, &o->s);
		chat_settings_free(&o->s);
		o->s = cfg;
		chat_ports(&o->s, ports, n_ports);
		if (o->s.model && !strncmp(o->s.model, "replay:", 7)) {
			struct llm_config lc = { 0 };
			struct werr err = { 0 };

			(void)llm_parse_model(o->s.model, &lc, &err);
			llm_config_free(&lc);
		}
	}
	if (o->resume_set && o->resume && (strchr(o->resume, '/') || access(o->resume, F_OK) == 0)) {
		struct werr err = { 0 };

		if (conv_load(o->resume, &o->resume_msgs, &err) == 0)
			o->resume_path = xstrdup(o->resume);
	}
	if (o->export_script && strcmp(o->export_script, "-")) {
		o->export_fd = open(o->export_script, O_WRONLY | O_CREAT | O_CLOEXEC, 0755);
		if (o->export_fd >= 0)
			o->export_path = xstrdup(o->export_script);
	}
}
