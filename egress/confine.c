/* The egress process confines itself (confine.h) after it has read what it
 * needs from files (/etc/resolv.conf and /dev/urandom through c-ares,
 * /etc/hosts into its snapshot) and before it reads a byte from a jail.
 * Fixed order, seccomp last:
 *
 *   1. no_new_privs: nothing could gain privileges (and Landlock and
 *      seccomp need it without CAP_SYS_ADMIN);
 *   2. capabilities: none held, read back (the supervisor switched it to an
 *      ordinary uid and, as root, emptied the bounding set already);
 *   3. Landlock, every file right handled and none granted: no file or
 *      directory can be opened, made or changed, whatever seccomp allows;
 *      on ABI 6+ no abstract unix socket and no signal outside its domain
 *      (as root the broker runs under the same uid; its own domain keeps it
 *      from signalling this process, and this one from signalling it);
 *   4. seccomp, an allowlist (egress_calls[]); anything else kills the
 *      process (SECCOMP_RET_KILL_PROCESS): a call the proxy never makes is
 *      a compromised proxy, and the supervisor audits the death and starts
 *      a fresh one.  open, openat, execve, ptrace, bind, listen, clone and
 *      fork are not on the list.
 * A kernel without Landlock is said once (LOG) and the process goes on:
 * seccomp has no call that opens a file. */
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "confine.h"
#include "warden/landlock.h"
#include "warden/util.h"

/* Every call the proxy makes once confined, found by running
 * tests/cli/proxy_engine.bats (its proxyd confines itself the same way:
 * --confine), egress.bats and net.bats with a build whose filter logs what
 * it would kill (make EGRESS_SECCOMP_DEFAULT=SCMP_ACT_LOG: each call then
 * appears in the kernel log as "audit: type=1326 ... comm=\"warden-egress\"
 * ... syscall=N"), in the normal and the ASan build.  Arguments are checked
 * where a rule can (below). */
static const char *const egress_calls[] = {
	/* the loop and its timers */
	"epoll_wait", "epoll_pwait", "epoll_ctl", "timerfd_create", "timerfd_settime", "read",
	/* connections: the jails' listeners, the upstream, DNS, the supervisor;
	 * c-ares: getsockname when it sorts a lookup's addresses (RFC 6724:
	 * a UDP socket connected to each, its source read back), writev for
	 * its queries over TCP when a UDP answer came truncated */
	"accept4", "connect", "getsockopt", "getsockname", "shutdown", "recvfrom", "sendto",
	"recvmsg", "sendmsg", "write", "writev", "close",
	/* the relay */
	"splice", "pipe2",
	/* memory (malloc) */
	"brk", "mmap", "munmap", "madvise",
	/* time, the end, and abort() (its tgkill only to this process: below) */
	"clock_gettime", "exit", "exit_group", "rt_sigreturn", "rt_sigprocmask", "getpid",
	"gettid",
};

#ifndef EGRESS_SECCOMP_DEFAULT
#define EGRESS_SECCOMP_DEFAULT SCMP_ACT_KILL_PROCESS
#endif

static int rule(scmp_filter_ctx ctx, int nr, unsigned n, const struct scmp_arg_cmp *cmp,
                const char *what, struct werr *err)
{
	int rc = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, n, cmp);

	return rc < 0 ? werr_set(err, -rc, "seccomp: allowing %s", what) : 0;
}

static int confine_seccomp(struct werr *err)
{
	/* the 32-bit arguments compared under a 32-bit mask: high bits do not help */
	const struct scmp_arg_cmp inet = { 0, SCMP_CMP_MASKED_EQ, 0xffffffffULL, AF_INET };
	const struct scmp_arg_cmp inet6 = { 0, SCMP_CMP_MASKED_EQ, 0xffffffffULL, AF_INET6 };
	const struct scmp_arg_cmp nl[] = { { 0, SCMP_CMP_MASKED_EQ, 0xffffffffULL, AF_NETLINK },
	                                   { 2, SCMP_CMP_MASKED_EQ, 0xffffffffULL, NETLINK_ROUTE } };
	/* fcntl: what the loop, the relay and c-ares do with their own fds */
	static const int fcntl_cmds[] = { F_GETFL, F_SETFL, F_GETFD, F_SETFD, F_SETPIPE_SZ,
	                                  F_GETPIPE_SZ };
	/* setsockopt only TCP_NODELAY: c-ares sets it on its TCP socket (a DNS
	 * answer too long for UDP); without it the first such answer killed
	 * the process and every relay of every jail */
	const struct scmp_arg_cmp nodelay[] = {
		{ 1, SCMP_CMP_MASKED_EQ, 0xffffffffULL, IPPROTO_TCP },
		{ 2, SCMP_CMP_MASKED_EQ, 0xffffffffULL, TCP_NODELAY } };
	/* mprotect never makes memory executable */
	const struct scmp_arg_cmp noexec = { 2, SCMP_CMP_MASKED_EQ, PROT_EXEC, 0 };
	/* a signal only to this very process (abort) */
	const struct scmp_arg_cmp self = { 0, SCMP_CMP_EQ, (uint64_t)getpid(), 0 };
	scmp_filter_ctx ctx = seccomp_init(EGRESS_SECCOMP_DEFAULT);
	int r = -1, rc;
	size_t i;

	if (!ctx)
		return werr_set(err, ENOMEM, "seccomp: creating the filter");
	if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)) < 0 ||
	    (rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2)) < 0) {
		werr_set(err, -rc, "seccomp: the filter's attributes");
		goto out;
	}
	for (i = 0; i < ARRAY_SIZE(egress_calls); i++) {
		int nr = seccomp_syscall_resolve_name(egress_calls[i]);
		if (nr == __NR_SCMP_ERROR) {
			werr_set(err, 0, "seccomp: libseccomp does not know %s: update libseccomp",
			         egress_calls[i]);
			goto out;
		}
		if (rule(ctx, nr, 0, NULL, egress_calls[i], err) < 0)
			goto out;
	}
	if (rule(ctx, SCMP_SYS(socket), 1, &inet, "socket(AF_INET)", err) < 0 ||
	    rule(ctx, SCMP_SYS(socket), 1, &inet6, "socket(AF_INET6)", err) < 0 ||
	    rule(ctx, SCMP_SYS(socket), 2, nl, "socket(AF_NETLINK, NETLINK_ROUTE)", err) < 0 ||
	    rule(ctx, SCMP_SYS(setsockopt), 2, nodelay, "setsockopt(TCP_NODELAY)", err) < 0 ||
	    rule(ctx, SCMP_SYS(mprotect), 1, &noexec, "mprotect", err) < 0 ||
	    rule(ctx, SCMP_SYS(tgkill), 1, &self, "tgkill", err) < 0)
		goto out;
	for (i = 0; i < ARRAY_SIZE(fcntl_cmds); i++) {
		struct scmp_arg_cmp cmd = { 1, SCMP_CMP_MASKED_EQ, 0xffffffffULL,
		                            (uint64_t)fcntl_cmds[i] };
		if (rule(ctx, SCMP_SYS(fcntl), 1, &cmd, "fcntl", err) < 0)
			goto out;
	}
	rc = seccomp_load(ctx);
	if (rc < 0) {
		werr_set(err, -rc, "seccomp: loading the filter");
		goto out;
	}
	r = 0;
out:
	seccomp_release(ctx);
	return r;
}

/* No capability in any set this process can use, read back. */
static int confine_caps(struct werr *err)
{
	cap_t empty = cap_init(), now;
	cap_flag_value_t v;
	int bad = 0;

	if (!empty)
		return werr_set(err, errno, "cap_init");
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL) {
		cap_free(empty);
		return werr_set(err, errno, "clearing the ambient capabilities");
	}
	if (cap_set_proc(empty) < 0) {
		cap_free(empty);
		return werr_set(err, errno, "dropping capabilities");
	}
	cap_free(empty);
	if (!(now = cap_get_proc()))
		return werr_set(err, errno, "cap_get_proc");
	for (cap_value_t c = 0; c < (cap_value_t)cap_max_bits(); c++) {
		cap_get_flag(now, c, CAP_EFFECTIVE, &v);
		bad |= v == CAP_SET;
		cap_get_flag(now, c, CAP_PERMITTED, &v);
		bad |= v == CAP_SET;
		cap_get_flag(now, c, CAP_INHERITABLE, &v);
		bad |= v == CAP_SET;
	}
	cap_free(now);
	return bad ? werr_set(err, 0, "capabilities are still held after dropping them") : 0;
}

static int confine_landlock(void (*warn)(const char *msg), struct werr *err)
{
	struct wll_ruleset rs;
	int abi = wll_abi(), r;

	if (abi < 0)
		return werr_set(err, errno, "landlock: probing the ABI");
	if (abi == 0) {
		if (warn)
			warn("this kernel has no Landlock (or it is disabled): the egress proxy's file "
			     "access rests on its seccomp filter alone (enable CONFIG_SECURITY_LANDLOCK "
			     "and lsm=landlock)");
		return 0;
	}
	/* every file right handled, no rule: nothing on the file system */
	if (wll_create(&rs, abi, 0, err) < 0)
		return -1;
	r = wll_restrict(&rs, "the egress proxy", err);
	wll_close(&rs);
	return r;
}

int econfine(void (*warn)(const char *msg), struct werr *err)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return werr_set(err, errno, "setting no_new_privs");
	if (confine_caps(err) < 0 || confine_landlock(warn, err) < 0 || confine_seccomp(err) < 0)
		return werr_wrap(err, "confining the egress proxy");
	return 0;
}
