/* Decoding denied syscalls for display (supervisor/decode.c): each kind of
 * argument, values and bits no table names (hex, never guessed),
 * combinations, syscalls without a row, and the bound on the text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "decode.h"
#include "notify.h"

struct dcase {
	const char *name;
	uint64_t args[6];
	const char *want;
};

#define NEG(x) ((uint64_t)(int64_t)(x))

static const struct dcase cases[] = {
	/* address family + socket type and flags + protocol as decimal */
	{ "socket", { 17, 0x80003, 0 }, "socket(AF_PACKET, SOCK_RAW|SOCK_CLOEXEC, 0)" },
	{ "socket", { 17, 3, 0x300 }, "socket(AF_PACKET, SOCK_RAW, 768)" },
	{ "socket", { 2, 0x801, 6 }, "socket(AF_INET, SOCK_STREAM|SOCK_NONBLOCK, 6)" },
	{ "socket", { 16, 0x80002, 0 }, "socket(AF_NETLINK, SOCK_DGRAM|SOCK_CLOEXEC, 0)" },
	/* an unknown family and unknown type bits: hex */
	{ "socket", { 0x99, 0x40003, 0 }, "socket(0x99, SOCK_RAW|0x40000, 0)" },
	{ "socket", { 10, 0xf, 0 }, "socket(AF_INET6, 0xf, 0)" },
	{ "socketpair", { 1, 1, 0, 0x7ffd1000 }, "socketpair(AF_UNIX, SOCK_STREAM, 0, 0x7ffd1000)" },
	/* ptrace request + pid decimal; unknown request in hex */
	{ "ptrace", { 16, 1, 0, 0 }, "ptrace(PTRACE_ATTACH, 1, 0x0, 0x0)" },
	{ "ptrace", { 0, 0, 0, 0 }, "ptrace(PTRACE_TRACEME, 0, 0x0, 0x0)" },
	{ "ptrace", { 0x4206, 42, 0, 0 }, "ptrace(PTRACE_SEIZE, 42, 0x0, 0x0)" },
	{ "ptrace", { 0x7777, 42, 0, 0 }, "ptrace(0x7777, 42, 0x0, 0x0)" },
	/* pid decimal, signed; signal names */
	{ "kill", { NEG(-1), 9 }, "kill(-1, SIGKILL)" },
	{ "kill", { 1234, 0 }, "kill(1234, 0)" },
	{ "kill", { 1234, 99 }, "kill(1234, 0x63)" },
	{ "process_vm_readv", { 7, 0x1000, 1, 0x2000, 1, 0 },
	  "process_vm_readv(7, 0x1000, 1, 0x2000, 1, 0x0)" },
	/* clone flags (with the exit signal in the low byte) and unshare */
	{ "clone", { 0x10000000 | 17, 0, 0, 0, 0 },
	  "clone(CLONE_NEWUSER|SIGCHLD, 0x0, 0x0, 0x0, 0x0)" },
	{ "unshare", { 0x20000 }, "unshare(CLONE_NEWNS)" },
	{ "unshare", { 0x20000 | 0x40000000 | 0x4 }, "unshare(CLONE_NEWNS|CLONE_NEWNET|0x4)" },
	{ "unshare", { 0 }, "unshare(0)" },
	{ "setns", { 3, 0x20000000 }, "setns(3, CLONE_NEWPID)" },
	/* mode bits in octal; path pointers in hex, with the fd kind for dirfd */
	{ "chmod", { 0x5000, 04755 }, "chmod(0x5000, 04755)" },
	{ "fchmod", { 3, 02755 }, "fchmod(3, 02755)" },
	{ "fchmodat", { NEG(-100), 0x5000, 06777 }, "fchmodat(AT_FDCWD, 0x5000, 06777)" },
	{ "mkdir", { 0x5000, 0 }, "mkdir(0x5000, 0)" },
	{ "mknod", { 0x5000, 0100644, 0 }, "mknod(0x5000, 0100644, 0x0)" },
	/* open flags and the mode */
	{ "openat", { NEG(-100), 0x5000, 0x241, 04755 },
	  "openat(AT_FDCWD, 0x5000, O_WRONLY|O_CREAT|O_TRUNC, 04755)" },
	{ "open", { 0x5000, 0x80000, 0 }, "open(0x5000, O_RDONLY|O_CLOEXEC, 0)" },
	/* ioctl: fd decimal, request by name, unknown request in hex */
	{ "ioctl", { 0, 0x5412, 0x7ffd0000 }, "ioctl(0, TIOCSTI, 0x7ffd0000)" },
	{ "ioctl", { 1, 0x541c, 0 }, "ioctl(1, TIOCLINUX, 0x0)" },
	{ "ioctl", { 5, 0xdead, 0 }, "ioctl(5, 0xdead, 0x0)" },
	/* mount: pointers (not read from the jail) and MS_ flags */
	{ "mount", { 0x1000, 0x2000, 0x3000, 0x1000 | 0x2, 0 },
	  "mount(0x1000, 0x2000, 0x3000, MS_NOSUID|MS_BIND, 0x0)" },
	{ "mount", { 0, 0x2000, 0, 0x4000 | 0x100000 | 0x80000000, 0 },
	  "mount(0x0, 0x2000, 0x0, MS_REC|MS_SHARED|0x80000000, 0x0)" },
	{ "umount2", { 0x2000, 2 }, "umount2(0x2000, MNT_DETACH)" },
	/* keyctl and bpf commands */
	{ "keyctl", { 1, 0, 0, 0, 0 }, "keyctl(KEYCTL_JOIN_SESSION_KEYRING, 0x0, 0x0, 0x0, 0x0)" },
	{ "keyctl", { 0x1000, 0, 0, 0, 0 }, "keyctl(0x1000, 0x0, 0x0, 0x0, 0x0)" },
	{ "bpf", { 5, 0x7000, 128 }, "bpf(BPF_PROG_LOAD, 0x7000, 128)" },
	{ "bpf", { 0, 0x7000, 72 }, "bpf(BPF_MAP_CREATE, 0x7000, 72)" },
	{ "bpf", { 999, 0, 0 }, "bpf(0x3e7, 0x0, 0)" },
	/* personality, prlimit64, perf_event_open, userfaultfd, io_uring */
	{ "personality", { 0x400000 }, "personality(0x400000)" },
	{ "prlimit64", { 1, 7, 0, 0x9000 }, "prlimit64(1, RLIMIT_NOFILE, 0x0, 0x9000)" },
	{ "perf_event_open", { 0x1000, 0, NEG(-1), NEG(-1), 8 },
	  "perf_event_open(0x1000, 0, -1, -1, 0x8)" },
	{ "userfaultfd", { 0x80800 }, "userfaultfd(O_NONBLOCK|O_CLOEXEC)" },
	{ "io_uring_setup", { 8, 0x1000 }, "io_uring_setup(8, 0x1000)" },
	/* fds are 32-bit: garbage in the high half does not change the number */
	{ "ioctl", { 0xffffffff00000003ull, 0x5412, 0 }, "ioctl(3, TIOCSTI, 0x0)" },
	/* a syscall without a row: its first three arguments in hex */
	{ "swapon", { 0x1000, 2, 3 }, "swapon(0x1000, 0x2, 0x3, ...)" },
	{ "unknown", { 1, 2, 3, 4, 5, 6 }, "unknown(0x1, 0x2, 0x3, ...)" },
};

static void test_table(void **state)
{
	char buf[WDECODE_MAX];
	int bad = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = wdecode_call(buf, sizeof(buf), cases[i].name, cases[i].args);
		if (strcmp(buf, cases[i].want) != 0 || n != strlen(buf)) {
			print_error("case %zu: got  \"%s\" (%zu)\n         want \"%s\"\n", i, buf, n,
			            cases[i].want);
			bad++;
		}
	}
	if (bad)
		fail_msg("%d of %zu decodings wrong", bad, sizeof(cases) / sizeof(cases[0]));
}

/* Every clone flag at once, every bit of every arg: still bounded, still
 * NUL-terminated, and cut text says so. */
static void test_bounded(void **state)
{
	uint64_t all[6] = { ~0ull, ~0ull, ~0ull, ~0ull, ~0ull, ~0ull };
	char small[40], buf[WDECODE_MAX];
	const char *names[] = { "clone", "unshare", "mount", "socket", "openat", "chmod", "kill" };
	size_t n;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		n = wdecode_call(buf, sizeof(buf), names[i], all);
		assert_int_equal(n, strlen(buf));
		assert_true(n < sizeof(buf));
		assert_true(strncmp(buf, names[i], strlen(names[i])) == 0);
		for (const char *c = buf; *c; c++)
			assert_true(*c >= 0x20 && *c < 0x7f);
	}
	n = wdecode_call(small, sizeof(small), "clone", all);
	assert_int_equal(n, strlen(small));
	assert_int_equal(n, sizeof(small) - 1);
	assert_string_equal(small + n - 3, "...");
	/* len 0 writes nothing */
	assert_int_equal(wdecode_call(small, 0, "clone", all), 0);
}

/* Each name in the clone table is one bit: all flags decode to names and
 * nothing is left over, and a name never stands for a bit that is clear. */
static void test_unshare_all_named(void **state)
{
	char buf[WDECODE_MAX];
	uint64_t a[6] = { 0x7e020000, 0, 0, 0, 0, 0 };   /* the CLONE_NEW* bits */

	wdecode_call(buf, sizeof(buf), "unshare", a);
	assert_null(strstr(buf, "0x"));
	assert_non_null(strstr(buf, "CLONE_NEWUSER"));
	assert_non_null(strstr(buf, "CLONE_NEWCGROUP"));
	assert_null(strstr(buf, "CLONE_VM"));
}

/* The run's summary line: each counted entry with its first call; entries
 * not counted since the mark are left out; too many are cut with "...". */
static void test_summary(void **state)
{
	struct wdenied tab[3] = {
		{ .name = "socket", .nr = 41, .count = 3, .first = "socket(AF_PACKET, SOCK_RAW, 768)" },
		{ .name = "mount", .nr = 165, .count = 0, .first = "mount(0x0, 0x0, 0x0, 0, 0x0)" },
		{ .name = "ptrace", .nr = 101, .count = 1, .first = "ptrace(PTRACE_TRACEME, 0, 0x0, 0x0)" },
	};
	struct wnotify w = { .fd = -1, .tab = tab, .n = 3 };
	char buf[256], small[60];

	assert_int_equal(wnotify_summary(&w, buf, sizeof(buf)), 2);
	assert_string_equal(buf, "socket (3; first: socket(AF_PACKET, SOCK_RAW, 768)), "
	                         "ptrace (1; first: ptrace(PTRACE_TRACEME, 0, 0x0, 0x0))");
	assert_int_equal(wnotify_summary(&w, small, sizeof(small)), 1);
	assert_string_equal(small, "socket (3; first: socket(AF_PACKET, SOCK_RAW, 768)), ...");
	tab[0].count = tab[2].count = 0;
	assert_int_equal(wnotify_summary(&w, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_unshare_all_named),
		cmocka_unit_test(test_summary),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
