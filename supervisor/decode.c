/* Decoding a denied syscall's arguments for display (supervisor/decode.h).
 *
 * The arguments come from the jail and are hostile, but only as numbers:
 * each is looked up in a fixed table or printed as a number, and the text
 * is built only from this file's names, digits and punctuation (no byte of
 * the jail reaches it).  One table per kind of argument; one row per
 * syscall naming each argument's kind.  To decode another syscall, add a
 * row; to name another value, add it to its kind's table. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "decode.h"
#include "warden/util.h"

struct name {
	uint64_t v;
	const char *n;
};

#define N(x) { x, #x }

/* Values and bits are spelled as numbers (with the kernel's name) so the
 * tables do not depend on which headers this libc has. */
static const struct name af_names[] = {
	{ 0, "AF_UNSPEC" }, { 1, "AF_UNIX" }, { 2, "AF_INET" }, { 3, "AF_AX25" },
	{ 4, "AF_IPX" }, { 5, "AF_APPLETALK" }, { 9, "AF_X25" }, { 10, "AF_INET6" },
	{ 15, "AF_KEY" }, { 16, "AF_NETLINK" }, { 17, "AF_PACKET" }, { 29, "AF_CAN" },
	{ 30, "AF_TIPC" }, { 31, "AF_BLUETOOTH" }, { 38, "AF_ALG" }, { 40, "AF_VSOCK" },
	{ 44, "AF_XDP" }, { 45, "AF_MCTP" },
};

/* the low four bits of a socket type are the type, the rest flags */
static const struct name socktype_names[] = {
	{ 1, "SOCK_STREAM" }, { 2, "SOCK_DGRAM" }, { 3, "SOCK_RAW" }, { 4, "SOCK_RDM" },
	{ 5, "SOCK_SEQPACKET" }, { 6, "SOCK_DCCP" }, { 10, "SOCK_PACKET" },
};
static const struct name sockflag_names[] = {
	{ 00004000, "SOCK_NONBLOCK" }, { 02000000, "SOCK_CLOEXEC" },
};

static const struct name ptrace_names[] = {
	{ 0, "PTRACE_TRACEME" }, { 1, "PTRACE_PEEKTEXT" }, { 2, "PTRACE_PEEKDATA" },
	{ 3, "PTRACE_PEEKUSER" }, { 4, "PTRACE_POKETEXT" }, { 5, "PTRACE_POKEDATA" },
	{ 6, "PTRACE_POKEUSER" }, { 7, "PTRACE_CONT" }, { 8, "PTRACE_KILL" },
	{ 9, "PTRACE_SINGLESTEP" }, { 12, "PTRACE_GETREGS" }, { 13, "PTRACE_SETREGS" },
	{ 16, "PTRACE_ATTACH" }, { 17, "PTRACE_DETACH" }, { 24, "PTRACE_SYSCALL" },
	{ 0x4200, "PTRACE_SETOPTIONS" }, { 0x4201, "PTRACE_GETEVENTMSG" },
	{ 0x4202, "PTRACE_GETSIGINFO" }, { 0x4203, "PTRACE_SETSIGINFO" },
	{ 0x4204, "PTRACE_GETREGSET" }, { 0x4205, "PTRACE_SETREGSET" },
	{ 0x4206, "PTRACE_SEIZE" }, { 0x4207, "PTRACE_INTERRUPT" }, { 0x4208, "PTRACE_LISTEN" },
};

static const struct name clone_names[] = {
	{ 0x00000100, "CLONE_VM" }, { 0x00000200, "CLONE_FS" }, { 0x00000400, "CLONE_FILES" },
	{ 0x00000800, "CLONE_SIGHAND" }, { 0x00001000, "CLONE_PIDFD" },
	{ 0x00002000, "CLONE_PTRACE" }, { 0x00004000, "CLONE_VFORK" },
	{ 0x00008000, "CLONE_PARENT" }, { 0x00010000, "CLONE_THREAD" },
	{ 0x00020000, "CLONE_NEWNS" }, { 0x00040000, "CLONE_SYSVSEM" },
	{ 0x00080000, "CLONE_SETTLS" }, { 0x00100000, "CLONE_PARENT_SETTID" },
	{ 0x00200000, "CLONE_CHILD_CLEARTID" }, { 0x00400000, "CLONE_DETACHED" },
	{ 0x00800000, "CLONE_UNTRACED" }, { 0x01000000, "CLONE_CHILD_SETTID" },
	{ 0x02000000, "CLONE_NEWCGROUP" }, { 0x04000000, "CLONE_NEWUTS" },
	{ 0x08000000, "CLONE_NEWIPC" }, { 0x10000000, "CLONE_NEWUSER" },
	{ 0x20000000, "CLONE_NEWPID" }, { 0x40000000, "CLONE_NEWNET" },
	{ 0x80000000, "CLONE_IO" },
};

static const struct name signal_names[] = {
	{ 1, "SIGHUP" }, { 2, "SIGINT" }, { 3, "SIGQUIT" }, { 4, "SIGILL" }, { 5, "SIGTRAP" },
	{ 6, "SIGABRT" }, { 7, "SIGBUS" }, { 8, "SIGFPE" }, { 9, "SIGKILL" }, { 10, "SIGUSR1" },
	{ 11, "SIGSEGV" }, { 12, "SIGUSR2" }, { 13, "SIGPIPE" }, { 14, "SIGALRM" },
	{ 15, "SIGTERM" }, { 16, "SIGSTKFLT" }, { 17, "SIGCHLD" }, { 18, "SIGCONT" },
	{ 19, "SIGSTOP" }, { 20, "SIGTSTP" }, { 21, "SIGTTIN" }, { 22, "SIGTTOU" },
	{ 23, "SIGURG" }, { 24, "SIGXCPU" }, { 25, "SIGXFSZ" }, { 26, "SIGVTALRM" },
	{ 27, "SIGPROF" }, { 28, "SIGWINCH" }, { 29, "SIGIO" }, { 30, "SIGPWR" }, { 31, "SIGSYS" },
};

/* O_ACCMODE is a value, the rest bits (x86_64 / generic numbering) */
static const struct name openacc_names[] = {
	{ 0, "O_RDONLY" }, { 1, "O_WRONLY" }, { 2, "O_RDWR" },
};
static const struct name openflag_names[] = {
	{ 0100, "O_CREAT" }, { 0200, "O_EXCL" }, { 0400, "O_NOCTTY" }, { 01000, "O_TRUNC" },
	{ 02000, "O_APPEND" }, { 04000, "O_NONBLOCK" }, { 010000, "O_DSYNC" },
	{ 020000, "O_ASYNC" }, { 040000, "O_DIRECT" }, { 0200000, "O_DIRECTORY" },
	{ 0400000, "O_NOFOLLOW" }, { 01000000, "O_NOATIME" }, { 02000000, "O_CLOEXEC" },
	{ 04010000, "O_SYNC" }, { 010000000, "O_PATH" }, { 020200000, "O_TMPFILE" },
	{ 01000000000, "O_LARGEFILE" },
};
/* userfaultfd, eventfd, ...: only these */
static const struct name fdflag_names[] = {
	{ 1, "UFFD_USER_MODE_ONLY" }, { 04000, "O_NONBLOCK" }, { 02000000, "O_CLOEXEC" },
};

static const struct name ioctl_names[] = {
	{ 0x5401, "TCGETS" }, { 0x5402, "TCSETS" }, { 0x540e, "TIOCSCTTY" },
	{ 0x540f, "TIOCGPGRP" }, { 0x5410, "TIOCSPGRP" }, { 0x5412, "TIOCSTI" },
	{ 0x5413, "TIOCGWINSZ" }, { 0x5414, "TIOCSWINSZ" }, { 0x541b, "FIONREAD" },
	{ 0x541c, "TIOCLINUX" }, { 0x5421, "FIONBIO" }, { 0x5423, "TIOCSETD" },
	{ 0x5451, "FIOCLEX" }, { 0x5450, "FIONCLEX" }, { 0x5437, "TIOCVHANGUP" },
	{ 0x4b3a, "KDSETMODE" }, { 0x4b32, "KDMKTONE" }, { 0x4b2f, "KIOCSOUND" },
	{ 0x40049409, "BTRFS_IOC_CLONE" }, { 0xc018ae85, "KVM_CREATE_VM" },
};

static const struct name mount_names[] = {
	{ 0x1, "MS_RDONLY" }, { 0x2, "MS_NOSUID" }, { 0x4, "MS_NODEV" }, { 0x8, "MS_NOEXEC" },
	{ 0x10, "MS_SYNCHRONOUS" }, { 0x20, "MS_REMOUNT" }, { 0x40, "MS_MANDLOCK" },
	{ 0x80, "MS_DIRSYNC" }, { 0x100, "MS_NOSYMFOLLOW" }, { 0x400, "MS_NOATIME" },
	{ 0x800, "MS_NODIRATIME" }, { 0x1000, "MS_BIND" }, { 0x2000, "MS_MOVE" },
	{ 0x4000, "MS_REC" }, { 0x8000, "MS_SILENT" }, { 0x10000, "MS_POSIXACL" },
	{ 0x20000, "MS_UNBINDABLE" }, { 0x40000, "MS_PRIVATE" }, { 0x80000, "MS_SLAVE" },
	{ 0x100000, "MS_SHARED" }, { 0x200000, "MS_RELATIME" }, { 0x1000000, "MS_STRICTATIME" },
	{ 0x2000000, "MS_LAZYTIME" },
};
static const struct name umount_names[] = {
	{ 1, "MNT_FORCE" }, { 2, "MNT_DETACH" }, { 4, "MNT_EXPIRE" }, { 8, "UMOUNT_NOFOLLOW" },
};

static const struct name keyctl_names[] = {
	{ 0, "KEYCTL_GET_KEYRING_ID" }, { 1, "KEYCTL_JOIN_SESSION_KEYRING" },
	{ 2, "KEYCTL_UPDATE" }, { 3, "KEYCTL_REVOKE" }, { 4, "KEYCTL_CHOWN" },
	{ 5, "KEYCTL_SETPERM" }, { 6, "KEYCTL_DESCRIBE" }, { 7, "KEYCTL_CLEAR" },
	{ 8, "KEYCTL_LINK" }, { 9, "KEYCTL_UNLINK" }, { 10, "KEYCTL_SEARCH" },
	{ 11, "KEYCTL_READ" }, { 12, "KEYCTL_INSTANTIATE" }, { 13, "KEYCTL_NEGATE" },
	{ 14, "KEYCTL_SET_REQKEY_KEYRING" }, { 15, "KEYCTL_SET_TIMEOUT" },
	{ 16, "KEYCTL_ASSUME_AUTHORITY" }, { 17, "KEYCTL_GET_SECURITY" },
	{ 18, "KEYCTL_SESSION_TO_PARENT" }, { 19, "KEYCTL_REJECT" },
	{ 20, "KEYCTL_INSTANTIATE_IOV" }, { 21, "KEYCTL_INVALIDATE" },
	{ 22, "KEYCTL_GET_PERSISTENT" }, { 23, "KEYCTL_DH_COMPUTE" },
	{ 29, "KEYCTL_RESTRICT_KEYRING" }, { 30, "KEYCTL_MOVE" }, { 31, "KEYCTL_CAPABILITIES" },
	{ 32, "KEYCTL_WATCH_KEY" },
};

static const struct name bpf_names[] = {
	{ 0, "BPF_MAP_CREATE" }, { 1, "BPF_MAP_LOOKUP_ELEM" }, { 2, "BPF_MAP_UPDATE_ELEM" },
	{ 3, "BPF_MAP_DELETE_ELEM" }, { 4, "BPF_MAP_GET_NEXT_KEY" }, { 5, "BPF_PROG_LOAD" },
	{ 6, "BPF_OBJ_PIN" }, { 7, "BPF_OBJ_GET" }, { 8, "BPF_PROG_ATTACH" },
	{ 9, "BPF_PROG_DETACH" }, { 10, "BPF_PROG_TEST_RUN" }, { 11, "BPF_PROG_GET_NEXT_ID" },
	{ 12, "BPF_MAP_GET_NEXT_ID" }, { 13, "BPF_PROG_GET_FD_BY_ID" },
	{ 14, "BPF_MAP_GET_FD_BY_ID" }, { 15, "BPF_OBJ_GET_INFO_BY_FD" },
	{ 16, "BPF_PROG_QUERY" }, { 17, "BPF_RAW_TRACEPOINT_OPEN" }, { 18, "BPF_BTF_LOAD" },
	{ 28, "BPF_LINK_CREATE" }, { 36, "BPF_TOKEN_CREATE" },
};

static const struct name rlimit_names[] = {
	{ 0, "RLIMIT_CPU" }, { 1, "RLIMIT_FSIZE" }, { 2, "RLIMIT_DATA" }, { 3, "RLIMIT_STACK" },
	{ 4, "RLIMIT_CORE" }, { 5, "RLIMIT_RSS" }, { 6, "RLIMIT_NPROC" }, { 7, "RLIMIT_NOFILE" },
	{ 8, "RLIMIT_MEMLOCK" }, { 9, "RLIMIT_AS" }, { 10, "RLIMIT_LOCKS" },
	{ 11, "RLIMIT_SIGPENDING" }, { 12, "RLIMIT_MSGQUEUE" }, { 13, "RLIMIT_NICE" },
	{ 14, "RLIMIT_RTPRIO" }, { 15, "RLIMIT_RTTIME" },
};

enum kind {
	K_NONE,      /* no such argument: the row ends here */
	K_HEX,       /* a number whose meaning we do not decode */
	K_PTR,       /* an address in the jail (a path, a struct): never read */
	K_INT,       /* a signed int (protocol, cpu) */
	K_UINT,      /* a count or size */
	K_FD,        /* a file descriptor: 32-bit, decimal */
	K_DIRFD,     /* ... or AT_FDCWD */
	K_PID,       /* a pid: 32-bit, signed decimal (0, -1, -pgid mean things) */
	K_MODE,      /* permission bits, octal */
	K_AF,        /* address family */
	K_SOCKTYPE,  /* socket type | SOCK_ flags */
	K_PTRACE,    /* ptrace request */
	K_CLONE,     /* clone flags | exit signal in the low byte */
	K_NSFLAGS,   /* unshare/setns: clone flags only */
	K_SIGNAL,    /* a signal number (0: just a check) */
	K_OPEN,      /* open flags: access mode | O_ flags */
	K_FDFLAGS,   /* O_NONBLOCK|O_CLOEXEC of a new fd */
	K_IOCTL,     /* ioctl request */
	K_MOUNT,     /* MS_ flags */
	K_UMOUNT,    /* MNT_ flags */
	K_KEYCTL,    /* keyctl command */
	K_BPF,       /* bpf command */
	K_RLIMIT,    /* resource of prlimit64 */
};

struct row {
	const char *name;
	unsigned char kind[6];
};

/* One row per syscall people meet in the audit log: those the filter
 * denies, or allows only with some arguments. */
static const struct row rows[] = {
	{ "socket",            { K_AF, K_SOCKTYPE, K_INT } },
	{ "socketpair",        { K_AF, K_SOCKTYPE, K_INT, K_PTR } },
	{ "ptrace",            { K_PTRACE, K_PID, K_PTR, K_PTR } },
	{ "kill",              { K_PID, K_SIGNAL } },
	{ "tkill",             { K_PID, K_SIGNAL } },
	{ "tgkill",            { K_PID, K_PID, K_SIGNAL } },
	{ "process_vm_readv",  { K_PID, K_PTR, K_UINT, K_PTR, K_UINT, K_HEX } },
	{ "process_vm_writev", { K_PID, K_PTR, K_UINT, K_PTR, K_UINT, K_HEX } },
	{ "pidfd_open",        { K_PID, K_HEX } },
	{ "pidfd_getfd",       { K_FD, K_FD, K_HEX } },
	{ "kcmp",              { K_PID, K_PID, K_HEX, K_HEX, K_HEX } },
	{ "clone",             { K_CLONE, K_PTR, K_PTR, K_PTR, K_PTR } },
	{ "clone3",            { K_PTR, K_UINT } },
	{ "unshare",           { K_NSFLAGS } },
	{ "setns",             { K_FD, K_NSFLAGS } },
	{ "chmod",             { K_PTR, K_MODE } },
	{ "fchmod",            { K_FD, K_MODE } },
	{ "fchmodat",          { K_DIRFD, K_PTR, K_MODE } },
	{ "fchmodat2",         { K_DIRFD, K_PTR, K_MODE, K_HEX } },
	{ "mkdir",             { K_PTR, K_MODE } },
	{ "mkdirat",           { K_DIRFD, K_PTR, K_MODE } },
	{ "mknod",             { K_PTR, K_MODE, K_HEX } },
	{ "mknodat",           { K_DIRFD, K_PTR, K_MODE, K_HEX } },
	{ "creat",             { K_PTR, K_MODE } },
	{ "open",              { K_PTR, K_OPEN, K_MODE } },
	{ "openat",            { K_DIRFD, K_PTR, K_OPEN, K_MODE } },
	{ "open_by_handle_at", { K_FD, K_PTR, K_OPEN } },
	{ "name_to_handle_at", { K_DIRFD, K_PTR, K_PTR, K_PTR, K_HEX } },
	{ "ioctl",             { K_FD, K_IOCTL, K_PTR } },
	{ "mount",             { K_PTR, K_PTR, K_PTR, K_MOUNT, K_PTR } },
	{ "umount2",           { K_PTR, K_UMOUNT } },
	{ "pivot_root",        { K_PTR, K_PTR } },
	{ "chroot",            { K_PTR } },
	{ "fsopen",            { K_PTR, K_HEX } },
	{ "fsmount",           { K_FD, K_HEX, K_HEX } },
	{ "open_tree",         { K_DIRFD, K_PTR, K_HEX } },
	{ "move_mount",        { K_DIRFD, K_PTR, K_DIRFD, K_PTR, K_HEX } },
	{ "mount_setattr",     { K_DIRFD, K_PTR, K_HEX, K_PTR, K_UINT } },
	{ "keyctl",            { K_KEYCTL, K_HEX, K_HEX, K_HEX, K_HEX } },
	{ "add_key",           { K_PTR, K_PTR, K_PTR, K_UINT, K_HEX } },
	{ "request_key",       { K_PTR, K_PTR, K_PTR, K_HEX } },
	{ "bpf",               { K_BPF, K_PTR, K_UINT } },
	{ "perf_event_open",   { K_PTR, K_PID, K_INT, K_FD, K_HEX } },
	{ "userfaultfd",       { K_FDFLAGS } },
	{ "io_uring_setup",    { K_UINT, K_PTR } },
	{ "personality",       { K_HEX } },
	{ "prlimit64",         { K_PID, K_RLIMIT, K_PTR, K_PTR } },
	{ "sethostname",       { K_PTR, K_UINT } },
	{ "setdomainname",     { K_PTR, K_UINT } },
	{ "init_module",       { K_PTR, K_UINT, K_PTR } },
	{ "finit_module",      { K_FD, K_PTR, K_HEX } },
	{ "kexec_load",        { K_HEX, K_UINT, K_PTR, K_HEX } },
	{ "reboot",            { K_HEX, K_HEX, K_HEX, K_PTR } },
	{ "acct",              { K_PTR } },
};

/* Text into a bounded buffer; what does not fit is cut and marked. */
struct out {
	char *buf;
	size_t len, off;
	bool cut;
};

__attribute__((format(printf, 2, 3)))
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->cut || !o->len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->off, o->len - o->off, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->len - o->off) {
		o->cut = true;
		o->off = o->len - 1;
	} else {
		o->off += (size_t)n;
	}
}

static const char *find(const struct name *t, size_t n, uint64_t v)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].v == v)
			return t[i].n;
	return NULL;
}

/* a value: its name, or hex */
static void put_value(struct out *o, const struct name *t, size_t n, uint64_t v)
{
	const char *s = find(t, n, v);

	if (s)
		put(o, "%s", s);
	else
		put(o, "0x%llx", (unsigned long long)v);
}

/* bits: the names of those set, "|"-joined, then what is left as hex;
 * 0 as "0".  A name with several bits (O_SYNC) counts only when all are set.
 * sep tells whether something was written before (then "|" first). */
static void put_bits(struct out *o, const struct name *t, size_t n, uint64_t v, bool sep)
{
	uint64_t left = v;

	for (size_t i = 0; i < n; i++) {
		if ((v & t[i].v) == t[i].v && (left & t[i].v)) {
			put(o, "%s%s", sep ? "|" : "", t[i].n);
			left &= ~t[i].v;
			sep = true;
		}
	}
	if (left)
		put(o, "%s0x%llx", sep ? "|" : "", (unsigned long long)left);
	else if (!sep)
		put(o, "0");
}

#define VALUE(o, t, v) put_value(o, t, ARRAY_SIZE(t), v)
#define BITS(o, t, v, sep) put_bits(o, t, ARRAY_SIZE(t), v, sep)

static void put_arg(struct out *o, enum kind k, uint64_t v)
{
	int32_t i32 = (int32_t)(uint32_t)v;   /* int arguments: the kernel reads 32 bits */

	switch (k) {
	case K_NONE:
		break;
	case K_HEX:
	case K_PTR:
		put(o, "0x%llx", (unsigned long long)v);
		break;
	case K_INT:
	case K_FD:
	case K_PID:
		put(o, "%d", i32);
		break;
	case K_DIRFD:
		if (i32 == -100)
			put(o, "AT_FDCWD");
		else
			put(o, "%d", i32);
		break;
	case K_UINT:
		put(o, "%llu", (unsigned long long)v);
		break;
	case K_MODE:
		put(o, v ? "0%llo" : "0", (unsigned long long)v);
		break;
	case K_AF:
		VALUE(o, af_names, (uint32_t)v);
		break;
	case K_SOCKTYPE: {
		const char *t = find(socktype_names, ARRAY_SIZE(socktype_names), v & 0xf);
		/* an unnamed type stays in the hex rest */
		if (t)
			put(o, "%s", t);
		BITS(o, sockflag_names, t ? v & ~(uint64_t)0xf : v, t != NULL);
		break;
	}
	case K_PTRACE:
		VALUE(o, ptrace_names, v);
		break;
	case K_CLONE: {
		/* the low byte is the signal sent to the parent at exit */
		uint64_t sig = v & 0xff;
		const char *s = sig ? find(signal_names, ARRAY_SIZE(signal_names), sig) : NULL;
		uint64_t rest = s ? v & ~(uint64_t)0xff : v;
		if (rest || !s)
			BITS(o, clone_names, rest, false);
		if (s)
			put(o, "%s%s", rest ? "|" : "", s);
		break;
	}
	case K_NSFLAGS:
		BITS(o, clone_names, v, false);
		break;
	case K_SIGNAL:
		if (!v)
			put(o, "0");
		else
			VALUE(o, signal_names, v);
		break;
	case K_OPEN: {
		const char *a = find(openacc_names, ARRAY_SIZE(openacc_names), v & 3);
		if (a)
			put(o, "%s", a);
		BITS(o, openflag_names, a ? v & ~(uint64_t)3 : v, a != NULL);
		break;
	}
	case K_FDFLAGS:
		BITS(o, fdflag_names, v, false);
		break;
	case K_IOCTL:
		VALUE(o, ioctl_names, (uint32_t)v);   /* the kernel reads 32 bits */
		break;
	case K_MOUNT:
		BITS(o, mount_names, v, false);
		break;
	case K_UMOUNT:
		BITS(o, umount_names, v, false);
		break;
	case K_KEYCTL:
		VALUE(o, keyctl_names, v);
		break;
	case K_BPF:
		VALUE(o, bpf_names, v);
		break;
	case K_RLIMIT:
		VALUE(o, rlimit_names, v);
		break;
	}
}

size_t wdecode_call(char *buf, size_t len, const char *name, const uint64_t args[6])
{
	struct out o = { buf, len, 0, false };
	const struct row *r = NULL;

	if (!len)
		return 0;
	buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
		if (!strcmp(rows[i].name, name)) {
			r = &rows[i];
			break;
		}
	/* name is libseccomp's or "unknown": letters, digits and '_' only */
	put(&o, "%s(", name);
	if (r) {
		for (int i = 0; i < 6 && r->kind[i] != K_NONE; i++) {
			if (i)
				put(&o, ", ");
			put_arg(&o, (enum kind)r->kind[i], args[i]);
		}
		put(&o, ")");
	} else {
		for (int i = 0; i < 3; i++)
			put(&o, "%s0x%llx", i ? ", " : "", (unsigned long long)args[i]);
		put(&o, ", ...)");
	}
	if (o.cut) {
		/* mark the cut: the last three characters (or fewer) become dots */
		size_t dots = o.off < 3 ? o.off : 3;
		memset(buf + o.off - dots, '.', dots);
		buf[o.off] = '\0';
	}
	return o.off;
}
