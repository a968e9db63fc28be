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

#include <seccomp.h>
#include <stdbool.h>

#include "warden/err.h"
#include "warden/forbidden.h"
#include "warden/policy.h"

/* Build (not load) the filter.  *out is NULL on entry, set on success. */
int wfilter_build(const struct wpolicy *p, scmp_filter_ctx *out, struct werr *err);

/* In the jail child, last step before execve: load it.  When the filter
 * uses notification, *notify_fd receives the listener fd (else -1). */
int wfilter_load(scmp_filter_ctx ctx, int *notify_fd, struct werr *err);

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

/* The built-in allowlist (names), for `policy show` and tests. */
extern const char *const wfilter_allowlist[];
extern const size_t wfilter_allowlist_n;

#endif
