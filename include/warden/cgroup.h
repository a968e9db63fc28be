/* Resource limits for one jail through cgroups, with an explicit rlimit
 * fallback.  One small interface, one file per backend (crun's layout):
 *   limits/cgroup.c     picks a backend per controller, owns struct wcg
 *   limits/cgroup_v1.c  legacy per-controller hierarchies
 *   limits/cgroup_v2.c  unified hierarchy (CLONE_INTO_CGROUP, cgroup.kill)
 *
 * Each limit records the mechanism that enforces it, so `run --json`,
 * the run summary and `doctor` can say which limits are weaker. */
#ifndef WARDEN_CGROUP_H
#define WARDEN_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "warden/err.h"
#include "warden/policy.h"

enum wlimit_kind { WLIM_MEMORY = 0, WLIM_PIDS, WLIM_CPUS, WLIM_CPU_TIME, WLIM__N };

enum wmech {
	WMECH_NONE = 0,   /* limit not requested (0 = unlimited) */
	WMECH_CGROUP_V2,
	WMECH_CGROUP_V1,
	WMECH_RLIMIT,     /* weaker fallback: per-process, see SECURITY.md */
	WMECH_UNAVAILABLE /* requested but nothing can enforce it */
};

const char *wmech_name(enum wmech m);          /* "cgroup-v2", "rlimit", ... */
const char *wlimit_kind_name(enum wlimit_kind k); /* "memory", "pids", ... */
/* True when lim asks for limit k (0 = unlimited is not a request). */
bool wlimit_requested(const struct wlimits *lim, enum wlimit_kind k);

struct wcg;   /* opaque */

struct wcg_stats {
	uint64_t peak_memory;   /* bytes, 0 if unknown */
	uint64_t cpu_ns;        /* total CPU of the group, 0 if unknown */
	uint64_t oom_kills;     /* OOM kills in the group */
	uint64_t pids_max_hits; /* fork failures at pids.max */
	bool have_peak, have_cpu, have_oom, have_pids;
};

/* Create the group(s) for one jail named `name` (unique per run, e.g.
 * "warden-<pid>-<n>") and apply the limits.  Never fails merely because
 * cgroups are unavailable: each limit falls back (see wcg_mech) and a
 * missing cgroup is not an error.  Fails only on a real error, e.g. a
 * writable cgroup that rejects a value. */
int wcg_create(const char *name, const struct wlimits *lim, struct wcg **out,
               struct werr *err);

enum wmech wcg_mech(const struct wcg *cg, enum wlimit_kind k);

/* True when cg created at least one directory (for limits or accounting). */
bool wcg_has_groups(const struct wcg *cg);

/* v2 only: an O_DIRECTORY fd for clone3(CLONE_INTO_CGROUP), else -1.
 * The fd stays owned by cg. */
int wcg_clone_fd(const struct wcg *cg);

/* Move pid into every v1 hierarchy (and v2 if not cloned into it); with
 * v2_only, into the groups that are not v1 only (after wcg_join_fds). */
int wcg_attach(struct wcg *cg, pid_t pid, bool v2_only, struct werr *err);

/* The same, split for a caller that moves the pid from another process
 * (the session server's attacher, supervisor/attach.c): the directory fds
 * wcg_attach writes to (at most max, owned by cg), and the write itself
 * on one of them. */
size_t wcg_attach_fds(const struct wcg *cg, int *fds, size_t max, bool v2_only);
int wcg_attach_one(int dirfd, pid_t pid);

/* Joining instead of being moved, on cgroup v1: the "tasks" file of each
 * v1 group, opened for writing (at most max; the caller closes them).  A
 * process that writes "0" there moves itself, which the kernel does
 * without the global lock (and its RCU grace period, often 5-20 ms) that
 * moving another pid takes; its children are then born in the group.
 * Returns the count, or -1 with err.  wcg_attach with v2_only then moves
 * pid into the groups that are not v1 (none on a v1-only host). */
int wcg_join_fds(const struct wcg *cg, int *fds, size_t max, struct werr *err);

/* Read counters; fields not available are left 0 with have_* false. */
void wcg_stats(struct wcg *cg, struct wcg_stats *st);

/* SIGKILL every process in the group(s) (cgroup.kill on v2, else a
 * cgroup.procs sweep).  Safe to call repeatedly. */
void wcg_kill(struct wcg *cg);

/* Kill, wait until empty (bounded), rmdir every directory, free.  NULL ok. */
void wcg_destroy(struct wcg *cg);
/* Free the handle only, leaving the directories to whoever removes them
 * (`warden run`'s watchdog, after warden has reported).  NULL ok. */
void wcg_free(struct wcg *cg);

/* Remove leftover empty "warden-<pid>-*" groups whose <pid> is no longer
 * running (a warden that was SIGKILLed).  Best effort: by the session
 * server at start-up, by `warden run`'s watchdog once it runs. */
void wcg_gc(void);
/* Kill and remove every "warden-<owner>-*" group, alive owner or not: the
 * session server's single watchdog, once the server is gone. */
void wcg_gc_owner(pid_t owner);

/* What this machine offers, for `warden doctor`: one line per controller,
 * e.g. "memory: cgroup-v1 (/sys/fs/cgroup/memory/...), writable". */
struct wcg_probe {
	enum wmech mech[WLIM__N];      /* what wcg_create would use for each */
	char where[WLIM__N][256];      /* parent directory it would use, or why not */
	/* For a limit without a cgroup: the hierarchy root would have to hand
	 * over (fix_version 1: the v1 parent directory in fix_path; 2: the v2
	 * cgroup of this process in fix_path), or fix_version 0 if none. */
	int fix_version[WLIM__N];
	char fix_path[WLIM__N][256];
	bool v2_mounted;
	char v2_path[256];
	char v2_controllers[256];
};
void wcg_probe(struct wcg_probe *pr);

/* A jail warming up in the session server's pool: the least CPU weight
 * (low), or the kernel's default, which a cold jail has (!low).  0 when
 * every group with the cpu controller took it (or there is none), -1 with
 * errno otherwise.  limits/cgroup.c. */
int wcg_set_cpu_low(struct wcg *cg, bool low);

#endif
