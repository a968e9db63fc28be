/* Private to supervisor/run.c and run_report.c: one `warden run`. */
#ifndef WARDEN_RUN_INT_H
#define WARDEN_RUN_INT_H

#include <json-c/json.h>
#include <limits.h>
#include <signal.h>

#include "jailrun.h"
#include "loop.h"
#include "notify.h"
#include "run.h"
#include "warden/protect.h"
#include "warden/sanitize.h"

#define RELAY_BUF (64 * 1024)

struct run {
	struct wloop loop;         /* first: run_of() */
	struct wsrc out, err;      /* jail's stdout/stderr (read ends) */
	int out_fd, err_fd;        /* where they go */
	/* A stream whose destination is a terminal goes through the terminal
	 * sanitizer (include/warden/sanitize.h), unless --raw: the jail must
	 * not retitle the window, move the cursor or set the clipboard.
	 * NULL: relayed byte for byte (a pipe, a file, --raw). */
	struct wsan *san_out, *san_err;
	struct wsan san[2];
	struct sbuf san_buf;
	struct wsrc in_src, in_dst; /* warden's stdin -> jail's stdin pipe */
	bool in_src_pollable;
	char inbuf[RELAY_BUF];
	size_t in_len, in_off;
	struct wsrc pid, wall, cpu, notify_src, sig;
	struct wnotify notify;
	uint64_t output, output_limit;
	bool exited, out_closed;
	bool no_splice[2];         /* stdout, stderr: splice refused, read/write */
	int sigints;
	int stop_signal;           /* the signal that made warden kill the jail, or 0 */
	uint64_t cpu_limit_ns;
	char buf[RELAY_BUF];

	/* the run's steps (wrun) */
	const struct wrun_opts *o;
	struct wpolicy *pol;
	struct waudit *audit;
	struct jailrun jr;
	char ws[PATH_MAX];
	const char *home;
	char **env;
	struct wstrv hides;        /* warden's own files in the workspace (sv_own_hides) */
	struct wprotect_reg reg;   /* placeholders (warden/protect.h) */
	int out_p[2], err_p[2], in_p[2];
	/* stdout handed to the program directly (direct_stdout): a fresh
	 * write description of the caller's pipe, and its size to restore */
	int direct_fd;
	int direct_pipe_size;
	sigset_t mask, oldmask;
	bool sig_blocked;
	uint64_t t0;
};

/* run_report.c: the summary (--json, the audit's run_end, stderr), and the
 * note a run in the caller's home gives at its start */
void run_report(struct run *r, struct wrun_result *res);
void report_protect(const struct run *r);
json_object *strv_json(char *const *v);

#endif
