/* cgroup v1 backend: one hierarchy per controller (or a few co-mounted,
 * e.g. "cpu,cpuacct").  cgroup.c calls us once per hierarchy, with the
 * controllers this hierarchy serves for the jail in `ctls`.
 *
 * Files used:
 *   memory   memory.limit_in_bytes, memory.memsw.limit_in_bytes,
 *            memory.max_usage_in_bytes, memory.oom_control
 *   pids     pids.max, pids.events
 *   cpu      cpu.cfs_period_us, cpu.cfs_quota_us
 *   cpuacct  cpuacct.usage */
#include <inttypes.h>
#include <stdio.h>

#include "cgroup_impl.h"


static void v1_setup(struct cg_hier *h)
{
	/* Nothing to delegate in v1: a writable parent is all it takes. */
	cg_open_parent(h);
}

static int v1_set_limits(int dfd, const char *path, unsigned ctls,
                         const struct wlimits *lim, struct werr *err)
{
	char v[32];

	if ((ctls & CG_MEMORY) && lim->memory) {
		snprintf(v, sizeof(v), "%" PRIu64, lim->memory);
		if (cg_set(dfd, path, "memory.limit_in_bytes", v, false, err) < 0)
			return -1;
		/* memory+swap: without it the jail could push its pages to swap
		 * and use far more than the limit.  Must be set after
		 * limit_in_bytes (the kernel wants memsw >= limit).  The file is
		 * missing when swap accounting is off; then there is nothing to
		 * dodge through. */
		if (cg_set(dfd, path, "memory.memsw.limit_in_bytes", v, true, err) < 0)
			return -1;
	}
	if ((ctls & CG_PIDS) && lim->pids) {
		snprintf(v, sizeof(v), "%" PRIu64, lim->pids);
		if (cg_set(dfd, path, "pids.max", v, false, err) < 0)
			return -1;
	}
	if ((ctls & CG_CPU) && lim->cpus > 0) {
		/* period first: the kernel checks quota against it */
		snprintf(v, sizeof(v), "%llu", CG_CPU_PERIOD_US);
		if (cg_set(dfd, path, "cpu.cfs_period_us", v, false, err) < 0)
			return -1;
		snprintf(v, sizeof(v), "%" PRIu64, cg_cpu_quota_us(lim->cpus));
		if (cg_set(dfd, path, "cpu.cfs_quota_us", v, false, err) < 0)
			return -1;
	}
	return 0;
}

static void v1_stats(int dfd, unsigned ctls, struct wcg_stats *st)
{
	bool mem = ctls & CG_MEMORY;

	cg_stat_once(dfd, mem, "memory.max_usage_in_bytes", NULL, &st->peak_memory, &st->have_peak);
	/* "oom_kill N" appeared in kernel 4.13.  Older kernels only have
	 * memory.failcnt, which counts failed charges (reclaim included), not
	 * kills: leave have_oom false rather than report it as one. */
	cg_stat_once(dfd, mem, "memory.oom_control", "oom_kill", &st->oom_kills, &st->have_oom);
	cg_stat_once(dfd, ctls & CG_PIDS, "pids.events", "max", &st->pids_max_hits, &st->have_pids);
	cg_stat_once(dfd, ctls & CG_CPUACCT, "cpuacct.usage", NULL, &st->cpu_ns, &st->have_cpu);
}

/* v1 has no cgroup.kill: the caller sweeps cgroup.procs. */
static int v1_kill(int dfd)
{
	(void)dfd;
	return -1;
}

const struct cg_backend cg_backend_v1 = {
	.version = 1,
	.setup = v1_setup,
	.set_limits = v1_set_limits,
	.stats = v1_stats,
	.kill = v1_kill,
};
