/* cgroup v2 backend: the unified hierarchy.
 *
 * Layout, under the cgroup warden was started in (OWN):
 *
 *   OWN/                     cgroup.subtree_control: +memory +pids +cpu
 *   OWN/warden/              no processes; subtree_control: same
 *   OWN/warden/<name>/       one jail (a leaf): memory.max, pids.max, ...
 *   OWN/warden.supervisor/   warden itself, only if it had to move (below)
 *
 * Why the extra "warden" level: v2's "no internal processes" rule lets a
 * cgroup other than the root hand controllers to its children only while
 * it has no processes of its own.  OWN holds warden, so OWN cannot be the
 * parent of jails with controllers unless warden leaves it; "warden" never
 * holds a process, so it can always delegate to the jails below it.
 *
 * Files used: cgroup.controllers, cgroup.subtree_control, cgroup.kill,
 * memory.max, memory.swap.max, memory.peak, memory.events, pids.max,
 * pids.events, cpu.max, cpu.stat. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "warden/util.h"
#include "cgroup_impl.h"

static const struct { unsigned bit; const char *name; } v2_ctls[] = {
	{ CG_MEMORY, "memory" },
	{ CG_PIDS, "pids" },
	{ CG_CPU, "cpu" },
};

static int enable(int dfd, const char *ctl)
{
	char v[32];

	snprintf(v, sizeof(v), "+%s", ctl);
	return cg_write(dfd, "cgroup.subtree_control", v);
}

/* Is this process the only one in the cgroup open at dfd? */
static bool alone_in(int dfd)
{
	char buf[64], mine[24];

	if (cg_read(dfd, "cgroup.procs", buf, sizeof(buf)) < 0)
		return false;
	snprintf(mine, sizeof(mine), "%d\n", (int)getpid());
	return strcmp(buf, mine) == 0;
}

/* Warden is in OWN and OWN refuses to delegate (EBUSY: it has processes).
 * Moving warden is the only way to use v2 limits then.  We do it only when
 * warden is OWN's sole process (as under `systemd-run --scope -p
 * Delegate=yes warden ...`): it goes into the leaf OWN/warden.supervisor,
 * which disturbs no one else.  If other processes share OWN (a login
 * shell, say), they are not ours to move: we fall back instead. */
static int move_self(int own)
{
	_cleanup_close_ int fd = -1;
	char pid[24];

	if (!alone_in(own)) {
		errno = EBUSY;
		return -1;
	}
	if (mkdirat(own, "warden.supervisor", 0755) < 0 && errno != EEXIST)
		return -1;
	fd = openat(own, "warden.supervisor", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	return cg_write(fd, "cgroup.procs", pid);
}

static void v2_setup(struct cg_hier *h)
{
	_cleanup_close_ int own = -1;
	char avail_s[256], on_s[256];
	unsigned avail = 0;
	bool moved = false;
	size_t i;

	h->parent_fd = -1;
	h->ctls = 0;
	own = open(h->own, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (own < 0 || cg_read(own, "cgroup.controllers", avail_s, sizeof(avail_s)) < 0) {
		cg_msg(h->why, sizeof(h->why), "%s: %s", h->own, strerror(errno));
		return;
	}
	for (i = 0; i < ARRAY_SIZE(v2_ctls); i++)
		if (cg_word_in(avail_s, v2_ctls[i].name))
			avail |= v2_ctls[i].bit;
	if (!avail) {
		cg_msg(h->why, sizeof(h->why),
		         "no memory, pids or cpu controller in %s/cgroup.controllers", h->own);
		return;
	}

	/* 1. OWN -> OWN/warden.  Already enabled controllers need no write
	 * (and no permission).  Failing ones are dropped one by one, so a
	 * single refused controller does not cost the others. */
	if (cg_read(own, "cgroup.subtree_control", on_s, sizeof(on_s)) < 0)
		on_s[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(v2_ctls); i++) {
		const char *c = v2_ctls[i].name;

		if (!(avail & v2_ctls[i].bit) || cg_word_in(on_s, c))
			continue;
		if (enable(own, c) == 0)
			continue;
		if (errno == EBUSY && !moved && move_self(own) == 0) {
			moved = true;
			if (enable(own, c) == 0)
				continue;
		}
		cg_msg(h->why, sizeof(h->why), "cannot enable %s in %s/cgroup.subtree_control: %s%s",
		         c, h->own, strerror(errno),
		         errno == EBUSY ? " (it has other processes; start warden in its own"
		                          " cgroup, e.g. systemd-run --scope -p Delegate=yes)" : "");
		avail &= ~v2_ctls[i].bit;
	}
	if (!avail)
		return;

	/* 2. OWN/warden -> jails.  "warden" holds no process, so the rule
	 * above cannot refuse this (unless someone put one there). */
	cg_open_parent(h);
	if (h->parent_fd < 0)
		return;
	if (cg_read(h->parent_fd, "cgroup.subtree_control", on_s, sizeof(on_s)) < 0)
		on_s[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(v2_ctls); i++) {
		const char *c = v2_ctls[i].name;

		if (!(avail & v2_ctls[i].bit) || cg_word_in(on_s, c) || enable(h->parent_fd, c) == 0)
			continue;
		cg_msg(h->why, sizeof(h->why), "cannot enable %s in %s/cgroup.subtree_control: %s",
		         c, h->parent, strerror(errno));
		avail &= ~v2_ctls[i].bit;
	}
	h->ctls = avail;
	if (!avail) {
		close(h->parent_fd);
		h->parent_fd = -1;
	}
}

static int v2_set_limits(int dfd, const char *path, unsigned ctls,
                         const struct wlimits *lim, struct werr *err)
{
	char v[48];

	if ((ctls & CG_MEMORY) && lim->memory) {
		snprintf(v, sizeof(v), "%" PRIu64, lim->memory);
		if (cg_set(dfd, path, "memory.max", v, false, err) < 0)
			return -1;
		/* No swap for the jail, or it could page out past memory.max.
		 * The file is missing when swap accounting is off. */
		if (cg_set(dfd, path, "memory.swap.max", "0", true, err) < 0)
			return -1;
	}
	if ((ctls & CG_PIDS) && lim->pids) {
		snprintf(v, sizeof(v), "%" PRIu64, lim->pids);
		if (cg_set(dfd, path, "pids.max", v, false, err) < 0)
			return -1;
	}
	if ((ctls & CG_CPU) && lim->cpus > 0) {
		snprintf(v, sizeof(v), "%" PRIu64 " %llu", cg_cpu_quota_us(lim->cpus), CG_CPU_PERIOD_US);
		if (cg_set(dfd, path, "cpu.max", v, false, err) < 0)
			return -1;
	}
	return 0;
}

static void v2_stats(int dfd, unsigned ctls, struct wcg_stats *st)
{
	bool mem = ctls & CG_MEMORY;

	/* memory.peak exists since 5.19; without it, have_peak stays false. */
	cg_stat_once(dfd, mem, "memory.peak", NULL, &st->peak_memory, &st->have_peak);
	cg_stat_once(dfd, mem, "memory.events", "oom_kill", &st->oom_kills, &st->have_oom);
	cg_stat_once(dfd, ctls & CG_PIDS, "pids.events", "max", &st->pids_max_hits, &st->have_pids);
	/* usage_usec is the core accounting every v2 group has, with or
	 * without the cpu controller. */
	if (cg_stat_once(dfd, true, "cpu.stat", "usage_usec", &st->cpu_ns, &st->have_cpu))
		st->cpu_ns *= 1000;
}

/* cgroup.kill (5.14+) kills every process of the group in the kernel, new
 * forks included, with no pid-reuse race. */
static int v2_kill(int dfd)
{
	return cg_write(dfd, "cgroup.kill", "1");
}

const struct cg_backend cg_backend_v2 = {
	.version = 2,
	.setup = v2_setup,
	.set_limits = v2_set_limits,
	.stats = v2_stats,
	.kill = v2_kill,
};
