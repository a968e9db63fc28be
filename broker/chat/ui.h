/* The terminal side of warden chat: line editing (libedit) with history,
 * the spinner, model text rendered as markdown, code boxes, the approval
 * prompt and live program output.  Every byte of model or program text
 * is sanitized (sanitize.h) before it is written. */
#ifndef BROKER_UI_H
#define BROKER_UI_H

#include <histedit.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <time.h>

#include "markdown.h"
#include "core/sanitize.h"

/* Set by the SIGINT handler (ui_signals); chat passes it to llm_complete
 * as the cancel flag and to bclient_run as the interrupt flag. */
extern volatile sig_atomic_t ui_sigint;
/* How many SIGINTs arrived so far (never cleared). */
extern volatile sig_atomic_t ui_sigint_count;

struct bdirs;

struct ui {
	bool tty_in, tty_out, color;
	/* the broker's directories: every line (ui_note, ui_error, ...) names
	 * them as the person knows them, never as /proc/self/fd/N (may be NULL) */
	const struct bdirs *dirs;
	EditLine *el;
	History *hist;
	char *histfile;
	const char *prompt;
	bool int_empty;            /* the last Ctrl-C came on an empty line */
	/* model text */
	struct wsan san_model;
	struct md md;
	struct sbuf partial;       /* the unrendered line shown so far */
	bool at_bol;               /* the cursor is at the start of a line */
	int out_stream;            /* the stream the last output came from */
	/* --no-tools: fences that will run are held back from the model's
	 * text, because their code box shows them (ui_model_text) */
	bool hide_fences;
	/* tools on: a reply may still bring its code as fences, and whether
	 * they run is known only at its end (no tool call).  From the first
	 * fence that would run on, the rest of the reply is held, both as it
	 * came (held_raw) and without such fences (held_hidden), until
	 * ui_model_release says which to show. */
	bool hold_fences;
	bool holding;              /* a fence that would run was seen */
	bool held_pending;         /* the reply ended while holding */
	struct sbuf held_raw, held_hidden;
	/* which fences run, from the info string after the ``` (NULL:
	 * llm_fence_runs, the --no-tools rule) */
	bool (*fence_runs)(void *ctx, const char *info, size_t n);
	void *fence_ctx;
	bool fence_in;             /* inside a fence (hidden or shown) */
	bool fence_hiding;         /* inside a fence that runs: not shown */
	char fence_ch;
	size_t fence_n;
	struct sbuf fline;         /* the held start of the current line */
	bool fline_pass;           /* the current line was passed on already */
	/* the spinner */
	pthread_t spin_thr;
	pthread_mutex_t spin_mu;
	pthread_cond_t spin_cv;
	bool spinning, spin_stop;
	char spin_label[80];
	struct timespec spin_t0;
};

/* SIGINT (no SA_RESTART) sets ui_sigint. */
void ui_signals(void);
/* Before confinement (chat_preload): start libedit while terminfo and
 * ~/.editrc can still be read. */
void ui_preinit(void);
/* data_dir: where the line-editing history lives (NULL: none). */
void ui_init(struct ui *u, const char *data_dir);
void ui_free(struct ui *u);

/* Read a line.  1: *line (malloc'd, no newline); 0: end of input (Ctrl-D);
 * 2: Ctrl-C (u->int_empty says whether the line was empty).
 * Without a terminal on stdin, reads a plain line. */
int ui_readline(struct ui *u, const char *prompt, bool history, char **line);

void ui_spinner_start(struct ui *u, const char *label);
void ui_spinner_stop(struct ui *u);
/* A running spinner's new label (nothing when none runs). */
void ui_spinner_label(struct ui *u, const char *label);

/* Raw model text as it streams: sanitized, rendered, written. */
void ui_model_text(struct ui *u, const char *s, size_t n);
/* The model's reply ended (flushes a partial line; with hold_fences,
 * what is held waits for ui_model_release). */
void ui_model_end(struct ui *u);
/* hold_fences: the held rest of the reply is shown, without the fences
 * that would run when they did (their code boxes show them), else as the
 * model wrote it.  Nothing held: nothing happens. */
void ui_model_release(struct ui *u, bool ran);

/* A code block before it runs: header with the language and the sandbox
 * profile, the code (sanitized, coloured), a footer. */
void ui_code_box(struct ui *u, const char *lang, const char *profile, const char *code);
/* Sanitized program output. */
void ui_output(struct ui *u, int stream, const char *s, size_t n);
/* Make sure the next thing starts on a fresh line. */
void ui_newline(struct ui *u);

/* One line on stdout: dim note / green ok / red problem / bold. */
void ui_note(struct ui *u, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ui_good(struct ui *u, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ui_bad(struct ui *u, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ui_bold(struct ui *u, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "warden: ..." on stderr (red on a terminal). */
void ui_error(struct ui *u, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Write s as is (already safe) to stdout. */
void ui_write(struct ui *u, const char *s, size_t n);

#endif
