/* The supervisor's side of learning (docs/learn.md; the learner's side and
 * the wire are include/warden/learn.h).  Private to supervisor/.
 *
 * What the supervisor guarantees, whatever the learner says or does
 * (SECURITY.md G220-G222):
 *   - a notification is answered CONTINUE only when the policy's own
 *     program (the one a normal run loads) ALLOWs those very numbers and
 *     the call is of the learn set; anything else is denied as in every
 *     run: EPERM, counted, audited;
 *   - it never reads the jail's memory: it opens /proc/TID/mem read-only
 *     for the learner after the kernel said the notification is pending
 *     (so TID is still the caller), and forwards numbers and the kernel's
 *     names of directories (readlink), never parsing either;
 *   - a learner that dies, sends what was not asked, or does not answer
 *     within WLEARN_ANSWER_MS is killed; every call it held, and every
 *     later one, is continued unexamined and the learning reported
 *     incomplete: the jail never hangs on it. */
#ifndef WARDEN_SV_LEARN_H
#define WARDEN_SV_LEARN_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "warden/loop.h"
#include "notify.h"
#include "warden/err.h"
#include "warden/policy.h"

#define WLEARN_ANSWER_MS 10000   /* a learner silent this long is killed */
#define WLEARN_END_MS 10000      /* ... and this long to report at the end */
#define WLEARN_PENDING_MAX 4096  /* calls forwarded and not yet answered */

struct wlearn_conf {
	const char *profile;          /* what the learned policy extends */
	int profile_net;              /* its network mode (enum wnet_mode) */
	int net;                      /* the run's */
	char *const *allow;           /* --allow entries the profile lacks */
	size_t n_allow;
	const char *name, *argv0, *home, *workspace;
	const char *const *include;
	size_t n_include;
	bool json;                    /* the structured list too */
	bool session;                 /* a session's jail: a report per block
	                               * (wlearn_report), nothing on stderr */
	uid_t uid;                    /* the jail's host ids: the learner's */
	gid_t gid;
};

struct wlearn_pending {
	uint64_t id;
	uint64_t since_ms;
};

struct wlearn_out {
	const char *path;             /* --write / --refusals FILE, "-", or NULL */
	int fd;
	bool created;                 /* made by this run: removed unless written */
};

struct wlearn {
	struct wloop *loop;
	struct wsrc sock;             /* to the learner; fd -1 once it is gone */
	struct wsrc timer;            /* the answer deadline */
	pid_t pid;
	int pidfd;
	int policy_fd, json_fd;       /* memfds the learner writes into */
	int notify_fd;                /* the jail's listener (struct wnotify's) */
	const struct sock_filter *prog;   /* the policy's own program */
	size_t prog_len;
	struct sock_filter *prog_owned;
	struct wlearn_pending *pend;
	size_t n_pend, cap_pend;
	uint64_t forwarded, unexamined, continued;
	char why[256];                /* why learning is incomplete, or "" */
	bool root_sent;
	pid_t init_pid;
	struct seccomp_notif_resp *resp;
	struct wlearn_out out[2];     /* the policy, the JSON list */
	/* a session's block report (wlearn_report): on_report is called once
	 * per report asked, with the JSON's length, or ok false when the
	 * learner was given up meanwhile.  It may free L (wlearn_free): L's
	 * memory must stay until the loop's batch is over (a session's jail
	 * is freed after it, supervisor/sjail.c) */
	void (*on_report)(void *ctx, bool ok, uint64_t len);
	void *report_ctx;
	bool reporting;
	uint64_t report_since_ms;
};

/* The policy's own program, for every decision (before the jail starts). */
int wlearn_init(struct wlearn *L, const struct wpolicy *pol, struct werr *err);
/* Start the learner on loop l (once the jail's host ids are known). */
int wlearn_start(struct wlearn *L, struct wloop *l, const struct wlearn_conf *c,
                 struct werr *err);
/* Its half: sock (the learner's end of the pair is elsewhere) and the
 * deadline's timer on l.  wlearn_start's; tests/unit/test_learn_sv.c
 * plays a learner through it. */
int wlearn_attach(struct wlearn *L, struct wloop *l, int sock, struct werr *err);
/* The jail reported READY: its listener, to answer on, and its init
 * (warden's own code, whose calls are not the program's). */
void wlearn_ready(struct wlearn *L, pid_t init_pid, int notify_fd);
/* struct wnotify's divert hook (ctx: the struct wlearn) */
bool wlearn_divert(void *ctx, struct wnotify *w);
/* waudit_tap's hook: the proxy's refusals (ctx: the struct wlearn) */
void wlearn_audit_tap(void *ctx, const char *event, json_object *rec);
/* Where the policy (write_path, "-" for stdout) and the JSON list go:
 * opened now, before the run, so a bad path fails first. */
int wlearn_outputs(struct wlearn *L, const char *write_path, const char *json_path,
                   struct werr *err);
/* A session's jail: a block starts (what was recorded before is
 * forgotten), or ended (its list is asked for: on_report follows, within
 * WLEARN_ANSWER_MS or as a give-up).  -1: the learner is gone (L->why
 * says why), nothing will follow. */
int wlearn_reset(struct wlearn *L);
int wlearn_report(struct wlearn *L, uint32_t block);
/* The report's JSON, as the learner wrote it, at most cap - 1 bytes and
 * cut at a NUL: never parsed here (G222). */
size_t wlearn_report_text(const struct wlearn *L, uint64_t len, char *out, size_t cap);
bool wlearn_alive(const struct wlearn *L);

/* The run is over: the denied calls, the end; wait for the learner's
 * report, then write the outputs, unless learning is incomplete (a file
 * this run made is then removed).  Says on stderr what it did.  0, or -1
 * when learning failed (err). */
int wlearn_finish(struct wlearn *L, const struct wnotify *n, struct werr *err);
void wlearn_free(struct wlearn *L);

#endif
