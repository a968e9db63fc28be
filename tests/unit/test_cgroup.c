/* Resource limits through cgroups, against the real kernel (no mocks).
 *
 * Runs in two modes and asserts something in both:
 *   root          groups are created, limits enforced (OOM kill, fork
 *                 failure at pids.max), counters read, groups removed;
 *   unprivileged  (e.g. setpriv --reuid=65534 --regid=65534 --clear-groups)
 *                 every limit falls back (rlimit / unavailable) and no
 *                 directory is created.  Root-only cases then check that
 *                 fallback and call skip().
 * As root, test_fallback_as_nobody also drops to uid 65534 in a child, so
 * the fallback path is exercised in every run.
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
#include "../../limits/cgroup_impl.h"

#define MiB (1024ULL * 1024)

/* ---- tracking, so teardown cleans up after a failed assertion ---- */

static struct wcg *live_cg[8];
static pid_t live_pid[8];

static struct wcg *track_cg(struct wcg *cg)
{
	for (size_t i = 0; i < ARRAY_SIZE(live_cg); i++)
		if (!live_cg[i]) {
			live_cg[i] = cg;
			break;
		}
	return cg;
}

static void destroy_cg(struct wcg *cg)
{
	for (size_t i = 0; i < ARRAY_SIZE(live_cg); i++)
		if (live_cg[i] == cg)
			live_cg[i] = NULL;
	wcg_destroy(cg);
}

static char v2_test_dir[PATH_MAX];   /* made by test_v2_kill_and_clone_into */

static void track_pid(pid_t pid)
{
	for (size_t i = 0; i < ARRAY_SIZE(live_pid); i++)
		if (!live_pid[i]) {
			live_pid[i] = pid;
			return;
		}
}

static void forget_pid(pid_t pid)
{
	for (size_t i = 0; i < ARRAY_SIZE(live_pid); i++)
		if (live_pid[i] == pid)
			live_pid[i] = 0;
}

static int teardown(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(live_cg); i++) {
		wcg_destroy(live_cg[i]);
		live_cg[i] = NULL;
	}
	for (size_t i = 0; i < ARRAY_SIZE(live_pid); i++)
		if (live_pid[i] > 0) {
			kill(live_pid[i], SIGKILL);
			waitpid(live_pid[i], NULL, 0);
			live_pid[i] = 0;
		}
	if (v2_test_dir[0]) {
		rmdir(v2_test_dir);
		v2_test_dir[0] = '\0';
	}
	cg_reset();   /* a test may have fed discovery a fake layout */
	return 0;
}

/* ---- helpers ---- */

static bool is_root(void) { return geteuid() == 0; }

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

static bool is_cgroup(enum wmech m) { return m == WMECH_CGROUP_V1 || m == WMECH_CGROUP_V2; }

static void unique_name(char *buf, size_t len, const char *tag)
{
	static int n;

	snprintf(buf, len, "warden-%d-%s%d", (int)getpid(), tag, n++);
}

/* How many directories called `name` exist anywhere under /sys/fs/cgroup. */
static const char *walk_name;
static int walk_count;

static int walk_cb(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)st;
	if (type == FTW_D && !strcmp(path + f->base, walk_name))
		walk_count++;
	return 0;
}

static int count_named(const char *name)
{
	walk_name = name;
	walk_count = 0;
	nftw("/sys/fs/cgroup", walk_cb, 16, FTW_PHYS);
	return walk_count;
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

static const struct wlimits test_limits = {
	.memory = 64 * MiB, .pids = 16, .cpus = 0.5, .cpu_ms = 10000,
};

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

	if (wcg_attach(cg, pid, &err) < 0)
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

/* ---- tests: both modes ---- */

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(wmech_name(WMECH_NONE), "none");
	assert_string_equal(wmech_name(WMECH_CGROUP_V2), "cgroup-v2");
	assert_string_equal(wmech_name(WMECH_CGROUP_V1), "cgroup-v1");
	assert_string_equal(wmech_name(WMECH_RLIMIT), "rlimit");
	assert_string_equal(wmech_name(WMECH_UNAVAILABLE), "unavailable");
	assert_string_equal(wlimit_kind_name(WLIM_MEMORY), "memory");
	assert_string_equal(wlimit_kind_name(WLIM_PIDS), "pids");
	assert_string_equal(wlimit_kind_name(WLIM_CPUS), "cpus");
	assert_string_equal(wlimit_kind_name(WLIM_CPU_TIME), "cpu_time");
	assert_int_equal(wcg_mech(NULL, WLIM_MEMORY), WMECH_NONE);
	assert_int_equal(wcg_clone_fd(NULL), -1);
	wcg_destroy(NULL);
	wcg_kill(NULL);
}

static void test_name_validation(void **state)
{
	static const char *bad[] = { "../x", "..", ".", "", "a/b", "/abs", "a b", "x\n", "ü" };
	struct wcg *cg = (struct wcg *)1;
	struct werr err = { 0 };
	char name[64];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(wcg_create(bad[i], &test_limits, &cg, &err), -1);
		assert_null(cg);
		assert_non_null(strstr(err.msg, "invalid cgroup name"));
	}
	assert_int_equal(wcg_create(NULL, &test_limits, &cg, &err), -1);
	assert_int_equal(count_named("x"), 0);
	unique_name(name, sizeof(name), "ok.A_z-");
	assert_int_equal(wcg_create(name, &test_limits, &cg, &err), 0);
	destroy_cg(cg);
}

/* Limits 0 mean unlimited: nothing to enforce, in either mode. */
static void test_unlimited_is_none(void **state)
{
	struct wlimits none = { 0 };
	struct wcg *cg = NULL;
	struct werr err = { 0 };
	char name[64];

	(void)state;
	unique_name(name, sizeof(name), "none");
	assert_int_equal(wcg_create(name, &none, &cg, &err), 0);
	track_cg(cg);
	for (int k = 0; k < WLIM__N; k++)
		assert_int_equal(wcg_mech(cg, (enum wlimit_kind)k), WMECH_NONE);
	destroy_cg(cg);
	assert_int_equal(count_named(name), 0);
}

/* Backends on a fake tree of plain files: the v2 files cannot be tested
 * for real on a machine whose v2 hierarchy has no controllers. */
static void write_fake(int dfd, const char *file, const char *s)
{
	int fd = openat(dfd, file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write_all(fd, s, strlen(s)), 0);
	close(fd);
}

static void assert_fake(int dfd, const char *file, const char *want)
{
	char buf[256];

	assert_true(cg_read(dfd, file, buf, sizeof(buf)) >= 0);
	assert_string_equal(buf, want);
}

static void test_backends_fake_tree(void **state)
{
	char dir[] = "/tmp/warden-cgtest.XXXXXX";
	static const char *files[] = { "memory.max", "memory.swap.max", "pids.max", "cpu.max",
	                               "memory.limit_in_bytes", "pids.events", "cpu.cfs_period_us",
	                               "cpu.cfs_quota_us", "memory.peak", "memory.events", "cpu.stat",
	                               "memory.max_usage_in_bytes", "memory.oom_control",
	                               "cpuacct.usage" };
	struct wcg_stats st = { 0 };
	struct werr err = { 0 };
	int dfd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		write_fake(dfd, files[i], "");

	assert_int_equal(cg_backend_v2.set_limits(dfd, dir, CG_MEMORY | CG_PIDS | CG_CPU,
	                                          &test_limits, &err), 0);
	assert_fake(dfd, "memory.max", "67108864");
	assert_fake(dfd, "memory.swap.max", "0");
	assert_fake(dfd, "pids.max", "16");
	assert_fake(dfd, "cpu.max", "50000 100000");

	/* v1 without swap accounting: memory.memsw.* missing is fine. */
	assert_int_equal(cg_backend_v1.set_limits(dfd, dir, CG_MEMORY | CG_PIDS | CG_CPU | CG_CPUACCT,
	                                          &test_limits, &err), 0);
	assert_fake(dfd, "memory.limit_in_bytes", "67108864");
	assert_fake(dfd, "cpu.cfs_period_us", "100000");
	assert_fake(dfd, "cpu.cfs_quota_us", "50000");
	/* A required file missing is a real error, with the file named. */
	unlinkat(dfd, "pids.max", 0);
	assert_int_equal(cg_backend_v2.set_limits(dfd, dir, CG_PIDS, &test_limits, &err), -1);
	assert_non_null(strstr(err.msg, "pids.max=16"));
	assert_int_equal(err.errnum, ENOENT);
	/* Tiny cpus: clamped to the kernel's 1 ms minimum quota. */
	write_fake(dfd, "cpu.max", "");
	assert_int_equal(cg_backend_v2.set_limits(dfd, dir, CG_CPU,
	                                          &(struct wlimits){ .cpus = 0.001 }, &err), 0);
	assert_fake(dfd, "cpu.max", "1000 100000");
	assert_int_equal(cg_cpu_quota_us(1.5), 150000);
	assert_int_equal(cg_cpu_quota_us(1e300), 65536ULL * 100000);   /* no overflow */

	write_fake(dfd, "memory.peak", "123456\n");
	write_fake(dfd, "memory.events", "low 0\nhigh 0\nmax 9\noom 2\noom_kill 2\noom_group_kill 7\n");
	write_fake(dfd, "pids.events", "max 5\n");
	write_fake(dfd, "cpu.stat", "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\n");
	cg_backend_v2.stats(dfd, CG_MEMORY | CG_PIDS, &st);
	assert_true(st.have_peak && st.have_oom && st.have_pids && st.have_cpu);
	assert_int_equal(st.peak_memory, 123456);
	assert_int_equal(st.oom_kills, 2);
	assert_int_equal(st.pids_max_hits, 5);
	assert_int_equal(st.cpu_ns, 1500000);

	memset(&st, 0, sizeof(st));
	write_fake(dfd, "memory.max_usage_in_bytes", "4096\n");
	write_fake(dfd, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n");
	write_fake(dfd, "cpuacct.usage", "987654321\n");
	cg_backend_v1.stats(dfd, CG_MEMORY | CG_PIDS | CG_CPUACCT, &st);
	assert_int_equal(st.peak_memory, 4096);
	assert_int_equal(st.oom_kills, 3);
	assert_int_equal(st.pids_max_hits, 5);
	assert_int_equal(st.cpu_ns, 987654321);
	/* Before 4.13 there is no oom_kill line: no count rather than a fake. */
	memset(&st, 0, sizeof(st));
	write_fake(dfd, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\n");
	cg_backend_v1.stats(dfd, CG_MEMORY, &st);
	assert_false(st.have_oom);

	assert_true(cg_word_in("cpuset cpu io memory pids\n", "cpu"));
	assert_false(cg_word_in("cpuset io", "cpu"));

	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		unlinkat(dfd, files[i], 0);
	close(dfd);
	assert_int_equal(rmdir(dir), 0);
	v2_test_dir[0] = '\0';
}

/* Discovery of other machines' layouts, fed to cg_discover_from() with
 * their mount points moved into a temporary directory. */
static int rm_cb(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)st; (void)type; (void)f;
	remove(path);
	return 0;
}

static void mkfile(const char *root, const char *rel, const char *content)
{
	char path[PATH_MAX], *slash;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	slash = strrchr(path, '/');
	*slash = '\0';
	assert_int_equal(mkdir_p(path, 0755, NULL), 0);
	*slash = '/';
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write_all(fd, content, strlen(content)), 0);
	close(fd);
}

static void assert_probe(enum wlimit_kind k, enum wmech m, const char *root, const char *where)
{
	struct wcg_probe pr;
	char want[PATH_MAX];

	wcg_probe(&pr);
	assert_int_equal(pr.mech[k], m);
	if (!where)
		return;
	snprintf(want, sizeof(want), "%s/%s", root, where);
	assert_string_equal(pr.where[k], want);
}

static void test_discovery_layouts(void **state)
{
	char root[] = "/tmp/warden-cglayout.XXXXXX";
	char mi[4 * PATH_MAX], path[PATH_MAX], buf[64];
	struct wcg_probe pr;
	struct stat sb;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(root));

	/* A: hybrid v1, cpu and cpuacct co-mounted, a mount point with a
	 * space (escaped as \040), a second bind mount of the memory
	 * hierarchy, no pids hierarchy, v2 without controllers. */
	mkfile(root, "my mem/a/b/cgroup.procs", "");
	mkfile(root, "cpu,cpuacct/a/cgroup.procs", "");
	mkfile(root, "v2/cgroup.controllers", "\n");
	snprintf(mi, sizeof(mi),
	         "30 22 0:27 / %s/my\\040mem rw,relatime - cgroup cgroup rw,memory\n"
	         "31 22 0:27 /a %s/elsewhere rw,relatime - cgroup cgroup rw,memory\n"
	         "32 22 0:28 / %s/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct\n"
	         "33 22 0:29 / %s/v2 rw,relatime - cgroup2 cgroup2 rw,nsdelegate\n"
	         "34 22 0:30 / %s/sd rw - cgroup cgroup rw,xattr,name=systemd\n",
	         root, root, root, root, root);
	cg_discover_from(mi, "9:name=systemd:/\n4:memory:/a/b\n2:cpu,cpuacct:/a\n0::/\n");
	assert_probe(WLIM_MEMORY, WMECH_CGROUP_V1, root, "my mem/a/b/warden");
	assert_probe(WLIM_CPUS, WMECH_CGROUP_V1, root, "cpu,cpuacct/a/warden");
	assert_probe(WLIM_CPU_TIME, WMECH_CGROUP_V1, root, "cpu,cpuacct/a/warden");
	assert_probe(WLIM_PIDS, WMECH_RLIMIT, root, NULL);
	wcg_probe(&pr);
	assert_non_null(strstr(pr.where[WLIM_PIDS], "no memory, pids or cpu controller"));
	assert_true(pr.v2_mounted);

	/* B: pure v2 seen through a mount of /user.slice; controllers are
	 * delegated to OWN/warden through both subtree_control files. */
	mkfile(root, "u/x/cgroup.controllers", "cpuset cpu io memory pids\n");
	mkfile(root, "u/x/cgroup.subtree_control", "");
	mkfile(root, "u/x/warden/cgroup.subtree_control", "");
	snprintf(mi, sizeof(mi), "40 22 0:31 /user.slice %s/u rw - cgroup2 cgroup2 rw\n", root);
	cg_discover_from(mi, "0::/user.slice/x\n");
	for (int k = 0; k < WLIM__N; k++)
		assert_probe((enum wlimit_kind)k, WMECH_CGROUP_V2, root, "u/x/warden");
	snprintf(path, sizeof(path), "%s/u/x/warden", root);
	fd = open(path, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	assert_true(cg_read(fd, "cgroup.subtree_control", buf, sizeof(buf)) > 0);
	assert_int_equal(buf[0], '+');      /* it asked for controllers */
	close(fd);

	/* C: only memory delegated: cpus unavailable, cpu_time still v2
	 * (cpu.stat usage_usec needs no controller). */
	mkfile(root, "u/x/cgroup.controllers", "memory\n");
	cg_discover_from(mi, "0::/user.slice/x\n");
	assert_probe(WLIM_MEMORY, WMECH_CGROUP_V2, root, "u/x/warden");
	assert_probe(WLIM_CPU_TIME, WMECH_CGROUP_V2, root, "u/x/warden");
	assert_probe(WLIM_CPUS, WMECH_UNAVAILABLE, root, NULL);
	assert_probe(WLIM_PIDS, WMECH_RLIMIT, root, NULL);
	{
		/* a group for CPU time only: made in v2 (cloning into it works),
		 * with no cpu file written, and removed again */
		struct wlimits cpu_only = { .cpu_ms = 1000 };
		struct wcg *cg = NULL;
		struct werr err = { 0 };

		assert_int_equal(wcg_create("warden-1-fake", &cpu_only, &cg, &err), 0);
		track_cg(cg);
		assert_int_equal(wcg_mech(cg, WLIM_CPU_TIME), WMECH_CGROUP_V2);
		assert_int_equal(wcg_mech(cg, WLIM_MEMORY), WMECH_NONE);
		assert_true(wcg_clone_fd(cg) >= 0);
		snprintf(path, sizeof(path), "%s/u/x/warden/warden-1-fake", root);
		assert_int_equal(stat(path, &sb), 0);
		destroy_cg(cg);
		assert_int_equal(stat(path, &sb), -1);
	}

	/* D: our cgroup outside what the mount shows (another subtree, or
	 * outside our cgroup namespace): never guess a path. */
	snprintf(mi, sizeof(mi), "40 22 0:31 /system.slice %s/u rw - cgroup2 cgroup2 rw\n"
	         "41 22 0:32 / %s/m rw - cgroup cgroup rw,memory\n", root, root);
	cg_discover_from(mi, "0::/user.slice/x\n4:memory:/../../x\n");
	for (int k = 0; k < WLIM__N; k++)
		assert_probe((enum wlimit_kind)k, k == WLIM_CPUS ? WMECH_UNAVAILABLE : WMECH_RLIMIT,
		             root, NULL);
	snprintf(path, sizeof(path), "%s/m/warden", root);
	assert_int_equal(stat(path, &sb), -1);

	cg_reset();
	nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	assert_int_equal(stat(root, &sb), -1);
}

/* The fallback as an unprivileged user: everything works, nothing is
 * enforced by cgroups, no directory appears.  Returns 0 or sets msg. */
static int fallback_checks(char *msg, size_t len)
{
	struct wcg *cg = NULL;
	struct werr err = { 0 };
	struct wcg_stats st;
	struct wcg_probe pr;
	char name[64];

#define CHECK(c) do { if (!(c)) { snprintf(msg, len, "%s:%d: %s", __FILE__, __LINE__, #c); \
                                  wcg_destroy(cg); return -1; } } while (0)
	unique_name(name, sizeof(name), "unpriv");
	if (wcg_create(name, &test_limits, &cg, &err) < 0) {
		cg_msg(msg, len, "wcg_create: %s", err.msg);
		return -1;
	}
	CHECK(wcg_mech(cg, WLIM_MEMORY) == WMECH_RLIMIT);
	CHECK(wcg_mech(cg, WLIM_PIDS) == WMECH_RLIMIT);
	CHECK(wcg_mech(cg, WLIM_CPUS) == WMECH_UNAVAILABLE);
	CHECK(wcg_mech(cg, WLIM_CPU_TIME) == WMECH_RLIMIT);
	CHECK(wcg_clone_fd(cg) == -1);
	CHECK(wcg_attach(cg, getpid(), &err) == 0);
	wcg_stats(cg, &st);
	CHECK(!st.have_peak && !st.have_cpu && !st.have_oom && !st.have_pids);
	wcg_kill(cg);
	CHECK(count_named(name) == 0);
	wcg_probe(&pr);
	CHECK(pr.mech[WLIM_MEMORY] == WMECH_RLIMIT && pr.mech[WLIM_CPUS] == WMECH_UNAVAILABLE);
	CHECK(pr.where[WLIM_MEMORY][0] != '\0');
	wcg_gc();
	wcg_destroy(cg);
	cg = NULL;
	CHECK(count_named(name) == 0);
	return 0;
#undef CHECK
}

static void test_fallback_as_nobody(void **state)
{
	char msg[512] = "";
	int p[2], st;
	pid_t pid;

	(void)state;
	if (!is_root()) {
		if (fallback_checks(msg, sizeof(msg)) < 0)
			fail_msg("%s", msg);
		return;
	}
	/* As root: forget what discovery found as root, become nobody, and
	 * run the same checks in a child. */
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		cg_reset();
		if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
		    setresuid(65534, 65534, 65534) < 0) {
			snprintf(msg, sizeof(msg), "dropping privileges: %s", strerror(errno));
			(void)!write(p[1], msg, strlen(msg));
			_exit(1);
		}
		if (fallback_checks(msg, sizeof(msg)) < 0) {
			(void)!write(p[1], msg, strlen(msg));
			_exit(1);
		}
		_exit(0);
	}
	close(p[1]);
	(void)!read(p[0], msg, sizeof(msg) - 1);
	close(p[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("as uid 65534: %s", msg);
}

static void test_probe(void **state)
{
	struct wcg_probe pr;

	(void)state;
	wcg_probe(&pr);
	for (int k = 0; k < WLIM__N; k++) {
		struct stat sb;

		print_message("# %-8s %-11s %s\n", wlimit_kind_name((enum wlimit_kind)k),
		              wmech_name(pr.mech[k]), pr.where[k]);
		assert_true(pr.where[k][0] != '\0');
		if (is_cgroup(pr.mech[k])) {
			assert_int_equal(stat(pr.where[k], &sb), 0);
			assert_true(S_ISDIR(sb.st_mode));
		} else {
			assert_int_equal(pr.mech[k], k == WLIM_CPUS ? WMECH_UNAVAILABLE : WMECH_RLIMIT);
		}
	}
	print_message("# v2: %s %s [%s]\n", pr.v2_mounted ? "mounted" : "not mounted",
	              pr.v2_path, pr.v2_controllers);
	if (!is_root())
		assert_int_equal(pr.mech[WLIM_MEMORY], WMECH_RLIMIT);
	else if (!is_cgroup(pr.mech[WLIM_MEMORY]))
		skip();   /* root without cgroups: a failure under WARDEN_MUST_WORK */
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

/* Remove the shared "warden" parents this run may have created: best
 * effort, they stay if another warden is using them (EBUSY). */
static int group_teardown(void **state)
{
	struct wcg_probe pr;

	(void)state;
	if (!is_root())
		return 0;
	wcg_probe(&pr);
	for (int k = 0; k < WLIM__N; k++)
		if (is_cgroup(pr.mech[k]))
			rmdir(pr.where[k]);
	cg_reset();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_names, teardown),
		cmocka_unit_test_teardown(test_name_validation, teardown),
		cmocka_unit_test_teardown(test_unlimited_is_none, teardown),
		cmocka_unit_test_teardown(test_backends_fake_tree, teardown),
		cmocka_unit_test_teardown(test_discovery_layouts, teardown),
		cmocka_unit_test_teardown(test_fallback_as_nobody, teardown),
		cmocka_unit_test_teardown(test_probe, teardown),
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

	return cmocka_run_group_tests_name("cgroup", tests, NULL, group_teardown);
}
