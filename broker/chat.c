/* warden chat: the conversation loop (Open Interpreter's, with a jail).
 *
 *   user message -> the model (streamed to the terminal) -> each code block:
 *   shown, approved, run in the session's jail, its output shown live and
 *   fed back (head and tail) -> the model again, until it answers without
 *   code.
 *
 * Nothing the model or a program sends reaches the terminal without going
 * through sanitize.c; nothing here ends the program but the person (Ctrl-D,
 * Ctrl-C twice at an empty prompt) or the end of the input. */
#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <langinfo.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "chat.h"
#include "client.h"
#include "config.h"
#include "conv.h"
#include "extract.h"
#include "llm.h"
#include "lmc.h"
#include "sanitize.h"
#include "ui.h"
#include "warden/util.h"

#define DEFAULT_MODEL "openai/gpt-4o"
#define DEFAULT_MAX_OUTPUT 2800
#define DEFAULT_CONTEXT 32000
#define MAX_ROUNDS 40             /* model calls for one user message */
#define MAX_EDITS 20

/* --export-script's file, opened by chat_preload before confinement. */
static int preload_export_fd = -1;
static char *preload_export_path;
/* --resume FILE, read by chat_preload (it may be outside the data dir). */
static json_object *preload_resume;
static char *preload_resume_path;

struct opts {
	struct chat_settings s;       /* what the command line set */
	char *api_key, *profile, *export_script, *resume;
	bool resume_set, no_tools, verbose, oneshot, help;
	long max_tokens;
	double temperature;
	long connect_ms, idle_ms, replay_delay_ms;
	char *message;
};

struct chat {
	const struct bdirs *d;
	struct ui ui;
	struct llm_config llm;
	struct bclient bc;
	bool bc_ok;
	struct bsession sess;
	bool sess_open;
	char *profile;                /* sandbox profile; NULL: the default */
	bool auto_run, verbose, oneshot;
	long max_output, context_window;
	char *system_extra;
	json_object *msgs;
	char *conv_path;
	json_object *denied;          /* {"syscall": count} over the conversation */
	json_object *audit_ids;       /* sessions opened */
	bool fatal;                   /* the supervisor is gone */
};

enum { RB_RAN, RB_DECLINED, RB_INTERRUPTED, RB_FATAL };

/* ---- options ---- */

enum {
	O_API_BASE = 256, O_API_KEY, O_PROFILE, O_SANDBOX, O_NO_TOOLS, O_MAX_OUTPUT, O_CONTEXT,
	O_MAX_TOKENS, O_TEMP, O_RESUME, O_EXPORT, O_SYSMSG, O_CONNECT, O_IDLE, O_ONESHOT,
	O_REPLAY_DELAY,
};

static const struct option longopts[] = {
	{ "model", required_argument, NULL, 'm' },
	{ "api-base", required_argument, NULL, O_API_BASE },
	{ "api-key", required_argument, NULL, O_API_KEY },
	{ "auto-run", no_argument, NULL, 'y' },
	{ "profile", required_argument, NULL, O_PROFILE },
	{ "sandbox-profile", required_argument, NULL, O_SANDBOX },
	{ "no-tools", no_argument, NULL, O_NO_TOOLS },
	{ "max-output", required_argument, NULL, O_MAX_OUTPUT },
	{ "context-window", required_argument, NULL, O_CONTEXT },
	{ "max-tokens", required_argument, NULL, O_MAX_TOKENS },
	{ "temperature", required_argument, NULL, O_TEMP },
	{ "resume", optional_argument, NULL, O_RESUME },
	{ "export-script", required_argument, NULL, O_EXPORT },
	{ "system-message", required_argument, NULL, O_SYSMSG },
	{ "verbose", no_argument, NULL, 'v' },
	{ "connect-timeout", required_argument, NULL, O_CONNECT },
	{ "idle-timeout", required_argument, NULL, O_IDLE },
	{ "oneshot", no_argument, NULL, O_ONESHOT },
	{ "replay-delay", required_argument, NULL, O_REPLAY_DELAY },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const char usage_text[] =
	"usage: warden chat [OPTIONS] [MESSAGE]\n"
	"Chat with an LLM; every piece of code it writes runs in a warden jail.\n"
	"With MESSAGE: answer it and exit.  With stdin not a terminal: each line is a message.\n"
	"\n"
	"  -m, --model PROVIDER/NAME  openai/gpt-4o, anthropic/claude-..., ollama/llama3,\n"
	"                             replay:FILE (no key needed)\n"
	"      --api-base URL         an OpenAI-compatible server (local models)\n"
	"      --api-key KEY          else $OPENAI_API_KEY / $ANTHROPIC_API_KEY\n"
	"  -y, --auto-run             run code without asking\n"
	"      --profile NAME         a chat profile from ~/.config/warden/config.json\n"
	"      --sandbox-profile NAME the jail's policy profile (%profile switches it)\n"
	"      --no-tools             the model writes ```fenced``` code instead of tool calls\n"
	"      --max-output N         characters of output the model sees (default 2800)\n"
	"      --context-window N     tokens of history sent (default 32000)\n"
	"      --max-tokens N         longest reply\n"
	"      --temperature T\n"
	"      --resume [FILE.json]   continue a saved conversation (the latest without FILE)\n"
	"      --export-script FILE   with --resume: the approved code as a shell script (- for stdout)\n"
	"      --system-message TEXT  appended to the system message\n"
	"  -v, --verbose\n"
	"      --connect-timeout DUR  --idle-timeout DUR   (e.g. 10s, 2m)\n"
	"      --oneshot              a fresh jail for every block (no state between blocks)\n"
	"  -h, --help\n"
	"\n"
	"At the prompt: %help lists the commands; Ctrl-C interrupts, Ctrl-D exits.\n";

static void opts_free(struct opts *o)
{
	chat_settings_free(&o->s);
	if (o->api_key) {
		explicit_bzero(o->api_key, strlen(o->api_key));
		free(o->api_key);
	}
	free(o->profile);
	free(o->export_script);
	free(o->resume);
	free(o->message);
	memset(o, 0, sizeof(*o));
}

static bool opts_quiet;

static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad(const char *fmt, ...)
{
	va_list ap;
	char *m = NULL, *clean;
	int r;

	if (opts_quiet)
		return -1;
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
		return bad("%s needs a whole number from %ld to %ld, not '%s'", opt, min, max, v);
	*out = (long)n;
	return 0;
}

static int dur_arg(const char *opt, const char *v, long *out)
{
	uint64_t ms;
	struct werr err = { 0 };

	if (parse_duration_ms(v, &ms, &err) < 0 || ms == 0 || ms > 24ull * 3600 * 1000)
		return bad("%s needs a duration such as 10s or 2m, not '%s'", opt, v);
	*out = (long)ms;
	return 0;
}

static bool looks_like_file(const char *s)
{
	size_t n = strlen(s);

	return s[0] != '-' && (strchr(s, '/') || (n > 5 && !strcmp(s + n - 5, ".json")));
}

/* 0 ok, -1 bad (message printed). */
static int parse_opts(int argc, char **argv, struct opts *o, bool quiet)
{
	struct sbuf msg = { 0 };
	int c;

	memset(o, 0, sizeof(*o));
	chat_settings_init(&o->s);
	o->temperature = -1;
	opts_quiet = quiet;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":m:yvh", longopts, NULL)) != -1) {
		long n;

		switch (c) {
		case 'm':
			free(o->s.model);
			o->s.model = xstrdup(optarg);
			break;
		case O_API_BASE:
			free(o->s.api_base);
			o->s.api_base = xstrdup(optarg);
			break;
		case O_API_KEY:
			free(o->api_key);
			o->api_key = xstrdup(optarg);
			break;
		case 'y':
			o->s.auto_run = 1;
			break;
		case O_PROFILE:
			free(o->profile);
			o->profile = xstrdup(optarg);
			break;
		case O_SANDBOX:
			free(o->s.sandbox_profile);
			o->s.sandbox_profile = xstrdup(optarg);
			break;
		case O_NO_TOOLS:
			o->no_tools = true;
			break;
		case O_MAX_OUTPUT:
			if (num_arg("--max-output", optarg, 100, 10000000, &n) < 0)
				goto fail;
			o->s.max_output = n;
			break;
		case O_CONTEXT:
			if (num_arg("--context-window", optarg, 500, 100000000, &n) < 0)
				goto fail;
			o->s.context_window = n;
			break;
		case O_MAX_TOKENS:
			if (num_arg("--max-tokens", optarg, 1, 10000000, &n) < 0)
				goto fail;
			o->max_tokens = n;
			break;
		case O_TEMP: {
			char *end = NULL;

			errno = 0;
			o->temperature = strtod(optarg, &end);
			if (errno || !end || *end || end == optarg || o->temperature < 0 ||
			    o->temperature > 2) {
				bad("--temperature needs a number from 0 to 2, not '%s'", optarg);
				goto fail;
			}
			break;
		}
		case O_RESUME:
			o->resume_set = true;
			free(o->resume);
			o->resume = NULL;
			if (optarg)
				o->resume = xstrdup(optarg);
			else if (optind < argc && looks_like_file(argv[optind]))
				o->resume = xstrdup(argv[optind++]);
			break;
		case O_EXPORT:
			free(o->export_script);
			o->export_script = xstrdup(optarg);
			break;
		case O_SYSMSG:
			free(o->s.system_message);
			o->s.system_message = xstrdup(optarg);
			break;
		case 'v':
			o->verbose = true;
			break;
		case O_CONNECT:
			if (dur_arg("--connect-timeout", optarg, &o->connect_ms) < 0)
				goto fail;
			break;
		case O_IDLE:
			if (dur_arg("--idle-timeout", optarg, &o->idle_ms) < 0)
				goto fail;
			break;
		case O_ONESHOT:
			o->oneshot = true;
			break;
		case O_REPLAY_DELAY:
			if (num_arg("--replay-delay", optarg, 0, 10000, &o->replay_delay_ms) < 0)
				goto fail;
			break;
		case 'h':
			o->help = true;
			break;
		case ':':
			bad("%s needs a value", argv[optind - 1]);
			goto fail;
		default:
			if (optopt > 0 && optopt < 256)
				bad("unknown option -%c", optopt);
			else
				bad("unknown option %s", argv[optind - 1]);
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
	opts_quiet = false;
	return 0;
fail:
	opts_quiet = false;
	sbuf_free(&msg);
	opts_free(o);
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

void chat_preload(int argc, char **argv, const struct bdirs *d, uint16_t *ports, size_t *n_ports)
{
	struct opts o;
	struct chat_settings cfg;
	struct werr err = { 0 };

	*n_ports = 0;
	/* quiet: chat_main parses again and reports */
	if (parse_opts(argc, argv, &o, true) < 0) {
		chat_ports(NULL, ports, n_ports);
		return;
	}
	if (!o.export_script && !o.help)
		ui_preinit();
	if (config_load(d->config, o.profile, &cfg, &err) < 0) {
		chat_ports(&o.s, ports, n_ports);
	} else {
		chat_settings_merge(&cfg, &o.s);
		chat_ports(&cfg, ports, n_ports);
		if (cfg.model && !strncmp(cfg.model, "replay:", 7)) {
			struct llm_config lc = { 0 };

			(void)llm_parse_model(cfg.model, &lc, &err);
			llm_config_free(&lc);
		}
		chat_settings_free(&cfg);
	}
	if (o.resume_set && o.resume && (strchr(o.resume, '/') || access(o.resume, F_OK) == 0) &&
	    conv_load(o.resume, &preload_resume, &err) == 0)
		preload_resume_path = xstrdup(o.resume);
	if (o.export_script && strcmp(o.export_script, "-")) {
		preload_export_fd = open(o.export_script, O_WRONLY | O_CREAT | O_CLOEXEC, 0755);
		if (preload_export_fd >= 0)
			preload_export_path = xstrdup(o.export_script);
	}
	opts_free(&o);
}

/* ---- conversation helpers ---- */

static const char *mstr(json_object *m, const char *k)
{
	json_object *v;

	if (!m || !json_object_object_get_ex(m, k, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static void add_console(struct chat *c, const char *content)
{
	json_object_array_add(c->msgs, lmc_msg("computer", "console", "output", content));
}

static void save(struct chat *c)
{
	struct werr err = { 0 };

	if (!json_object_array_length(c->msgs))
		return;
	if (!c->conv_path) {
		const char *first = NULL;

		for (size_t i = 0; i < json_object_array_length(c->msgs) && !first; i++) {
			json_object *m = json_object_array_get_idx(c->msgs, i);

			if (!strcmp(mstr(m, "role") ?: "", "user"))
				first = mstr(m, "content");
		}
		c->conv_path = conv_new_path(c->d->data, first);
	}
	if (conv_save(c->conv_path, c->msgs, &err) < 0)
		ui_error(&c->ui, "%s", err.msg);
}

/* ---- the system message ---- */

static void join_array(struct sbuf *b, json_object *a, size_t max)
{
	size_t n = json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;

	for (size_t i = 0; i < n && i < max; i++)
		sbuf_addf(b, "%s%s", i ? ", " : "",
		          json_object_get_string(json_object_array_get_idx(a, i)));
	if (n > max)
		sbuf_addf(b, ", and %zu more", n - max);
}

static json_object *jget(json_object *o, const char *a, const char *b)
{
	json_object *v = NULL;

	if (!o || !json_object_object_get_ex(o, a, &v))
		return NULL;
	if (b && (!json_object_is_type(v, json_type_object) || !json_object_object_get_ex(v, b, &v)))
		return NULL;
	return v;
}

static const char *cur_profile(const struct chat *c)
{
	return c->profile ? c->profile : c->bc.default_profile ? c->bc.default_profile : "workspace";
}

static void describe_policy(struct chat *c, struct sbuf *b)
{
	const char *prof = cur_profile(c);
	const char *ws = c->bc.default_workspace ? c->bc.default_workspace : "the current directory";
	json_object *pol = NULL, *v;

	if (c->sess_open && c->sess.policy_json)
		pol = json_tokener_parse(c->sess.policy_json);
	sbuf_addf(b, "The jail's policy is the sandbox profile \"%s\"", prof);
	if ((v = jget(pol, "description", NULL)))
		sbuf_addf(b, " (%s)", json_object_get_string(v));
	sbuf_adds(b, ":\n");
	sbuf_addf(b, "- The working directory is the workspace %s.", ws);
	if (pol) {
		json_object *rw = jget(pol, "filesystem", "read_write");
		bool ws_rw = false;

		for (size_t i = 0; rw && json_object_is_type(rw, json_type_array) &&
		                   i < json_object_array_length(rw); i++) {
			const char *p = json_object_get_string(json_object_array_get_idx(rw, i));

			if (p && (!strcmp(p, "$WORKSPACE") || !strcmp(p, ws)))
				ws_rw = true;
		}
		sbuf_adds(b, ws_rw ? " It is writable: files you write there stay, and the user "
		                     "sees them.\n"
		                   : " It is READ-ONLY in this profile.\n");
		if (rw && json_object_array_length(rw)) {
			sbuf_adds(b, "- Writable: ");
			join_array(b, rw, 12);
			sbuf_adds(b, "\n");
		}
		if ((v = jget(pol, "filesystem", "read_only"))) {
			sbuf_adds(b, "- Read-only: ");
			join_array(b, v, 12);
			sbuf_adds(b, ". Nothing else of the user's files is visible (HOME and /tmp are "
			             "empty, private and size-limited).\n");
		}
		if ((v = jget(pol, "filesystem", "hide")) && json_object_array_length(v)) {
			sbuf_adds(b, "- Hidden: ");
			join_array(b, v, 8);
			sbuf_adds(b, "\n");
		}
		v = jget(pol, "network", "mode");
		if (v && !strcmp(json_object_get_string(v), "proxy")) {
			sbuf_adds(b, "- Network: only through warden's proxy (HTTP_PROXY/HTTPS_PROXY are "
			             "set), to: ");
			join_array(b, jget(pol, "network", "allow"), 16);
			sbuf_adds(b, ". Everything else is refused.\n");
		} else {
			sbuf_adds(b, "- Network: none. There is no network access at all (no pip "
			             "install, no downloads).\n");
		}
		if ((v = jget(pol, "limits", NULL)) && json_object_is_type(v, json_type_object)) {
			bool first = true;

			sbuf_adds(b, "- Limits:");
			json_object_object_foreach(v, k, lv) {
				sbuf_addf(b, "%s %s %s", first ? "" : ",", k, json_object_get_string(lv));
				first = false;
			}
			sbuf_adds(b, ".\n");
		}
	} else if (!strcmp(prof, "strict")) {
		sbuf_adds(b, " It is READ-ONLY in this profile.\n- Network: none.\n");
	} else if (!strcmp(prof, "network")) {
		sbuf_adds(b, " It is writable.\n- Network: only HTTPS to package registries (PyPI, "
		             "npm) through warden's proxy.\n");
	} else {
		sbuf_adds(b, " It is writable: files you write there stay, and the user sees them.\n"
		             "- Network: none, unless the profile says otherwise.\n"
		             "- Only system directories (/usr) are visible read-only; HOME and /tmp "
		             "are empty and private.\n");
	}
	json_object_put(pol);
}

static void describe_languages(struct chat *c, struct sbuf *b)
{
	json_object *langs = NULL;

	if (c->sess_open && c->sess.languages_json)
		langs = json_tokener_parse(c->sess.languages_json);
	if (!langs || !json_object_is_type(langs, json_type_array) ||
	    !json_object_array_length(langs)) {
		sbuf_adds(b, "Languages: python, javascript and shell keep their state (variables, "
		             "imports, the working directory) from one block to the next.\n");
		json_object_put(langs);
		return;
	}
	sbuf_adds(b, "Languages:");
	for (size_t i = 0; i < json_object_array_length(langs); i++) {
		json_object *l = json_object_array_get_idx(langs, i), *p;
		const char *name = mstr(l, "name");

		if (!name)
			continue;
		p = jget(l, "persistent", NULL);
		sbuf_addf(b, "%s %s (%s)", i ? "," : "", name,
		          p && json_object_get_boolean(p) ? "keeps state between blocks"
		                                           : "each block starts fresh");
	}
	sbuf_adds(b, ".\n");
	json_object_put(langs);
}

static char *system_message(struct chat *c)
{
	struct sbuf b = { 0 };

	sbuf_adds(&b,
	          "You are Warden Interpreter, a world-class programmer who can complete any goal "
	          "by writing and running code.\n");
	if (c->llm.tools)
		sbuf_adds(&b, "To run code, call the `execute` tool with a language and the code. "
		              "You see its output in the result.\n");
	else
		sbuf_adds(&b, "To run code, write it in a fenced block with its language, for "
		              "example ```python ... ```. Each block runs, and its output comes back "
		              "to you in the next message.\n");
	sbuf_adds(&b,
	          "The code does not run directly on the user's machine: every block runs inside a "
	          "jail (warden) with namespaces, a syscall filter and resource limits. The user "
	          "approves each block unless they turned on auto-run.\n");
	describe_policy(c, &b);
	describe_languages(c, &b);
	sbuf_addf(&b,
	          "Long output is cut to its first and last characters (about %ld in all), with the "
	          "total size.\n"
	          "When something is denied (permission denied, EPERM, read-only file system, no "
	          "network, a limit reached), that is the jail's policy working, not a bug: do not "
	          "try to get around it. Tell the user what was blocked; they can choose another "
	          "sandbox profile (%%profile NAME) if they trust the task.\n"
	          "Work in small steps: run a little code, read the output, then continue. Write "
	          "files into the workspace. When the task is done, reply without code and "
	          "summarise the result.\n",
	          c->max_output);
	if (c->system_extra && *c->system_extra)
		sbuf_addf(&b, "\n%s\n", c->system_extra);
	return sbuf_steal(&b);
}

/* ---- the model ---- */

static void ev_text(void *ctx, const char *s, size_t n)
{
	struct chat *c = ctx;

	ui_model_text(&c->ui, s, n);
}

static void ev_code_start(void *ctx, const char *language)
{
	struct chat *c = ctx;
	char label[80];
	_cleanup_free_ char *l = wsan_str(language ? language : "", strlen(language ? language : ""));

	ui_model_end(&c->ui);
	snprintf(label, sizeof(label), "writing %.32s code", *l ? l : "some");
	ui_spinner_start(&c->ui, label);
}

static void ev_retry(void *ctx, int attempt, long wait_ms, const char *why)
{
	struct chat *c = ctx;

	ui_note(&c->ui, "the model request failed (%s); trying again in %.1fs (attempt %d)",
	        why ? why : "no", (double)wait_ms / 1000.0, attempt);
	ui_spinner_start(&c->ui, "waiting for the model");
}

static void model_error(struct chat *c, const struct werr *err)
{
	const char *m = err->msg;
	const char *url = c->llm.api_base ? c->llm.api_base : llm_default_base(c->llm.provider);
	bool conn = strcasestr(m, "connect") || strcasestr(m, "refused") ||
	            strcasestr(m, "resolve") || strcasestr(m, "unreachable");

	if (conn)
		ui_error(&c->ui, "cannot reach the model%s%s: %s; is the server running? "
		         "Point --api-base at it (e.g. --api-base http://127.0.0.1:8000/v1)",
		         *url && !strstr(m, url) ? " at " : "", *url && !strstr(m, url) ? url : "", m);
	else
		ui_error(&c->ui, "the model's reply failed: %s (the conversation is kept; "
		         "try again)", m);
}

/* One request.  Appends what the model said to *out (an array of LMC
 * messages, possibly partial).  0 ok, -1 failed (shown), -2 interrupted. */
static int ask_model(struct chat *c, json_object **out)
{
	static const struct llm_events ev = { ev_text, ev_code_start, ev_retry };
	_cleanup_free_ char *sys = system_message(c);
	struct werr err = { 0 };
	long reserve = c->llm.max_tokens > 0 ? c->llm.max_tokens : 1024;
	long budget = c->context_window - (long)conv_tokens_str(sys) - reserve;
	json_object *hist, *raw = NULL;
	sig_atomic_t before = ui_sigint_count;
	int r;

	if (budget < 500)
		budget = 500;
	hist = conv_trim(c->msgs, (size_t)budget);
	if (c->verbose)
		ui_note(&c->ui, "[request: model %s/%s, %zu of %zu messages, ~%zu tokens + system "
		        "~%zu]", c->llm.provider, c->llm.model, json_object_array_length(hist),
		        json_object_array_length(c->msgs), conv_tokens(hist),
		        conv_tokens_str(sys));
	ui_sigint = 0;
	ui_spinner_start(&c->ui, "waiting for the model");
	r = llm_complete(&c->llm, sys, hist, &ev, c, &ui_sigint, &raw, &err);
	ui_sigint = 0;
	ui_spinner_stop(&c->ui);
	ui_model_end(&c->ui);
	json_object_put(hist);

	if (!raw)
		raw = json_object_new_array();
	if (!c->llm.tools) {
		/* fenced blocks in the text become code messages */
		json_object *exp = json_object_new_array();

		for (size_t i = 0; i < json_object_array_length(raw); i++) {
			json_object *m = json_object_array_get_idx(raw, i);

			if (!strcmp(mstr(m, "type") ?: "", "message") &&
			    !strcmp(mstr(m, "role") ?: "", "assistant")) {
				json_object *parts = llm_extract_code(mstr(m, "content") ?: "");

				for (size_t j = 0; parts && j < json_object_array_length(parts); j++)
					json_object_array_add(exp, json_object_get(
						json_object_array_get_idx(parts, j)));
				json_object_put(parts);
			} else {
				json_object_array_add(exp, json_object_get(m));
			}
		}
		json_object_put(raw);
		raw = exp;
	}
	*out = raw;
	if (r < 0) {
		if (ui_sigint_count != before || strstr(err.msg, "interrupted")) {
			ui_bad(&c->ui, "^C the reply was interrupted (what arrived is kept)");
			return -2;
		}
		model_error(c, &err);
		return -1;
	}
	return 0;
}

/* ---- running a block ---- */

struct collect {
	struct chat *c;
	struct wsan san[2];
	struct sbuf head, tail;
	size_t head_max, tail_max;
	uint64_t total;
	json_object *live_denied;
};

/* A cut that does not split a UTF-8 sequence: the start of the character
 * at or after p (forward) . */
static size_t utf8_fwd(const char *s, size_t len, size_t p)
{
	while (p < len && ((unsigned char)s[p] & 0xc0) == 0x80)
		p++;
	return p;
}

static void collect_text(struct collect *col, const char *s, size_t n)
{
	col->total += n;
	if (col->head.len < col->head_max) {
		size_t take = col->head_max - col->head.len;

		if (take > n)
			take = n;
		sbuf_add(&col->head, s, take);
		s += take;
		n -= take;
	}
	if (!n)
		return;
	sbuf_add(&col->tail, s, n);
	if (col->tail.len > 2 * col->tail_max + 4096) {
		size_t drop = col->tail.len - col->tail_max;

		memmove(col->tail.d, col->tail.d + drop, col->tail.len - drop);
		col->tail.len -= drop;
		col->tail.d[col->tail.len] = '\0';
	}
}

static void on_output(void *ctx, int stream, const uint8_t *data, size_t len)
{
	struct collect *col = ctx;
	struct sbuf clean = { 0 };
	int i = stream == WSTREAM_STDERR ? 1 : 0;

	wsan_feed(&col->san[i], data, len, &clean);
	ui_output(&col->c->ui, stream, clean.d, clean.len);
	collect_text(col, clean.d, clean.len);
	sbuf_free(&clean);
}

static void on_audit(void *ctx, const char *syscall, uint64_t count)
{
	struct collect *col = ctx;
	_cleanup_free_ char *name = wsan_str(syscall, strlen(syscall));
	json_object *v;
	int64_t prev = 0;

	if (json_object_object_get_ex(col->live_denied, name, &v))
		prev = json_object_get_int64(v);
	json_object_object_add(col->live_denied, name, json_object_new_int64(prev + (int64_t)count));
	ui_bad(&col->c->ui, "  ⛔ the jail denied %s()", name);
}

static char *collected(struct collect *col)
{
	struct sbuf b = { 0 };
	size_t hl = col->head.len;

	/* the head ends on a whole character */
	while (hl > 0 && hl < col->head.len + 1 && ((unsigned char)col->head.d[hl - 1] & 0x80)) {
		size_t st = hl - 1;

		while (st > 0 && ((unsigned char)col->head.d[st] & 0xc0) == 0x80)
			st--;
		{
			unsigned char lead = (unsigned char)col->head.d[st];
			size_t need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;

			if (hl - st >= need)
				break;
			hl = st;
		}
	}
	sbuf_add(&b, col->head.d ? col->head.d : "", hl);
	if (col->total <= col->head_max + col->tail_max) {
		sbuf_add(&b, col->head.d ? col->head.d + hl : "", col->head.len - hl);
		sbuf_add(&b, col->tail.d ? col->tail.d : "", col->tail.len);
	} else {
		size_t from = col->tail.len > col->tail_max ? col->tail.len - col->tail_max : 0;

		from = utf8_fwd(col->tail.d, col->tail.len, from);
		sbuf_addf(&b, "\n\n[... %llu characters left out: the output had %llu characters "
		          "in all; here are the first and the last ...]\n\n",
		          (unsigned long long)(col->total - hl - (col->tail.len - from)),
		          (unsigned long long)col->total);
		sbuf_add(&b, col->tail.d + from, col->tail.len - from);
	}
	return sbuf_steal(&b);
}

static void count_denied(struct chat *c, const char *name, uint64_t n)
{
	json_object *v;
	int64_t prev = 0;

	if (json_object_object_get_ex(c->denied, name, &v))
		prev = json_object_get_int64(v);
	json_object_object_add(c->denied, name, json_object_new_int64(prev + (int64_t)n));
}

static int open_session(struct chat *c)
{
	struct werr err = { 0 };

	if (c->sess_open)
		return 0;
	if (bclient_open(&c->bc, c->profile, NULL, c->oneshot ? WOPEN_ONESHOT : 0, &c->sess,
	                 &err) < 0) {
		ui_error(&c->ui, "%s", err.msg);
		if (c->bc.c.eof)
			c->fatal = true;
		return -1;
	}
	c->sess_open = true;
	json_object_array_add(c->audit_ids, json_object_new_string(c->sess.audit_id));
	if (c->verbose)
		ui_note(&c->ui, "[sandbox session %s opened, profile %s]", c->sess.audit_id,
		        cur_profile(c));
	return 0;
}

static void close_session(struct chat *c)
{
	struct werr err = { 0 };

	if (!c->sess_open)
		return;
	if (bclient_close(&c->bc, c->sess.id, &err) < 0 && c->verbose)
		ui_note(&c->ui, "closing the session: %s", err.msg);
	bsession_free(&c->sess);
	c->sess_open = false;
}

static void lower_trim(char *s)
{
	size_t n = strlen(s), i = 0;

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	while (isspace((unsigned char)s[i]))
		i++;
	memmove(s, s + i, n - i + 1);
	for (char *p = s; *p; p++)
		*p = (char)tolower((unsigned char)*p);
}

/* 1 run, 0 declined, -1 interrupted/no answer */
static int approve(struct chat *c, json_object *m)
{
	for (int tries = 0; tries < MAX_EDITS; tries++) {
		char *ans = NULL;
		int r;

		r = ui_readline(&c->ui, "Run this code? [y]es [n]o [e]dit [a]lways: ", false, &ans);
		if (r == 2)
			return -1;
		if (r == 0)
			return 0;
		lower_trim(ans);
		if (!strcmp(ans, "y") || !strcmp(ans, "yes")) {
			free(ans);
			return 1;
		}
		if (!strcmp(ans, "a") || !strcmp(ans, "always")) {
			free(ans);
			c->auto_run = true;
			ui_note(&c->ui, "auto-run is on: code runs without asking until you leave");
			return 1;
		}
		if (!strcmp(ans, "n") || !strcmp(ans, "no")) {
			free(ans);
			return 0;
		}
		if (!strcmp(ans, "e") || !strcmp(ans, "edit")) {
			struct werr err = { 0 };
			char *edited = NULL;

			free(ans);
			if (bclient_edit(&c->bc, mstr(m, "content") ?: "", &edited, &err) < 0) {
				ui_error(&c->ui, "%s", err.msg);
				if (c->bc.c.eof) {
					c->fatal = true;
					return -1;
				}
				continue;
			}
			json_object_object_add(m, "content", json_object_new_string(edited));
			free(edited);
			ui_code_box(&c->ui, mstr(m, "format"), cur_profile(c), mstr(m, "content"));
			continue;
		}
		free(ans);
		ui_note(&c->ui, "answer y (run it), n (do not), e (edit it first) or a (run this "
		        "and every later block)");
	}
	return 0;
}

static void result_lines(struct chat *c, const struct wresult *res, struct sbuf *model,
                         json_object *live_denied)
{
	struct ui *u = &c->ui;
	char wall[32];

	format_duration_ms(res->wall_ms, wall, sizeof(wall));
	switch (res->reason) {
	case WB_EXITED:
		if (res->exit_code == 0) {
			ui_good(u, "✓ done (%s)", wall);
		} else {
			ui_bad(u, "✗ exit status %d (%s)", res->exit_code, wall);
			sbuf_addf(model, "\n[exit status %d]", res->exit_code);
		}
		break;
	case WB_SIGNALED:
		ui_bad(u, "✗ killed by signal %u (%s)", res->signal, wall);
		sbuf_addf(model, "\n[killed by signal %u]", res->signal);
		break;
	case WB_INTERRUPTED:
		ui_bad(u, "^C interrupted (%s)", wall);
		sbuf_adds(model, "\n[interrupted by the user (Ctrl-C)]");
		break;
	default:
		ui_bad(u, "✗ stopped by the jail: %s limit reached (%s)",
		       wblock_reason_name(res->reason), wall);
		sbuf_addf(model, "\n[stopped by the jail: the policy's %s limit was reached]",
		          wblock_reason_name(res->reason));
		break;
	}
	if (res->message && *res->message &&
	    strcmp(res->message, wblock_reason_name(res->reason))) {
		ui_note(u, "%s", res->message);
		sbuf_addf(model, "\n[warden: %s]", res->message);
	}
	if (res->n_denied || json_object_object_length(live_denied)) {
		struct sbuf l = { 0 };

		if (res->n_denied) {
			for (uint32_t i = 0; i < res->n_denied; i++) {
				sbuf_addf(&l, "%s%s ×%llu", i ? ", " : "", res->denied[i].name,
				          (unsigned long long)res->denied[i].count);
				count_denied(c, res->denied[i].name, res->denied[i].count);
			}
		} else {
			json_object_object_foreach(live_denied, k, v) {
				sbuf_addf(&l, "%s%s ×%lld", l.len ? ", " : "", k,
				          (long long)json_object_get_int64(v));
				count_denied(c, k, (uint64_t)json_object_get_int64(v));
			}
		}
		ui_bad(u, "⛔ denied by the sandbox policy: %s", l.d);
		sbuf_addf(model, "\n[the jail's policy denied these system calls: %s. This is the "
		          "sandbox working as intended; do not try to get around it]", l.d);
		sbuf_free(&l);
	}
	if (res->flags & WRES_TRUNCATED)
		sbuf_adds(model, "\n[the jail's output limit was reached: the middle of the output "
		                 "was dropped]");
	if (res->flags & WRES_STATE_LOST) {
		ui_note(u, "the session's jail ended: the next block starts fresh (variables and "
		        "imports are gone)");
		sbuf_adds(model, "\n[the session restarted: variables, imports and functions from "
		                 "earlier blocks are gone]");
	}
	if (c->verbose) {
		char mem[32];

		format_size(res->peak_memory, mem, sizeof(mem));
		ui_note(u, "[wall %llums, cpu %llums, peak memory %s, output %llu bytes]",
		        (unsigned long long)res->wall_ms, (unsigned long long)res->cpu_ms, mem,
		        (unsigned long long)res->output_bytes);
	}
}

static int run_block(struct chat *c, json_object *m)
{
	struct collect col;
	struct wresult res;
	struct werr err = { 0 };
	struct sbuf model = { 0 };
	const char *lang = mstr(m, "format") ?: "";
	const char *code;
	sig_atomic_t before;
	int r, a, ret = RB_RAN;
	char *out;

	ui_code_box(&c->ui, lang, cur_profile(c), mstr(m, "content"));
	if (!c->auto_run) {
		if (!c->ui.tty_in) {
			ui_bad(&c->ui, "Not run: there is no terminal to ask for approval. Use -y "
			       "(--auto-run) to run the model's code without asking.");
			add_console(c, CONV_DECLINED " (There was no terminal to ask; the user can "
			               "rerun with -y to allow code to run.)");
			return RB_DECLINED;
		}
		a = approve(c, m);
		if (c->fatal)
			return RB_FATAL;
		if (a < 0) {
			add_console(c, CONV_NOT_RUN "the user pressed Ctrl-C at the approval prompt.");
			return RB_INTERRUPTED;
		}
		if (a == 0) {
			ui_note(&c->ui, "not run; the model will be told you declined");
			add_console(c, CONV_DECLINED);
			return RB_DECLINED;
		}
	}
	if (open_session(c) < 0) {
		add_console(c, CONV_NOT_RUN "warden could not start the jail.");
		return RB_FATAL;
	}
	code = mstr(m, "content") ?: "";
	memset(&col, 0, sizeof(col));
	col.c = c;
	wsan_init(&col.san[0]);
	wsan_init(&col.san[1]);
	col.head_max = (size_t)c->max_output / 2;
	col.tail_max = (size_t)c->max_output - col.head_max;
	col.live_denied = json_object_new_object();
	{
		const struct bclient_cb cb = { on_output, on_audit };

		ui_sigint = 0;
		before = ui_sigint_count;
		r = bclient_run(&c->bc, c->sess.id, lang, code, strlen(code), &cb, &col, &ui_sigint,
		                &res, &err);
		ui_sigint = 0;
	}
	for (int i = 0; i < 2; i++) {
		struct sbuf rest = { 0 };

		wsan_end(&col.san[i], &rest);
		ui_output(&c->ui, i ? WSTREAM_STDERR : WSTREAM_STDOUT, rest.d, rest.len);
		collect_text(&col, rest.d, rest.len);
		sbuf_free(&rest);
	}
	ui_newline(&c->ui);
	out = collected(&col);
	sbuf_adds(&model, *out ? out : "(no output)");
	free(out);
	if (r < 0) {
		ui_error(&c->ui, "%s", err.msg);
		sbuf_addf(&model, "\n[warden: the block could not run: %s]", err.msg);
		if (c->bc.c.eof) {
			c->fatal = true;
			ret = RB_FATAL;
		} else if (ui_sigint_count != before) {
			ret = RB_INTERRUPTED;
		}
	} else {
		if (ui_sigint_count != before && res.reason != WB_INTERRUPTED)
			ui_bad(&c->ui, "^C interrupted");
		result_lines(c, &res, &model, col.live_denied);
		if (res.reason == WB_INTERRUPTED || ui_sigint_count != before)
			ret = RB_INTERRUPTED;
		wresult_free(&res);
	}
	add_console(c, model.d);
	sbuf_free(&model);
	sbuf_free(&col.head);
	sbuf_free(&col.tail);
	json_object_put(col.live_denied);
	return ret;
}

/* ---- a turn ---- */

/* 0 done, -1 the model failed (non-interactive runs exit non-zero). */
static int turn(struct chat *c, const char *text)
{
	json_object_array_add(c->msgs, lmc_msg("user", "message", NULL, text));
	save(c);
	for (int round = 0; round < MAX_ROUNDS; round++) {
		json_object *out = NULL;
		int r = ask_model(c, &out), stop = -1;   /* -1: keep going */
		const char *why = NULL;
		bool had_code = false;

		if (r == -1)
			why = "the model's reply failed before this block was complete.";
		else if (r == -2)
			why = "the user interrupted the reply.";
		for (size_t i = 0; i < json_object_array_length(out); i++) {
			json_object *m = json_object_get(json_object_array_get_idx(out, i));
			bool code = !strcmp(mstr(m, "type") ?: "", "code");

			json_object_array_add(c->msgs, m);
			if (!code)
				continue;
			had_code = true;
			if (why) {
				_cleanup_free_ char *t = xasprintf("%s%s", CONV_NOT_RUN, why);
				add_console(c, t);
				continue;
			}
			switch (run_block(c, m)) {
			case RB_RAN:
				break;
			case RB_DECLINED:
				why = "the user declined an earlier block of this reply.";
				stop = 0;
				break;
			case RB_INTERRUPTED:
				why = "the user interrupted an earlier block.";
				stop = 0;
				break;
			default:
				why = "warden could not run an earlier block.";
				stop = -2;
				break;
			}
			save(c);
		}
		json_object_put(out);
		save(c);
		if (r == -1)
			return -1;
		if (r == -2)
			return 0;
		if (stop == 0)
			return 0;
		if (stop == -2)
			return -1;
		if (!had_code)
			return 0;
	}
	ui_note(&c->ui, "stopped after %d rounds of code without a final answer; say how to "
	        "go on", MAX_ROUNDS);
	return 0;
}

/* ---- magic commands ---- */

static void show_conversation(struct chat *c)
{
	for (size_t i = 0; i < json_object_array_length(c->msgs); i++) {
		json_object *m = json_object_array_get_idx(c->msgs, i);
		const char *role = mstr(m, "role") ?: "", *type = mstr(m, "type") ?: "";
		const char *content = mstr(m, "content") ?: "";

		if (!strcmp(role, "user")) {
			ui_bold(&c->ui, "> %s", content);
		} else if (!strcmp(type, "code")) {
			ui_code_box(&c->ui, mstr(m, "format"), cur_profile(c), content);
		} else if (!strcmp(type, "console")) {
			_cleanup_free_ char *s = wsan_str(content, strlen(content));

			ui_output(&c->ui, WSTREAM_STDOUT, s, strlen(s));
			ui_newline(&c->ui);
		} else {
			ui_model_text(&c->ui, content, strlen(content));
			ui_model_end(&c->ui);
		}
	}
}

static const char magic_help_text[] =
	"  %reset            start a new conversation (and a fresh jail)\n"
	"  %undo             forget your last message and everything after it\n"
	"  %save [FILE]      save the conversation (under the data directory's conversations/)\n"
	"  %load [FILE]      load a saved conversation (the latest without FILE)\n"
	"  %tokens           the estimated size of the conversation\n"
	"  %profile [NAME]   show or switch the sandbox profile\n"
	"  %audit            what the jail denied in this conversation\n"
	"  %verbose          show requests, timings and sessions\n"
	"  %help             this list\n"
	"  Ctrl-C interrupts the model or the running code; Ctrl-D (or Ctrl-C twice) exits.\n";

static void magic_help(struct chat *c)
{
	ui_write(&c->ui, magic_help_text, sizeof(magic_help_text) - 1);
}

static void magic(struct chat *c, char *line)
{
	char *cmd = line + 1, *arg;
	struct werr err = { 0 };

	for (arg = cmd; *arg && !isspace((unsigned char)*arg); arg++)
		;
	if (*arg)
		*arg++ = '\0';
	while (isspace((unsigned char)*arg))
		arg++;
	for (char *e = arg + strlen(arg); e > arg && isspace((unsigned char)e[-1]);)
		*--e = '\0';

	if (!strcmp(cmd, "help")) {
		magic_help(c);
	} else if (!strcmp(cmd, "reset")) {
		json_object_put(c->msgs);
		c->msgs = json_object_new_array();
		free(c->conv_path);
		c->conv_path = NULL;
		close_session(c);
		ui_note(&c->ui, "a new conversation; the next block runs in a fresh jail");
	} else if (!strcmp(cmd, "undo")) {
		size_t n = json_object_array_length(c->msgs), i = n;

		while (i > 0 && strcmp(mstr(json_object_array_get_idx(c->msgs, i - 1), "role") ?: "",
		                       "user"))
			i--;
		if (i == 0) {
			ui_note(&c->ui, "nothing to undo");
			return;
		}
		ui_note(&c->ui, "forgot: \"%.60s\" and %zu message(s) after it",
		        mstr(json_object_array_get_idx(c->msgs, i - 1), "content") ?: "", n - i);
		json_object_array_del_idx(c->msgs, i - 1, n - i + 1);
		save(c);
	} else if (!strcmp(cmd, "save")) {
		char *path = NULL;

		if (*arg && conv_resolve(c->d->data, arg, &path, &err) < 0) {
			ui_error(&c->ui, "%%save: %s", err.msg);
			return;
		}
		if (path) {
			free(c->conv_path);
			c->conv_path = path;
		}
		if (!json_object_array_length(c->msgs)) {
			ui_note(&c->ui, "nothing to save yet");
			return;
		}
		save(c);
		{
			_cleanup_free_ char *shown = bdirs_shown(c->d, c->conv_path);
			ui_note(&c->ui, "saved to %s", shown);
		}
	} else if (!strcmp(cmd, "load")) {
		char *path = NULL;
		json_object *msgs = NULL;

		if ((*arg ? conv_resolve(c->d->data, arg, &path, &err)
		          : conv_latest(c->d->data, &path, &err)) < 0 ||
		    conv_load(path, &msgs, &err) < 0) {
			ui_error(&c->ui, "%%load: %s", err.msg);
			free(path);
			return;
		}
		json_object_put(c->msgs);
		c->msgs = msgs;
		free(c->conv_path);
		c->conv_path = path;
		close_session(c);
		show_conversation(c);
		{
			_cleanup_free_ char *shown = bdirs_shown(c->d, path);
			ui_note(&c->ui, "loaded %zu messages from %s (code state from then is not "
			        "restored)", json_object_array_length(msgs), shown);
		}
	} else if (!strcmp(cmd, "tokens")) {
		_cleanup_free_ char *sys = system_message(c);

		ui_note(&c->ui, "~%zu tokens in %zu messages, + ~%zu for the system message; the "
		        "context window is %ld tokens (about 4 characters each)",
		        conv_tokens(c->msgs), json_object_array_length(c->msgs),
		        conv_tokens_str(sys), c->context_window);
	} else if (!strcmp(cmd, "profile")) {
		bool ok = false;
		struct sbuf l = { 0 };

		for (uint32_t i = 0; i < c->bc.n_profiles; i++) {
			sbuf_addf(&l, "%s%s", i ? ", " : "", c->bc.profiles[i]);
			if (*arg && !strcmp(arg, c->bc.profiles[i]))
				ok = true;
		}
		if (!*arg) {
			ui_note(&c->ui, "sandbox profile: %s (allowed: %s)", cur_profile(c),
			        l.d ? l.d : cur_profile(c));
		} else if (!ok) {
			ui_error(&c->ui, "%%profile: \"%s\" is not one of the profiles allowed when "
			         "warden started: %s", arg, l.d ? l.d : "(none listed)");
		} else {
			close_session(c);
			free(c->profile);
			c->profile = xstrdup(arg);
			ui_note(&c->ui, "sandbox profile: %s; the next block runs in a new jail under it",
			        arg);
		}
		sbuf_free(&l);
	} else if (!strcmp(cmd, "audit")) {
		struct sbuf l = { 0 };

		json_object_object_foreach(c->denied, k, v)
			sbuf_addf(&l, "%s%s ×%lld", l.len ? ", " : "", k,
			          (long long)json_object_get_int64(v));
		if (!l.len)
			ui_note(&c->ui, "nothing was denied in this conversation");
		else
			ui_bad(&c->ui, "denied in this conversation: %s", l.d);
		for (size_t i = 0; i < json_object_array_length(c->audit_ids); i++)
			ui_note(&c->ui, "  details: warden audit --session %s --denied",
			        json_object_get_string(json_object_array_get_idx(c->audit_ids, i)));
		sbuf_free(&l);
	} else if (!strcmp(cmd, "verbose")) {
		c->verbose = !c->verbose;
		ui_note(&c->ui, "verbose %s", c->verbose ? "on" : "off");
	} else {
		ui_error(&c->ui, "unknown command %%%s: %%help lists them", cmd);
	}
}

/* ---- set-up ---- */

static int setup_llm(struct chat *c, const struct opts *o, const struct chat_settings *s)
{
	struct werr err = { 0 };
	const char *key, *env;

	memset(&c->llm, 0, sizeof(c->llm));
	if (s->api_base)
		c->llm.api_base = xstrdup(s->api_base);
	if (llm_parse_model(s->model ? s->model : DEFAULT_MODEL, &c->llm, &err) < 0) {
		bad("--model: %s", err.msg);
		return -1;
	}
	c->llm.tools = !o->no_tools;
	c->llm.connect_timeout_ms = o->connect_ms ? o->connect_ms : 10000;
	c->llm.idle_timeout_ms = o->idle_ms ? o->idle_ms : 120000;
	c->llm.max_retries = 3;
	c->llm.max_tokens = (int)o->max_tokens;
	c->llm.temperature = o->temperature;
	c->llm.replay_delay_ms = o->replay_delay_ms;
	env = !strcmp(c->llm.provider, "anthropic") ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
	key = o->api_key ? o->api_key : getenv(env);
	if (key && *key)
		c->llm.api_key = xstrdup(key);
	if (!c->llm.api_key && !c->llm.api_base &&
	    (!strcmp(c->llm.provider, "openai") || !strcmp(c->llm.provider, "anthropic"))) {
		fprintf(stderr, "warden chat: no API key for %s: set %s or pass --api-key KEY; "
		        "for a local model give --api-base URL (e.g. --model ollama/llama3); "
		        "without any model, try --model replay:examples/demo.json\n",
		        c->llm.provider, env);
		return -1;
	}
	return 0;
}

static void chat_free(struct chat *c)
{
	if (c->sess_open)
		close_session(c);
	if (c->bc_ok)
		bclient_free(&c->bc);
	llm_config_free(&c->llm);
	ui_free(&c->ui);
	json_object_put(c->msgs);
	json_object_put(c->denied);
	json_object_put(c->audit_ids);
	free(c->profile);
	free(c->system_extra);
	free(c->conv_path);
}

/* --resume's FILE: a path to a file, or a name under the conversations
 * directory; none: the latest. */
static int resume_path(const struct bdirs *d, const char *name, char **path, struct werr *err)
{
	*path = NULL;
	if (!name)
		return conv_latest(d->data, path, err);
	if (preload_resume_path && !strcmp(name, preload_resume_path)) {
		*path = xstrdup(name);
		return 0;
	}
	if (strchr(name, '/') || access(name, F_OK) == 0) {
		*path = xstrdup(name);
		return 0;
	}
	return conv_resolve(d->data, name, path, err);
}

static int resume_load(const char *path, json_object **msgs, struct werr *err)
{
	if (preload_resume && preload_resume_path && !strcmp(path, preload_resume_path)) {
		*msgs = steal_pointer(&preload_resume);
		return 0;
	}
	return conv_load(path, msgs, err);
}

static int export_script(const struct bdirs *d, const struct opts *o)
{
	struct werr err = { 0 };
	_cleanup_free_ char *path = NULL;
	json_object *msgs = NULL;
	int r = 1;

	if (!o->resume_set) {
		bad("--export-script needs the conversation: --resume FILE.json (or --resume for "
		    "the latest)");
		return 2;
	}
	if (resume_path(d, o->resume, &path, &err) < 0 ||
	    resume_load(path, &msgs, &err) < 0) {
		fprintf(stderr, "warden chat: %s\n", err.msg);
		return 1;
	}
	if (!strcmp(o->export_script, "-")) {
		r = conv_export_script(msgs, path, "-", &err) < 0 ? 1 : 0;
	} else if (preload_export_fd >= 0 && preload_export_path &&
	           !strcmp(preload_export_path, o->export_script)) {
		_cleanup_free_ char *text = conv_script(msgs, path);

		if (ftruncate(preload_export_fd, 0) < 0 ||
		    write_all(preload_export_fd, text, strlen(text)) < 0)
			r = werr_set(&err, errno, "writing %s", o->export_script) < 0 ? 1 : 0;
		else
			r = 0;
	} else {
		r = conv_export_script(msgs, path, o->export_script, &err) < 0 ? 1 : 0;
	}
	if (r)
		fprintf(stderr, "warden chat: %s\n", err.msg);
	else if (strcmp(o->export_script, "-"))
		fprintf(stderr, "warden chat: wrote %s (run it with: sh %s)\n", o->export_script,
		        o->export_script);
	json_object_put(msgs);
	return r;
}

static void ensure_utf8_locale(void)
{
	const char *cs = nl_langinfo(CODESET);

	if (!cs || strcasecmp(cs, "UTF-8"))
		setlocale(LC_CTYPE, "C.UTF-8");
}

int chat_main(int argc, char **argv, const struct bdirs *d)
{
	struct opts o;
	struct chat_settings s;
	struct chat c;
	struct werr err = { 0 };
	int rc = 0;

	umask(077);
	if (parse_opts(argc, argv, &o, false) < 0)
		return 2;
	if (o.help) {
		fputs(usage_text, stdout);
		opts_free(&o);
		return 0;
	}
	if (config_load(d->config, o.profile, &s, &err) < 0) {
		_cleanup_free_ char *msg = bdirs_shown(d, err.msg);

		/* DAC applies to the broker's user (as root: its own user) */
		if (err.errnum == EACCES)
			fprintf(stderr, "warden chat: %s; the broker runs as uid %u: give it read "
			        "access (e.g. `chgrp warden FILE && chmod g+r FILE` when warden runs "
			        "as root)\n", msg, (unsigned)getuid());
		else
			fprintf(stderr, "warden chat: %s\n", msg);
		opts_free(&o);
		return 2;
	}
	chat_settings_merge(&s, &o.s);
	if (o.export_script) {
		rc = export_script(d, &o);
		goto out_opts;
	}

	ensure_utf8_locale();
	memset(&c, 0, sizeof(c));
	c.d = d;
	c.msgs = json_object_new_array();
	c.denied = json_object_new_object();
	c.audit_ids = json_object_new_array();
	c.auto_run = s.auto_run > 0;
	c.verbose = o.verbose;
	c.oneshot = o.oneshot;
	c.max_output = s.max_output > 0 ? s.max_output : DEFAULT_MAX_OUTPUT;
	c.context_window = s.context_window > 0 ? s.context_window : DEFAULT_CONTEXT;
	c.system_extra = s.system_message ? xstrdup(s.system_message) : NULL;
	if (setup_llm(&c, &o, &s) < 0) {
		rc = 2;
		goto out;
	}
	ui_init(&c.ui, d->data);
	ui_signals();
	if (bclient_init(&c.bc, BROKER_SUP_FD, &err) < 0) {
		ui_error(&c.ui, "cannot talk to the supervisor: %s", err.msg);
		rc = 125;
		goto out;
	}
	c.bc_ok = true;
	if (s.sandbox_profile) {
		bool ok = false;

		for (uint32_t i = 0; i < c.bc.n_profiles; i++)
			ok |= !strcmp(c.bc.profiles[i], s.sandbox_profile);
		if (!ok && c.bc.n_profiles &&
		    !(c.bc.default_profile && !strcmp(c.bc.default_profile, s.sandbox_profile))) {
			struct sbuf l = { 0 };

			for (uint32_t i = 0; i < c.bc.n_profiles; i++)
				sbuf_addf(&l, "%s%s", i ? ", " : "", c.bc.profiles[i]);
			fprintf(stderr, "warden chat: sandbox profile \"%s\" is not allowed in this run "
			        "(allowed: %s)\n", s.sandbox_profile, l.d);
			sbuf_free(&l);
			rc = 2;
			goto out;
		}
		c.profile = xstrdup(s.sandbox_profile);
	}
	if (o.resume_set) {
		char *path = NULL;
		json_object *msgs = NULL;

		if (resume_path(d, o.resume, &path, &err) < 0 ||
		    resume_load(path, &msgs, &err) < 0) {
			ui_error(&c.ui, "--resume: %s", err.msg);
			free(path);
			rc = 2;
			goto out;
		}
		json_object_put(c.msgs);
		c.msgs = msgs;
		c.conv_path = path;
		if (strncmp(path, d->data, strlen(d->data)) || path[strlen(d->data)] != '/') {
			/* outside the data directory: go on in a new file there */
			ui_note(&c.ui, "%s is outside %s: the conversation goes on in a new file", path,
			        d->data_shown);
			c.conv_path = NULL;
		}
		if (c.ui.tty_out || c.verbose)
			show_conversation(&c);
		{
			_cleanup_free_ char *shown = bdirs_shown(d, path);
			ui_note(&c.ui, "resumed %s (%zu messages)", shown, json_object_array_length(msgs));
		}
		if (!c.conv_path)
			free(path);
	}

	if (o.message) {
		rc = turn(&c, o.message) < 0 ? 1 : 0;
		goto out;
	}
	if (!c.ui.tty_in) {
		char *line = NULL;
		int r;

		while ((r = ui_readline(&c.ui, "", false, &line)) != 0 && !c.fatal) {
			if (r == 2)
				break;
			if (*line == '%') {
				magic(&c, line);
			} else if (*line && turn(&c, line) < 0) {
				free(line);
				rc = 1;
				break;
			}
			free(line);
			line = NULL;
		}
		goto out;
	}
	{
		bool last_int = false;

		ui_bold(&c.ui, "warden chat · model %s%s%s · sandbox %s · workspace %s", c.llm.provider,
		        !strcmp(c.llm.provider, "replay") ? ":" : "/", c.llm.model, cur_profile(&c),
		        c.bc.default_workspace ? c.bc.default_workspace : ".");
		ui_note(&c.ui, "Code runs in a jail%s. %%help for commands; Ctrl-C interrupts, "
		        "Ctrl-D exits.", c.auto_run ? " without asking (auto-run)" : " after you approve it");
		while (!c.fatal) {
			char *line = NULL;
			int r = ui_readline(&c.ui, "> ", true, &line);

			if (r == 0)
				break;
			if (r == 2) {
				if (c.ui.int_empty && last_int)
					break;
				last_int = c.ui.int_empty;
				if (last_int)
					ui_note(&c.ui, "(Ctrl-C again or Ctrl-D to exit)");
				continue;
			}
			last_int = false;
			if (line[0] == '%')
				magic(&c, line);
			else if (line[strspn(line, " \t")])
				turn(&c, line);
			free(line);
		}
	}
out:
	if (c.conv_path && json_object_array_length(c.msgs)) {
		_cleanup_free_ char *shown = bdirs_shown(d, c.conv_path);
		ui_note(&c.ui, "conversation saved in %s", shown);
	}
	for (size_t i = 0; i < json_object_array_length(c.audit_ids); i++)
		ui_note(&c.ui, "what the jail did: warden audit --session %s",
		        json_object_get_string(json_object_array_get_idx(c.audit_ids, i)));
	chat_free(&c);
out_opts:
	chat_settings_free(&s);
	opts_free(&o);
	return rc;
}
