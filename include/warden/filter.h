/* The jail's syscall filter, built with libseccomp from the policy.
 *
 * An allowlist: what general-purpose programs need (Docker's default
 * profile is the reference).  Everything else is denied:
 *   deny_action "errno" + audit  -> SCMP_ACT_NOTIFY; the supervisor answers
 *                                   each notification with EPERM and audits it
 *   deny_action "errno", no audit -> SCMP_ACT_ERRNO(EPERM)
 *   deny_action "kill"            -> SCMP_ACT_KILL_PROCESS
 * Special cases: clone3 -> ENOSYS (libc falls back to clone, whose flags we
 * can inspect: namespace flags denied); socket() only for AF_UNIX, AF_INET,
 * AF_INET6, AF_NETLINK; foreign ABIs (i386, x32) kill the process. */
#ifndef WARDEN_FILTER_H
#define WARDEN_FILTER_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "warden/err.h"
#include "warden/forbidden.h"
#include "warden/policy.h"

/* Build (not load) the filter.  *out is NULL on entry, set on success. */
int wfilter_build(const struct wpolicy *p, scmp_filter_ctx *out, struct werr *err);

/* In the jail child, last step before execve: load it.  When the filter
 * uses notification, *notify_fd receives the listener fd (else -1).
 * learn: a filter of wfilter_build_learn (its NOTIFY rules ask for a
 * listener whatever the default action). */
int wfilter_load(scmp_filter_ctx ctx, int *notify_fd, struct werr *err);
int wfilter_load_as(scmp_filter_ctx ctx, bool learn, int *notify_fd, struct werr *err);

/* --- learning (docs/learn.md, supervisor/learn.c) ------------------------
 * A learning filter is the policy's own filter, except that the calls of
 * the learn set (wfilter_learn_calls: the calls that name a path or a
 * network destination) notify where the policy's filter allows them,
 * under the same argument conditions; fstat (newfstatat/statx with
 * AT_EMPTY_PATH) stays allowed.  So for every call it answers either what
 * the policy's filter answers, or NOTIFY where that one answers ALLOW; the
 * supervisor decides each notification by running the policy's own
 * program (wfilter_eval) on the same numbers, never by what a learner
 * says.  Needs user notification: an error without it. */
int wfilter_build_learn(const struct wpolicy *p, scmp_filter_ctx *out, struct werr *err);
/* The execve of the program by the jail's init (jail/exec.c) carries this
 * in its fourth argument, which execve ignores, and a learning filter
 * allows it without a notification: it comes from init's memory, which is
 * not dumpable, before the program runs.  A program that forges it hides
 * an exec from learning, and nothing else: the policy's filter allows
 * execve whatever its arguments. */
#define WFILTER_EXEC_MARK 0x77617264656e0001ULL
/* The learn set, and where each call names its paths: path1/path2 are
 * argument indexes (-1: none), dir1/dir2 the dirfd argument each is
 * relative to (-1: the working directory). */
struct wfilter_learn_call {
	const char *name;
	int8_t dir1, path1, dir2, path2;
};
extern const struct wfilter_learn_call wfilter_learn_calls[];
extern const size_t wfilter_learn_calls_n;
/* name / nr (x86_64) is in the learn set; its row, or NULL */
bool wfilter_learn_name(const char *name);
bool wfilter_learn_nr(int nr);
const struct wfilter_learn_call *wfilter_learn_call(int nr);
/* The kernel has seccomp user notification (5.0). */
bool wfilter_kernel_notify(void);

/* --- filters compiled at build time -------------------------------------
 * Building and compiling the filter with libseccomp costs ~5 ms per run, so
 * the policies without allow_extra/deny_extra (every built-in profile) use
 * a program compiled when warden was built: tools/gen-filters.c runs
 * wfilter_build + wfilter_export for each deny action and writes
 * build/filters.c.  The program is libseccomp's own output, byte for byte
 * (test_filter checks it against a runtime build). */
#include <linux/filter.h>

struct wfilter_prog {
	int deny_action;            /* enum wdeny_action */
	bool audit;                 /* only meaningful for WDENY_ERRNO */
	bool notify;                /* load with SECCOMP_FILTER_FLAG_NEW_LISTENER */
	const struct sock_filter *insns;
	unsigned short len;
};
extern const struct wfilter_prog wfilter_prebuilt[];
extern const size_t wfilter_prebuilt_n;

/* The prebuilt program for this policy, or NULL when it needs a runtime
 * build (allow_extra/deny_extra, or a kernel without user notification). */
const struct wfilter_prog *wfilter_find_prebuilt(const struct wpolicy *p);
/* In the jail child: load a prebuilt program (no_new_privs already set). */
int wfilter_load_prog(const struct wfilter_prog *prog, int *notify_fd, struct werr *err);
/* Compile a built filter to BPF (malloc'd instructions). */
int wfilter_export(scmp_filter_ctx ctx, struct sock_filter **insns, size_t *len,
                   struct werr *err);

/* The action (SECCOMP_RET_*, with its data) a seccomp program returns for
 * d: a classic-BPF interpreter with the kernel's checks (aligned loads
 * inside struct seccomp_data, forward jumps inside the program, a known
 * opcode); a program that breaks one, or falls off its end, answers
 * SECCOMP_RET_KILL_PROCESS, which is never an ALLOW (jail/filter_eval.c). */
uint32_t wfilter_eval(const struct sock_filter *insns, size_t len, const struct seccomp_data *d);
/* The program a run of policy p loads (prebuilt, or built and exported
 * now), for wfilter_eval: *insns points into the binary (*owned NULL) or
 * to a malloc'd copy (*owned the same pointer, the caller frees it). */
int wfilter_policy_prog(const struct wpolicy *p, const struct sock_filter **insns, size_t *len,
                        struct sock_filter **owned, struct werr *err);

/* The built-in allowlist (names), for `policy show` and tests. */
extern const char *const wfilter_allowlist[];
extern const size_t wfilter_allowlist_n;

#endif
