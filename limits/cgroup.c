/* Resource limits through cgroups: discovery, backend choice per limit,
 * and the lifetime of one jail's groups (struct wcg).  The files of each
 * cgroup version are in cgroup_v1.c and cgroup_v2.c.
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

static struct {
	bool done;
	bool created;           /* this process made a group (see wcg_gc) */
	size_t n;
	struct cg_hier h[CG_MAX_HIER];
} S;

/* v1 controllers we use, in the order of own_paths.v1[]. */
static const struct { const char *name; unsigned bit; } v1_ctls[] = {
	{ "memory", CG_MEMORY }, { "pids", CG_PIDS }, { "cpu", CG_CPU }, { "cpuacct", CG_CPUACCT },
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

/* ---- small cgroupfs helpers (also used by the backends) ---- */

int cg_write(int dfd, const char *file, const char *val)
{
	_cleanup_close_ int fd = openat(dfd, file, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	return write_all(fd, val, strlen(val));
}

int cg_set(int dfd, const char *path, const char *file, const char *val,
           bool optional, struct werr *err)
{
	if (cg_write(dfd, file, val) == 0 || (optional && errno == ENOENT))
		return 0;
	return werr_set(err, errno, "setting %s=%s in cgroup %s", file, val, path);
}

ssize_t cg_read(int dfd, const char *file, char *buf, size_t len)
{
	_cleanup_close_ int fd = openat(dfd, file, O_RDONLY | O_CLOEXEC);
	size_t used = 0;

	buf[0] = '\0';
	if (fd < 0)
		return -1;
	while (used < len - 1) {
		ssize_t n = read(fd, buf + used, len - 1 - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		used += (size_t)n;
	}
	buf[used] = '\0';
	return (ssize_t)used;
}

static int parse_num(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || (*end && *end != '\n' && *end != ' '))
		return -1;
	*out = v;
	return 0;
}

int cg_read_u64(int dfd, const char *file, const char *key, uint64_t *out)
{
	char buf[4096];
	const char *line;
	size_t kl;

	if (cg_read(dfd, file, buf, sizeof(buf)) < 0)
		return -1;
	if (!key)
		return parse_num(buf, out);
	kl = strlen(key);
	for (line = buf; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
		if (!strncmp(line, key, kl) && line[kl] == ' ')
			return parse_num(line + kl + 1, out);
	return -1;
}

uint64_t cg_cpu_quota_us(double cpus)
{
	double q;

	if (cpus > 65536)       /* far more CPUs than any machine has */
		cpus = 65536;
	q = cpus * (double)CG_CPU_PERIOD_US + 0.5;
	return q < 1000 ? 1000 : (uint64_t)q;
}

bool cg_stat_once(int dfd, bool on, const char *file, const char *key,
                  uint64_t *field, bool *have)
{
	if (!on || *have || cg_read_u64(dfd, file, key, field) < 0)
		return false;
	*have = true;
	return true;
}

void cg_msg(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

bool cg_word_in(const char *s, const char *word)
{
	size_t wl = strlen(word);

	while (*s) {
		size_t n;

		s += strspn(s, " \t\n");
		n = strcspn(s, " \t\n");
		if (n == wl && !strncmp(s, word, wl))
			return true;
		s += n;
	}
	return false;
}

void cg_open_parent(struct cg_hier *h)
{
	h->parent_fd = -1;
	/* EEXIST: another warden (same cgroup) made it first; that is fine,
	 * it is shared and never removed by warden. */
	if (mkdir(h->parent, 0755) < 0 && errno != EEXIST) {
		cg_msg(h->why, sizeof(h->why), "%s: cannot create: %s", h->parent, strerror(errno));
		return;
	}
	/* An existing parent may belong to root while we are not: check that
	 * we can create groups in it now rather than fail in wcg_create. */
	if (faccessat(AT_FDCWD, h->parent, W_OK, AT_EACCESS) < 0) {
		cg_msg(h->why, sizeof(h->why), "%s: not writable: %s", h->parent, strerror(errno));
		return;
	}
	h->parent_fd = open(h->parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (h->parent_fd < 0)
		cg_msg(h->why, sizeof(h->why), "%s: %s", h->parent, strerror(errno));
}

static const struct cg_backend *backend(const struct cg_hier *h)
{
	return h->version == 2 ? &cg_backend_v2 : &cg_backend_v1;
}

/* ---- discovery ---- */

/* Our cgroup in each hierarchy, from /proc/self/cgroup:
 *   "0::/a/b"                  v2
 *   "4:memory:/a" "2:cpu,cpuacct:/a"   v1 */
struct own_paths {
	char v2[PATH_MAX];
	char v1[ARRAY_SIZE(v1_ctls)][PATH_MAX];
	bool have_v2, have_v1[ARRAY_SIZE(v1_ctls)];
};

static void parse_own_paths(char *text, struct own_paths *o)
{
	char *line, *save = NULL;

	memset(o, 0, sizeof(*o));
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *list = strchr(line, ':'), *path, *tok, *s2 = NULL;

		if (!list || !(path = strchr(++list, ':')))
			continue;
		*path++ = '\0';
		if (!*list && !strncmp(line, "0:", 2)) {
			snprintf(o->v2, sizeof(o->v2), "%s", path);
			o->have_v2 = true;
			continue;
		}
		for (tok = strtok_r(list, ",", &s2); tok; tok = strtok_r(NULL, ",", &s2))
			for (size_t i = 0; i < ARRAY_SIZE(v1_ctls); i++)
				if (!strcmp(tok, v1_ctls[i].name)) {
					snprintf(o->v1[i], sizeof(o->v1[i]), "%s", path);
					o->have_v1[i] = true;
				}
	}
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++, d++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*d = *s;
		}
	}
	*d = '\0';
}

/* Directory of cgroup `cg` (as /proc/self/cgroup names it) through a mount
 * of the hierarchy at `mnt` whose root is `root`.  Fails if the mount does
 * not show that cgroup (e.g. a bind mount of a sibling subtree, or our
 * cgroup lying outside our cgroup namespace: "/../.."). */
static int own_dir(const char *mnt, const char *root, const char *cg, char *out, size_t len)
{
	size_t rl = strlen(root);
	const char *rel = cg;
	int n;

	if (strcmp(root, "/")) {
		if (strncmp(cg, root, rl) || (cg[rl] != '/' && cg[rl] != '\0'))
			return -1;
		rel = cg + rl;
	}
	if (strstr(rel, "/../") || (strlen(rel) >= 3 && !strcmp(rel + strlen(rel) - 3, "/..")))
		return -1;
	if (!strcmp(rel, "/"))
		rel = "";
	n = snprintf(out, len, "%s%s", mnt, rel);
	return (n < 0 || (size_t)n >= len) ? -1 : 0;
}

/* A slot for a mount of the hierarchy (v2, or v1 with controllers ctls):
 * a new one, or the slot of an earlier mount of the same hierarchy that
 * did not show our cgroup.  NULL if a usable mount is already known. */
static struct cg_hier *add_hier(int version, unsigned ctls)
{
	struct cg_hier *h = NULL;

	for (size_t j = 0; j < S.n && !h; j++)
		if (S.h[j].version == version && (version == 2 || (S.h[j].ctls & ctls)))
			h = &S.h[j];
	if (h && h->own[0])
		return NULL;
	if (!h && S.n == CG_MAX_HIER)
		return NULL;
	if (!h)
		h = &S.h[S.n++];
	memset(h, 0, sizeof(*h));
	h->version = version;
	h->ctls = ctls;
	h->parent_fd = -1;
	return h;
}

/* One mountinfo line: "36 35 98:0 ROOT MOUNTPOINT opts [tags] - FSTYPE SRC SUPEROPTS". */
static void add_mount(char *line, const struct own_paths *o)
{
	char *f[6], *sep, *save = NULL, *fs, *superopts, *tok;
	const char *cgpath = NULL;
	struct cg_hier *h;
	unsigned mask = 0;
	int i;

	sep = strstr(line, " - ");
	if (!sep)
		return;
	*sep = '\0';
	fs = strtok_r(sep + 3, " ", &save);
	(void)strtok_r(NULL, " ", &save);
	superopts = strtok_r(NULL, " ", &save);
	if (!fs || !superopts || (strcmp(fs, "cgroup") && strcmp(fs, "cgroup2")))
		return;
	save = NULL;
	for (i = 0; i < 6; i++)
		if (!(f[i] = strtok_r(i ? NULL : line, " ", &save)))
			return;
	unescape(f[3]);
	unescape(f[4]);

	if (!strcmp(fs, "cgroup2")) {
		if (!(h = add_hier(2, 0)))
			return;
		if (!o->have_v2 || own_dir(f[4], f[3], o->v2, h->own, sizeof(h->own)) < 0) {
			cg_msg(h->why, sizeof(h->why), "%s: our cgroup is not visible in this mount", f[4]);
			return;
		}
		/* If warden moved itself (cgroup_v2.c) and discovery runs again,
		 * our own cgroup is still the one above the leaf it moved to. */
		if (strlen(h->own) > 18 && !strcmp(h->own + strlen(h->own) - 18, "/warden.supervisor"))
			h->own[strlen(h->own) - 18] = '\0';
	} else {
		save = NULL;
		for (tok = strtok_r(superopts, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
			for (size_t j = 0; j < ARRAY_SIZE(v1_ctls); j++)
				if (!strcmp(tok, v1_ctls[j].name)) {
					mask |= v1_ctls[j].bit;
					if (!cgpath && o->have_v1[j])
						cgpath = o->v1[j];
				}
		if (!mask || !(h = add_hier(1, mask)))
			return;
		if (!cgpath || own_dir(f[4], f[3], cgpath, h->own, sizeof(h->own)) < 0) {
			cg_msg(h->why, sizeof(h->why), "%s: our cgroup is not visible in this mount", f[4]);
			return;
		}
	}
	if (snprintf(h->parent, sizeof(h->parent), "%s/warden", h->own) >= (int)sizeof(h->parent)) {
		cg_msg(h->why, sizeof(h->why), "path too long");
		h->own[0] = '\0';
	}
}

void cg_discover_from(const char *mountinfo, const char *self_cgroup)
{
	_cleanup_free_ char *mi = xstrdup(mountinfo), *sc = xstrdup(self_cgroup);
	_cleanup_free_ struct own_paths *o = xmalloc(sizeof(*o));
	char *line, *save = NULL;

	cg_reset();
	S.done = true;
	parse_own_paths(sc, o);
	for (line = strtok_r(mi, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		add_mount(line, o);
	/* v2 first: if it has to move warden (cgroup_v2.c), it does so before
	 * any v1 work; v2 also wins the choice when it offers a controller. */
	for (size_t i = 0; i < S.n; i++)
		if (S.h[i].version == 2 && S.h[i].own[0])
			backend(&S.h[i])->setup(&S.h[i]);
	for (size_t i = 0; i < S.n; i++)
		if (S.h[i].version == 1 && S.h[i].own[0])
			backend(&S.h[i])->setup(&S.h[i]);
}

static void discover(void)
{
	_cleanup_free_ char *mi = NULL, *sc = NULL;

	if (S.done)
		return;
	if (read_file_str("/proc/self/mountinfo", 1 << 22, &mi, NULL) < 0 ||
	    read_file_str("/proc/self/cgroup", 1 << 16, &sc, NULL) < 0) {
		S.done = true;        /* no procfs: every limit falls back */
		return;
	}
	cg_discover_from(mi, sc);
}

void cg_reset(void)
{
	for (size_t i = 0; i < S.n; i++)
		if (S.h[i].parent_fd >= 0)
			close(S.h[i].parent_fd);
	memset(&S, 0, sizeof(S));
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
		for (size_t i = 0; i < S.n; i++) {
			struct cg_hier *h = &S.h[i];

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

static bool requested(const struct wlimits *lim, enum wlimit_kind k)
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
		backend(h)->setup(h);
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
	d->be = backend(h);
	d->ctls = ctls;
	d->path = xasprintf("%s/%s", h->parent, name);
	d->fd = openat(h->parent_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cg->n++;
	S.created = true;
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
	discover();
	cg = xcalloc(1, sizeof(*cg));
	for (k = 0; k < WLIM__N; k++) {
		struct cg_hier *h = choose((enum wlimit_kind)k);
		bool req = requested(lim, (enum wlimit_kind)k);

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
			use[h - S.h] = true;
			want[h - S.h] |= ctl_of(h->version, (enum wlimit_kind)k) & h->ctls;
		}
	}
	for (size_t i = 0; i < S.n; i++)
		if (use[i] && add_dir(cg, &S.h[i], name, want[i], lim, err) < 0)
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

int wcg_attach(struct wcg *cg, pid_t pid, struct werr *err)
{
	char v[24];

	snprintf(v, sizeof(v), "%d", (int)pid);
	for (size_t i = 0; cg && i < cg->n; i++) {
		const struct wcg_dir *d = &cg->dir[i];

		/* v2 too: if the caller used CLONE_INTO_CGROUP the pid is
		 * already there and the write is a cheap no-op; if clone3 had
		 * to fall back to clone, this puts it where it belongs. */
		if (cg_write(d->fd, "cgroup.procs", v) < 0)
			return werr_set(err, errno, "moving pid %d into cgroup %s", (int)pid, d->path);
	}
	return 0;
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
		return !S.created;
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
	discover();
	for (size_t i = 0; i < S.n; i++) {
		const struct cg_hier *h = &S.h[i];
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
			kill_group(gfd, backend(h));
			if (remove_group(path, gfd, backend(h)) < 0)
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

static void why_not(enum wlimit_kind k, char *out, size_t len)
{
	const struct cg_hier *v2 = NULL, *v1 = NULL;

	for (size_t i = 0; i < S.n; i++) {
		if (S.h[i].version == 2)
			v2 = &S.h[i];
		else if (S.h[i].ctls & ctl_of(1, k))
			v1 = &S.h[i];
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
	discover();
	for (int k = 0; k < WLIM__N; k++) {
		const struct cg_hier *h = choose((enum wlimit_kind)k);

		if (h) {
			pr->mech[k] = h->version == 2 ? WMECH_CGROUP_V2 : WMECH_CGROUP_V1;
			cg_msg(pr->where[k], sizeof(pr->where[k]), "%s", h->parent);
		} else {
			pr->mech[k] = fallback((enum wlimit_kind)k);
			why_not((enum wlimit_kind)k, pr->where[k], sizeof(pr->where[k]));
		}
	}
	for (size_t i = 0; i < S.n; i++) {
		const struct cg_hier *h = &S.h[i];
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
