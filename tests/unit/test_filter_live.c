/* The syscall filter (jail/filter.c), live: a few of the cases of
 * test_filter.c in a forked child that really loads the filter.  Calls are
 * made with bad fds/pointers/arguments (bubblewrap's try-syscall idea): an
 * allowed call fails harmlessly with EBADF, EFAULT or EINVAL, a denied one
 * with EPERM, so the two can be told apart. */
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

/* ---------------------------------------------------------------------- */
/* Live: load the filter in a forked child                                 */

typedef int (*live_fn)(void);

#define EXPECT(call, err_want) do {                                           \
	errno = 0;                                                            \
	long rc_ = (long)(call);                                              \
	if (rc_ != -1 || errno != (err_want))                                 \
		return __LINE__ % 250 + 1;                                    \
} while (0)

/* A forked child inherits cmocka's handlers, which would longjmp back into
 * the test runner: a child's fault must kill the child. */
static void child_default_signals(void)
{
	static const int sigs[] = { SIGSEGV, SIGSYS, SIGBUS, SIGILL, SIGFPE, SIGABRT };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sigs); i++)
		signal(sigs[i], SIG_DFL);
}

/* Fork, load the filter built from `pol` (built here, loaded in the child,
 * as the jail does), run fn; returns the raw wait status. */
static int live(const struct wpolicy *pol, live_fn fn)
{
	struct werr err = { 0 };
	scmp_filter_ctx ctx = NULL;
	int status = 0, fd = -1;
	pid_t pid;

	if (wfilter_build(pol, &ctx, &err) < 0)
		fail_msg("wfilter_build: %s", err.msg);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		child_default_signals();
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(254);
		if (wfilter_load(ctx, &fd, &err) < 0)
			_exit(253);
		if (!pol->audit && fd != -1)
			_exit(252);
		_exit(fn());
	}
	seccomp_release(ctx);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

static void assert_exit0(int status, const char *what)
{
	if (!WIFEXITED(status))
		fail_msg("%s: child killed by signal %d", what, WTERMSIG(status));
	if (WEXITSTATUS(status) != 0)
		fail_msg("%s: child failed, code %d (line %% 250 + 1, or 25x setup)",
		         what, WEXITSTATUS(status));
}

static int live_errno_cases(void)
{
	struct rlimit rl;
	int sv[2];

	/* allowed: harmless failures */
	EXPECT(read(-1, NULL, 0), EBADF);
	EXPECT(ioctl(-1, TCGETS, NULL), EBADF);
	EXPECT(syscall(__NR_socket, AF_INET, 99, 0), EINVAL);
	EXPECT(syscall(__NR_clone, CLONE_THREAD, NULL, NULL, NULL, 0), EINVAL);
	if (syscall(__NR_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl) != 0)
		return 2;
	if (personality(0xffffffff) < 0)
		return 3;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return 4;
	/* denied: EPERM */
	EXPECT(syscall(__NR_ptrace, PTRACE_ATTACH, 1, 0, 0), EPERM);
	EXPECT(syscall(__NR_bpf, -1, NULL, 0), EPERM);
	EXPECT(syscall(__NR_io_uring_setup, 0, NULL), EPERM);
	EXPECT(syscall(__NR_perf_event_open, NULL, 0, -1, -1, 0), EPERM);
	EXPECT(syscall(__NR_keyctl, -1, 0, 0, 0, 0), EPERM);
	EXPECT(syscall(__NR_unshare, 0), EPERM);
	EXPECT(syscall(__NR_name_to_handle_at, -1, NULL, NULL, NULL, 0), EPERM);
	/* CLONE_NEWUSER|CLONE_FS is EINVAL if it ever got through */
	EXPECT(syscall(__NR_clone, CLONE_NEWUSER | CLONE_FS | SIGCHLD, NULL, NULL, NULL, 0), EPERM);
	EXPECT(syscall(__NR_socket, AF_PACKET, 99, 0), EPERM);
	EXPECT(syscall(__NR_socket, AF_NETLINK, SOCK_RAW, NETLINK_NETFILTER), EPERM);
	EXPECT(syscall(__NR_ioctl, -1, TIOCSTI, NULL), EPERM);
	EXPECT(syscall(__NR_ioctl, -1, (1UL << 32) | TIOCSTI, NULL), EPERM);
	EXPECT(syscall(__NR_ioctl, -1, TIOCLINUX, NULL), EPERM);
	EXPECT(syscall(__NR_prlimit64, 1, RLIMIT_NOFILE, NULL, &rl), EPERM);
	EXPECT(personality(READ_IMPLIES_EXEC), EPERM);
	/* clone3 and openat2 answer ENOSYS */
	EXPECT(syscall(__NR_clone3, NULL, 0), ENOSYS);
	EXPECT(syscall(__NR_openat2, AT_FDCWD, NULL, NULL, 0), ENOSYS);
	/* modes: allowed ones fail harmlessly (EFAULT, EBADF), set-id bits EPERM */
	EXPECT(syscall(__NR_chmod, NULL, 0755), EFAULT);
	EXPECT(syscall(__NR_chmod, NULL, 04755), EPERM);
	EXPECT(syscall(__NR_chmod, NULL, (1UL << 32) | 02755), EPERM);
	EXPECT(syscall(__NR_fchmod, -1, 0644), EBADF);
	EXPECT(syscall(__NR_fchmod, -1, 04755), EPERM);
	EXPECT(syscall(__NR_fchmodat, -1, NULL, 06755), EPERM);
	EXPECT(syscall(452 /* fchmodat2 */, -1, NULL, 04755, 0), EPERM);
	EXPECT(syscall(__NR_open, NULL, O_CREAT | O_WRONLY, 0644), EFAULT);
	EXPECT(syscall(__NR_open, NULL, O_RDONLY, 04755), EFAULT);
	EXPECT(syscall(__NR_open, NULL, O_CREAT | O_WRONLY, 04755), EPERM);
	EXPECT(syscall(__NR_openat, -1, NULL, O_TMPFILE | O_RDWR, 02755), EPERM);
	EXPECT(syscall(__NR_creat, NULL, 04711), EPERM);
	EXPECT(syscall(__NR_mkdir, NULL, 02775), EPERM);
	EXPECT(syscall(__NR_mkdirat, -1, NULL, 0755), EFAULT);
	EXPECT(syscall(__NR_mknod, NULL, S_IFREG | 04755, 0), EPERM);
	EXPECT(syscall(__NR_mknodat, -1, NULL, S_IFREG | 02755, 0), EPERM);
	return 0;
}

static void test_live_errno(void **state)
{
	struct wpolicy pol = policy(WDENY_ERRNO, false);

	assert_exit0(live(&pol, live_errno_cases), "errno policy");
}

/* fork() and pthread-style clone must really work under the filter. */
static int live_fork_case(void)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return 1;
	if (pid == 0)
		_exit(7);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 7)
		return 2;
	return 0;
}

static void test_live_fork(void **state)
{
	struct wpolicy pol = policy(WDENY_ERRNO, false);

	assert_exit0(live(&pol, live_fork_case), "fork");
}

static int live_x32(void)
{
	syscall(X32_BIT | __NR_getpid);
	return 0;   /* reached only if the x32 call was not killed */
}

static int live_i386(void)
{
	long ret = 20;   /* i386 getpid */

	__asm__ volatile("int $0x80" : "+a"(ret) : : "memory");
	return 0;
}

static int live_ptrace(void)
{
	syscall(__NR_ptrace, PTRACE_TRACEME, 0, 0, 0);
	return 0;
}

static void assert_sigsys(int status, const char *what)
{
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSYS)
		fail_msg("%s: want death by SIGSYS, got status 0x%x", what, status);
}

static void test_live_foreign_abis(void **state)
{
	struct wpolicy pol = policy(WDENY_ERRNO, false);

	int st;

	assert_sigsys(live(&pol, live_x32), "x32 getpid");
	/* Some kernels have no int $0x80 entry at all (IA32 emulation off, or
	 * a hypervisor without it): the call then faults before seccomp sees
	 * it, which closes the ABI just as well.  The decision itself is
	 * checked by test_foreign_abis. */
	st = live(&pol, live_i386);
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV)
		print_message("# int $0x80 faults on this kernel (no i386 entry)\n");
	else
		assert_sigsys(st, "int $0x80 getpid");
}

static void test_live_kill(void **state)
{
	struct wpolicy pol = policy(WDENY_KILL, false);

	assert_sigsys(live(&pol, live_ptrace), "ptrace under deny_action kill");
}

/* NOTIFY as the default action, end to end: the child loads the filter,
 * forks a grandchild (which inherits it) and answers the grandchild's
 * denied call on the listener, as the supervisor would. */

/* Filters a program adds itself stack on ours (allowed: "seccomp" is on
 * the allowlist); one asking for a listener must be refused by the kernel
 * (EBUSY), or the program could answer notifications meant for the
 * supervisor.  libseccomp creates at most one listener per process, so the
 * request is made with seccomp(2) directly, with a program libseccomp
 * generated.  Returns true if the second listener was created. */
static bool second_listener_loads(void)
{
	scmp_filter_ctx c = seccomp_init(SCMP_ACT_ALLOW);
	struct sock_filter insn[64];
	struct sock_fprog prog;
	off_t len;
	int fd;
	long rc;

	if (!c)
		return true;   /* cannot tell: fail the test */
	fd = memfd_create("bpf2", MFD_CLOEXEC);
	if (fd < 0 || seccomp_rule_add(c, SCMP_ACT_NOTIFY, SCMP_SYS(getppid), 0) < 0 ||
	    seccomp_export_bpf(c, fd) < 0) {
		seccomp_release(c);
		return true;
	}
	seccomp_release(c);
	len = lseek(fd, 0, SEEK_END);
	if (len <= 0 || (size_t)len > sizeof(insn) || pread(fd, insn, len, 0) != len)
		return true;
	close(fd);
	prog.len = (unsigned short)(len / sizeof(insn[0]));
	prog.filter = insn;
	rc = syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (rc >= 0)
		return true;
	return errno != EBUSY;
}

static void test_live_notify(void **state)
{
	struct wpolicy pol = policy(WDENY_ERRNO, true);
	struct werr err = { 0 };
	scmp_filter_ctx ctx = NULL;
	int status = 0, fd = -1;
	pid_t pid;

	if (wfilter_build(&pol, &ctx, &err) < 0)
		fail_msg("wfilter_build: %s", err.msg);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct seccomp_notif *req = NULL;
		struct seccomp_notif_resp *resp = NULL;
		pid_t g;
		int st;

		child_default_signals();
		alarm(10);   /* never hang the suite */
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    wfilter_load(ctx, &fd, &err) < 0)
			_exit(250);
		if (fd < 0 || !(fcntl(fd, F_GETFD) & FD_CLOEXEC))
			_exit(251);
		/* the caller owns the fd: releasing the context keeps it open */
		seccomp_release(ctx);
		if (fcntl(fd, F_GETFD) < 0)
			_exit(249);
		/* a jailed program cannot add a listener of its own (EBUSY) */
		if (second_listener_loads())
			_exit(248);
		if (seccomp_notify_alloc(&req, &resp) < 0)
			_exit(252);
		g = fork();
		if (g < 0)
			_exit(253);
		if (g == 0) {
			close(fd);
			errno = 0;
			if (syscall(__NR_ptrace, PTRACE_ATTACH, 1, 0, 0) != -1)
				_exit(1);
			_exit(errno == EPERM ? 0 : 2);
		}
		if (seccomp_notify_receive(fd, req) < 0)
			_exit(3);
		if (req->data.nr != __NR_ptrace || req->pid <= 0)
			_exit(4);
		resp->id = req->id;
		resp->val = 0;
		resp->error = -EPERM;
		resp->flags = 0;
		if (seccomp_notify_respond(fd, resp) < 0)
			_exit(5);
		if (waitpid(g, &st, 0) != g || !WIFEXITED(st))
			_exit(6);
		_exit(WEXITSTATUS(st) ? 10 + WEXITSTATUS(st) : 0);
	}
	seccomp_release(ctx);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_exit0(status, "notify");
}

/* Live: a prebuilt program loads and denies (EPERM) what it should. */
static void test_live_prebuilt(void **state)
{
	struct wpolicy pol = policy(WDENY_ERRNO, false);
	const struct wfilter_prog *w = wfilter_find_prebuilt(&pol);
	pid_t pid;
	int st;

	(void)state;
	assert_non_null(w);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct werr err = { 0 };
		int fd;
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || wfilter_load_prog(w, &fd, &err) < 0)
			_exit(10);
		if (fd != -1)
			_exit(11);
		/* denied: EPERM; allowed with a bad fd: EBADF */
		if (syscall(SYS_ptrace, PTRACE_TRACEME, 0, 0, 0) != -1 || errno != EPERM)
			_exit(12);
		if (read(-1, NULL, 0) != -1 || errno != EBADF)
			_exit(13);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
	const struct CMUnitTest live_tests[] = {
		cmocka_unit_test(test_live_errno),
		cmocka_unit_test(test_live_fork),
		cmocka_unit_test(test_live_foreign_abis),
		cmocka_unit_test(test_live_kill),
		cmocka_unit_test(test_live_notify),
		cmocka_unit_test(test_live_prebuilt),
	};

	return cmocka_run_group_tests_name("filter live", live_tests, NULL, NULL);
}
