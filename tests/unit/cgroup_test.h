/* Shared by the two cgroup suites: test_cgroup.c (names, backends on fake
 * trees, discovery, the fallback) and test_cgroup_limits.c (groups made
 * and enforced on the real kernel).  Every group and child a test makes is
 * tracked here and removed by teardown, also when an assertion fails. */
#ifndef WARDEN_TEST_CGROUP_TEST_H
#define WARDEN_TEST_CGROUP_TEST_H

#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "warden/cgroup.h"
#include "warden/util.h"
#include "../../limits/cgroup_impl.h"


#define MiB (1024ULL * 1024)

/* ---- tracking, so teardown cleans up after a failed assertion ---- */

static struct wcg *live_cg[8];
static pid_t live_pid[8];

static inline struct wcg *track_cg(struct wcg *cg)
{
	for (size_t i = 0; i < ARRAY_SIZE(live_cg); i++)
		if (!live_cg[i]) {
			live_cg[i] = cg;
			break;
		}
	return cg;
}

static inline void destroy_cg(struct wcg *cg)
{
	for (size_t i = 0; i < ARRAY_SIZE(live_cg); i++)
		if (live_cg[i] == cg)
			live_cg[i] = NULL;
	wcg_destroy(cg);
}

static char v2_test_dir[PATH_MAX];   /* a test's own directory: teardown removes it */

static inline void track_pid(pid_t pid)
{
	for (size_t i = 0; i < ARRAY_SIZE(live_pid); i++)
		if (!live_pid[i]) {
			live_pid[i] = pid;
			return;
		}
}

static inline void forget_pid(pid_t pid)
{
	for (size_t i = 0; i < ARRAY_SIZE(live_pid); i++)
		if (live_pid[i] == pid)
			live_pid[i] = 0;
}

static inline int teardown(void **state)
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

static inline bool is_root(void) { return geteuid() == 0; }

static inline bool is_cgroup(enum wmech m) { return m == WMECH_CGROUP_V1 || m == WMECH_CGROUP_V2; }

static inline void unique_name(char *buf, size_t len, const char *tag)
{
	static int n;

	snprintf(buf, len, "warden-%d-%s%d", (int)getpid(), tag, n++);
}

/* How many directories called `name` exist anywhere under /sys/fs/cgroup. */
static const char *walk_name;
static int walk_count;

static inline int walk_cb(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)st;
	if (type == FTW_D && !strcmp(path + f->base, walk_name))
		walk_count++;
	return 0;
}

static inline int count_named(const char *name)
{
	walk_name = name;
	walk_count = 0;
	nftw("/sys/fs/cgroup", walk_cb, 16, FTW_PHYS);
	return walk_count;
}

static const struct wlimits test_limits = {
	.memory = 64 * MiB, .pids = 16, .cpus = 0.5, .cpu_ms = 10000,
};

/* Remove the shared "warden" parents this run may have created: best
 * effort, they stay if another warden is using them (EBUSY). */
static inline int group_teardown(void **state)
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

#endif
