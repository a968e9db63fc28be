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
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "chat.h"
#include "chat_int.h"
#include "core/client.h"
#include "config.h"
#include "conv.h"
#include "llm/extract.h"
#include "llm/llm.h"
#include "core/lmc.h"
#include "core/sanitize.h"
#include "ui.h"
#include "warden/util.h"


#define DEFAULT_MODEL "openai/gpt-4o"
#define DEFAULT_MAX_OUTPUT 2800
#define DEFAULT_CONTEXT 32000
#define MAX_ROUNDS 40             /* model calls for one user message */

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
	ui_model_release(&c->ui, false);   /* a tool call: the reply's fences do not run */
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

static bool has_code(json_object *msgs)
{
	for (size_t i = 0; i < json_object_array_length(msgs); i++)
		if (!strcmp(mstr(json_object_array_get_idx(msgs, i), "type") ?: "", "code"))
			return true;
	return false;
}

static bool label_runs(void *ctx, const char *label)
{
	return chat_lang_runs(ctx, label);
}

/* the terminal's side of the same rule, from a fence line's info string */
static bool info_runs(void *ctx, const char *info, size_t n)
{
	char label[64];
	size_t len = llm_fence_label(info, n, label, sizeof(label));

	return len && len < sizeof(label) && chat_lang_runs(ctx, label);
}

/* A reply (tools on, no tool call) with each assistant message split into
 * its prose and the fenced blocks that name a language the session runs
 * (a new array). */
static json_object *fenced_code(struct chat *c, json_object *raw)
{
	json_object *exp = json_object_new_array();

	for (size_t i = 0; i < json_object_array_length(raw); i++) {
		json_object *m = json_object_array_get_idx(raw, i);

		if (!strcmp(mstr(m, "type") ?: "", "message") &&
		    !strcmp(mstr(m, "role") ?: "", "assistant")) {
			json_object *parts = llm_extract_fences(mstr(m, "content") ?: "", label_runs, c);

			for (size_t j = 0; j < json_object_array_length(parts); j++)
				json_object_array_add(exp, json_object_get(
					json_object_array_get_idx(parts, j)));
			json_object_put(parts);
		} else {
			json_object_array_add(exp, json_object_get(m));
		}
	}
	return exp;
}

/* One request.  Appends what the model said to *out (an array of LMC
 * messages, possibly partial).  0 ok, -1 failed (shown), -2 interrupted. */
static int ask_model(struct chat *c, json_object **out)
{
	static const struct llm_events ev = { ev_text, ev_code_start, ev_retry };
	_cleanup_free_ char *sys = chat_system_message(c);
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
	if (c->llm.tools) {
		bool ran = false;

		/* no tool call: the fenced blocks in a language the session runs
		 * are the code, as with --no-tools */
		if (r == 0 && !has_code(raw)) {
			json_object *exp = fenced_code(c, raw);

			ran = has_code(exp);
			json_object_put(raw);
			raw = exp;
		}
		ui_model_release(&c->ui, ran);
		if (has_code(raw))
			c->code_path = ran ? CODE_FENCES : CODE_TOOLS;
	} else {
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

/* ---- a turn ---- */

/* 0 done, -1 the model failed (non-interactive runs exit non-zero). */
static int turn(struct chat *c, const char *text)
{
	json_object_array_add(c->msgs, lmc_msg("user", "message", NULL, text));
	chat_save(c);
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
				chat_add_console(c, t);
				continue;
			}
			switch (chat_run_block(c, m)) {
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
			chat_save(c);
		}
		json_object_put(out);
		chat_save(c);
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

/* ---- set-up ---- */

static int setup_llm(struct chat *c, const struct chat_opts *o, const struct chat_settings *s)
{
	struct werr err = { 0 };
	const char *key, *env;

	memset(&c->llm, 0, sizeof(c->llm));
	if (s->api_base)
		c->llm.api_base = xstrdup(s->api_base);
	if (llm_parse_model(s->model ? s->model : DEFAULT_MODEL, &c->llm, &err) < 0) {
		chat_bad("--model: %s", err.msg);
		return -1;
	}
	c->llm.tools = !o->no_tools;
	c->llm.vision = s->vision < 0 ? 0 : s->vision ? 1 : -1;   /* 0: by the model's name */
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
		        "for a local model give --api-base URL (e.g. --model ollama/llama3)%s%s\n",
		        c->llm.provider, env,
		        o->demo_path ? "; without any model, try --model replay:" : "",
		        o->demo_path ? o->demo_path : "");
		return -1;
	}
	return 0;
}

static void chat_free(struct chat *c)
{
	if (c->sess_open)
		chat_close_session(c);
	if (c->bc_ok)
		bclient_free(&c->bc);
	llm_config_free(&c->llm);
	ui_free(&c->ui);
	json_object_put(c->msgs);
	json_object_put(c->denied);
	json_object_put(c->audit_ids);
	json_object_put(c->widened);
	json_object_put(c->langs);
	free(c->profile);
	free(c->chat_profile);
	free(c->system_base);
	free(c->system_extra);
	free(c->conv_path);
}

/* The first user message, on one line, cut to about max characters (at a
 * character boundary), sanitized for the terminal.  malloc'd. */
static char *one_line(const char *s, size_t max)
{
	struct sbuf b = { 0 };
	size_t n = 0;
	char *r;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p & 0xc0) != 0x80 && ++n > max) {
			sbuf_adds(&b, "…");
			break;
		}
		sbuf_addc(&b, *p == '\n' || *p == '\t' || *p == '\r' ? ' ' : (char)*p);
	}
	r = wsan_str(b.d ? b.d : "", b.len);
	sbuf_free(&b);
	return r;
}

/* --conversations: the saved conversations, newest first, each with the
 * file name that --resume takes.  On a terminal (stdin and stdout) the person may
 * pick one by number, and the chat resumes it (*picked, malloc'd); else,
 * or when nothing is picked, the list is all.  0 listed (and maybe
 * picked), 1 the directory could not be read. */
static int list_conversations(const struct bdirs *d, char **picked)
{
	struct conv_entry *e = NULL;
	size_t n = 0;
	struct werr err = { 0 };
	_cleanup_free_ char *dir = conv_dir(d->data), *dir_shown = bdirs_shown(d, dir);
	char line[64];

	*picked = NULL;
	if (conv_list(d->data, &e, &n, &err) < 0) {
		_cleanup_free_ char *m = bdirs_shown(d, err.msg);

		fprintf(stderr, "warden chat: %s\n", m);
		return 1;
	}
	if (!n) {
		printf("no saved conversations in %s yet\n", dir_shown);
		return 0;
	}
	printf("saved conversations in %s, newest first:\n", dir_shown);
	for (size_t i = 0; i < n; i++) {
		char when[32];
		struct tm tm;
		const char *base = strrchr(e[i].path, '/');
		_cleanup_free_ char *first = one_line(e[i].first ? e[i].first : "(no message)", 40);
		_cleanup_free_ char *id = NULL;

		base = base ? base + 1 : e[i].path;
		id = wsan_str(base, strlen(base));   /* --resume takes it as it is */
		localtime_r(&e[i].mtime, &tm);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
		printf("%3zu  %s  %3zu msgs  %s  [%s]\n", i + 1, when, e[i].n_msgs, first, id);
	}
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		printf("resume one with: warden chat --resume NAME.json (the name in brackets)\n");
		conv_list_free(e, n);
		return 0;
	}
	printf("Resume which? [1-%zu, Enter: none] ", n);
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin)) {
		char *end = NULL;
		long k = strtol(line, &end, 10);

		if (end != line && k >= 1 && (size_t)k <= n)
			*picked = xstrdup(e[k - 1].path);
		else if (line[strspn(line, " \t\n")])
			printf("not a number from 1 to %zu: nothing resumed\n", n);
	}
	conv_list_free(e, n);
	return 0;
}

static void ensure_utf8_locale(void)
{
	const char *cs = nl_langinfo(CODESET);

	if (!cs || strcasecmp(cs, "UTF-8"))
		setlocale(LC_CTYPE, "C.UTF-8");
}

int chat_main(struct chat_opts *o, const struct bdirs *d)
{
	const struct chat_settings *s = &o->s;
	struct chat c;
	struct werr err = { 0 };
	int rc = 0;

	umask(077);
	if (o->bad)
		return 2;
	if (o->help) {
		fputs(chat_usage_text, stdout);
		return 0;
	}
	if (o->config_bad) {
		const struct werr *cerr = &o->config_err;
		_cleanup_free_ char *msg = bdirs_shown(d, cerr->msg);

		/* DAC applies to the broker's user (as root: its own user) */
		if (cerr->errnum == EACCES)
			fprintf(stderr, "warden chat: %s; the broker runs as uid %u: give it read "
			        "access (e.g. `chgrp warden FILE && chmod g+r FILE` when warden runs "
			        "as root)\n", msg, (unsigned)getuid());
		else
			fprintf(stderr, "warden chat: %s\n", msg);
		return 2;
	}
	if (o->export_script) {
		rc = chat_export_script(d, o);
		goto out_opts;
	}
	if (o->jupyter_set) {
		rc = chat_export_notebook(d, o);
		goto out_opts;
	}
	if (o->conversations) {
		char *picked = NULL;

		if (o->resume_set) {
			chat_bad("--conversations picks the conversation to resume: leave out --resume");
			return 2;
		}
		rc = list_conversations(d, &picked);
		if (rc || !picked)
			goto out_opts;
		o->resume_set = true;
		free(o->resume);
		o->resume = picked;
	}

	ensure_utf8_locale();
	memset(&c, 0, sizeof(c));
	c.d = d;
	c.msgs = json_object_new_array();
	c.denied = json_object_new_object();
	c.audit_ids = json_object_new_array();
	c.auto_run = s->auto_run > 0;
	c.verbose = o->verbose;
	c.oneshot = o->oneshot;
	c.learn = !o->no_learn;
	c.widened = json_object_new_array();
	c.max_output = s->max_output > 0 ? s->max_output : DEFAULT_MAX_OUTPUT;
	c.context_window = s->context_window > 0 ? s->context_window : DEFAULT_CONTEXT;
	c.chat_profile = o->profile ? xstrdup(o->profile) : NULL;
	c.system_base = s->system_message ? xstrdup(s->system_message) : NULL;
	c.system_extra = s->system_message_append ? xstrdup(s->system_message_append) : NULL;
	if (setup_llm(&c, o, s) < 0) {
		rc = 2;
		goto out;
	}
	ui_init(&c.ui, d->data);
	c.ui.dirs = d;
	c.ui.hide_fences = !c.llm.tools;
	if (c.llm.tools) {
		/* a reply without a tool call may still bring fences that run */
		c.ui.hold_fences = true;
		c.ui.fence_runs = info_runs;
		c.ui.fence_ctx = &c;
	}
	ui_signals();
	if (bclient_init(&c.bc, BROKER_SUP_FD, &err) < 0) {
		ui_error(&c.ui, "cannot talk to the supervisor: %s", err.msg);
		rc = 125;
		goto out;
	}
	c.bc_ok = true;
	if (s->sandbox_profile) {
		bool ok = false;

		for (uint32_t i = 0; i < c.bc.n_profiles; i++)
			ok |= !strcmp(c.bc.profiles[i], s->sandbox_profile);
		if (!ok && c.bc.n_profiles &&
		    !(c.bc.default_profile && !strcmp(c.bc.default_profile, s->sandbox_profile))) {
			struct sbuf l = { 0 };

			for (uint32_t i = 0; i < c.bc.n_profiles; i++)
				sbuf_addf(&l, "%s%s", i ? ", " : "", c.bc.profiles[i]);
			fprintf(stderr, "warden chat: sandbox profile \"%s\" is not allowed in this run "
			        "(allowed: %s)\n", s->sandbox_profile, l.d);
			sbuf_free(&l);
			rc = 2;
			goto out;
		}
		c.profile = xstrdup(s->sandbox_profile);
	}
	if (o->resume_set) {
		char *path = NULL;
		json_object *msgs = NULL;

		if (chat_resume_path(d, o, o->resume, &path, &err) < 0 ||
		    chat_resume_load(o, path, &msgs, &err) < 0) {
			ui_error(&c.ui, "--resume: %s", err.msg);
			free(path);
			rc = 2;
			goto out;
		}
		json_object_put(c.msgs);
		c.msgs = msgs;
		/* a path under the data directory as the person knows it goes on
		 * in that file */
		c.conv_path = bdirs_real(d, path);
		free(path);
		path = c.conv_path;
		if (strncmp(path, d->data, strlen(d->data)) || path[strlen(d->data)] != '/') {
			/* outside the data directory: go on in a new file there */
			ui_note(&c.ui, "%s is outside %s: the conversation goes on in a new file", path,
			        d->data_shown);
			c.conv_path = NULL;
		}
		if (c.ui.tty_out || c.verbose)
			chat_show_conversation(&c);
		{
			_cleanup_free_ char *shown = bdirs_shown(d, path);
			ui_note(&c.ui, "resumed %s (%zu messages)", shown, json_object_array_length(msgs));
		}
		if (!c.conv_path)
			free(path);
	}

	/* The session now: the supervisor starts its jail in the background
	 * (OPENED does not wait for it) while the person types or the model
	 * answers.  A failure is told now, and the first block tries again. */
	if (chat_open_session(&c) < 0 && c.fatal) {
		rc = 125;
		goto out;
	}
	if (o->message) {
		/* a message that is a %command runs it, as at the prompt */
		if (o->message[0] == '%')
			rc = chat_magic(&c, o->message);
		else
			rc = turn(&c, o->message) < 0 ? 1 : 0;
		goto out;
	}
	if (!c.ui.tty_in) {
		char *line = NULL;
		int r;

		while ((r = ui_readline(&c.ui, "", false, &line)) != 0 && !c.fatal) {
			if (r == 2)
				break;
			if (*line == '%') {
				chat_magic(&c, line);
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
		        !strcmp(c.llm.provider, "replay") ? ":" : "/", c.llm.model, chat_profile_name(&c),
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
				chat_magic(&c, line);
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
	return rc;
}
