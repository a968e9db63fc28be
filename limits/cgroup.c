/* Resource limits through cgroups: discovery, backend choice per limit,
 * and the lifetime of one jail's groups (struct wcg).  The files of each
 * cgroup version are in cgroup_v1.c and cgroup_v2.c, discovery in
 * cgroup_discover.c, the small file helpers in cgroup_fs.c.
 *
 * Backend choice, per limit (see choose()):
 *   1. cgroup v2, if the controller is delegated to our v2 parent;
 *   2. cgroup v1, if that controller's hierarchy is mounted and our
 *      parent in it is writable;
 *   3. the fallback: RLIMIT_AS (memory), RLIMIT_NPROC (pids), RLIMIT_CPU
 *      (cpu_time), nothing for cpus.
 * "Our parent" is <the cgroup warden runs in>/warden, in each hierarchy.
 *
 * Discovery (mountinfo, /proc/self/cgroup, creating the parents) runs once
 * per process and is cached in S: a run then costs a few mkdir/write/rmdir
 * calls on cgroupfs and nothing else.
 *
 * Safety: we may be root, and a write to a wrong cgroupfs path could limit
 * or kill the host.  Paths are built only from mountinfo, /proc/self/cgroup
 * and a caller's name checked by name_ok(); every file is opened relative
 * to a directory fd of our own group; processes are killed only through
 * pidfds re-checked against the group's member list (sweep()). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "warden/log.h"
#include "warden/util.h"
#include "cgroup_impl.h"

struct wcg_dir {
	const struct cg_backend *be;
	unsigned ctls;          /* controllers this group serves for the jail */
	int fd;                 /* O_DIRECTORY on the group */
	char *path;             /* <parent>/<name>, for rmdir and messages */
};

struct wcg {
	enum wmech mech[WLIM__N];
	struct wcg_dir dir[CG_MAX_HIER];
	size_t n;
};

const char *wmech_name(enum wmech m)
{
	switch (m) {
	case WMECH_NONE: return "none";
	case WMECH_CGROUP_V2: return "cgroup-v2";
	case WMECH_CGROUP_V1: return "cgroup-v1";
	case WMECH_RLIMIT: return "rlimit";
	case WMECH_UNAVAILABLE: return "unavailable";
	}
	return "?";
}

const char *wlimit_kind_name(enum wlimit_kind k)
{
	switch (k) {
	case WLIM_MEMORY: return "memory";
	case WLIM_PIDS: return "pids";
	case WLIM_CPUS: return "cpus";
	case WLIM_CPU_TIME: return "cpu_time";
	case WLIM__N: break;
	}
	return "?";
}

/* ---- backend choice ---- */

static unsigned ctl_of(int version, enum wlimit_kind k)
{
	switch (k) {
	case WLIM_MEMORY: return CG_MEMORY;
	case WLIM_PIDS: return CG_PIDS;
	case WLIM_CPUS: return CG_CPU;
	case WLIM_CPU_TIME: return version == 2 ? CG_CPU : CG_CPUACCT;
	case WLIM__N: break;
	}
	return 0;
}

/* The hierarchy that enforces (or accounts) limit k, or NULL. */
static struct cg_hier *choose(enum wlimit_kind k)
{
	for (int version = 2; version >= 1; version--)
		for (size_t i = 0; i < cg_S.n; i++) {
			struct cg_hier *h = &cg_S.h[i];

			if (h->version != version || h->parent_fd < 0)
				continue;
			if (h->ctls & ctl_of(version, k))
				return h;
			/* CPU time on v2: cpu.stat usage_usec is core accounting,
			 * present in every v2 group even without the cpu
			 * controller, so any v2 group we create measures it. */
			if (version == 2 && k == WLIM_CPU_TIME && h->ctls)
				return h;
		}
	return NULL;
}

static enum wmech fallback(enum wlimit_kind k)
{
	/* memory: RLIMIT_AS (virtual memory, per process); pids: RLIMIT_NPROC
	 * (per uid of the jail's user namespace); cpu_time: RLIMIT_CPU (per
	 * process); cpus: no rlimit can cap bandwidth. */
	return k == WLIM_CPUS ? WMECH_UNAVAILABLE : WMECH_RLIMIT;
}

bool wlimit_requested(const struct wlimits *lim, enum wlimit_kind k)
{
	switch (k) {
	case WLIM_MEMORY: return lim->memory != 0;
	case WLIM_PIDS: return lim->pids != 0;
	case WLIM_CPUS: return lim->cpus > 0;
	case WLIM_CPU_TIME: return lim->cpu_ms != 0;
	case WLIM__N: break;
	}
	return false;
}

/* ---- one jail's groups ---- */

/* [A-Za-z0-9._-]+, not "." or "..": the name becomes a directory under our
 * parents, so it must not be able to climb out of them or name a file. */
static bool name_ok(const char *s)
{
	if (!s || !*s || strlen(s) > 200 || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '.' || *s == '_' || *s == '-'))
			return false;
	return true;
}

static int add_dir(struct wcg *cg, struct cg_hier *h, const char *name, unsigned ctls,
                   const struct wlimits *lim, struct werr *err)
{
	struct wcg_dir *d = &cg->dir[cg->n];
	int r = mkdirat(h->parent_fd, name, 0755);

	if (r < 0 && errno == ENOENT) {
		/* Our parent was removed under us (a cleanup between runs):
		 * make it again, once. */
		close(h->parent_fd);
		cg_backend_of(h)->setup(h);
		errno = ENOENT;
		r = h->parent_fd < 0 ? -1 : mkdirat(h->parent_fd, name, 0755);
	}
	if (r < 0) {
		if (errno == EEXIST)
			return werr_set(err, 0, "creating cgroup %s/%s: it already exists (a leftover?"
			                " it is removed at start-up once its warden is gone)", h->parent, name);
		return werr_set(err, errno, "creating cgroup %s/%s", h->parent, name);
	}
	/* Count it before anything else can fail, so wcg_destroy removes it. */
	d->be = cg_backend_of(h);
	d->ctls = ctls;
	d->path = xasprintf("%s/%s", h->parent, name);
	d->fd = openat(h->parent_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cg->n++;
	cg_S.created = true;
	if (d->fd < 0)
		return werr_set(err, errno, "opening cgroup %s", d->path);
	return d->be->set_limits(d->fd, d->path, ctls, lim, err);
}

static void wcg_destroyp(struct wcg **p) { wcg_destroy(*p); }

int wcg_create(const char *name, const struct wlimits *lim, struct wcg **out,
               struct werr *err)
{
	__attribute__((cleanup(wcg_destroyp))) struct wcg *cg = NULL;
	unsigned want[CG_MAX_HIER] = { 0 };
	bool use[CG_MAX_HIER] = { false };
	int k;

	*out = NULL;
	if (!name_ok(name))
		return werr_set(err, EINVAL, "invalid cgroup name '%s' (use letters, digits, '.', '_', '-')",
		                name ? name : "(null)");
	cg_discover();
	cg = xcalloc(1, sizeof(*cg));
	for (k = 0; k < WLIM__N; k++) {
		struct cg_hier *h = choose((enum wlimit_kind)k);
		bool req = wlimit_requested(lim, (enum wlimit_kind)k);

		if (!req)
			cg->mech[k] = WMECH_NONE;
		else if (!h)
			cg->mech[k] = fallback((enum wlimit_kind)k);
		else
			cg->mech[k] = h->version == 2 ? WMECH_CGROUP_V2 : WMECH_CGROUP_V1;
		/* A group is made for each limit requested, and for memory and
		 * CPU time always: they feed wcg_stats (peak memory, CPU).  The
		 * mask keeps only controllers the hierarchy really has (v2 CPU
		 * time may come without the cpu controller, see choose()). */
		if (h && (req || k == WLIM_MEMORY || k == WLIM_CPU_TIME)) {
			use[h - cg_S.h] = true;
			want[h - cg_S.h] |= ctl_of(h->version, (enum wlimit_kind)k) & h->ctls;
		}
	}
	for (size_t i = 0; i < cg_S.n; i++)
		if (use[i] && add_dir(cg, &cg_S.h[i], name, want[i], lim, err) < 0)
			return -1;            /* the cleanup removes what was made */
	*out = steal_pointer(&cg);
	return 0;
}

enum wmech wcg_mech(const struct wcg *cg, enum wlimit_kind k)
{
	if (!cg || (int)k < 0 || k >= WLIM__N)
		return WMECH_NONE;
	return cg->mech[k];
}

bool wcg_has_groups(const struct wcg *cg)
{
	return cg && cg->n > 0;
}

int wcg_clone_fd(const struct wcg *cg)
{
	for (size_t i = 0; cg && i < cg->n; i++)
		if (cg->dir[i].be->version == 2)
			return cg->dir[i].fd;
	return -1;
}

size_t wcg_attach_fds(const struct wcg *cg, int *fds, size_t max, bool v2_only)
{
	size_t n = 0;

	for (size_t i = 0; cg && i < cg->n && n < max; i++)
		if (!v2_only || cg->dir[i].be->version != 1)
			fds[n++] = cg->dir[i].fd;
	return n;
}

int wcg_attach_one(int dirfd, pid_t pid)
{
	char v[24];

	snprintf(v, sizeof(v), "%d", (int)pid);
	return cg_write(dirfd, "cgroup.procs", v);
}

int wcg_attach(struct wcg *cg, pid_t pid, bool v2_only, struct werr *err)
{
	for (size_t i = 0; cg && i < cg->n; i++) {
		const struct wcg_dir *d = &cg->dir[i];

		/* v2 too: if the caller used CLONE_INTO_CGROUP the pid is
		 * already there and the write is a cheap no-op; if clone3 had
		 * to fall back to clone, this puts it where it belongs. */
		if ((!v2_only || d->be->version != 1) && wcg_attach_one(d->fd, pid) < 0)
			return werr_set(err, errno, "moving pid %d into cgroup %s", (int)pid, d->path);
	}
	return 0;
}

int wcg_join_fds(const struct wcg *cg, int *fds, size_t max, struct werr *err)
{
	size_t n = 0;

	for (size_t i = 0; cg && i < cg->n; i++) {
		const struct wcg_dir *d = &cg->dir[i];

		if (d->be->version != 1)
			continue;
		if (n == max ||
		    (fds[n] = openat(d->fd, "tasks", O_WRONLY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
			int e = n == max ? EMFILE : errno;
			while (n > 0)
				close(fds[--n]);
			return werr_set(err, e, "opening %s/tasks", d->path);
		}
		n++;
	}
	return (int)n;
}

void wcg_stats(struct wcg *cg, struct wcg_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (size_t i = 0; cg && i < cg->n; i++)
		cg->dir[i].be->stats(cg->dir[i].fd, cg->dir[i].ctls, st);
}

/* ---- killing ---- */

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

#define SWEEP_MAX 4096   /* pids per pass; the next pass gets the rest */

/* Read the group's members into p (at most SWEEP_MAX), sorted. */
static size_t read_procs(int dfd, pid_t *p, char *buf, size_t len)
{
	size_t n = 0;
	char *s, *end;

	if (cg_read(dfd, "cgroup.procs", buf, len) <= 0)
		return 0;
	for (s = buf; *s && n < SWEEP_MAX; s = end) {
		long v = strtol(s, &end, 10);
		if (end == s)
			break;
		if (v > 0)
			p[n++] = (pid_t)v;
		while (*end == '\n')
			end++;
	}
	qsort(p, n, sizeof(*p), cmp_pid);
	return n;
}

/* One pass: SIGKILL every member.  Returns how many members there were.
 *
 * Pid reuse: a member may exit and its pid go to an unrelated process
 * between reading cgroup.procs and the kill.  So we open a pidfd for each
 * pid first, read the member list again, and signal only pidfds whose pid
 * is still a member: the pidfd's process then either is that member or is
 * already gone (the signal fails with ESRCH).  Never a stranger. */
static size_t sweep(int dfd)
{
	/* static: the supervisor is single-threaded, and 100 KB is too
	 * much for its stack */
	static pid_t a[SWEEP_MAX], b[SWEEP_MAX];
	static int pfd[SWEEP_MAX];
	static char buf[SWEEP_MAX * 12];
	size_t na, nb, i;

	na = read_procs(dfd, a, buf, sizeof(buf));
	if (!na)
		return 0;
	for (i = 0; i < na; i++) {
		pfd[i] = (int)syscall(SYS_pidfd_open, a[i], 0);
		if (pfd[i] < 0 && errno == ENOSYS)
			pfd[i] = -2;          /* kernel < 5.3: no pidfds */
	}
	nb = read_procs(dfd, b, buf, sizeof(buf));
	for (i = 0; i < na; i++) {
		bool member = bsearch(&a[i], b, nb, sizeof(*b), cmp_pid) != NULL;

		if (pfd[i] >= 0) {
			if (member)
				syscall(SYS_pidfd_send_signal, pfd[i], SIGKILL, NULL, 0);
			close(pfd[i]);
		} else if (pfd[i] == -2 && member) {
			kill(a[i], SIGKILL);  /* no pidfds: a tiny pid-reuse window remains */
		}
	}
	return na;
}

static void sleep_us(long us)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = us * 1000 };

	nanosleep(&ts, NULL);
}

static void kill_group(int dfd, const struct cg_backend *be)
{
	if (dfd < 0 || be->kill(dfd) == 0)
		return;
	/* SIGKILLed processes cannot fork any more, so this converges; the
	 * bound only guards against a kernel that never lets them go. */
	for (int pass = 0; pass < 100 && sweep(dfd) > 0; pass++)
		sleep_us(pass < 5 ? 50 : 1000);
}

void wcg_kill(struct wcg *cg)
{
	for (size_t i = 0; cg && i < cg->n; i++)
		kill_group(cg->dir[i].fd, cg->dir[i].be);
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* rmdir a group; EBUSY means members are still exiting: retry for ~1 s,
 * killing again now and then.  0, or -1 with errno set. */
static int remove_group(const char *path, int dfd, const struct cg_backend *be)
{
	uint64_t deadline = now_us() + 1000000;

	for (int i = 0;; i++) {
		if (rmdir(path) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY || now_us() > deadline)
			return -1;
		if (i % 50 == 49)
			kill_group(dfd, be);
		sleep_us(i < 20 ? 50 : 1000);
	}
}

void wcg_destroy(struct wcg *cg)
{
	if (!cg)
		return;
	for (size_t i = 0; i < cg->n; i++) {
		struct wcg_dir *d = &cg->dir[i];

		/* The usual case: the jail has exited and the group is empty.
		 * The kernel refuses to remove a group with members (EBUSY), so
		 * a successful rmdir proves there was nothing to kill, and saves
		 * reading cgroup.procs on every run.  Otherwise kill and wait. */
		if (rmdir(d->path) == 0 || errno == ENOENT)
			goto removed;
		kill_group(d->fd, d->be);
		if (remove_group(d->path, d->fd, d->be) < 0)
			wlog_warn("could not remove cgroup %s: %s (removed at the next start)",
			          d->path, strerror(errno));
removed:
		if (d->fd >= 0)
			close(d->fd);
		free(d->path);
	}
	free(cg);
}

void wcg_free(struct wcg *cg)
{
	if (!cg)
		return;
	for (size_t i = 0; i < cg->n; i++) {
		if (cg->dir[i].fd >= 0)
			close(cg->dir[i].fd);
		free(cg->dir[i].path);
	}
	free(cg);
}

/* ---- start-up cleanup ---- */

/* Is "warden-<pid>-..." the group of a warden that is gone? */
static bool owner_gone(const char *name)
{
	char *end;
	long pid;

	if (strncmp(name, "warden-", 7) || name[7] < '0' || name[7] > '9')
		return false;
	pid = strtol(name + 7, &end, 10);
	if (*end != '-' || pid <= 0 || pid > INT32_MAX)
		return false;
	/* Our own pid: the groups are ours unless we have made none yet, in
	 * which case they belong to a dead warden whose pid we inherited. */
	if (pid == getpid())
		return !cg_S.created;
	/* EPERM means alive (another user's); only ESRCH means gone.  Pids
	 * are those of our pid namespace: wardens sharing a cgroup are
	 * assumed to share it too. */
	return kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

static bool owned_by(const char *name, long owner)
{
	char prefix[32];

	snprintf(prefix, sizeof(prefix), "warden-%ld-", owner);
	return !strncmp(name, prefix, strlen(prefix));
}

static bool gone_owner(const char *name, long unused)
{
	return owner_gone(name);
}

/* Kill and remove every "warden-*" group that match() selects. */
static void gc_where(bool (*match)(const char *name, long arg), long arg)
{
	cg_discover();
	for (size_t i = 0; i < cg_S.n; i++) {
		const struct cg_hier *h = &cg_S.h[i];
		struct dirent *e;
		DIR *dir;
		int fd;

		if (h->parent_fd < 0 || (fd = openat(h->parent_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
			continue;
		if (!(dir = fdopendir(fd))) {
			close(fd);
			continue;
		}
		while ((e = readdir(dir))) {
			_cleanup_close_ int gfd = -1;
			_cleanup_free_ char *path = NULL;

			if (e->d_type != DT_DIR || !name_ok(e->d_name) || !match(e->d_name, arg))
				continue;
			gfd = openat(h->parent_fd, e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			path = xasprintf("%s/%s", h->parent, e->d_name);
			kill_group(gfd, cg_backend_of(h));
			if (remove_group(path, gfd, cg_backend_of(h)) < 0)
				wlog_warn("could not remove leftover cgroup %s: %s", path, strerror(errno));
		}
		closedir(dir);
	}
}

void wcg_gc(void)
{
	gc_where(gone_owner, 0);
}

void wcg_gc_owner(pid_t owner)
{
	gc_where(owned_by, (long)owner);
}

/* ---- warden doctor ---- */

static void why_not(enum wlimit_kind k, char *out, size_t len, int *fix_version,
                    char *fix_path, size_t fix_len)
{
	const struct cg_hier *v2 = NULL, *v1 = NULL;

	for (size_t i = 0; i < cg_S.n; i++) {
		if (cg_S.h[i].version == 2)
			v2 = &cg_S.h[i];
		else if (cg_S.h[i].ctls & ctl_of(1, k))
			v1 = &cg_S.h[i];
	}
	/* what root would hand over: the v1 parent of this controller, else
	 * the v2 cgroup this process is in (systemd delegation) */
	if (v1 && v1->parent[0]) {
		*fix_version = 1;
		cg_msg(fix_path, fix_len, "%s", v1->parent);
	} else if (v2 && v2->own[0]) {
		*fix_version = 2;
		cg_msg(fix_path, fix_len, "%s", v2->own);
	}
	if (v1)
		cg_msg(out, len, "cgroup v1: %s", v1->why);
	else if (v2 && v2->parent_fd >= 0)
		cg_msg(out, len, "cgroup v2: %s controller not available in %s",
		         k == WLIM_MEMORY ? "memory" : k == WLIM_PIDS ? "pids" : "cpu", v2->own);
	else if (v2)
		cg_msg(out, len, "cgroup v2: %s", v2->why);
	else
		cg_msg(out, len, "no cgroup hierarchy is mounted");
}

void wcg_probe(struct wcg_probe *pr)
{
	memset(pr, 0, sizeof(*pr));
	/* The same one-time setup as wcg_create (it may create the "warden"
	 * parents), so that what doctor reports is what a run would use. */
	cg_discover();
	for (int k = 0; k < WLIM__N; k++) {
		const struct cg_hier *h = choose((enum wlimit_kind)k);

		if (h) {
			pr->mech[k] = h->version == 2 ? WMECH_CGROUP_V2 : WMECH_CGROUP_V1;
			cg_msg(pr->where[k], sizeof(pr->where[k]), "%s", h->parent);
		} else {
			pr->mech[k] = fallback((enum wlimit_kind)k);
			why_not((enum wlimit_kind)k, pr->where[k], sizeof(pr->where[k]),
			        &pr->fix_version[k], pr->fix_path[k], sizeof(pr->fix_path[k]));
		}
	}
	for (size_t i = 0; i < cg_S.n; i++) {
		const struct cg_hier *h = &cg_S.h[i];
		_cleanup_close_ int fd = -1;

		if (h->version != 2)
			continue;
		pr->v2_mounted = true;
		cg_msg(pr->v2_path, sizeof(pr->v2_path), "%s", h->own[0] ? h->own : h->why);
		if (h->own[0] && (fd = open(h->own, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0 &&
		    cg_read(fd, "cgroup.controllers", pr->v2_controllers, sizeof(pr->v2_controllers)) > 0)
			pr->v2_controllers[strcspn(pr->v2_controllers, "\n")] = '\0';
	}
}

/* The session server's pool (supervisor/session.c): a jail warming up there
 * runs at the least CPU weight the kernel takes, so its driver's start-up
 * yields to every session's blocks; the session that takes it gets the
 * kernel's default back, which is what a cold jail's fresh group has (no
 * policy sets a weight).  Only groups with the cpu controller have one: v1
 * cpu.shares (2 / 1024), v2 cpu.weight (1 / 100).  The files are opened
 * under our own group's fd, as every limit is. */
int wcg_set_cpu_low(struct wcg *cg, bool low)
{
	for (size_t i = 0; cg && i < cg->n; i++) {
		const struct wcg_dir *d = &cg->dir[i];

		if (!(d->ctls & CG_CPU) || d->fd < 0)
			continue;
		if (d->be->version == 2 ? cg_write(d->fd, "cpu.weight", low ? "1" : "100")
		                        : cg_write(d->fd, "cpu.shares", low ? "2" : "1024"))
			return -1;
	}
	return 0;
}
