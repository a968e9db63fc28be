/* The syscall filter (jail/filter.c): its decisions.  The live half, the
 * filter loaded in a forked child, is test_filter_live.c; filter_test.h
 * holds what the two share.
 *
 * The filter is built from a hand-made policy, exported as BPF
 * (seccomp_export_bpf) and run by a small classic-BPF interpreter below
 * over a struct seccomp_data, so every decision is checked without
 * loading anything into the kernel (libseccomp's own tests do the same).
 * The programs compiled at build time are compared with libseccomp's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "warden/util.h"
#include "filter_test.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

#define ALLOW    SECCOMP_RET_ALLOW
#define NOTIFY   SECCOMP_RET_USER_NOTIF
#define EPERM_   (SECCOMP_RET_ERRNO | EPERM)
#define ENOSYS_  (SECCOMP_RET_ERRNO | ENOSYS)
#define KILL     SECCOMP_RET_KILL_PROCESS

/* ---------------------------------------------------------------------- */
/* A classic BPF interpreter, with the kernel's seccomp checks: forward    */
/* jumps only, aligned 32-bit loads inside struct seccomp_data, a RET at   */
/* the end.  Any opcode libseccomp is not expected to emit fails the test. */

struct prog {
	struct sock_filter *insn;
	size_t n;
};

static uint32_t bpf_run(const struct prog *p, const struct seccomp_data *d)
{
	uint32_t A = 0, X = 0, mem[BPF_MEMWORDS] = { 0 };
	size_t pc = 0;

	while (pc < p->n) {
		const struct sock_filter *f = &p->insn[pc++];
		uint32_t src = BPF_SRC(f->code) == BPF_X ? X : f->k;

		switch (BPF_CLASS(f->code)) {
		case BPF_LD:
			if (f->code == (BPF_LD | BPF_W | BPF_ABS)) {
				if (f->k % 4 || f->k + 4 > sizeof(*d))
					fail_msg("pc %zu: bad load offset %u", pc - 1, f->k);
				memcpy(&A, (const char *)d + f->k, 4);
			} else if (f->code == (BPF_LD | BPF_W | BPF_IMM)) {
				A = f->k;
			} else if (f->code == (BPF_LD | BPF_W | BPF_MEM) && f->k < BPF_MEMWORDS) {
				A = mem[f->k];
			} else if (f->code == (BPF_LD | BPF_W | BPF_LEN)) {
				A = sizeof(*d);
			} else {
				fail_msg("pc %zu: unsupported load 0x%x", pc - 1, f->code);
			}
			break;
		case BPF_LDX:
			if (f->code == (BPF_LDX | BPF_W | BPF_IMM))
				X = f->k;
			else if (f->code == (BPF_LDX | BPF_W | BPF_MEM) && f->k < BPF_MEMWORDS)
				X = mem[f->k];
			else
				fail_msg("pc %zu: unsupported ldx 0x%x", pc - 1, f->code);
			break;
		case BPF_ST:
			if (f->k >= BPF_MEMWORDS)
				fail_msg("pc %zu: bad st", pc - 1);
			mem[f->k] = A;
			break;
		case BPF_STX:
			if (f->k >= BPF_MEMWORDS)
				fail_msg("pc %zu: bad stx", pc - 1);
			mem[f->k] = X;
			break;
		case BPF_ALU:
			switch (BPF_OP(f->code)) {
			case BPF_ADD: A += src; break;
			case BPF_SUB: A -= src; break;
			case BPF_MUL: A *= src; break;
			case BPF_OR:  A |= src; break;
			case BPF_AND: A &= src; break;
			case BPF_XOR: A ^= src; break;
			case BPF_LSH: A = src < 32 ? A << src : 0; break;
			case BPF_RSH: A = src < 32 ? A >> src : 0; break;
			case BPF_NEG: A = -A; break;
			case BPF_DIV:
				if (!src)
					return 0;   /* the kernel returns 0 (kill) */
				A /= src;
				break;
			default:
				fail_msg("pc %zu: unsupported alu 0x%x", pc - 1, f->code);
			}
			break;
		case BPF_JMP: {
			bool t;

			if (BPF_OP(f->code) == BPF_JA) {
				if (f->k >= p->n - pc)
					fail_msg("pc %zu: jump out of program", pc - 1);
				pc += f->k;
				break;
			}
			switch (BPF_OP(f->code)) {
			case BPF_JEQ:  t = A == src; break;
			case BPF_JGT:  t = A > src; break;
			case BPF_JGE:  t = A >= src; break;
			case BPF_JSET: t = (A & src) != 0; break;
			default:
				fail_msg("pc %zu: unsupported jmp 0x%x", pc - 1, f->code);
				return 0;
			}
			if ((size_t)(t ? f->jt : f->jf) >= p->n - pc)
				fail_msg("pc %zu: jump out of program", pc - 1);
			pc += t ? f->jt : f->jf;
			break;
		}
		case BPF_RET:
			return BPF_RVAL(f->code) == BPF_A ? A : f->k;
		case BPF_MISC:
			if (BPF_MISCOP(f->code) == BPF_TAX)
				X = A;
			else
				A = X;
			break;
		default:
			fail_msg("pc %zu: unsupported class 0x%x", pc - 1, f->code);
		}
	}
	fail_msg("fell off the end of the program");
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Policies and programs                                                   */

#define STRV(...) ((struct wstrv){ (char *[]){ __VA_ARGS__ }, \
	sizeof((char *[]){ __VA_ARGS__ }) / sizeof(char *) })

static struct prog export_as(const struct wpolicy *pol, bool learn)
{
	struct werr err = { 0 };
	scmp_filter_ctx ctx = NULL;
	struct prog p = { 0 };
	off_t len;
	int fd, rc;

	if ((learn ? wfilter_build_learn(pol, &ctx, &err) : wfilter_build(pol, &ctx, &err)) < 0)
		fail_msg("wfilter_build: %s", err.msg);
	assert_non_null(ctx);
	fd = memfd_create("bpf", MFD_CLOEXEC);
	assert_true(fd >= 0);
	rc = seccomp_export_bpf(ctx, fd);
	seccomp_release(ctx);
	assert_int_equal(rc, 0);
	len = lseek(fd, 0, SEEK_END);
	assert_true(len > 0 && len % sizeof(struct sock_filter) == 0);
	p.n = len / sizeof(struct sock_filter);
	assert_true(p.n <= BPF_MAXINSNS);
	p.insn = xmalloc(len);
	assert_int_equal(pread(fd, p.insn, len, 0), len);
	close(fd);
	assert_int_equal(BPF_CLASS(p.insn[p.n - 1].code), BPF_RET);
	return p;
}

static struct prog export(const struct wpolicy *pol)
{
	return export_as(pol, false);
}

static uint32_t decide_arch4(const struct prog *p, uint32_t arch, int nr,
                             uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3)
{
	struct seccomp_data d;

	memset(&d, 0, sizeof(d));
	d.arch = arch;
	d.nr = nr;
	d.instruction_pointer = 0x401000;
	d.args[0] = a0;
	d.args[1] = a1;
	d.args[2] = a2;
	d.args[3] = a3;
	return bpf_run(p, &d);
}

static uint32_t decide_arch(const struct prog *p, uint32_t arch, int nr,
                            uint64_t a0, uint64_t a1, uint64_t a2)
{
	return decide_arch4(p, arch, nr, a0, a1, a2, 0);
}

static uint32_t decide(const struct prog *p, int nr, uint64_t a0, uint64_t a1, uint64_t a2)
{
	return decide_arch(p, AUDIT_ARCH_X86_64, nr, a0, a1, a2);
}

static int nr_of(const char *name)
{
	int nr = seccomp_syscall_resolve_name(name);

	if (nr < 0)
		fail_msg("libseccomp does not know %s", name);
	return nr;
}

static const char *act_name(uint32_t a)
{
	static char buf[32];

	switch (a) {
	case ALLOW:   return "ALLOW";
	case NOTIFY:  return "NOTIFY";
	case EPERM_:  return "ERRNO(EPERM)";
	case ENOSYS_: return "ERRNO(ENOSYS)";
	case KILL:    return "KILL_PROCESS";
	}
	snprintf(buf, sizeof(buf), "0x%08x", a);
	return buf;
}

struct kase {
	const char *what;
	const char *sys;      /* NULL: use nr */
	int nr;
	uint64_t a0, a1, a2;
	uint32_t want;        /* 0 = the policy's deny action */
};

static void run_table(const struct prog *p, const struct kase *t, size_t n, uint32_t deny)
{
	size_t i;
	int bad = 0;

	for (i = 0; i < n; i++) {
		int nr = t[i].sys ? nr_of(t[i].sys) : t[i].nr;
		uint32_t want = t[i].want ? t[i].want : deny;
		uint32_t got = decide(p, nr, t[i].a0, t[i].a1, t[i].a2);

		if (got != want) {
			bad++;
			print_error("%s: got %s, want %s\n", t[i].what, act_name(got), act_name(want));
		}
	}
	if (bad)
		fail_msg("%d of %zu decisions wrong", bad, n);
}

/* ---------------------------------------------------------------------- */
/* Decisions                                                               */

#define THREAD_FLAGS (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | \
                      CLONE_SYSVSEM | CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID)

static const struct kase common_cases[] = {
	{ "read",                 "read", 0, 0, 0, 0, ALLOW },
	{ "write",                "write", 0, 1, 0, 0, ALLOW },
	{ "execve",               "execve", 0, 0, 0, 0, ALLOW },
	{ "mmap",                 "mmap", 0, 0, 4096, 3, ALLOW },
	{ "futex",                "futex", 0, 0, 0, 0, ALLOW },
	{ "seccomp (own filters)", "seccomp", 0, 1, 0, 0, ALLOW },
	{ "landlock_create_ruleset", "landlock_create_ruleset", 0, 0, 0, 0, ALLOW },
	{ "ptrace",               "ptrace", 0, PTRACE_ATTACH, 1, 0, 0 },
	{ "process_vm_readv",     "process_vm_readv", 0, 1, 0, 0, 0 },
	{ "bpf",                  "bpf", 0, 0, 0, 0, 0 },
	{ "perf_event_open",      "perf_event_open", 0, 0, 0, 0, 0 },
	{ "userfaultfd",          "userfaultfd", 0, 0, 0, 0, 0 },
	{ "io_uring_setup",       "io_uring_setup", 0, 1, 0, 0, 0 },
	{ "keyctl",               "keyctl", 0, 0, 0, 0, 0 },
	{ "add_key",              "add_key", 0, 0, 0, 0, 0 },
	{ "mount",                "mount", 0, 0, 0, 0, 0 },
	{ "umount2",              "umount2", 0, 0, 0, 0, 0 },
	{ "pivot_root",           "pivot_root", 0, 0, 0, 0, 0 },
	{ "fsopen",               "fsopen", 0, 0, 0, 0, 0 },
	{ "open_tree",            "open_tree", 0, 0, 0, 0, 0 },
	{ "move_mount",           "move_mount", 0, 0, 0, 0, 0 },
	{ "unshare(0)",           "unshare", 0, 0, 0, 0, 0 },
	{ "setns",                "setns", 0, 0, 0, 0, 0 },
	{ "open_by_handle_at",    "open_by_handle_at", 0, 0, 0, 0, 0 },
	{ "name_to_handle_at",    "name_to_handle_at", 0, 0, 0, 0, 0 },
	{ "kexec_load",           "kexec_load", 0, 0, 0, 0, 0 },
	{ "init_module",          "init_module", 0, 0, 0, 0, 0 },
	{ "chroot",               "chroot", 0, 0, 0, 0, 0 },
	{ "syslog",               "syslog", 0, 0, 0, 0, 0 },
	{ "sethostname (not listed)", "sethostname", 0, 0, 0, 0, 0 },
	{ "unknown syscall 1000", NULL, 1000, 0, 0, 0, 0 },
	{ "nr 0x3fffffff",        NULL, 0x3fffffff, 0, 0, 0, 0 },
	/* clone3: ENOSYS, so glibc falls back to clone */
	{ "clone3",               "clone3", 0, 0, 88, 0, ENOSYS_ },
	/* clone: no namespace flags, in the low or... anywhere */
	{ "clone thread",         "clone", 0, THREAD_FLAGS, 0, 0, ALLOW },
	{ "clone fork (SIGCHLD)", "clone", 0, SIGCHLD, 0, 0, ALLOW },
	{ "clone vfork",          "clone", 0, CLONE_VM | CLONE_VFORK | SIGCHLD, 0, 0, ALLOW },
	{ "clone NEWUSER",        "clone", 0, CLONE_NEWUSER | SIGCHLD, 0, 0, 0 },
	{ "clone NEWNS",          "clone", 0, CLONE_NEWNS, 0, 0, 0 },
	{ "clone NEWPID",         "clone", 0, CLONE_NEWPID, 0, 0, 0 },
	{ "clone NEWNET",         "clone", 0, CLONE_NEWNET, 0, 0, 0 },
	{ "clone NEWIPC",         "clone", 0, CLONE_NEWIPC, 0, 0, 0 },
	{ "clone NEWUTS",         "clone", 0, CLONE_NEWUTS, 0, 0, 0 },
	{ "clone NEWCGROUP",      "clone", 0, CLONE_NEWCGROUP, 0, 0, 0 },
	{ "clone NEWTIME bit",    "clone", 0, CLONE_NEWTIME, 0, 0, 0 },
	{ "clone thread|NEWUSER|hi bits", "clone", 0,
	  (1ULL << 40) | THREAD_FLAGS | CLONE_NEWUSER, 0, 0, 0 },
	{ "clone hi bits only",   "clone", 0, (1ULL << 40) | SIGCHLD, 0, 0, ALLOW },
	/* socket: by domain (low 32 bits, what the kernel reads) */
	{ "socket AF_UNIX",       "socket", 0, AF_UNIX, SOCK_STREAM, 0, ALLOW },
	{ "socket AF_INET",       "socket", 0, AF_INET, SOCK_DGRAM, 0, ALLOW },
	{ "socket AF_INET6",      "socket", 0, AF_INET6, SOCK_STREAM, 0, ALLOW },
	{ "socket AF_INET, junk hi bits", "socket", 0, (7ULL << 32) | AF_INET, SOCK_STREAM, 0, ALLOW },
	{ "socket AF_NETLINK ROUTE", "socket", 0, AF_NETLINK, SOCK_RAW, NETLINK_ROUTE, ALLOW },
	{ "socket AF_NETLINK NETFILTER", "socket", 0, AF_NETLINK, SOCK_RAW, NETLINK_NETFILTER, 0 },
	{ "socket AF_NETLINK AUDIT", "socket", 0, AF_NETLINK, SOCK_RAW, NETLINK_AUDIT, 0 },
	{ "socket AF_PACKET",     "socket", 0, AF_PACKET, SOCK_RAW, 0, 0 },
	{ "socket AF_PACKET|1<<32", "socket", 0, (1ULL << 32) | AF_PACKET, SOCK_RAW, 0, 0 },
	{ "socket AF_VSOCK",      "socket", 0, AF_VSOCK, SOCK_STREAM, 0, 0 },
	{ "socket AF_BLUETOOTH",  "socket", 0, AF_BLUETOOTH, SOCK_STREAM, 0, 0 },
	{ "socket AF_ALG",        "socket", 0, AF_ALG, SOCK_SEQPACKET, 0, 0 },
	{ "socket AF_UNSPEC",     "socket", 0, AF_UNSPEC, SOCK_STREAM, 0, 0 },
	{ "socketpair AF_UNIX",   "socketpair", 0, AF_UNIX, SOCK_STREAM, 0, ALLOW },
	{ "socketpair AF_INET",   "socketpair", 0, AF_INET, SOCK_STREAM, 0, 0 },
	/* ioctl: all but TIOCSTI and TIOCLINUX, compared on 32 bits */
	{ "ioctl TCGETS",         "ioctl", 0, 1, TCGETS, 0, ALLOW },
	{ "ioctl FIONREAD",       "ioctl", 0, 3, FIONREAD, 0, ALLOW },
	{ "ioctl TIOCGWINSZ",     "ioctl", 0, 1, TIOCGWINSZ, 0, ALLOW },
	{ "ioctl sign-extended _IOR", "ioctl", 0, 3, 0xffffffff80045430ULL, 0, ALLOW },
	{ "ioctl TIOCSTI",        "ioctl", 0, 0, TIOCSTI, 0, 0 },
	{ "ioctl TIOCSTI|1<<32",  "ioctl", 0, 0, (1ULL << 32) | TIOCSTI, 0, 0 },
	{ "ioctl TIOCSTI|~0<<32", "ioctl", 0, 0, 0xffffffff00000000ULL | TIOCSTI, 0, 0 },
	{ "ioctl TIOCLINUX",      "ioctl", 0, 0, TIOCLINUX, 0, 0 },
	/* prlimit64: own process only */
	{ "prlimit64(0)",         "prlimit64", 0, 0, RLIMIT_NOFILE, 0, ALLOW },
	{ "prlimit64(1)",         "prlimit64", 0, 1, RLIMIT_NOFILE, 0, 0 },
	{ "prlimit64(0|1<<32)",   "prlimit64", 0, 1ULL << 32, RLIMIT_NOFILE, 0, ALLOW },
	/* personality: query and plain Linux only */
	{ "personality query",    "personality", 0, 0xffffffff, 0, 0, ALLOW },
	{ "personality PER_LINUX", "personality", 0, PER_LINUX, 0, 0, ALLOW },
	{ "personality PER_LINUX32", "personality", 0, PER_LINUX32, 0, 0, ALLOW },
	{ "personality ADDR_NO_RANDOMIZE", "personality", 0, ADDR_NO_RANDOMIZE, 0, 0, 0 },
	{ "personality READ_IMPLIES_EXEC", "personality", 0, READ_IMPLIES_EXEC, 0, 0, 0 },
};

/* Calls that set a mode: never S_ISUID or S_ISGID (a set-id file outlives
 * the jail on the host).  The kernel reads a mode as umode_t and flags as an
 * int, so junk in the upper half changes nothing either way. */
struct kase4 {
	const char *what, *sys;
	uint64_t a0, a1, a2, a3;
	uint32_t want;        /* 0 = the policy's deny action */
};

static const struct kase4 mode_cases[] = {
	{ "chmod 0755",           "chmod", 0, 0755, 0, 0, ALLOW },
	{ "chmod 01777 (sticky)", "chmod", 0, 01777, 0, 0, ALLOW },
	{ "chmod 0755|junk<<32",  "chmod", 0, (0xabcULL << 32) | 0755, 0, 0, ALLOW },
	{ "chmod 04755",          "chmod", 0, 04755, 0, 0, 0 },
	{ "chmod 02755",          "chmod", 0, 02755, 0, 0, 0 },
	{ "chmod 06755",          "chmod", 0, 06755, 0, 0, 0 },
	{ "chmod 04755|junk<<32", "chmod", 0, (0xabcULL << 32) | 04755, 0, 0, 0 },
	{ "chmod 04000|~0<<32",   "chmod", 0, 0xffffffff00000000ULL | 04000, 0, 0, 0 },
	{ "fchmod 0644",          "fchmod", 3, 0644, 0, 0, ALLOW },
	{ "fchmod 04755",         "fchmod", 3, 04755, 0, 0, 0 },
	{ "fchmod 02711",         "fchmod", 3, 02711, 0, 0, 0 },
	{ "fchmodat 0755",        "fchmodat", AT_FDCWD, 0, 0755, 0, ALLOW },
	{ "fchmodat 04755",       "fchmodat", AT_FDCWD, 0, 04755, 0, 0 },
	{ "fchmodat 02000",       "fchmodat", AT_FDCWD, 0, 02000, 0, 0 },
	{ "fchmodat2 0755",       "fchmodat2", AT_FDCWD, 0, 0755, 0, ALLOW },
	{ "fchmodat2 06755",      "fchmodat2", AT_FDCWD, 0, 06755, 0, 0 },
	{ "open O_RDONLY, mode ignored", "open", 0, O_RDONLY, 04755, 0, ALLOW },
	{ "open O_WRONLY|O_TRUNC, mode ignored", "open", 0, O_WRONLY | O_TRUNC, 06777, 0, ALLOW },
	{ "open O_CREAT 0644",    "open", 0, O_CREAT | O_WRONLY, 0644, 0, ALLOW },
	{ "open O_CREAT 04755",   "open", 0, O_CREAT | O_WRONLY, 04755, 0, 0 },
	{ "open O_CREAT|O_EXCL 02755", "open", 0, O_CREAT | O_EXCL | O_WRONLY, 02755, 0, 0 },
	{ "open O_CREAT|junk<<32 04755", "open", 0, (1ULL << 40) | O_CREAT, 04755, 0, 0 },
	{ "open O_TMPFILE 0600",  "open", 0, O_TMPFILE | O_RDWR, 0600, 0, ALLOW },
	{ "open O_TMPFILE 04755", "open", 0, O_TMPFILE | O_RDWR, 04755, 0, 0 },
	{ "openat O_RDONLY, mode ignored", "openat", AT_FDCWD, 0, O_RDONLY, 04755, ALLOW },
	{ "openat O_CREAT 0644",  "openat", AT_FDCWD, 0, O_CREAT | O_WRONLY, 0644, ALLOW },
	{ "openat O_CREAT 04755", "openat", AT_FDCWD, 0, O_CREAT | O_WRONLY, 04755, 0 },
	{ "openat O_CREAT 02755|junk<<32", "openat", AT_FDCWD, 0, O_CREAT, (7ULL << 32) | 02755, 0 },
	{ "openat O_TMPFILE 02700", "openat", AT_FDCWD, 0, O_TMPFILE | O_WRONLY, 02700, 0 },
	{ "creat 0644",           "creat", 0, 0644, 0, 0, ALLOW },
	{ "creat 04711",          "creat", 0, 04711, 0, 0, 0 },
	{ "mkdir 0755",           "mkdir", 0, 0755, 0, 0, ALLOW },
	{ "mkdir 01777",          "mkdir", 0, 01777, 0, 0, ALLOW },
	{ "mkdir 02775",          "mkdir", 0, 02775, 0, 0, 0 },
	{ "mkdirat 0700",         "mkdirat", AT_FDCWD, 0, 0700, 0, ALLOW },
	{ "mkdirat 02775",        "mkdirat", AT_FDCWD, 0, 02775, 0, 0 },
	{ "mknod S_IFIFO|0644",   "mknod", 0, S_IFIFO | 0644, 0, 0, ALLOW },
	{ "mknod S_IFREG|04755",  "mknod", 0, S_IFREG | 04755, 0, 0, 0 },
	{ "mknodat S_IFREG|0644", "mknodat", AT_FDCWD, 0, S_IFREG | 0644, 0, ALLOW },
	{ "mknodat S_IFREG|02755", "mknodat", AT_FDCWD, 0, S_IFREG | 02755, 0, 0 },
	/* openat2's mode is in memory: ENOSYS, libc falls back to openat */
	{ "openat2",              "openat2", AT_FDCWD, 0, 0, 0, ENOSYS_ },
};

static void run_table4(const struct prog *p, const struct kase4 *t, size_t n, uint32_t deny)
{
	int bad = 0;

	for (size_t i = 0; i < n; i++) {
		uint32_t want = t[i].want ? t[i].want : deny;
		uint32_t got = decide_arch4(p, AUDIT_ARCH_X86_64, nr_of(t[i].sys),
		                            t[i].a0, t[i].a1, t[i].a2, t[i].a3);

		if (got != want) {
			bad++;
			print_error("%s: got %s, want %s\n", t[i].what, act_name(got), act_name(want));
		}
	}
	if (bad)
		fail_msg("%d of %zu decisions wrong", bad, n);
}

static void test_decisions_modes(void **state)
{
	static const enum wdeny_action acts[] = { WDENY_ERRNO, WDENY_ERRNO, WDENY_KILL };
	static const bool audits[] = { true, false, false };
	static const uint32_t deny[] = { NOTIFY, EPERM_, KILL };

	for (size_t i = 0; i < ARRAY_SIZE(acts); i++) {
		struct wpolicy pol = policy(acts[i], audits[i]);
		struct prog p = export(&pol);

		run_table4(&p, mode_cases, ARRAY_SIZE(mode_cases), deny[i]);
		free(p.insn);
	}
}

static void test_decisions_audit(void **state)
{
	struct wpolicy pol = policy(WDENY_ERRNO, true);
	struct prog p = export(&pol);

	run_table(&p, common_cases, ARRAY_SIZE(common_cases), NOTIFY);
	free(p.insn);
}

static void test_decisions_errno(void **state)
{
	struct wpolicy pol = policy(WDENY_ERRNO, false);
	struct prog p = export(&pol);

	run_table(&p, common_cases, ARRAY_SIZE(common_cases), EPERM_);
	free(p.insn);
}

static void test_decisions_kill(void **state)
{
	struct wpolicy pol = policy(WDENY_KILL, true);   /* audit does not matter */
	struct prog p = export(&pol);

	run_table(&p, common_cases, ARRAY_SIZE(common_cases), KILL);
	free(p.insn);
}

/* Foreign ABIs die whatever the policy: i386 (int $0x80), x32 (nr with bit
 * 30 set, same AUDIT_ARCH as x86_64), anything else. */
static void test_foreign_abis(void **state)
{
	static const enum wdeny_action acts[] = { WDENY_ERRNO, WDENY_ERRNO, WDENY_KILL };
	static const bool audits[] = { true, false, false };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(acts); i++) {
		struct wpolicy pol = policy(acts[i], audits[i]);
		struct prog p = export(&pol);

		assert_int_equal(decide_arch(&p, AUDIT_ARCH_I386, 20, 0, 0, 0), KILL);   /* getpid */
		assert_int_equal(decide_arch(&p, AUDIT_ARCH_I386, 3, 0, 0, 0), KILL);    /* read */
		assert_int_equal(decide_arch(&p, AUDIT_ARCH_AARCH64, 63, 0, 0, 0), KILL);
		assert_int_equal(decide(&p, X32_BIT | __NR_getpid, 0, 0, 0), KILL);
		assert_int_equal(decide(&p, X32_BIT | __NR_read, 0, 0, 0), KILL);
		assert_int_equal(decide(&p, X32_BIT | 512, 0, 0, 0), KILL);   /* x32 readv... */
		/* nr -1 is the "skip this call" of tracers, not x32: libseccomp
		 * lets it reach the default action, and the kernel runs nothing */
		assert_int_equal(decide(&p, -1, 0, 0, 0), acts[i] == WDENY_KILL ? KILL :
		                 audits[i] ? NOTIFY : EPERM_);
		/* while the native call is fine */
		assert_int_equal(decide(&p, __NR_getpid, 0, 0, 0), ALLOW);
		free(p.insn);
	}
}

/* Every command but the two excluded ones passes, with any upper half:
 * checks the covering rules of allow_arg32_except() exhaustively around the
 * tty range and on a pseudo-random sample of the rest. */
static void test_ioctl_exhaustive(void **state)
{
	struct wpolicy pol = policy(WDENY_ERRNO, false);
	struct prog p = export(&pol);
	uint64_t his[] = { 0, 1ULL << 32, 0xffffffff00000000ULL };
	uint32_t cmd, x = 0x12345678;
	size_t h;
	int i, nr = nr_of("ioctl");

	for (h = 0; h < ARRAY_SIZE(his); h++) {
		for (cmd = 0x5300; cmd < 0x5600; cmd++) {
			uint32_t want = (cmd == TIOCSTI || cmd == TIOCLINUX) ? EPERM_ : ALLOW;
			uint32_t got = decide(&p, nr, 0, his[h] | cmd, 0);

			if (got != want)
				fail_msg("ioctl 0x%llx: %s", (unsigned long long)(his[h] | cmd),
				         act_name(got));
		}
		for (i = 0; i < 20000; i++) {
			x ^= x << 13; x ^= x >> 17; x ^= x << 5;   /* xorshift32 */
			cmd = x;
			if (cmd == TIOCSTI || cmd == TIOCLINUX)
				continue;
			if (decide(&p, nr, 0, his[h] | cmd, 0) != ALLOW)
				fail_msg("ioctl 0x%x denied", cmd);
		}
		/* each single-bit neighbour of the excluded values is allowed */
		for (i = 0; i < 32; i++) {
			assert_int_equal(decide(&p, nr, 0, his[h] | (TIOCSTI ^ (1u << i)), 0), ALLOW);
			assert_int_equal(decide(&p, nr, 0, his[h] | (TIOCLINUX ^ (1u << i)), 0), ALLOW);
		}
	}
	free(p.insn);
}

/* Every unconditional allowlist entry is allowed; the list is sorted, has no
 * duplicates and never names a forbidden syscall. */
static void test_allowlist(void **state)
{
	static const char *const conditional[] = {
		"chmod", "clone", "creat", "fchmod", "fchmodat", "fchmodat2", "ioctl",
		"mkdir", "mkdirat", "mknod", "mknodat", "open", "openat", "personality",
		"prlimit64", "socket", "socketpair",
	};
	struct wpolicy pol = policy(WDENY_ERRNO, true);
	struct prog p = export(&pol);
	size_t i, j, known = 0;

	assert_true(wfilter_allowlist_n > 200);
	for (i = 0; i < wfilter_allowlist_n; i++) {
		const char *s = wfilter_allowlist[i];
		bool cond = false;
		int nr;

		if (i > 0 && strcmp(wfilter_allowlist[i - 1], s) >= 0)
			fail_msg("allowlist not sorted/unique at %s", s);
		if (wfilter_is_forbidden(s))
			fail_msg("%s is both allowed and forbidden", s);
		for (j = 0; j < ARRAY_SIZE(conditional); j++)
			cond |= strcmp(conditional[j], s) == 0;
		nr = seccomp_syscall_resolve_name(s);
		if (nr < 0 || cond)
			continue;
		known++;
		if (decide(&p, nr, 0, 0, 0) != ALLOW)
			fail_msg("%s (%d) is not allowed", s, nr);
	}
	assert_true(known > 200);
	free(p.insn);
}

static void test_is_forbidden(void **state)
{
	static const char *const yes[] = {
		"ptrace", "process_vm_readv", "process_vm_writev", "bpf", "perf_event_open",
		"userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
		"mount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen",
		"fsconfig", "fsmount", "fspick", "mount_setattr", "unshare", "setns",
		"kexec_load", "kexec_file_load", "init_module", "finit_module",
		"delete_module", "add_key", "request_key", "keyctl", "settimeofday",
		"clock_settime", "clock_adjtime", "adjtimex", "acct", "swapon", "swapoff",
		"reboot", "quotactl", "open_by_handle_at", "name_to_handle_at", "iopl",
		"ioperm", "syslog", "chroot", "clone3", "fanotify_init", "kcmp",
		"pidfd_getfd", "lsm_set_self_attr", "vhangup", "uselib", "_sysctl",
	};
	static const char *const no[] = {
		"read", "clone", "socket", "ioctl", "seccomp", "landlock_restrict_self",
		"prctl", "sethostname", "personality", "", "PTRACE", "ptrace ",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(yes); i++)
		if (!wfilter_is_forbidden(yes[i]))
			fail_msg("%s should be forbidden", yes[i]);
	for (i = 0; i < ARRAY_SIZE(no); i++)
		if (wfilter_is_forbidden(no[i]))
			fail_msg("\"%s\" should not be forbidden", no[i]);
	assert_false(wfilter_is_forbidden(NULL));
}

/* One table of forbidden calls (policy/forbidden.c): sorted, unique, each
 * with its reason, and the calls answered ENOSYS are exactly clone3 and
 * openat2, which the filter answers so. */
static void test_forbidden_table(void **state)
{
	struct wpolicy pol = policy(WDENY_ERRNO, true);
	struct prog p = export(&pol);
	size_t i, enosys = 0;

	assert_true(wfilter_forbidden_n > 60);
	for (i = 0; i < wfilter_forbidden_n; i++) {
		const struct wfilter_forbidden *f = &wfilter_forbidden[i];
		int nr = seccomp_syscall_resolve_name(f->name);

		if (i > 0 && strcmp(wfilter_forbidden[i - 1].name, f->name) >= 0)
			fail_msg("forbidden[] not sorted/unique at %s", f->name);
		if (!f->why || !*f->why)
			fail_msg("%s has no reason", f->name);
		assert_ptr_equal(wfilter_forbidden_why(f->name), f->why);
		if (f->enosys) {
			enosys++;
			assert_true(nr >= 0);
			assert_int_equal(decide(&p, nr, 0, 0, 0), ENOSYS_);
		} else if (nr >= 0) {
			assert_int_equal(decide(&p, nr, 0, 0, 0), NOTIFY);
		}
	}
	assert_int_equal(enosys, 2);
	assert_null(wfilter_forbidden_why("read"));
	assert_null(wfilter_forbidden_why(NULL));
	free(p.insn);
}

static void test_allow_extra(void **state)
{
	struct wpolicy pol = policy(WDENY_ERRNO, true);
	struct prog p;

	pol.allow_extra = STRV("sethostname", "modify_ldt", "ioctl", "socket");
	p = export(&pol);
	assert_int_equal(decide(&p, nr_of("sethostname"), 0, 0, 0), ALLOW);
	assert_int_equal(decide(&p, nr_of("modify_ldt"), 0, 0, 0), ALLOW);
	assert_int_equal(decide(&p, nr_of("setdomainname"), 0, 0, 0), NOTIFY);
	/* naming an allowlisted call keeps its argument conditions */
	assert_int_equal(decide(&p, nr_of("ioctl"), 0, TIOCSTI, 0), NOTIFY);
	assert_int_equal(decide(&p, nr_of("socket"), AF_PACKET, SOCK_RAW, 0), NOTIFY);
	assert_int_equal(decide(&p, nr_of("read"), 0, 0, 0), ALLOW);
	free(p.insn);
}

static void test_deny_extra(void **state)
{
	struct wpolicy pol = policy(WDENY_ERRNO, false);
	struct prog p;

	pol.deny_extra = STRV("socket", "personality", "sethostname", "ptrace");
	pol.allow_extra = STRV("sethostname");   /* deny_extra wins */
	p = export(&pol);
	assert_int_equal(decide(&p, nr_of("socket"), AF_INET, SOCK_STREAM, 0), EPERM_);
	assert_int_equal(decide(&p, nr_of("socket"), AF_UNIX, SOCK_STREAM, 0), EPERM_);
	assert_int_equal(decide(&p, nr_of("personality"), 0xffffffff, 0, 0), EPERM_);
	assert_int_equal(decide(&p, nr_of("sethostname"), 0, 0, 0), EPERM_);
	assert_int_equal(decide(&p, nr_of("socketpair"), AF_UNIX, SOCK_STREAM, 0), ALLOW);
	assert_int_equal(decide(&p, nr_of("read"), 0, 0, 0), ALLOW);
	free(p.insn);
}

static void build_fails(struct wpolicy *pol, const char *phrase)
{
	struct werr err = { 0 };
	scmp_filter_ctx ctx = (scmp_filter_ctx)&err;   /* must be reset to NULL */

	assert_int_equal(wfilter_build(pol, &ctx, &err), -1);
	assert_null(ctx);
	if (!strstr(err.msg, phrase))
		fail_msg("want '%s' in: %s", phrase, err.msg);
}

static void test_bad_extras(void **state)
{
	struct wpolicy pol = policy(WDENY_ERRNO, true);

	pol.allow_extra = STRV("read", "ptrace");
	build_fails(&pol, "\"ptrace\" can never be allowed");
	pol.allow_extra = STRV("clone3");
	build_fails(&pol, "\"clone3\" can never be allowed");
	pol.allow_extra = STRV("io_uring_setup");
	build_fails(&pol, "io_uring");
	pol.allow_extra = STRV("no_such_call");
	build_fails(&pol, "unknown syscall \"no_such_call\"");
	pol.allow_extra = (struct wstrv){ 0 };
	pol.deny_extra = STRV("raed");
	build_fails(&pol, "deny_extra: unknown syscall \"raed\"");
	/* a forbidden name in deny_extra is redundant, not an error */
	pol.deny_extra = STRV("ptrace", "lsm_set_self_attr");
	{
		struct prog p = export(&pol);
		free(p.insn);
	}
	build_fails(NULL, "no policy");
}

static void test_load_args(void **state)
{
	struct werr err = { 0 };
	int fd = 42;

	assert_int_equal(wfilter_load(NULL, &fd, &err), -1);
	assert_int_equal(fd, -1);
	assert_true(strstr(err.msg, "no filter") != NULL);
}

/* The programs compiled at build time are exactly what libseccomp builds at
 * run time for the same policy, and a policy with extras never uses them. */
static void test_prebuilt_matches_runtime(void **state)
{
	static const struct { enum wdeny_action act; bool audit; } cases[] = {
		{ WDENY_ERRNO, true }, { WDENY_ERRNO, false }, { WDENY_KILL, true },
	};
	struct wpolicy extra;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct wpolicy pol = policy(cases[i].act, cases[i].audit);
		const struct wfilter_prog *w = wfilter_find_prebuilt(&pol);
		struct prog rt;

		assert_non_null(w);
		assert_int_equal(w->notify, cases[i].act == WDENY_ERRNO && cases[i].audit);
		rt = export(&pol);
		assert_int_equal(w->len, rt.n);
		assert_memory_equal(w->insns, rt.insn, rt.n * sizeof(struct sock_filter));
		free(rt.insn);
	}
	extra = policy(WDENY_ERRNO, true);
	extra.allow_extra = STRV("personality");
	assert_null(wfilter_find_prebuilt(&extra));
	extra = policy(WDENY_ERRNO, true);
	extra.deny_extra = STRV("mincore");
	assert_null(wfilter_find_prebuilt(&extra));
}


/* ---------------------------------------------------------------------- */
/* Learning (wfilter_build_learn, wfilter_eval: docs/learn.md)             */

/* Argument patterns tried for every call: zeros, set-id modes with
 * O_CREAT (denied for the open family), AT_EMPTY_PATH in each flags
 * position, junk in the upper halves, all ones. */
static const uint64_t learn_args[][4] = {
	{ 0, 0, 0, 0 },
	{ (uint64_t)AT_FDCWD, 0x1000, O_CREAT | O_WRONLY, S_ISUID | 0755 },
	{ (uint64_t)AT_FDCWD, 0x1000, O_RDONLY, 0 },
	{ 3, 0x1000, AT_EMPTY_PATH, AT_EMPTY_PATH },
	{ 3, 0x1000, 0, AT_EMPTY_PATH },
	{ 0xffffffff00000003ULL, 0x1000, 0xffffffff00000000ULL | O_CREAT, S_ISGID },
	{ AF_INET, SOCK_STREAM, 0, 0 },
	{ ~0ULL, ~0ULL, ~0ULL, ~0ULL },
};

/* For every number (and a foreign arch), the learning filter answers what
 * the policy's own filter answers, or NOTIFY where that one ALLOWs a call
 * of the learn set; and every call of the learn set with plain arguments
 * notifies (but fstat's AT_EMPTY_PATH form).  The supervisor's guarantee
 * (a learner never turns a denied call into an allowed one) rests on the
 * first half; learning itself on the second. */
static void test_learn_filter(void **state)
{
	static const enum wdeny_action acts[] = { WDENY_ERRNO, WDENY_ERRNO, WDENY_KILL };
	static const bool audits[] = { true, false, false };
	const uint32_t arches[] = { AUDIT_ARCH_X86_64, AUDIT_ARCH_I386 };

	for (size_t m = 0; m < ARRAY_SIZE(acts); m++) {
		struct wpolicy pol = policy(acts[m], audits[m]);
		struct prog n = export_as(&pol, false), l = export_as(&pol, true);
		int bad = 0, notified = 0;

		for (size_t a = 0; a < ARRAY_SIZE(arches); a++)
			for (int nr = -1; nr < 480; nr++)
				for (size_t k = 0; k < ARRAY_SIZE(learn_args); k++) {
					const uint64_t *x = learn_args[k];
					uint32_t dn = decide_arch4(&n, arches[a], nr, x[0], x[1], x[2], x[3]);
					uint32_t dl = decide_arch4(&l, arches[a], nr, x[0], x[1], x[2], x[3]);
					bool learns = arches[a] == AUDIT_ARCH_X86_64 && wfilter_learn_nr(nr);

					if (dl == dn && !(learns && dn == ALLOW && dl == ALLOW && k < 3 &&
					                  nr != nr_of("newfstatat") && nr != nr_of("statx")))
						continue;
					if (dl == NOTIFY && dn == ALLOW && learns) {
						notified++;
						continue;
					}
					if (bad++ < 10)
						print_error("mode %zu, arch %x, nr %d, args %zu: learning %s, "
						            "policy %s\n", m, arches[a], nr, k, act_name(dl),
						            act_name(dn));
				}
		if (bad)
			fail_msg("%d decisions of the learning filter differ", bad);
		assert_true(notified > 0);
		free(n.insn);
		free(l.insn);
	}
}

/* fstat is not looked at: newfstatat and statx with AT_EMPTY_PATH stay
 * allowed, with any other flags they notify. */
static void test_learn_fstat(void **state)
{
	struct wpolicy pol = policy(WDENY_ERRNO, true);
	struct prog l = export_as(&pol, true);

	assert_int_equal(decide_arch4(&l, AUDIT_ARCH_X86_64, nr_of("newfstatat"), 3, 0x1000, 0x2000,
	                              AT_EMPTY_PATH), ALLOW);
	assert_int_equal(decide_arch4(&l, AUDIT_ARCH_X86_64, nr_of("newfstatat"), AT_FDCWD, 0x1000,
	                              0x2000, AT_SYMLINK_NOFOLLOW), NOTIFY);
	assert_int_equal(decide_arch4(&l, AUDIT_ARCH_X86_64, nr_of("statx"), 3, 0x1000,
	                              AT_EMPTY_PATH, 0), ALLOW);
	assert_int_equal(decide_arch4(&l, AUDIT_ARCH_X86_64, nr_of("statx"), AT_FDCWD, 0x1000, 0, 0),
	                 NOTIFY);
	assert_int_equal(decide(&l, nr_of("getpid"), 0, 0, 0), ALLOW);
	assert_int_equal(decide(&l, nr_of("ptrace"), 0, 0, 0), NOTIFY);
	free(l.insn);
}

/* wfilter_eval (what the supervisor runs) agrees with this file's
 * interpreter on both programs of every mode, and with allow_extra. */
static void test_eval_agrees(void **state)
{
	struct wpolicy pols[4] = { policy(WDENY_ERRNO, true), policy(WDENY_ERRNO, false),
	                           policy(WDENY_KILL, true), policy(WDENY_ERRNO, true) };

	pols[3].allow_extra = STRV("sethostname");
	for (size_t m = 0; m < ARRAY_SIZE(pols); m++)
		for (int learn = 0; learn < 2; learn++) {
			struct prog p = export_as(&pols[m], learn);

			for (int nr = -1; nr < 480; nr++)
				for (size_t k = 0; k < ARRAY_SIZE(learn_args); k++) {
					struct seccomp_data d = { .nr = nr, .arch = AUDIT_ARCH_X86_64 };

					memcpy(d.args, learn_args[k], sizeof(learn_args[k]));
					if (wfilter_eval(p.insn, p.n, &d) != bpf_run(&p, &d))
						fail_msg("mode %zu learn %d nr %d args %zu: wfilter_eval %s",
						         m, learn, nr, k, act_name(wfilter_eval(p.insn, p.n, &d)));
				}
			free(p.insn);
		}
}

/* A program seccomp would refuse, or one that never returns, is never an
 * ALLOW: KILL_PROCESS. */
static void test_eval_rejects(void **state)
{
	const struct seccomp_data d = { .nr = 39, .arch = AUDIT_ARCH_X86_64 };
	const struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	const struct sock_filter bad[][2] = {
		{ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 2), allow },       /* unaligned */
		{ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 64), allow },      /* past the data */
		{ BPF_STMT(BPF_JMP | BPF_JA, 1), allow },              /* out of the program */
		{ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 5, 0), allow },   /* A is 0: taken */
		{ BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 0), allow },      /* not seccomp's */
		{ BPF_STMT(BPF_ST, 16), allow },                      /* scratch out of range */
		{ BPF_STMT(BPF_ALU | BPF_DIV | BPF_K, 0), allow },
		{ BPF_STMT(BPF_LD | BPF_IMM, 0), BPF_STMT(BPF_LD | BPF_IMM, 0) },   /* no RET */
	};

	assert_int_equal(wfilter_eval(&allow, 1, &d), SECCOMP_RET_ALLOW);
	assert_int_equal(wfilter_eval(NULL, 0, &d), KILL);
	assert_int_equal(wfilter_eval(&allow, 0, &d), KILL);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		if (wfilter_eval(bad[i], 2, &d) != KILL)
			fail_msg("bad program %zu was not refused", i);
}

/* The learn set: sorted, every name a syscall libseccomp knows and on the
 * allowlist (learning looks only at what the policy allows). */
static void test_learn_names(void **state)
{
	for (size_t i = 0; i < wfilter_learn_calls_n; i++) {
		const char *name = wfilter_learn_calls[i].name;
		bool listed = false;

		if (i)
			assert_true(strcmp(wfilter_learn_calls[i - 1].name, name) < 0);
		assert_ptr_equal(wfilter_learn_call(nr_of(name)), &wfilter_learn_calls[i]);
		for (size_t j = 0; j < wfilter_allowlist_n; j++)
			listed |= !strcmp(wfilter_allowlist[j], name);
		if (!listed)
			fail_msg("%s is in the learn set but not on the allowlist", name);
	}
	assert_false(wfilter_learn_nr(nr_of("getpid")));
	assert_false(wfilter_learn_nr(-1));
	assert_false(wfilter_learn_nr(100000));
}

int main(void)
{
	const struct CMUnitTest decisions[] = {
		cmocka_unit_test(test_decisions_audit),
		cmocka_unit_test(test_decisions_errno),
		cmocka_unit_test(test_decisions_kill),
		cmocka_unit_test(test_decisions_modes),
		cmocka_unit_test(test_foreign_abis),
		cmocka_unit_test(test_ioctl_exhaustive),
		cmocka_unit_test(test_allowlist),
		cmocka_unit_test(test_is_forbidden),
		cmocka_unit_test(test_forbidden_table),
		cmocka_unit_test(test_allow_extra),
		cmocka_unit_test(test_deny_extra),
		cmocka_unit_test(test_bad_extras),
		cmocka_unit_test(test_load_args),
		cmocka_unit_test(test_prebuilt_matches_runtime),
		cmocka_unit_test(test_learn_filter),
		cmocka_unit_test(test_learn_fstat),
		cmocka_unit_test(test_eval_agrees),
		cmocka_unit_test(test_eval_rejects),
		cmocka_unit_test(test_learn_names),
	};

	return cmocka_run_group_tests_name("filter decisions", decisions, NULL, NULL);
}
