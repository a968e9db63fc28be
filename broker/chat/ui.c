/* The terminal (see ui.h). */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <wchar.h>

#include "core/broker.h"
#include "llm/extract.h"
#include "ui.h"
#include "warden/proto.h"
#include "warden/util.h"

volatile sig_atomic_t ui_sigint;
volatile sig_atomic_t ui_sigint_count;

static void on_sigint(int sig)
{
	(void)sig;
	ui_sigint = 1;
	ui_sigint_count++;
}

void ui_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;    /* no SA_RESTART: a blocked read returns EINTR */
	sigaction(SIGINT, &sa, NULL);
}

void ui_write(struct ui *u, const char *s, size_t n)
{
	if (!n)
		return;
	(void)write_all(STDOUT_FILENO, s, n);
	u->at_bol = s[n - 1] == '\n';
}

static void wr(struct ui *u, const char *s)
{
	ui_write(u, s, strlen(s));
}

/* ---- line editing ---- */

static char *prompt_fn(EditLine *el)
{
	struct ui *u = NULL;

	el_get(el, EL_CLIENTDATA, &u);
	return (char *)(u && u->prompt ? u->prompt : "> ");
}

/* libedit's character reader: ours, so that Ctrl-C (SIGINT, with ISIG on)
 * ends the read instead of being retried. */
static int getc_fn(EditLine *el, wchar_t *wc)
{
	struct ui *u = NULL;
	mbstate_t ps;

	el_get(el, EL_CLIENTDATA, &u);
	memset(&ps, 0, sizeof(ps));
	for (int i = 0; i < 8; i++) {
		char c;
		ssize_t r = read(STDIN_FILENO, &c, 1);
		size_t k;

		if (r < 0 && errno == EINTR) {
			if (ui_sigint) {
				const LineInfo *li = el_line(el);

				if (u)
					u->int_empty = !li || li->lastchar == li->buffer;
				return -1;
			}
			i--;
			continue;
		}
		if (r <= 0)
			return r == 0 ? 0 : -1;
		k = mbrtowc(wc, &c, 1, &ps);
		if (k == (size_t)-2)
			continue;
		if (k == (size_t)-1)
			*wc = L'?';
		return 1;
	}
	*wc = L'?';
	return 1;
}

/* libedit reads the terminal's terminfo entry when it starts: before the
 * broker confines itself, or Landlock hides /usr/share/terminfo. */
static EditLine *pre_el;

void ui_preinit(void)
{
	if (pre_el || !isatty(STDIN_FILENO))
		return;
	pre_el = el_init("warden", stdin, stdout, stderr);
	if (pre_el)
		el_source(pre_el, NULL);   /* ~/.editrc */
}

void ui_init(struct ui *u, const char *data_dir)
{
	const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");

	memset(u, 0, sizeof(*u));
	u->tty_in = isatty(STDIN_FILENO);
	u->tty_out = isatty(STDOUT_FILENO);
	u->color = u->tty_out && !(nc && *nc) && !(term && !strcmp(term, "dumb"));
	u->at_bol = true;
	wsan_init(&u->san_model);
	md_init(&u->md, u->color);
	pthread_mutex_init(&u->spin_mu, NULL);
	pthread_cond_init(&u->spin_cv, NULL);
	if (!u->tty_in)
		return;
	u->el = pre_el ? pre_el : el_init("warden", stdin, stdout, stderr);
	pre_el = NULL;
	if (!u->el)
		return;
	el_set(u->el, EL_CLIENTDATA, u);
	el_set(u->el, EL_EDITOR, "emacs");
	el_set(u->el, EL_PROMPT, prompt_fn);
	el_set(u->el, EL_GETCFN, getc_fn);
	u->hist = history_init();
	if (u->hist) {
		HistEvent ev;

		history(u->hist, &ev, H_SETSIZE, 1000);
		history(u->hist, &ev, H_SETUNIQUE, 1);
		el_set(u->el, EL_HIST, history, u->hist);
		if (data_dir) {
			u->histfile = xasprintf("%s/history", data_dir);
			history(u->hist, &ev, H_LOAD, u->histfile);
		}
	}
}

void ui_free(struct ui *u)
{
	ui_spinner_stop(u);
	if (u->el)
		el_end(u->el);
	if (u->hist)
		history_end(u->hist);
	free(u->histfile);
	md_free(&u->md);
	sbuf_free(&u->partial);
	sbuf_free(&u->fline);
	sbuf_free(&u->held_raw);
	sbuf_free(&u->held_hidden);
	pthread_mutex_destroy(&u->spin_mu);
	pthread_cond_destroy(&u->spin_cv);
	memset(u, 0, sizeof(*u));
}

static int plain_readline(struct ui *u, const char *prompt, char **line)
{
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;

	(void)u;
	(void)prompt;
	errno = 0;
	n = getline(&buf, &cap, stdin);
	if (n < 0) {
		free(buf);
		if (errno == EINTR && ui_sigint) {
			clearerr(stdin);
			u->int_empty = true;
			return 2;
		}
		return 0;
	}
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	*line = buf;
	return 1;
}

int ui_readline(struct ui *u, const char *prompt, bool history_add, char **line)
{
	const char *s;
	int count = 0;

	*line = NULL;
	ui_spinner_stop(u);
	ui_newline(u);
	if (ui_sigint) {
		/* Ctrl-C just before the prompt: it was meant for the prompt */
		ui_sigint = 0;
		u->int_empty = true;
		wr(u, "^C\n");
		return 2;
	}
	if (!u->el)
		return plain_readline(u, prompt, line);
	u->prompt = prompt;
	el_resize(u->el);
	s = el_gets(u->el, &count);
	u->at_bol = true;
	if (ui_sigint) {
		ui_sigint = 0;
		wr(u, "^C\n");
		return 2;
	}
	if (!s || count <= 0) {
		wr(u, "\n");
		return 0;
	}
	{
		size_t n = strlen(s);

		while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r'))
			n--;
		*line = strndup(s, n);
		if (!*line)
			return 0;
	}
	if (history_add && u->hist && **line) {
		HistEvent ev;

		history(u->hist, &ev, H_ENTER, *line);
		if (u->histfile)
			history(u->hist, &ev, H_SAVE, u->histfile);
	}
	return 1;
}

/* ---- spinner ---- */

static void *spin_main(void *arg)
{
	static const char *const frames[] = { "⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏" };
	struct ui *u = arg;
	unsigned i = 0;

	pthread_mutex_lock(&u->spin_mu);
	while (!u->spin_stop) {
		struct timespec now, dl;
		char line[160];
		double el;
		int n;

		clock_gettime(CLOCK_MONOTONIC, &now);
		el = (double)(now.tv_sec - u->spin_t0.tv_sec) +
		     (double)(now.tv_nsec - u->spin_t0.tv_nsec) / 1e9;
		n = snprintf(line, sizeof(line), "\r%s%s %s %.1fs%s\033[K", u->color ? MD_CYAN : "",
		             frames[i++ % ARRAY_SIZE(frames)], u->spin_label, el,
		             u->color ? MD_RESET : "");
		if (n > 0)
			(void)write_all(STDOUT_FILENO, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_nsec += 100 * 1000000L;
		if (dl.tv_nsec >= 1000000000L) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&u->spin_cv, &u->spin_mu, &dl);
	}
	pthread_mutex_unlock(&u->spin_mu);
	return NULL;
}

void ui_spinner_start(struct ui *u, const char *label)
{
	sigset_t all, old;

	if (!u->tty_out || u->spinning)
		return;
	ui_newline(u);
	snprintf(u->spin_label, sizeof(u->spin_label), "%s", label);
	clock_gettime(CLOCK_MONOTONIC, &u->spin_t0);
	u->spin_stop = false;
	/* signals go to the main thread, whose blocking calls they interrupt */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	if (pthread_create(&u->spin_thr, NULL, spin_main, u) == 0)
		u->spinning = true;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void ui_spinner_label(struct ui *u, const char *label)
{
	if (!u->spinning)
		return;
	pthread_mutex_lock(&u->spin_mu);
	snprintf(u->spin_label, sizeof(u->spin_label), "%s", label);
	pthread_mutex_unlock(&u->spin_mu);
}

void ui_spinner_stop(struct ui *u)
{
	if (!u->spinning)
		return;
	pthread_mutex_lock(&u->spin_mu);
	u->spin_stop = true;
	pthread_cond_signal(&u->spin_cv);
	pthread_mutex_unlock(&u->spin_mu);
	pthread_join(u->spin_thr, NULL);
	u->spinning = false;
	(void)write_all(STDOUT_FILENO, "\r\033[K", 4);
}

/* ---- model text ---- */

/* Columns the text takes on the screen (tabs count 8). */
static size_t text_width(const char *s, size_t n)
{
	mbstate_t ps;
	size_t w = 0, i = 0;

	memset(&ps, 0, sizeof(ps));
	while (i < n) {
		wchar_t wc;
		size_t k = mbrtowc(&wc, s + i, n - i, &ps);
		int cw;

		if (k == (size_t)-1 || k == (size_t)-2 || k == 0) {
			memset(&ps, 0, sizeof(ps));
			w++;
			i++;
			continue;
		}
		cw = wc == L'\t' ? 8 : wcwidth(wc);
		w += cw > 0 ? (size_t)cw : 0;
		i += k;
	}
	return w;
}

/* With colour, a line is rendered once it is complete; until then its
 * text is shown as it streams, and erased when the rendered line
 * replaces it. */
static void erase_partial(struct ui *u)
{
	struct winsize ws;
	size_t w, cols = 80, rows;
	char seq[32];

	if (!u->partial.len)
		return;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		cols = ws.ws_col;
	w = text_width(u->partial.d, u->partial.len);
	rows = w ? (w - 1) / cols : 0;
	if (rows)
		snprintf(seq, sizeof(seq), "\033[%zuA\r\033[J", rows);
	else
		snprintf(seq, sizeof(seq), "\r\033[J");
	wr(u, seq);
	u->at_bol = true;
	sbuf_reset(&u->partial);
}

/* ---- fences that run (--no-tools, and replies without a tool call) ----
 *
 * Without tools the model writes its code as fenced blocks in its text,
 * and each runnable one becomes a code box before it runs (chat.c).  Shown
 * in the text too, the code appeared twice.  The start of each line is
 * held while it could still be a fence; a fence that will run
 * (u->fence_runs, or llm_fence_runs, the extractor's own rule) is dropped
 * up to its closing fence; every other line is passed on as it was.
 * With tools on (hold_fences), such a fence runs only if the reply makes
 * no tool call, which its end tells: from that fence on, the reply is
 * held both ways, and ui_model_release shows one. */

static bool fence_would_run(struct ui *u, const char *info, size_t n)
{
	return u->fence_runs ? u->fence_runs(u->fence_ctx, info, n) : llm_fence_runs(info, n);
}

/* The line so far could still turn out to be a fence line. */
static bool could_be_fence(const char *d, size_t n)
{
	size_t i = 0, m = 0;

	while (i < n && (d[i] == ' ' || d[i] == '\t'))
		i++;
	if (i == n)
		return true;
	if (d[i] != '`' && d[i] != '~')
		return false;
	while (i + m < n && d[i + m] == d[i])
		m++;
	if (i + m == n)
		return true;
	return m >= 3 && (d[i] == '~' || !memchr(d + i + m, '`', n - i - m));
}

/* A whole held line (with its newline): drop it or pass it on. */
static void fence_line_done(struct ui *u, struct sbuf *out)
{
	const char *d = u->fline.d;
	size_t n = u->fline.len, i = 0, m = 0, r;
	char ch;

	while (i < n && (d[i] == ' ' || d[i] == '\t'))
		i++;
	ch = i < n ? d[i] : '\0';
	while ((ch == '`' || ch == '~') && i + m < n && d[i + m] == ch)
		m++;
	r = i + m;
	if (u->fence_in) {
		size_t k = r;
		bool hidden = u->fence_hiding;

		while (k < n && isspace((unsigned char)d[k]))
			k++;
		if (ch == u->fence_ch && m >= u->fence_n && k == n)
			u->fence_in = u->fence_hiding = false;   /* the closing fence */
		if (!hidden)
			sbuf_add(out, d, n);
	} else if (m >= 3 && (ch == '~' || !memchr(d + r, '`', n - r))) {
		u->fence_in = true;
		u->fence_hiding = fence_would_run(u, d + r, n - r);
		u->fence_ch = ch;
		u->fence_n = m;
		if (u->fence_hiding && u->hold_fences && !u->holding) {
			/* from here on the reply is held; its raw form starts with
			 * this line */
			u->holding = true;
			sbuf_add(&u->held_raw, d, n);
		}
		if (!u->fence_hiding)
			sbuf_add(out, d, n);
	} else {
		sbuf_add(out, d, n);
	}
	sbuf_reset(&u->fline);
}

static void fence_filter(struct ui *u, const char *s, size_t n, struct sbuf *out)
{
	if (!u->hide_fences && !u->hold_fences) {
		sbuf_add(out, s, n);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct sbuf *o = u->holding ? &u->held_hidden : out;

		if (u->holding)
			sbuf_addc(&u->held_raw, s[i]);
		if (u->fline_pass) {
			sbuf_addc(o, s[i]);
			u->fline_pass = s[i] != '\n';
			continue;
		}
		sbuf_addc(&u->fline, s[i]);
		if (s[i] == '\n') {
			fence_line_done(u, o);
		} else if (!u->fence_hiding && !could_be_fence(u->fline.d, u->fline.len)) {
			sbuf_add(o, u->fline.d, u->fline.len);
			sbuf_reset(&u->fline);
			u->fline_pass = true;
		}
	}
}

/* The end of a reply: a held partial line is passed on, unless it is in a
 * hidden fence (a reply cut off inside its code). */
static void fence_end(struct ui *u, struct sbuf *out)
{
	struct sbuf *o = u->holding ? &u->held_hidden : out;

	if (!u->fence_hiding)
		sbuf_add(o, u->fline.d ? u->fline.d : "", u->fline.len);
	sbuf_reset(&u->fline);
	u->fence_in = u->fence_hiding = u->fline_pass = false;
}

void ui_model_text(struct ui *u, const char *s, size_t n)
{
	struct sbuf clean = { 0 }, out = { 0 }, shown = { 0 };
	const char *nl;

	wsan_feed(&u->san_model, s, n, &shown);
	fence_filter(u, shown.d ? shown.d : "", shown.len, &clean);
	sbuf_free(&shown);
	if (!clean.len) {
		/* nothing to show yet: the code of a hidden fence is being written */
		if (u->fence_hiding || u->holding)
			ui_spinner_start(u, "writing code");
		goto out;
	}
	ui_spinner_stop(u);
	if (!u->color) {
		/* plain markdown is the text itself: stream it as it comes */
		ui_write(u, clean.d, clean.len);
		goto out;
	}
	nl = clean.len ? memrchr(clean.d, '\n', clean.len) : NULL;
	if (nl) {
		size_t head = (size_t)(nl - clean.d) + 1;

		erase_partial(u);
		md_feed(&u->md, clean.d, head, &out);
		ui_write(u, out.d ? out.d : "", out.len);
		md_feed(&u->md, clean.d + head, clean.len - head, &out);   /* held: no newline */
		ui_write(u, clean.d + head, clean.len - head);
		sbuf_add(&u->partial, clean.d + head, clean.len - head);
	} else {
		md_feed(&u->md, clean.d, clean.len, &out);
		ui_write(u, clean.d, clean.len);
		sbuf_add(&u->partial, clean.d, clean.len);
	}
out:
	sbuf_free(&clean);
	sbuf_free(&out);
}

/* The model's text from clean on to the end of its reply: rendered (or
 * as it is), the renderer flushed, a new line. */
static void model_flush(struct ui *u, const char *clean, size_t len)
{
	struct sbuf out = { 0 };

	if (!u->color) {
		ui_write(u, clean, len);
	} else {
		erase_partial(u);
		md_feed(&u->md, clean, len, &out);
		md_end(&u->md, &out);
		ui_write(u, out.d ? out.d : "", out.len);
	}
	ui_newline(u);
	sbuf_free(&out);
}

void ui_model_end(struct ui *u)
{
	struct sbuf clean = { 0 }, shown = { 0 };

	ui_spinner_stop(u);
	wsan_end(&u->san_model, &shown);
	fence_filter(u, shown.d ? shown.d : "", shown.len, &clean);
	fence_end(u, &clean);
	sbuf_free(&shown);
	if (u->holding) {
		/* what came before the held part was written as it came */
		u->held_pending = true;
		sbuf_free(&clean);
		return;
	}
	model_flush(u, clean.d ? clean.d : "", clean.len);
	sbuf_free(&clean);
}

void ui_model_release(struct ui *u, bool ran)
{
	struct sbuf *text = ran ? &u->held_hidden : &u->held_raw;

	if (!u->holding && !u->held_pending)
		return;
	ui_spinner_stop(u);
	u->holding = u->held_pending = false;
	model_flush(u, text->d ? text->d : "", text->len);
	sbuf_free(&u->held_raw);
	sbuf_free(&u->held_hidden);
}

/* ---- code and output ---- */

void ui_code_box(struct ui *u, const char *lang, const char *profile, const char *code)
{
	_cleanup_free_ char *l = wsan_str(lang ? lang : "?", strlen(lang ? lang : "?"));
	_cleanup_free_ char *c = wsan_str(code ? code : "", strlen(code ? code : ""));
	struct sbuf out = { 0 };
	const char *dim = u->color ? MD_GREY : "", *rst = u->color ? MD_RESET : "";
	const char *p = c;

	ui_spinner_stop(u);
	ui_newline(u);
	sbuf_addf(&out, "%s╭─%s %s%s%s %s· runs in a jail, sandbox profile: %s%s\n", dim, rst,
	          u->color ? MD_BOLD : "", l, rst, dim, profile ? profile : "?", rst);
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		sbuf_addf(&out, "%s│%s ", dim, rst);
		md_code_line(l, p, n, u->color, &out);
		sbuf_addc(&out, '\n');
		p += n + (e ? 1 : 0);
	}
	sbuf_addf(&out, "%s╰─%s\n", dim, rst);
	ui_write(u, out.d, out.len);
	sbuf_free(&out);
}

void ui_output(struct ui *u, int stream, const char *s, size_t n)
{
	if (!n)
		return;
	ui_spinner_stop(u);
	if (u->color && stream == WSTREAM_STDERR)
		wr(u, MD_RED);
	ui_write(u, s, n);
	if (u->color && stream == WSTREAM_STDERR) {
		bool bol = u->at_bol;

		wr(u, MD_RESET);
		u->at_bol = bol;
	}
}

void ui_newline(struct ui *u)
{
	if (!u->at_bol)
		wr(u, "\n");
}

static void vline(struct ui *u, int fd, const char *color, const char *prefix, const char *fmt,
                  va_list ap)
{
	char *raw = NULL, *clean;
	struct sbuf out = { 0 };
	int r = vasprintf(&raw, fmt, ap);

	if (r < 0)
		return;
	if (u->dirs) {
		char *shown = bdirs_shown(u->dirs, raw);

		free(raw);
		raw = shown;
		r = (int)strlen(raw);
	}
	clean = wsan_str(raw, (size_t)r);
	free(raw);
	ui_spinner_stop(u);
	ui_newline(u);
	if (color && u->color)
		sbuf_adds(&out, color);
	sbuf_adds(&out, prefix);
	sbuf_adds(&out, clean);
	if (color && u->color)
		sbuf_adds(&out, MD_RESET);
	sbuf_addc(&out, '\n');
	if (fd == STDOUT_FILENO)
		ui_write(u, out.d, out.len);
	else
		(void)write_all(fd, out.d, out.len);
	sbuf_free(&out);
	free(clean);
}

#define VLINE(fd, color, prefix)                         \
	do {                                             \
		va_list ap;                              \
		va_start(ap, fmt);                       \
		vline(u, fd, color, prefix, fmt, ap);    \
		va_end(ap);                              \
	} while (0)

void ui_note(struct ui *u, const char *fmt, ...) { VLINE(STDOUT_FILENO, MD_GREY, ""); }
void ui_good(struct ui *u, const char *fmt, ...) { VLINE(STDOUT_FILENO, MD_GREEN, ""); }
void ui_bad(struct ui *u, const char *fmt, ...) { VLINE(STDOUT_FILENO, MD_RED, ""); }
void ui_bold(struct ui *u, const char *fmt, ...) { VLINE(STDOUT_FILENO, MD_BOLD, ""); }
void ui_error(struct ui *u, const char *fmt, ...)
{
	bool c = u->color;

	u->color = c && isatty(STDERR_FILENO);
	VLINE(STDERR_FILENO, MD_RED, "warden: ");
	u->color = c;
}
