/* The syscalls no confined warden process may make: the one table
 * (common/forbidden.c), with the reason a person reads for each. */
#ifndef WARDEN_FORBIDDEN_H
#define WARDEN_FORBIDDEN_H

#include <stdbool.h>
#include <stddef.h>

/* The syscalls the filter can never allow, whatever the policy's allow_extra
 * says (ptrace, bpf, kexec_*, the mount API, ...): one table with the reason
 * of each (common/forbidden.c).  None gets an ALLOW rule; those marked enosys
 * are answered ENOSYS so libc falls back to a call the filter can check
 * (clone3 -> clone, openat2 -> openat).  The policy parser and
 * wfilter_build reject allow_extra entries naming one, with its reason.
 * The broker's seccomp filter (broker/core/confine.c) denies every one of
 * them too, and a few more it alone never needs (execve: it runs no
 * program). */
struct wfilter_forbidden {
	const char *name;
	const char *why;            /* reads after "can never be allowed: " */
	bool enosys;                /* answered ERRNO(ENOSYS), not the deny action */
};
extern const struct wfilter_forbidden wfilter_forbidden[];
extern const size_t wfilter_forbidden_n;

/* The reason the call is forbidden, or NULL when it is not (or name is NULL). */
const char *wfilter_forbidden_why(const char *name);
bool wfilter_is_forbidden(const char *name);

#endif
