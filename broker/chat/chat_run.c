/* warden chat: one code block shown, approved (or edited), run in the
 * session's jail, its output shown live and fed back to the model (head
 * and tail), and what the jail denied counted. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "chat_int.h"
#include "core/client.h"
#include "core/langs.h"
#include "conv.h"
#include "core/lmc.h"
#include "core/refusals.h"
#include "llm/extract.h"
#include "core/sanitize.h"
#include "warden/util.h"

#define MAX_EDITS 20
/* Images and HTML outputs of one block that are kept: saved, shown, in the
 * conversation and sent to the model.  Each is at most WPROTO_DISPLAY_MAX
 * (3 MiB), but a block's count is bounded only by the profile's output
 * limit, which may be unlimited: the rest are dropped as they come, and
 * counted. */
#define DISPLAYS_MAX 8

/* ---- running a block ---- */

struct collect {
	struct chat *c;
	struct wsan san[2];
	struct sbuf head, tail;
	size_t head_max, tail_max;
	uint64_t total;
	json_object *live_denied;
	json_object *rich;           /* the block's image and html LMC messages */
	char *refusals;              /* a learning session's report of the block */
	const char *code;            /* the block, for its running line */
	unsigned images, htmls;      /* kept so far (at most DISPLAYS_MAX each) */
	unsigned dropped_images, dropped_htmls;
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

/* The terminal shows images itself: kitty's graphics protocol (kitty,
 * ghostty) or iTerm2's inline images (iTerm2, WezTerm), known from the
 * environment only; the terminal is never queried (a reply would land in
 * the person's input). */
enum inline_kind { INLINE_NONE, INLINE_KITTY, INLINE_ITERM };

static enum inline_kind inline_kind(const struct chat *c)
{
	const char *term = getenv("TERM"), *prog = getenv("TERM_PROGRAM");

	if (!c->ui.tty_out)
		return INLINE_NONE;
	if (getenv("KITTY_WINDOW_ID") || (term && (strstr(term, "kitty") || strstr(term, "ghostty"))))
		return INLINE_KITTY;
	if (prog && (strcmp(prog, "iTerm.app") == 0 || strcmp(prog, "WezTerm") == 0))
		return INLINE_ITERM;
	return INLINE_NONE;
}

static void show_inline(struct chat *c, const char *format, const char *b64, size_t raw_len)
{
	enum inline_kind k = inline_kind(c);
	size_t n = strlen(b64);

	if (k == INLINE_KITTY && strcmp(format, "png") == 0) {
		/* chunks of 4096 base64 bytes; m=1 says more follow */
		for (size_t off = 0; off < n; off += 4096) {
			size_t len = n - off < 4096 ? n - off : 4096;
			printf("\033_G%s%s;%.*s\033\\", off ? "" : "f=100,a=T,",
			       off + len < n ? "m=1" : "m=0", (int)len, b64 + off);
		}
		printf("\n");
	} else if (k == INLINE_ITERM) {
		printf("\033]1337;File=inline=1;size=%zu:%s\a\n", raw_len, b64);
	}
	fflush(stdout);
}

/* <data>/images/<time>-<pid>-<n>.<ext>: the path as the person knows it
 * (malloc'd), or NULL with *why set. */
static char *save_image(struct chat *c, const char *format, const uint8_t *data, size_t len,
                        const char **why)
{
	static unsigned seq;
	struct werr err = { 0 };
	char stamp[32], name[96];
	time_t now = time(NULL);
	struct tm tm;
	_cleanup_free_ char *dir = xasprintf("%s/images", c->d->data);
	_cleanup_free_ char *path = NULL;
	int fd;

	*why = NULL;
	if (mkdir_p(dir, 0700, &err) < 0) {
		*why = "its directory could not be made";
		return NULL;
	}
	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	snprintf(name, sizeof(name), "%s-%d-%u.%s", stamp, (int)getpid(), ++seq,
	         strcmp(format, "jpeg") == 0 ? "jpg" : "png");
	path = xasprintf("%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || write_all(fd, data, len) < 0) {
		if (fd >= 0)
			close(fd);
		*why = "it could not be written";
		return NULL;
	}
	close(fd);
	return xasprintf("%s/images/%s", c->d->data_shown ? c->d->data_shown : c->d->data, name);
}

/* An image or HTML the block displayed: saved and shown; kept for the
 * conversation (LMC, as Open Interpreter keeps it). */
static void on_display(void *ctx, const char *format, const uint8_t *data, size_t len)
{
	struct collect *col = ctx;
	struct chat *c = col->c;
	bool html = strcmp(format, "html") == 0;
	unsigned *kept = html ? &col->htmls : &col->images;

	if (*kept >= DISPLAYS_MAX) {
		/* past the cap: not saved, not shown, not kept, only counted */
		(*(html ? &col->dropped_htmls : &col->dropped_images))++;
		return;
	}
	(*kept)++;
	if (html) {
		struct wsan san;
		struct sbuf clean = { 0 };

		wsan_init(&san);
		wsan_feed(&san, data, len, &clean);
		wsan_end(&san, &clean);
		ui_note(&c->ui, "  HTML output (%zu bytes), shown as text:", len);
		ui_output(&c->ui, WSTREAM_STDOUT, clean.d ? clean.d : "", clean.len);
		ui_newline(&c->ui);
		json_object_array_add(col->rich, lmc_msg("computer", "code", "html",
		                                         clean.d ? clean.d : ""));
		sbuf_free(&clean);
		return;
	}
	{
		const char *why;
		_cleanup_free_ char *b64 = lmc_base64(data, len);
		_cleanup_free_ char *path = save_image(c, format, data, len, &why);

		ui_newline(&c->ui);
		if (path)
			ui_note(&c->ui, "  image (%s, %zu bytes) saved in %s", format, len, path);
		else
			ui_bad(&c->ui, "  image (%s, %zu bytes) not saved: %s", format, len, why);
		show_inline(c, format, b64, len);
		json_object_array_add(col->rich, lmc_msg("computer", "image",
		                                         strcmp(format, "jpeg") == 0 ? "base64.jpeg"
		                                                                     : "base64.png",
		                                         b64));
	}
}

/* What was past the cap, told to the person and the model. */
static void dropped_displays(struct chat *c, const struct collect *col, struct sbuf *model)
{
	static const char *const what[2][2] = { { "image", "images" },
	                                        { "HTML output", "HTML outputs" } };
	const unsigned n[2] = { col->dropped_images, col->dropped_htmls };

	for (int k = 0; k < 2; k++) {
		const char *w = what[k][n[k] != 1];

		if (!n[k])
			continue;
		ui_note(&c->ui, "  %u more %s of this block %s dropped (at most %d a block are "
		        "kept)", n[k], w, n[k] == 1 ? "was" : "were", DISPLAYS_MAX);
		sbuf_addf(model, "\n[warden: %u more %s %s dropped: at most %d of a block are "
		          "kept]", n[k], w, n[k] == 1 ? "was" : "were", DISPLAYS_MAX);
	}
}

/* The running line, under the code box: "line N: its text" in the
 * spinner's place while nothing else is on the line (a terminal only). */
static void on_line(void *ctx, uint32_t line)
{
	struct collect *col = ctx;
	struct ui *u = &col->c->ui;
	const char *p = col->code, *e;
	char label[64];
	_cleanup_free_ char *text = NULL;
	size_t n;

	if (!u->tty_out || (!u->spinning && !u->at_bol))
		return;
	for (uint32_t i = 1; p && i < line; i++) {
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	if (!p)
		return;
	while (*p == ' ' || *p == '\t')
		p++;
	e = strchr(p, '\n');
	n = e ? (size_t)(e - p) : strlen(p);
	text = wsan_str(p, n > 200 ? 200 : n);   /* the model's text: no escapes */
	n = strlen(text);
	if (n > 40)
		n = utf8_fwd(text, strlen(text), 40);
	snprintf(label, sizeof(label), "line %u: %.*s%s", line, (int)n, text,
	         n < strlen(text) ? "…" : "");
	if (u->spinning)
		ui_spinner_label(u, label);
	else
		ui_spinner_start(u, label);
}

static void on_refusals(void *ctx, const char *json)
{
	struct collect *col = ctx;

	free(col->refusals);
	col->refusals = xstrdup(json);
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

/* One line, once per chat, when a limit of the session is weaker than a
 * cgroup (from OPENED's limits report, issue 13). */
static void tell_weak_limits(struct chat *c)
{
	json_object *o = c->sess.limits_json ? json_tokener_parse(c->sess.limits_json) : NULL;
	char weak[160] = "", none[96] = "";

	if (c->limits_told || !o || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return;
	}
	json_object_object_foreach(o, k, v) {
		const char *m = json_object_get_string(v);
		char *dst = !strcmp(m, "rlimit") && strcmp(k, "file_size") && strcmp(k, "open_files")
		            ? weak : !strcmp(m, "unavailable") ? none : NULL;
		size_t cap = dst == weak ? sizeof(weak) : sizeof(none);

		if (dst)
			snprintf(dst + strlen(dst), cap - strlen(dst), "%s%s", dst[0] ? ", " : "", k);
	}
	json_object_put(o);
	c->limits_told = true;
	if (weak[0] || none[0])
		ui_note(&c->ui, "[weaker limits here: %s%s%s%s%s; see `warden doctor`]", weak,
		        weak[0] ? " by per-process rlimits only" : "", weak[0] && none[0] ? ", " : "",
		        none, none[0] ? " enforced by nothing" : "");
}

/* Once per chat: the workspace holds the person's home, so its startup
 * files, settings and credentials are protected (SECURITY.md G190-G192). */
static void tell_home(struct chat *c)
{
	json_object *o = c->sess.jail_json ? json_tokener_parse(c->sess.jail_json) : NULL, *v;

	if (!c->home_told && o && json_object_object_get_ex(o, "home_in_workspace", &v) &&
	    json_object_get_boolean(v))
		ui_note(&c->ui, "[your home directory is in the workspace: what your machine runs or "
		        "trusts there (shell startup files, git and editor settings, user units, "
		        "~/.local/bin) is read-only or kept from being created, and credentials and "
		        "histories are hidden; `warden policy show --catalog` lists them]");
	c->home_told = true;
	json_object_put(o);
}

int chat_open_session(struct chat *c)
{
	struct werr err = { 0 };

	if (c->sess_open)
		return 0;
	if (bclient_open(&c->bc, c->profile, NULL, (c->oneshot ? WOPEN_ONESHOT : 0) |
	                 (c->learn ? WOPEN_LEARN : 0), &c->sess, &err) < 0) {
		ui_error(&c->ui, "%s", err.msg);
		if (c->bc.c.eof)
			c->fatal = true;
		return -1;
	}
	c->sess_open = true;
	if (!c->langs)
		c->langs = blang_trusted_json(c->sess.languages_json, json_type_array);
	json_object_array_add(c->audit_ids, json_object_new_string(c->sess.audit_id));
	tell_weak_limits(c);
	tell_home(c);
	if (c->verbose)
		ui_note(&c->ui, "[sandbox session %s opened, profile %s]", c->sess.audit_id,
		        chat_profile_name(c));
	return 0;
}

bool chat_lang_runs(struct chat *c, const char *label)
{
	if (!label || !*label || llm_fence_is_data(label))
		return false;
	if (!c->langs && !c->langs_asked && !c->fatal) {
		struct werr err = { 0 };
		_cleanup_free_ char *json = NULL;

		/* no session yet (its jail could not start): ask the supervisor */
		c->langs_asked = true;
		if (bclient_languages(&c->bc, &json, &err) == 0)
			c->langs = blang_trusted_json(json, json_type_array);
	}
	return c->langs && blang_lookup(c->langs, label);
}

void chat_close_session(struct chat *c)
{
	struct werr err = { 0 };

	if (!c->sess_open)
		return;
	if (bclient_close(&c->bc, c->sess.id, &err) < 0 && c->verbose)
		ui_note(&c->ui, "closing the session: %s", err.msg);
	bsession_free(&c->sess);
	c->sess_open = false;
	/* a widening is the session's: it went with it */
	json_object_put(c->widened);
	c->widened = json_object_new_array();
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
			ui_code_box(&c->ui, mstr(m, "format"), chat_profile_name(c), mstr(m, "content"));
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
		sbuf_addf(model, "\n" CONV_SIGNALED "%u]", res->signal);
		break;
	case WB_INTERRUPTED:
		ui_bad(u, "^C interrupted (%s)", wall);
		sbuf_adds(model, "\n" CONV_INTERRUPTED);
		break;
	default:
		ui_bad(u, "✗ stopped by the jail: %s limit reached (%s)",
		       wblock_reason_name(res->reason), wall);
		sbuf_addf(model, "\n" CONV_STOPPED "%s limit was reached]",
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
		sbuf_addf(model, "\n" CONV_DENIED "%s. This is the "
		          "sandbox working as intended; do not try to get around it]", l.d);
		sbuf_free(&l);
	}
	if (res->flags & WRES_TRUNCATED)
		sbuf_adds(model, "\n[the jail's output limit was reached: the middle of the output "
		                 "was dropped]");
	if (res->flags & WRES_STATE_LOST) {
		ui_note(u, "the session's jail ended: the next block starts fresh (variables and "
		        "imports are gone)");
		sbuf_adds(model, "\n" CONV_STATE_LOST "variables, imports and functions from "
		                 "earlier blocks are gone]");
	}
	if (c->verbose) {
		char mem[32];

		if (res->flags & WRES_NO_PEAK)
			snprintf(mem, sizeof(mem), "unknown");
		else
			format_size(res->peak_memory, mem, sizeof(mem));
		ui_note(u, "[wall %llums, cpu %llums, peak memory %s, output %llu bytes]",
		        (unsigned long long)res->wall_ms, (unsigned long long)res->cpu_ms, mem,
		        (unsigned long long)res->output_bytes);
	}
}

/* The session's name of a language (python for py), or lang itself. */
static const char *lang_name(struct chat *c, const char *lang)
{
	const char *n = c->langs ? blang_lookup(c->langs, lang) : NULL;

	return n ? n : lang;
}

/* An earlier block of m's language ran in this conversation (its state
 * was there for the model to count on). */
static bool ran_before(struct chat *c, json_object *m, const char *lang)
{
	const char *name = lang_name(c, lang);
	size_t n = json_object_array_length(c->msgs);

	for (size_t i = 0; i + 1 < n; i++) {
		json_object *e = json_object_array_get_idx(c->msgs, i);
		json_object *out = json_object_array_get_idx(c->msgs, i + 1);
		const char *o = mstr(out, "content") ?: "";

		if (e == m)
			break;
		if (strcmp(mstr(e, "type") ?: "", "code") || strcmp(mstr(out, "type") ?: "", "console") ||
		    strcasecmp(lang_name(c, mstr(e, "format") ?: ""), name))
			continue;
		if (strncmp(o, CONV_DECLINED, strlen(CONV_DECLINED)) &&
		    strncmp(o, CONV_NOT_RUN, strlen(CONV_NOT_RUN)) && !strstr(o, CONV_COULD_NOT_RUN))
			return true;
	}
	return false;
}

/* One run of the block in the session's jail: its output shown and
 * collected for the model (appended to model), its rich output added to
 * rich; *refusals: the learner's report when the block failed (malloc'd,
 * or NULL). */
static int run_once(struct chat *c, json_object *m, const char *lang, const char *code,
                    struct sbuf *model_out, json_object *rich, char **refusals)
{
	struct collect col;
	struct wresult res;
	struct werr err = { 0 };
	struct sbuf model = { 0 };
	sig_atomic_t before;
	int r, ret = RB_RAN;
	char *out;

	*refusals = NULL;
	memset(&col, 0, sizeof(col));
	col.c = c;
	wsan_init(&col.san[0]);
	wsan_init(&col.san[1]);
	col.head_max = (size_t)c->max_output / 2;
	col.tail_max = (size_t)c->max_output - col.head_max;
	col.live_denied = json_object_new_object();
	col.rich = json_object_new_array();
	col.code = code;
	{
		const struct bclient_cb cb = { on_output, on_audit, on_display, on_line,
		                               on_refusals };

		ui_sigint = 0;
		before = ui_sigint_count;
		r = bclient_run(&c->bc, c->sess.id, lang, code, strlen(code), &cb, &col, &ui_sigint,
		                &res, &err);
		ui_sigint = 0;
		ui_spinner_stop(&c->ui);
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
	dropped_displays(c, &col, &model);
	if (r < 0) {
		ui_error(&c->ui, "%s", err.msg);
		sbuf_addf(&model, "\n" CONV_COULD_NOT_RUN "%s]", err.msg);
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
		if (res.reason == WB_INTERRUPTED || ui_sigint_count != before) {
			ret = RB_INTERRUPTED;
			/* the script export leaves it out by this note */
			if (res.reason != WB_INTERRUPTED)
				sbuf_adds(&model, "\n" CONV_INTERRUPTED);
		}
		if ((res.flags & WRES_FRESH) && ran_before(c, m, lang))
			sbuf_addf(&model, "\n" CONV_NEW_JAIL "%s jail: what earlier %s blocks defined "
			          "is gone]", lang_name(c, lang), lang_name(c, lang));
		if (ret == RB_RAN && brefusals_block_failed(&res))
			*refusals = steal_pointer(&col.refusals);
		wresult_free(&res);
	}
	sbuf_adds(model_out, model.d ? model.d : "");
	for (size_t i = 0; i < json_object_array_length(col.rich); i++)
		json_object_array_add(rich, json_object_get(json_object_array_get_idx(col.rich, i)));
	json_object_put(col.rich);
	free(col.refusals);
	sbuf_free(&model);
	sbuf_free(&col.head);
	sbuf_free(&col.tail);
	json_object_put(col.live_denied);
	return ret;
}

/* The most times a block runs again after widenings: a block refused
 * something new each time is not chased for ever. */
#define RERUNS_MAX 3

int chat_run_block(struct chat *c, json_object *m)
{
	struct sbuf model = { 0 };
	json_object *rich;
	const char *lang = mstr(m, "format") ?: "";
	const char *code;
	int a, ret = RB_RAN;

	ui_code_box(&c->ui, lang, chat_profile_name(c), mstr(m, "content"));
	if (!c->auto_run) {
		if (!c->ui.tty_in) {
			ui_bad(&c->ui, "Not run: there is no terminal to ask for approval. Use -y "
			       "(--auto-run) to run the model's code without asking.");
			chat_add_console(c, CONV_DECLINED " (There was no terminal to ask; the user can "
			               "rerun with -y to allow code to run.)");
			return RB_DECLINED;
		}
		a = approve(c, m);
		if (c->fatal)
			return RB_FATAL;
		if (a < 0) {
			chat_add_console(c, CONV_NOT_RUN "the user pressed Ctrl-C at the approval prompt.");
			return RB_INTERRUPTED;
		}
		if (a == 0) {
			ui_note(&c->ui, "not run; the model will be told you declined");
			chat_add_console(c, CONV_DECLINED);
			return RB_DECLINED;
		}
	}
	if (chat_open_session(c) < 0) {
		chat_add_console(c, CONV_NOT_RUN "warden could not start the jail.");
		return RB_FATAL;
	}
	code = mstr(m, "content") ?: "";
	rich = json_object_new_array();
	for (int round = 0;; round++) {
		char *refusals = NULL;
		int g;

		ret = run_once(c, m, lang, code, &model, rich, &refusals);
		if (!refusals || round >= RERUNS_MAX) {
			free(refusals);
			break;
		}
		g = chat_widen_offer(c, refusals, lang_name(c, lang), &model);
		free(refusals);
		if (g <= 0 || c->fatal)
			break;
		/* the jail of the next run is new: the code runs whole again */
		sbuf_addf(&model, "\n[warden: the block ran again, in a new %s jail:]\n",
		          lang_name(c, lang));
	}
	chat_add_console(c, model.d);
	for (size_t i = 0; i < json_object_array_length(rich); i++)
		json_object_array_add(c->msgs, json_object_get(json_object_array_get_idx(rich, i)));
	json_object_put(rich);
	sbuf_free(&model);
	return c->fatal ? RB_FATAL : ret;
}
