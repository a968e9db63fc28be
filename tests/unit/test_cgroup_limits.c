/* Resource limits through cgroups, against the real kernel (no mocks):
 * groups created, limits enforced (OOM kill, fork failure at pids.max),
 * counters read, groups killed and removed.  test_cgroup.c has the parts
 * that need no group of our own; cgroup_test.h holds what the two share.
 *
 * Runs in two modes and asserts something in both:
 *   root          the above, on cgroup v1 or v2;
 *   unprivileged  (e.g. setpriv --reuid=65534 --regid=65534 --clear-groups)
 *                 every limit falls back (rlimit / unavailable) and no
 *                 directory is created.  Each case then checks that
 *                 fallback and calls skip().
 *
 * Every group and child a test makes is tracked and removed in teardown,
 * also when an assertion fails. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "warden/cgroup.h"
#include "warden/util.h"
#include "cgroup_test.h"

/* ---- helpers ---- */

/* Do cgroups enforce all four limits here (root on a machine with them)? */
static bool cgroups_here(void)
{
	struct wcg_probe pr;

	wcg_probe(&pr);
	for (int k = 0; k < WLIM__N; k++)
		if (pr.mech[k] != WMECH_CGROUP_V1 && pr.mech[k] != WMECH_CGROUP_V2)
			return false;
	return true;
}

/* The directories of group `name`, one per hierarchy wcg_create uses
 * (paths from wcg_probe: where[k] is the parent when a cgroup is used). */
static int group_dir(enum wlimit_kind k, const char *name, char *out, size_t len)
{
	struct wcg_probe pr;

	wcg_probe(&pr);
	if (!is_cgroup(pr.mech[k]))
		return -1;
	snprintf(out, len, "%s/%s", pr.where[k], name);
	return 0;
}

static void assert_file(enum wlimit_kind k, const char *name, const char *file, const char *want)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	_cleanup_free_ char *got = NULL;

	assert_int_equal(group_dir(k, name, dir, sizeof(dir)), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	assert_int_equal(read_file_str(path, 4096, &got, NULL), 0);
	got[strcspn(got, "\n")] = '\0';
	assert_string_equal(got, want);
}

static void assert_fallback_mechs(const struct wcg *cg)
{
	assert_int_equal(wcg_mech(cg, WLIM_MEMORY), WMECH_RLIMIT);
	assert_int_equal(wcg_mech(cg, WLIM_PIDS), WMECH_RLIMIT);
	assert_int_equal(wcg_mech(cg, WLIM_CPUS), WMECH_UNAVAILABLE);
	assert_int_equal(wcg_mech(cg, WLIM_CPU_TIME), WMECH_RLIMIT);
	assert_int_equal(wcg_clone_fd(cg), -1);
}

/* Create with test_limits; the group is tracked for teardown. */
static struct wcg *make(const char *tag, char *name, size_t len)
{
	struct wcg *cg = NULL;
	struct werr err = { 0 };

	unique_name(name, len, tag);
	if (wcg_create(name, &test_limits, &cg, &err) < 0)
		fail_msg("wcg_create(%s): %s", name, err.msg);
	return track_cg(cg);
}

/* A child that waits on a pipe until released, then runs fn and exits. */
struct child { pid_t pid; int go; };

static struct child spawn(void (*fn)(void))
{
	struct child c = { -1, -1 };
	int p[2];

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	c.pid = fork();
	assert_true(c.pid >= 0);
	if (c.pid == 0) {
		char b;

		close(p[1]);
		if (read(p[0], &b, 1) != 1)
			_exit(100);
		fn();
		_exit(0);
	}
	close(p[0]);
	c.go = p[1];
	track_pid(c.pid);
	return c;
}

static void release(struct child *c)
{
	assert_int_equal(write(c->go, "x", 1), 1);
	close(c->go);
	c->go = -1;
}

static int reap(pid_t pid)
{
	int st = 0;

	assert_int_equal(waitpid(pid, &st, 0), pid);
	forget_pid(pid);
	return st;
}

static void attach(struct wcg *cg, pid_t pid)
{
	struct werr err = { 0 };

	if (wcg_attach(cg, pid, false, &err) < 0)
		fail_msg("wcg_attach: %s", err.msg);
}

/* Child bodies. */
static void hog(void)
{
	size_t len = 128 * MiB;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		_exit(2);
	for (size_t i = 0; i < len; i += 4096)
		p[i] = 1;
	_exit(0);   /* survived: the limit did not hold */
}

static void sleeper(void)
{
	for (;;)
		pause();
}

static int bomb_fd = -1;
struct bomb_result { int n; int err; };

static void bomb(void)
{
	struct bomb_result r = { 0, 0 };

	for (r.n = 0; r.n < 1000; r.n++) {
		pid_t p = fork();
		if (p < 0) {
			r.err = errno;
			break;
		}
		if (p == 0)
			sleeper();
	}
	(void)!write(bomb_fd, &r, sizeof(r));
	_exit(0);
}

static void busy(void)
{
	struct timespec t;
	volatile char *p = malloc(4 * MiB);

	for (size_t i = 0; p && i < 4 * MiB; i += 4096)
		p[i] = 1;        /* volatile: not optimised away */
	do
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	while (t.tv_nsec < 100 * 1000 * 1000 && t.tv_sec == 0);
	_exit(p ? 0 : 3);
}

/* ---- tests: root enforces, unprivileged checks the fallback and skips ---- */

/* In the unprivileged mode (or as root on a machine without cgroups):
 * check the fallback of a real group, then skip. */
#define FALLBACK_OR_CONTINUE(cg, name)                                   \
	do {                                                             \
		if (!cgroups_here()) {                                   \
			assert_fallback_mechs(cg);                       \
			assert_int_equal(count_named(name), 0);          \
			destroy_cg(cg);                                  \
			skip();                                          \
		}                                                        \
	} while (0)

static void test_limits_written(void **state)
{
	char name[64];
	struct wcg *cg = make("files", name, sizeof(name));

	(void)state;
	FALLBACK_OR_CONTINUE(cg, name);
	if (wcg_mech(cg, WLIM_MEMORY) == WMECH_CGROUP_V1) {
		char path[PATH_MAX + 64], dir[PATH_MAX];

		assert_file(WLIM_MEMORY, name, "memory.limit_in_bytes", "67108864");
		assert_int_equal(group_dir(WLIM_MEMORY, name, dir, sizeof(dir)), 0);
		snprintf(path, sizeof(path), "%s/memory.memsw.limit_in_bytes", dir);
		if (access(path, F_OK) == 0)
			assert_file(WLIM_MEMORY, name, "memory.memsw.limit_in_bytes", "67108864");
	} else {
		assert_file(WLIM_MEMORY, name, "memory.max", "67108864");
	}
	assert_file(WLIM_PIDS, name, "pids.max", "16");
	if (wcg_mech(cg, WLIM_CPUS) == WMECH_CGROUP_V1) {
		assert_file(WLIM_CPUS, name, "cpu.cfs_period_us", "100000");
		assert_file(WLIM_CPUS, name, "cpu.cfs_quota_us", "50000");
	} else {
		assert_file(WLIM_CPUS, name, "cpu.max", "50000 100000");
	}
	assert_int_equal(wcg_clone_fd(cg) >= 0, wcg_mech(cg, WLIM_MEMORY) == WMECH_CGROUP_V2);
	assert_true(count_named(name) >= 1);
	/* The same name twice is an error, not a silent sharing. */
	{
		struct wcg *dup = (struct wcg *)1;
		struct werr err = { 0 };

		assert_int_equal(wcg_create(name, &test_limits, &dup, &err), -1);
		assert_null(dup);
		assert_non_null(strstr(err.msg, "already exists"));
	}
	destroy_cg(cg);
	assert_int_equal(count_named(name), 0);
}

static void test_oom_kill(void **state)
{
	struct wcg_stats st;
	struct child c;
	char name[64];
	struct wcg *cg = make("oom", name, sizeof(name));
	int ws;

	(void)state;
	FALLBACK_OR_CONTINUE(cg, name);
	c = spawn(hog);
	attach(cg, c.pid);
	release(&c);
	ws = reap(c.pid);
	assert_true(WIFSIGNALED(ws));
	assert_int_equal(WTERMSIG(ws), SIGKILL);
	wcg_stats(cg, &st);
	assert_true(st.have_oom);
	assert_true(st.oom_kills >= 1);
	assert_true(st.have_peak);
	assert_true(st.peak_memory > 0 && st.peak_memory <= 64 * MiB);
	destroy_cg(cg);
	assert_int_equal(count_named(name), 0);
}

static void test_pids_limit(void **state)
{
	struct bomb_result r = { -1, 0 };
	struct wcg_stats st;
	struct child c;
	char name[64];
	struct wcg *cg = make("pids", name, sizeof(name));
	int p[2], ws;

	(void)state;
	FALLBACK_OR_CONTINUE(cg, name);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	bomb_fd = p[1];
	c = spawn(bomb);
	close(p[1]);
	attach(cg, c.pid);
	release(&c);
	assert_int_equal(read(p[0], &r, sizeof(r)), (ssize_t)sizeof(r));
	close(p[0]);
	ws = reap(c.pid);
	assert_true(WIFEXITED(ws));
	assert_int_equal(r.err, EAGAIN);
	assert_int_equal(r.n, 15);          /* 16 minus the bomb itself */
	wcg_stats(cg, &st);
	assert_true(st.have_pids);
	assert_true(st.pids_max_hits >= 1);
	/* The 15 sleepers are still in the group: kill and remove them. */
	destroy_cg(cg);
	assert_int_equal(count_named(name), 0);
}

static void test_stats_cpu_and_peak(void **state)
{
	struct wcg_stats st;
	struct child c;
	char name[64];
	struct wcg *cg = make("cpu", name, sizeof(name));
	int ws;

	(void)state;
	FALLBACK_OR_CONTINUE(cg, name);
	c = spawn(busy);
	attach(cg, c.pid);
	release(&c);
	ws = reap(c.pid);
	assert_true(WIFEXITED(ws));
	assert_int_equal(WEXITSTATUS(ws), 0);
	wcg_stats(cg, &st);
	assert_true(st.have_cpu);
	/* 100 ms of CPU, at 0.5 CPU of bandwidth */
	assert_true(st.cpu_ns >= 90ULL * 1000 * 1000);
	assert_true(st.have_peak);
	assert_true(st.peak_memory >= 4 * MiB);
	assert_true(st.have_oom);
	assert_int_equal(st.oom_kills, 0);
	destroy_cg(cg);
}

static void test_kill_sleeping(void **state)
{
	struct child c;
	char name[64];
	struct wcg *cg = make("kill", name, sizeof(name));
	int ws;

	(void)state;
	FALLBACK_OR_CONTINUE(cg, name);
	c = spawn(sleeper);
	attach(cg, c.pid);
	release(&c);
	wcg_kill(cg);
	ws = reap(c.pid);
	assert_true(WIFSIGNALED(ws));
	assert_int_equal(WTERMSIG(ws), SIGKILL);
	wcg_kill(cg);                       /* again, on an empty group */
	destroy_cg(cg);
	assert_int_equal(count_named(name), 0);
}

/* wcg_destroy on a group that still has a process: kill, wait, remove. */
static void test_destroy_busy_group(void **state)
{
	struct child c;
	char name[64], dir[PATH_MAX];
	struct wcg *cg = make("busy", name, sizeof(name));
	struct stat sb;
	int ws;

	(void)state;
	FALLBACK_OR_CONTINUE(cg, name);
	c = spawn(sleeper);
	attach(cg, c.pid);
	release(&c);
	assert_int_equal(group_dir(WLIM_MEMORY, name, dir, sizeof(dir)), 0);
	assert_int_equal(stat(dir, &sb), 0);
	destroy_cg(cg);
	assert_int_equal(stat(dir, &sb), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(count_named(name), 0);
	ws = reap(c.pid);
	assert_true(WIFSIGNALED(ws));
	assert_int_equal(WTERMSIG(ws), SIGKILL);
}

static void test_gc(void **state)
{
	char dead_name[64], live_name[64], mine[64];
	struct wcg *dead, *alive, *own;
	struct werr err = { 0 };
	struct child c;
	pid_t dead_pid;
	int ws;

	(void)state;
	/* a pid that is surely gone: a child we reaped */
	dead_pid = fork();
	assert_true(dead_pid >= 0);
	if (dead_pid == 0)
		_exit(0);
	assert_int_equal(waitpid(dead_pid, NULL, 0), dead_pid);

	snprintf(dead_name, sizeof(dead_name), "warden-%d-1", (int)dead_pid);
	snprintf(live_name, sizeof(live_name), "warden-1-gc%d", (int)getpid());  /* pid 1 lives */
	assert_int_equal(wcg_create(dead_name, &test_limits, &dead, &err), 0);
	track_cg(dead);
	assert_int_equal(wcg_create(live_name, &test_limits, &alive, &err), 0);
	track_cg(alive);
	own = make("gc", mine, sizeof(mine));
	if (!cgroups_here()) {
		wcg_gc();
		assert_fallback_mechs(dead);
		assert_int_equal(count_named(dead_name), 0);
		skip();
	}
	/* a process left behind in the dead warden's group */
	c = spawn(sleeper);
	attach(dead, c.pid);
	release(&c);
	assert_true(count_named(dead_name) >= 1);

	wcg_gc();
	assert_int_equal(count_named(dead_name), 0);
	ws = reap(c.pid);
	assert_true(WIFSIGNALED(ws));
	assert_true(count_named(live_name) >= 1);   /* its warden (pid 1) lives */
	assert_true(count_named(mine) >= 1);        /* ours */

	destroy_cg(dead);   /* already gone: must be harmless */
	destroy_cg(alive);
	destroy_cg(own);
	assert_int_equal(count_named(live_name), 0);
	assert_int_equal(count_named(mine), 0);
}

/* The real v2 hierarchy, where the parts that need no controller can be
 * tested even here: CLONE_INTO_CGROUP, cgroup.kill, cpu.stat. */
static void test_v2_kill_and_clone_into(void **state)
{
	struct clone_args ca = { 0 };
	struct wcg_probe pr;
	struct wcg_stats st = { 0 };
	char dir[PATH_MAX], want[PATH_MAX], path[64];
	_cleanup_free_ char *cgline = NULL;
	_cleanup_close_ int dfd = -1;
	pid_t pid;
	int ws;

	(void)state;
	wcg_probe(&pr);
	if (!pr.v2_mounted || pr.v2_path[0] != '/')
		skip();
	snprintf(dir, sizeof(dir), "%s/warden-%d-v2test", pr.v2_path, (int)getpid());
	if (!is_root()) {
		assert_int_equal(mkdir(dir, 0755), -1);
		assert_true(errno == EACCES || errno == EPERM || errno == EROFS);
		skip();
	}
	if (mkdir(dir, 0755) < 0)
		fail_msg("mkdir %s: %s", dir, strerror(errno));
	snprintf(v2_test_dir, sizeof(v2_test_dir), "%s", dir);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);

	ca.flags = CLONE_INTO_CGROUP;
	ca.exit_signal = SIGCHLD;
	ca.cgroup = (uint64_t)dfd;
	pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid == 0)
		sleeper();
	if (pid < 0)
		fail_msg("clone3: %s", strerror(errno));
	track_pid(pid);
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	assert_int_equal(read_file_str(path, 4096, &cgline, NULL), 0);
	snprintf(want, sizeof(want), "0::%s\n", strrchr(dir, '/'));
	if (strcmp(pr.v2_path, "/sys/fs/cgroup/unified") == 0 || strcmp(pr.v2_path, "/sys/fs/cgroup") == 0)
		assert_non_null(strstr(cgline, want));

	assert_int_equal(cg_backend_v2.kill(dfd), 0);      /* cgroup.kill */
	ws = reap(pid);
	assert_true(WIFSIGNALED(ws));
	assert_int_equal(WTERMSIG(ws), SIGKILL);
	cg_backend_v2.stats(dfd, 0, &st);
	assert_true(st.have_cpu);
	assert_int_equal(rmdir(dir), 0);
	v2_test_dir[0] = '\0';
}

/* Cost of what every `warden run` does: create + attach + destroy, 100 times
 * each (the groups must all come and go); reported, not judged. */
static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void test_timing(void **state)
{
	enum { N = 100 };
	double t, first, cd = 0, full = 0, exited = 0;
	struct werr err = { 0 };
	char name[64];

	(void)state;
	/* first run in a process: includes discovery (mountinfo, parents) */
	cg_reset();
	unique_name(name, sizeof(name), "t");
	t = now_ms();
	{
		struct wcg *cg = NULL;

		assert_int_equal(wcg_create(name, &test_limits, &cg, &err), 0);
		wcg_destroy(cg);
	}
	first = now_ms() - t;

	for (int i = 0; i < N; i++) {
		struct wcg *cg = NULL;

		unique_name(name, sizeof(name), "t");
		t = now_ms();
		assert_int_equal(wcg_create(name, &test_limits, &cg, &err), 0);
		wcg_destroy(cg);
		cd += now_ms() - t;
	}
	/* Timed: create, attach, destroy, in the order of a run (the group is
	 * made before the jail is cloned).  Not timed: fork, kill, reap. */
	for (int i = 0; i < 2 * N; i++) {
		bool live = i < N;     /* first a live jail that destroy must kill */
		struct wcg *cg = NULL;
		struct child c;
		double part;

		unique_name(name, sizeof(name), "t");
		t = now_ms();
		assert_int_equal(wcg_create(name, &test_limits, &cg, &err), 0);
		part = now_ms() - t;
		track_cg(cg);
		c = spawn(sleeper);
		t = now_ms();
		attach(cg, c.pid);
		part += now_ms() - t;
		if (!live) {            /* the usual case: the jail has exited */
			kill(c.pid, SIGKILL);
			close(c.go);
			reap(c.pid);
		}
		t = now_ms();
		destroy_cg(cg);
		part += now_ms() - t;
		*(live ? &full : &exited) += part;
		if (live) {
			close(c.go);
			reap(c.pid);
		}
	}
	print_message("# %s: first create+destroy %.3f ms (with discovery); create+destroy %.3f ms;"
	              " create+attach+destroy %.3f ms (jail exited) / %.3f ms (live, killed)\n",
	              is_root() ? "root" : "unprivileged", first, cd / N, exited / N, full / N);
	/* No threshold here: a shared machine makes any bound flaky, and a
	 * test must not depend on time.  `make bench` prints this line. */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_limits_written, teardown),
		cmocka_unit_test_teardown(test_oom_kill, teardown),
		cmocka_unit_test_teardown(test_pids_limit, teardown),
		cmocka_unit_test_teardown(test_stats_cpu_and_peak, teardown),
		cmocka_unit_test_teardown(test_kill_sleeping, teardown),
		cmocka_unit_test_teardown(test_destroy_busy_group, teardown),
		cmocka_unit_test_teardown(test_gc, teardown),
		cmocka_unit_test_teardown(test_v2_kill_and_clone_into, teardown),
		cmocka_unit_test_teardown(test_timing, teardown),
	};

	return cmocka_run_group_tests_name("cgroup limits", tests, NULL, group_teardown);
}
