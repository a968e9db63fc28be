/* Private to supervisor/run.c and run_report.c: one `warden run`. */
#ifndef WARDEN_RUN_INT_H
#define WARDEN_RUN_INT_H

#include <json-c/json.h>
#include <limits.h>
#include <signal.h>

#include "jailrun.h"
#include "warden/loop.h"
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

	/* --learn (supervisor/run_learn.c): NULL in every other run */
	struct wlearn *learn;
	struct wsrc learn_sync;    /* the jail's reports while it starts */
	int learn_profile_net;     /* the profile's network mode, before --net */
	size_t learn_allow0;       /* its allow entries, before --allow */
	const char *learn_session;
	int learn_start_rc;        /* the jail's start on the loop: 1 started, -1 failed */
	struct werr learn_err;
};

/* run_learn.c: the steps of a learning run, each a no-op (0) without
 * --learn: before --net/--allow are applied, after the filter is chosen,
 * instead of jr_start (the jail is started on the loop, which answers
 * its notifications meanwhile), after the program was judged, and at
 * the end */
int run_learn_policy(struct run *r, struct werr *err);
int run_learn_prepare(struct run *r, struct jail_spec *spec, struct werr *err);
int run_learn_start(struct run *r, const struct jail_spec *spec, struct wrun_result *res,
                    struct werr *err);
void run_learn_end(struct run *r, struct wrun_result *res);
void run_learn_free(struct run *r);

/* run_report.c: the summary (--json, the audit's run_end, stderr), and the
 * note a run in the caller's home gives at its start */
void run_report(struct run *r, struct wrun_result *res);
void report_protect(const struct run *r);
json_object *strv_json(char *const *v);

#endif
