/* Internal interface between limits/cgroup.c (discovery, backend choice,
 * struct wcg) and the two backends, cgroup_v1.c and cgroup_v2.c.  Not part
 * of the public API (include/warden/cgroup.h); the unit test uses it to
 * exercise the backends on a fake tree and to reset the per-process cache.
 *
 * A backend knows the files of its cgroup version.  It never walks mounts
 * and never decides which version enforces what: cgroup.c does that. */
#ifndef WARDEN_CGROUP_IMPL_H
#define WARDEN_CGROUP_IMPL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "warden/cgroup.h"

/* Controllers warden uses, as a bit mask.  On v2 CG_CPU covers both the
 * bandwidth limit and the accounting (cpuacct does not exist there). */
enum {
	CG_MEMORY  = 1u << 0,
	CG_PIDS    = 1u << 1,
	CG_CPU     = 1u << 2,
	CG_CPUACCT = 1u << 3,
};

/* v2 + at most one v1 hierarchy per controller above. */
#define CG_MAX_HIER 5

/* One hierarchy as this process sees it. */
struct cg_hier {
	int version;            /* 1 or 2 */
	unsigned ctls;          /* v1: our controllers mounted here (CG_*);
	                           v2: controllers delegated to `parent` */
	char own[PATH_MAX];     /* <mount point><own cgroup> */
	char parent[PATH_MAX];  /* own + "/warden": jails are created here */
	int parent_fd;          /* O_DIRECTORY fd on parent; -1 if unusable */
	char why[256];          /* why unusable, for `warden doctor` */
};

struct cg_backend {
	int version;
	/* Make h->parent usable (create it; v2: delegate controllers to it).
	 * On success parent_fd >= 0; otherwise parent_fd = -1 and h->why says
	 * why.  Never fails hard: an unusable hierarchy means fallback. */
	void (*setup)(struct cg_hier *h);
	/* Write the limits of `lim` for the controllers in `ctls` into the
	 * group open at dfd (path is for messages).  0 or -1 with err set. */
	int (*set_limits)(int dfd, const char *path, unsigned ctls,
	                  const struct wlimits *lim, struct werr *err);
	/* Add what the group's files say to st (fields already set stay). */
	void (*stats)(int dfd, unsigned ctls, struct wcg_stats *st);
	/* Kill every process atomically if the kernel can (v2 cgroup.kill):
	 * 0 if done, -1 if the caller must sweep cgroup.procs. */
	int (*kill)(int dfd);
};

extern const struct cg_backend cg_backend_v1;
extern const struct cg_backend cg_backend_v2;

/* Helpers shared by the backends (cgroup.c).  All take a directory fd and
 * a plain file name, so no path is ever built from untrusted text. */

/* Write val to dfd/file.  0, or -1 with errno set. */
int cg_write(int dfd, const char *file, const char *val);
/* Same, with a message "setting FILE=VAL in PATH: strerror" on failure.
 * optional: a missing file (ENOENT) is not an error. */
int cg_set(int dfd, const char *path, const char *file, const char *val,
           bool optional, struct werr *err);
/* Read dfd/file into buf (NUL-terminated, truncated to len-1).
 * Returns the length, or -1 with errno set. */
ssize_t cg_read(int dfd, const char *file, char *buf, size_t len);
/* Read one unsigned number: the whole file ("123\n"), or with key != NULL
 * the value on the line "key N" (memory.events, cpu.stat, ...).
 * 0 if found, -1 otherwise. */
int cg_read_u64(int dfd, const char *file, const char *key, uint64_t *out);
/* For the backends' stats: when `on` and *have is still false, read the
 * counter into *field and set *have.  True when it read a value now. */
bool cg_stat_once(int dfd, bool on, const char *file, const char *key,
                  uint64_t *field, bool *have);
/* CPU bandwidth: period and quota (microseconds) for `cpus` CPUs (> 0).
 * The quota is at least the kernel's 1 ms minimum, and cpus is capped so
 * a silly value cannot overflow. */
#define CG_CPU_PERIOD_US 100000ULL
uint64_t cg_cpu_quota_us(double cpus);
/* snprintf for messages that may be cut short (paths in h->why, ...). */
void cg_msg(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Is word in the space-separated list s? ("cpu" in "cpuset cpu io"). */
bool cg_word_in(const char *s, const char *word);
/* mkdir h->parent (EEXIST is fine: concurrent wardens share it), check
 * it is writable by us and open it.  Used by both backends' setup(). */
void cg_open_parent(struct cg_hier *h);

/* Discovery from the texts of /proc/self/mountinfo and /proc/self/cgroup
 * (replaces the cache).  discover() calls it once per process; the unit
 * test feeds it other machines' layouts (co-mounted cpu,cpuacct, pure v2). */
void cg_discover_from(const char *mountinfo, const char *self_cgroup);

/* Test hook: forget the per-process discovery cache (closes its fds), so
 * that the next call discovers again (e.g. after dropping privileges). */
void cg_reset(void);

/* What discovery found (cgroup_discover.c), for cgroup.c. */
struct cg_state {
	bool done;
	bool created;           /* this process made a group (see wcg_gc) */
	size_t n;
	struct cg_hier h[CG_MAX_HIER];
};
extern struct cg_state cg_S;
/* Discover once per process (a no-op after the first call). */
void cg_discover(void);
/* The backend that knows h's files. */
const struct cg_backend *cg_backend_of(const struct cg_hier *h);

#endif
