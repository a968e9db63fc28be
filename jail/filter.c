/* The jail's syscall filter: an allowlist built with libseccomp from the
 * policy (contract and actions: include/warden/filter.h).
 *
 * Shape of the filter
 *   default action    the policy's deny action: NOTIFY (errno + audit),
 *                     ERRNO(EPERM) (errno, no audit) or KILL_PROCESS (kill)
 *   bad architecture  KILL_PROCESS: only x86_64 is in the filter, so i386
 *                     (int $0x80) and x32 (nr | 0x40000000) calls die
 *   ALLOW rules       wfilter_allowlist[], some with argument conditions
 *   clone3            ERRNO(ENOSYS): glibc falls back to clone(), whose
 *                     flags a filter can read (clone3's live in memory)
 *   openat2           ERRNO(ENOSYS) likewise: its mode lives in memory, and
 *                     callers fall back to openat, whose mode is checked
 *   modes             chmod, fchmod, fchmodat(2), open/openat/creat when
 *                     creating, mkdir(at), mknod(at): ALLOW only without
 *                     S_ISUID and S_ISGID (modes_rules[] below)
 *   learning          wfilter_build_learn: the same rules, but those of the
 *                     learn set (jail/filter_eval.c) NOTIFY instead of
 *                     ALLOW; normal runs never build it
 *
 * Why the deny action is the *default* action, and the denied-with-a-reason
 * syscalls (wfilter_forbidden[]) get no rule of their own: libseccomp refuses a rule
 * whose action equals the default (-EACCES), and it is not needed: anything
 * without an ALLOW rule reaches the default, so ptrace & co. are denied and
 * audited like every other unlisted call.  libseccomp 2.5.4 accepts
 * SCMP_ACT_NOTIFY as the default action: seccomp_load() then asks the kernel
 * for a listener (SECCOMP_FILTER_FLAG_NEW_LISTENER) and seccomp_notify_fd()
 * returns it.  wfilter_forbidden[] (policy/forbidden.c) is the one list of
 * calls the policy may never add, with the reasons, and marks the ones
 * answered ENOSYS (clone3, openat2).
 *
 * Argument conditions are all ALLOW rules (what does not match falls to the
 * default action, so it is denied and audited).  Arguments the kernel reads
 * as 32-bit (int, unsigned int) are compared under a 0xffffffff mask: a
 * 64-bit compare could be dodged with junk in the upper half (the flatpak
 * TIOCSTI bug, CVE-2019-10063), while for an ALLOW rule ignoring bits the
 * kernel ignores is exact.  libseccomp cannot combine an unconditional ALLOW
 * with a conditional deny on the same syscall (the ALLOW silently wins), so
 * "ioctl except TIOCSTI/TIOCLINUX" is written as a set of ALLOW rules that
 * covers every other 32-bit command (allow_arg32_except()).
 *
 * Smaller decisions
 *   - clone3's ENOSYS is not audited: glibc tries it on every fork and
 *     pthread_create, so auditing it would only be noise.  openat2's is
 *     not either (an ERRNO action never is); nothing in glibc uses it.
 *   - a set-id file made in the workspace outlives the jail: on the host it
 *     is a setuid binary of the workspace's owner (root, for a root-owned
 *     workspace).  So no call that sets a mode may carry S_ISUID or S_ISGID,
 *     in every mode of warden; a call that does reaches the deny action
 *     (EPERM, audited).  mkdir ignores S_ISGID, and it is denied anyway: a
 *     setgid directory is only ever made on purpose.
 *   - sethostname/setdomainname are not listed (harmless in the jail's UTS
 *     namespace, but nothing needs them); allow_extra may add them.
 *   - personality: query, PER_LINUX, PER_LINUX32 only; prlimit64: pid 0.
 *   - names the installed libseccomp does not know are skipped (they stay
 *     denied); allow_extra/deny_extra names it does not know are errors.
 *   - allow_extra naming an allowlisted call keeps its argument conditions;
 *     a name in both allow_extra and deny_extra is denied. */
#include <errno.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <fcntl.h>

#include "warden/log.h"
#include "warden/filter.h"
#include "warden/util.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif

#define MASK32 0xffffffffULL

/* Namespace flags clone() may not carry.  CLONE_NEWTIME shares its bit with
 * the exit signal byte of clone() (signals are < 65, so bit 7 is never a
 * legitimate part of it): masking it costs nothing. */
#define CLONE_NS_FLAGS (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | \
                        CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP | CLONE_NEWTIME)

/* The built-in allowlist, sorted.  Names the installed libseccomp does not
 * know are skipped when the filter is built (they stay denied: the safe
 * direction).  Entries marked (*) carry argument conditions, see specials[];
 * the calls that set a mode are checked too, see mode_rules[]. */
const char *const wfilter_allowlist[] = {
	"accept", "accept4", "access", "alarm", "arch_prctl", "bind",
	"brk", "capget", "capset", "chdir", "chmod", "chown", "clock_getres",
	"clock_gettime", "clock_nanosleep",
	"clone",                     /* (*) no namespace flags */
	"close", "close_range", "connect", "copy_file_range", "creat", "dup",
	"dup2", "dup3", "epoll_create", "epoll_create1", "epoll_ctl",
	"epoll_pwait", "epoll_pwait2", "epoll_wait", "eventfd", "eventfd2",
	"execve", "execveat", "exit", "exit_group", "faccessat", "faccessat2",
	"fadvise64", "fallocate", "fchdir", "fchmod", "fchmodat", "fchmodat2",
	"fchown", "fchownat", "fcntl", "fdatasync", "fgetxattr", "flistxattr",
	"flock", "fork", "fremovexattr", "fsetxattr", "fstat", "fstatfs", "fsync",
	"ftruncate", "futex", "futex_waitv", "futimesat", "get_mempolicy",
	"getcpu", "getcwd", "getdents", "getdents64", "getegid", "geteuid",
	"getgid", "getgroups", "getitimer", "getpeername", "getpgid", "getpgrp",
	"getpid", "getppid", "getpriority", "getrandom", "getresgid", "getresuid",
	"getrlimit", "getrusage", "getsid", "getsockname", "getsockopt", "gettid",
	"gettimeofday", "getuid", "getxattr", "inotify_add_watch", "inotify_init",
	"inotify_init1", "inotify_rm_watch", "io_cancel", "io_destroy",
	"io_getevents", "io_pgetevents", "io_setup", "io_submit",
	"ioctl",                     /* (*) not TIOCSTI, TIOCLINUX */
	"ioprio_get", "ioprio_set", "kill", "landlock_add_rule",
	"landlock_create_ruleset", "landlock_restrict_self", "lchown",
	"lgetxattr", "link", "linkat", "listen", "listxattr", "llistxattr",
	"lremovexattr", "lseek", "lsetxattr", "lstat", "madvise", "map_shadow_stack",
	"mbind", "membarrier", "memfd_create", "mincore", "mkdir", "mkdirat",
	"mknod", "mknodat", "mlock", "mlock2", "mlockall", "mmap", "mprotect",
	"mq_getsetattr", "mq_notify", "mq_open", "mq_timedreceive",
	"mq_timedsend", "mq_unlink", "mremap", "msgctl", "msgget", "msgrcv",
	"msgsnd", "msync", "munlock", "munlockall", "munmap", "nanosleep",
	"newfstatat", "open", "openat", "pause",
	"personality",               /* (*) query, PER_LINUX, PER_LINUX32 only */
	"pidfd_open", "pidfd_send_signal", "pipe", "pipe2", "pkey_alloc",
	"pkey_free", "pkey_mprotect", "poll", "ppoll", "prctl", "pread64",
	"preadv", "preadv2",
	"prlimit64",                 /* (*) own process only (pid 0) */
	"pselect6", "pwrite64", "pwritev", "pwritev2", "read", "readahead",
	"readlink", "readlinkat", "readv", "recvfrom", "recvmmsg", "recvmsg",
	"remap_file_pages", "removexattr", "rename", "renameat", "renameat2",
	"restart_syscall", "rmdir", "rseq", "rt_sigaction", "rt_sigpending",
	"rt_sigprocmask", "rt_sigqueueinfo", "rt_sigreturn", "rt_sigsuspend",
	"rt_sigtimedwait", "rt_tgsigqueueinfo", "sched_get_priority_max",
	"sched_get_priority_min", "sched_getaffinity", "sched_getattr",
	"sched_getparam", "sched_getscheduler", "sched_rr_get_interval",
	"sched_setaffinity", "sched_setattr", "sched_setparam",
	"sched_setscheduler", "sched_yield", "seccomp", "select", "semctl",
	"semget", "semop", "semtimedop", "sendfile", "sendmmsg", "sendmsg",
	"sendto", "set_mempolicy", "set_robust_list", "set_tid_address",
	"setfsgid", "setfsuid", "setgid", "setgroups", "setitimer", "setpgid",
	"setpriority", "setregid", "setresgid", "setresuid", "setreuid",
	"setrlimit", "setsid", "setsockopt", "setuid", "setxattr", "shmat",
	"shmctl", "shmdt", "shmget", "shutdown", "sigaltstack", "signalfd",
	"signalfd4",
	"socket",                    /* (*) AF_UNIX, AF_INET, AF_INET6, NETLINK_ROUTE */
	"socketpair",                /* (*) AF_UNIX */
	"splice", "stat", "statfs", "statx", "symlink", "symlinkat", "sync",
	"sync_file_range", "syncfs", "sysinfo", "tee", "tgkill", "time",
	"timer_create", "timer_delete", "timer_getoverrun", "timer_gettime",
	"timer_settime", "timerfd_create", "timerfd_gettime", "timerfd_settime",
	"times", "tkill", "truncate", "umask", "uname", "unlink", "unlinkat",
	"utime", "utimensat", "utimes", "vfork", "vmsplice", "wait4", "waitid",
	"write", "writev",
};
const size_t wfilter_allowlist_n = ARRAY_SIZE(wfilter_allowlist);

static bool strv_has(const struct wstrv *v, const char *s)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		if (v->v[i] && strcmp(v->v[i], s) == 0)
			return true;
	return false;
}

static bool in_allowlist(const char *name)
{
	size_t i;

	for (i = 0; i < wfilter_allowlist_n; i++)
		if (strcmp(wfilter_allowlist[i], name) == 0)
			return true;
	return false;
}

static int add_rule(scmp_filter_ctx ctx, uint32_t action, int nr, const char *name,
                    unsigned n, const struct scmp_arg_cmp *cmp, struct werr *err)
{
	int rc = seccomp_rule_add_array(ctx, action, nr, n, cmp);

	if (rc < 0)
		return werr_set(err, -rc, "seccomp rule for %s", name);
	return 0;
}

/* ALLOW when the low 32 bits of argument `arg` are none of excl[].  Bits on
 * which all excluded values agree: a value differing there is allowed (one
 * rule per bit).  The few bits where they disagree (d of them): every
 * pattern of those bits that no excluded value has is allowed (2^d - n
 * rules).  A value passing neither test agrees with some excluded value on
 * every bit, i.e. is excluded; every other value passes one of them. */
static int allow_arg32_except(scmp_filter_ctx ctx, uint32_t act, int nr, const char *name,
                              unsigned arg, const uint32_t *excl, size_t n,
                              struct werr *err)
{
	uint32_t agree = 0xffffffffu, diff, v, bit;
	struct scmp_arg_cmp c;
	size_t i;
	bool hit;

	for (i = 1; i < n; i++)
		agree &= ~(excl[i] ^ excl[0]);
	diff = ~agree;
	if (__builtin_popcount(diff) > 4)   /* 2^d rules: keep the sets small */
		return werr_set(err, EINVAL, "%s: excluded values too far apart", name);

	for (bit = 1; bit; bit <<= 1) {
		if (!(agree & bit))
			continue;
		c = (struct scmp_arg_cmp){ arg, SCMP_CMP_MASKED_EQ, bit, ~excl[0] & bit };
		if (add_rule(ctx, act, nr, name, 1, &c, err) < 0)
			return -1;
	}
	for (v = diff;; v = (v - 1) & diff) {       /* every subset of diff */
		for (hit = false, i = 0; i < n; i++)
			hit |= (excl[i] & diff) == v;
		if (!hit) {
			c = (struct scmp_arg_cmp){ arg, SCMP_CMP_MASKED_EQ, diff, v };
			if (add_rule(ctx, act, nr, name, 1, &c, err) < 0)
				return -1;
		}
		if (v == 0)
			break;
	}
	return 0;
}

/* ALLOW when the low 32 bits of argument `arg` equal one of vals[]. */
static int allow_arg32_in(scmp_filter_ctx ctx, uint32_t act, int nr, const char *name,
                          unsigned arg, const uint32_t *vals, size_t n, struct werr *err)
{
	struct scmp_arg_cmp c;
	size_t i;

	for (i = 0; i < n; i++) {
		c = (struct scmp_arg_cmp){ arg, SCMP_CMP_MASKED_EQ, MASK32, vals[i] };
		if (add_rule(ctx, act, nr, name, 1, &c, err) < 0)
			return -1;
	}
	return 0;
}

/* clone(flags, ...): threads and fork-like children, no new namespaces.
 * flags is a full unsigned long on x86_64, so compare all 64 bits. */
static int rule_clone(scmp_filter_ctx ctx, uint32_t act, int nr, struct werr *err)
{
	struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NS_FLAGS, 0);

	return add_rule(ctx, act, nr, "clone", 1, &c, err);
}

/* socket(domain, type, protocol): local and IP sockets (the network
 * namespace isolates them), and netlink only for NETLINK_ROUTE (getaddrinfo,
 * getifaddrs); other netlink families (netfilter, audit, uevent...) are
 * kernel attack surface that no general program needs. */
static int rule_socket(scmp_filter_ctx ctx, uint32_t act, int nr, struct werr *err)
{
	static const uint32_t ok[] = { AF_UNIX, AF_INET, AF_INET6 };
	struct scmp_arg_cmp nl[2] = {
		SCMP_A0(SCMP_CMP_MASKED_EQ, MASK32, AF_NETLINK),
		SCMP_A2(SCMP_CMP_MASKED_EQ, MASK32, NETLINK_ROUTE),
	};

	if (allow_arg32_in(ctx, act, nr, "socket", 0, ok, ARRAY_SIZE(ok), err) < 0)
		return -1;
	return add_rule(ctx, act, nr, "socket", 2, nl, err);
}

static int rule_socketpair(scmp_filter_ctx ctx, uint32_t act, int nr, struct werr *err)
{
	static const uint32_t ok[] = { AF_UNIX };

	return allow_arg32_in(ctx, act, nr, "socketpair", 0, ok, ARRAY_SIZE(ok), err);
}

/* ioctl(fd, cmd, ...): cmd is an unsigned int.  TIOCSTI pushes input into
 * a terminal, TIOCLINUX (selection/paste) does the same on a VT.  The jail
 * has no terminal; this is defence in depth. */
static int rule_ioctl(scmp_filter_ctx ctx, uint32_t act, int nr, struct werr *err)
{
	static const uint32_t bad[] = { TIOCSTI, TIOCLINUX };

	return allow_arg32_except(ctx, act, nr, "ioctl", 1, bad, ARRAY_SIZE(bad), err);
}

/* prlimit64(pid, ...): only on the calling process (pid 0, what glibc's
 * getrlimit/setrlimit pass).  pid_t is 32-bit. */
static int rule_prlimit64(scmp_filter_ctx ctx, uint32_t act, int nr, struct werr *err)
{
	static const uint32_t ok[] = { 0 };

	return allow_arg32_in(ctx, act, nr, "prlimit64", 0, ok, ARRAY_SIZE(ok), err);
}

/* personality(persona): the query (0xffffffff), PER_LINUX, PER_LINUX32
 * (`linux32` for builds).  Not READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE, ... */
static int rule_personality(scmp_filter_ctx ctx, uint32_t act, int nr, struct werr *err)
{
	static const uint32_t ok[] = { 0xffffffffu, PER_LINUX, PER_LINUX32 };

	return allow_arg32_in(ctx, act, nr, "personality", 0, ok, ARRAY_SIZE(ok), err);
}

/* Calls that set a mode, and which arguments hold it.  ALLOW when the mode
 * has neither S_ISUID nor S_ISGID (compared under that mask only, so bits
 * above the 16 of a umode_t cannot matter); for open-like calls, also ALLOW
 * whatever the mode when the flags (an int) create nothing: the kernel reads
 * the mode only with O_CREAT or O_TMPFILE.  Anything else reaches the
 * default action: denied and audited. */
#define SETID_BITS  (S_ISUID | S_ISGID)
#define CREATE_BITS (O_CREAT | (O_TMPFILE & ~O_DIRECTORY))
static const struct { const char *name; int flags_arg, mode_arg; } mode_rules[] = {
	{ "chmod",     -1, 1 }, { "creat",    -1, 1 }, { "fchmod",  -1, 1 },
	{ "fchmodat",  -1, 2 }, { "fchmodat2", -1, 2 }, { "mkdir",  -1, 1 },
	{ "mkdirat",   -1, 2 }, { "mknod",    -1, 1 }, { "mknodat", -1, 2 },
	{ "open",       1, 2 }, { "openat",    2, 3 },
};

static int rule_mode(scmp_filter_ctx ctx, uint32_t act, int nr, const char *name,
                     int flags_arg, int mode_arg, struct werr *err)
{
	struct scmp_arg_cmp c = { (unsigned)mode_arg, SCMP_CMP_MASKED_EQ, SETID_BITS, 0 };

	if (add_rule(ctx, act, nr, name, 1, &c, err) < 0)
		return -1;
	if (flags_arg < 0)
		return 0;
	c = (struct scmp_arg_cmp){ (unsigned)flags_arg, SCMP_CMP_MASKED_EQ, CREATE_BITS, 0 };
	return add_rule(ctx, act, nr, name, 1, &c, err);
}

static const struct {
	const char *name;
	int (*add)(scmp_filter_ctx ctx, uint32_t act, int nr, struct werr *err);
} specials[] = {
	{ "clone",       rule_clone },
	{ "ioctl",       rule_ioctl },
	{ "personality", rule_personality },
	{ "prlimit64",   rule_prlimit64 },
	{ "socket",      rule_socket },
	{ "socketpair",  rule_socketpair },
};

/* In a learning filter (wfilter_build_learn), fstat(fd) -- newfstatat or
 * statx with AT_EMPTY_PATH, which glibc makes for every fstat -- names no
 * path, and is allowed as it is; the rest of the call's rules carry act. */
static int learn_empty_path(scmp_filter_ctx ctx, uint32_t act, uint32_t def, int nr,
                            const char *name, struct werr *err)
{
	unsigned arg = !strcmp(name, "statx") ? 2 : 3;
	struct scmp_arg_cmp c = { arg, SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH };

	if (add_rule(ctx, SCMP_ACT_ALLOW, nr, name, 1, &c, err) < 0)
		return -1;
	c.datum_b = 0;
	return act == def ? 0 : add_rule(ctx, act, nr, name, 1, &c, err);
}

/* ... and init's own execve of the program (WFILTER_EXEC_MARK) too */
static int learn_own_exec(scmp_filter_ctx ctx, uint32_t act, uint32_t def, int nr,
                          struct werr *err)
{
	struct scmp_arg_cmp c = SCMP_A3(SCMP_CMP_EQ, WFILTER_EXEC_MARK);

	if (add_rule(ctx, SCMP_ACT_ALLOW, nr, "execve", 1, &c, err) < 0)
		return -1;
	c.op = SCMP_CMP_NE;
	return act == def ? 0 : add_rule(ctx, act, nr, "execve", 1, &c, err);
}

/* The rules that allow name.  learn: the calls of the learn set
 * (wfilter_learn_name) get SCMP_ACT_NOTIFY instead of ALLOW, under the
 * same conditions; a rule whose action is the default def is left out
 * (libseccomp refuses it, and the default gives the same answer). */
static int allow_name(scmp_filter_ctx ctx, const char *name, bool learn, uint32_t def,
                      struct werr *err)
{
	int nr = seccomp_syscall_resolve_name(name);
	uint32_t act = learn && wfilter_learn_name(name) ? SCMP_ACT_NOTIFY : SCMP_ACT_ALLOW;
	size_t i;

	if (nr < 0)     /* unknown to this libseccomp, or not on x86_64 */
		return 0;
	if (act == SCMP_ACT_NOTIFY && (!strcmp(name, "newfstatat") || !strcmp(name, "statx")))
		return learn_empty_path(ctx, act, def, nr, name, err);
	if (act == SCMP_ACT_NOTIFY && !strcmp(name, "execve"))
		return learn_own_exec(ctx, act, def, nr, err);
	if (act == def)
		return 0;
	for (i = 0; i < ARRAY_SIZE(specials); i++)
		if (strcmp(specials[i].name, name) == 0)
			return specials[i].add(ctx, act, nr, err);
	for (i = 0; i < ARRAY_SIZE(mode_rules); i++)
		if (strcmp(mode_rules[i].name, name) == 0)
			return rule_mode(ctx, act, nr, name, mode_rules[i].flags_arg,
			                 mode_rules[i].mode_arg, err);
	return add_rule(ctx, act, nr, name, 0, NULL, err);
}

/* Every name in allow_extra/deny_extra must be a syscall; allow_extra may
 * not name a forbidden one.  Typos are errors, not silent no-ops. */
static int check_names(const struct wpolicy *p, struct werr *err)
{
	const char *why;
	size_t i;

	for (i = 0; i < p->allow_extra.n; i++) {
		const char *s = p->allow_extra.v[i];

		if ((why = wfilter_forbidden_why(s)))
			return werr_set(err, 0, "syscalls.allow_extra: \"%s\" can never be "
			                "allowed: %s", s, why);
		if (seccomp_syscall_resolve_name(s) == __NR_SCMP_ERROR)
			return werr_set(err, 0, "syscalls.allow_extra: unknown syscall \"%s\"", s);
	}
	for (i = 0; i < p->deny_extra.n; i++) {
		const char *s = p->deny_extra.v[i];

		if (!wfilter_is_forbidden(s) && seccomp_syscall_resolve_name(s) == __NR_SCMP_ERROR)
			return werr_set(err, 0, "syscalls.deny_extra: unknown syscall \"%s\"", s);
	}
	return 0;
}

static void ctx_release(scmp_filter_ctx *ctx)
{
	if (*ctx)
		seccomp_release(*ctx);
}
#define _cleanup_filter_ __attribute__((cleanup(ctx_release)))

static int set_attr(scmp_filter_ctx ctx, enum scmp_filter_attr a, uint32_t v,
                    const char *what, struct werr *err)
{
	int rc = seccomp_attr_set(ctx, a, v);

	if (rc < 0)
		return werr_set(err, -rc, "seccomp filter attribute %s", what);
	return 0;
}

static int build(const struct wpolicy *p, bool learn, scmp_filter_ctx *out, struct werr *err)
{
	_cleanup_filter_ scmp_filter_ctx ctx = NULL;
	uint32_t deny;
	size_t i;

	*out = NULL;
	if (!p)
		return werr_set(err, EINVAL, "building the syscall filter: no policy");
	if (check_names(p, err) < 0)
		return -1;

	if (p->deny_action == WDENY_KILL)
		deny = SCMP_ACT_KILL_PROCESS;
	else if (p->audit)
		deny = SCMP_ACT_NOTIFY;
	else
		deny = SCMP_ACT_ERRNO(EPERM);
	ctx = seccomp_init(deny);
	if (!ctx && deny == SCMP_ACT_NOTIFY && !learn) {
		/* seccomp_init() checks the kernel: no user notification (< 5.0) */
		wlog_warn("this kernel has no seccomp user notification: denied "
		          "syscalls fail with EPERM but are not audited");
		ctx = seccomp_init(deny = SCMP_ACT_ERRNO(EPERM));
	}
	if (!ctx)
		return werr_set(err, 0, "building the syscall filter: seccomp_init failed "
		                "(is seccomp enabled in this kernel?)");

	if (set_attr(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS, "badarch", err) < 0 ||
	    set_attr(ctx, SCMP_FLTATR_CTL_NNP, 0, "nnp", err) < 0 ||   /* the jail sets it */
	    set_attr(ctx, SCMP_FLTATR_CTL_TSYNC, 0, "tsync", err) < 0 ||
	    set_attr(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2, "optimize", err) < 0)
		return -1;
	/* raw kernel errors from seccomp_load() instead of ECANCELED (>= 2.5) */
	(void)seccomp_attr_set(ctx, SCMP_FLTATR_API_SYSRAWRC, 1);

	for (i = 0; i < wfilter_forbidden_n; i++) {
		const struct wfilter_forbidden *f = &wfilter_forbidden[i];
		int nr;

		if (!f->enosys)
			continue;
		/* clone3 and openat2: every libseccomp this builds with knows them */
		if ((nr = seccomp_syscall_resolve_name(f->name)) < 0)
			return werr_set(err, 0, "this libseccomp does not know %s: update "
			                "libseccomp", f->name);
		if (add_rule(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, f->name, 0, NULL, err) < 0)
			return -1;
	}
	for (i = 0; i < wfilter_allowlist_n; i++) {
		if (strv_has(&p->deny_extra, wfilter_allowlist[i]))
			continue;
		if (allow_name(ctx, wfilter_allowlist[i], learn, deny, err) < 0)
			return -1;
	}
	/* deny_extra wins over allow_extra; names already in the allowlist keep
	 * their argument conditions */
	for (i = 0; i < p->allow_extra.n; i++) {
		const char *s = p->allow_extra.v[i];

		if (in_allowlist(s) || strv_has(&p->deny_extra, s))
			continue;
		if (allow_name(ctx, s, learn, deny, err) < 0)
			return -1;
	}
	*out = steal_pointer(&ctx);
	return 0;
}

int wfilter_build(const struct wpolicy *p, scmp_filter_ctx *out, struct werr *err)
{
	return build(p, false, out, err);
}

int wfilter_build_learn(const struct wpolicy *p, scmp_filter_ctx *out, struct werr *err)
{
	*out = NULL;
	/* the learner needs every denied call to reach the supervisor as a
	 * notification too, and the kernel's CONTINUE (5.5) */
	if (p && p->deny_action == WDENY_ERRNO && p->audit && !wfilter_kernel_notify())
		return werr_set(err, 0, "learning needs seccomp user notification (Linux 5.5 or "
		                "later); this kernel has none");
	return build(p, true, out, err);
}

/* The listener fd: libseccomp 2.5.4 keeps it in per-process state (it asks
 * for one listener per process), never closes it (not in seccomp_release()
 * either), and the kernel creates it O_CLOEXEC.  So the fd is handed over
 * as is, no dup: the caller owns it, sends it to the supervisor and closes
 * it; even if it forgot, execve would close it, so the jailed program can
 * never answer its own notifications.  The fd is only valid after the
 * first NOTIFY filter of the process is loaded, which is this one. */
int wfilter_load(scmp_filter_ctx ctx, int *notify_fd, struct werr *err)
{
	return wfilter_load_as(ctx, false, notify_fd, err);
}

int wfilter_load_as(scmp_filter_ctx ctx, bool learn, int *notify_fd, struct werr *err)
{
	uint32_t def = 0;
	int rc, fd;

	*notify_fd = -1;
	if (!ctx)
		return werr_set(err, EINVAL, "loading the syscall filter: no filter");
	rc = seccomp_load(ctx);
	if (rc < 0)
		return werr_set(err, -rc, "loading the syscall filter");
	rc = seccomp_attr_get(ctx, SCMP_FLTATR_ACT_DEFAULT, &def);
	if (rc < 0)
		return werr_set(err, -rc, "reading the syscall filter's default action");
	/* a learning filter has NOTIFY rules under any default: libseccomp
	 * asked for a listener whenever a rule notifies */
	if (def == SCMP_ACT_NOTIFY || learn) {
		fd = seccomp_notify_fd(ctx);
		if (fd < 0)
			return werr_set(err, -fd, "the syscall filter has no listener fd");
		*notify_fd = fd;
	}
	return 0;
}

/* --- filters compiled at build time (see filter.h) --------------------- */

int wfilter_export(scmp_filter_ctx ctx, struct sock_filter **insns, size_t *len,
                   struct werr *err)
{
	_cleanup_close_ int fd = memfd_create("warden-bpf", MFD_CLOEXEC);
	off_t size;
	int rc;

	*insns = NULL;
	*len = 0;
	if (fd < 0)
		return werr_set(err, errno, "memfd_create");
	if ((rc = seccomp_export_bpf(ctx, fd)) < 0)
		return werr_set(err, -rc, "exporting the syscall filter");
	size = lseek(fd, 0, SEEK_END);
	if (size <= 0 || size % (off_t)sizeof(struct sock_filter) ||
	    size / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS)
		return werr_set(err, 0, "exported syscall filter has a bad size %lld", (long long)size);
	*insns = xmalloc((size_t)size);
	if (pread(fd, *insns, (size_t)size, 0) != size) {
		free(*insns);
		*insns = NULL;
		return werr_set(err, errno, "reading the exported syscall filter");
	}
	*len = (size_t)size / sizeof(struct sock_filter);
	return 0;
}

bool wfilter_kernel_notify(void)
{
	struct seccomp_notif_sizes sz;

	return syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) == 0;
}

const struct wfilter_prog *wfilter_find_prebuilt(const struct wpolicy *p)
{
	if (!p || p->allow_extra.n || p->deny_extra.n)
		return NULL;
	for (size_t i = 0; i < wfilter_prebuilt_n; i++) {
		const struct wfilter_prog *w = &wfilter_prebuilt[i];
		if (w->deny_action != (int)p->deny_action)
			continue;
		if (p->deny_action == WDENY_ERRNO && w->audit != p->audit)
			continue;
		/* does the kernel have user notification (5.0)?  Asked directly:
		 * seccomp_api_get() would probe every feature (nine seccomp
		 * calls) for a program that libseccomp never touches */
		if (w->notify && !wfilter_kernel_notify())
			return NULL;
		return w;
	}
	return NULL;
}

int wfilter_load_prog(const struct wfilter_prog *prog, int *notify_fd, struct werr *err)
{
	struct sock_fprog fp = { .len = prog->len, .filter = (struct sock_filter *)prog->insns };
	long rc;

	*notify_fd = -1;
	rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
	             prog->notify ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0, &fp);
	if (rc < 0)
		return werr_set(err, errno, "loading the syscall filter");
	if (prog->notify)
		*notify_fd = (int)rc; /* the kernel creates it close-on-exec */
	return 0;
}

/* The program a run of p loads, for wfilter_eval (filter.h) */
int wfilter_policy_prog(const struct wpolicy *p, const struct sock_filter **insns, size_t *len,
                        struct sock_filter **owned, struct werr *err)
{
	const struct wfilter_prog *prog = wfilter_find_prebuilt(p);
	scmp_filter_ctx ctx = NULL;
	size_t n = 0;
	int rc;

	*insns = NULL;
	*len = 0;
	*owned = NULL;
	if (prog) {
		*insns = prog->insns;
		*len = prog->len;
		return 0;
	}
	if (wfilter_build(p, &ctx, err) < 0)
		return -1;
	rc = wfilter_export(ctx, owned, &n, err);
	seccomp_release(ctx);
	if (rc < 0)
		return -1;
	*insns = *owned;
	*len = n;
	return 0;
}
