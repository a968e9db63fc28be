/* The mount plan: what the jail's root will hold, computed in the parent from
 * the policy (variables expanded, duplicates merged, parents before children)
 * so the child only executes a list. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "jail_impl.h"
#include "warden/util.h"

static void plan_grow(struct wplan *plan)
{
	if (plan->n < plan->cap)
		return;
	plan->cap = plan->cap ? plan->cap * 2 : 16;
	plan->m = realloc(plan->m, plan->cap * sizeof(*plan->m));
	if (!plan->m)
		abort();
}

/* jail/protect.c's entries: absolute paths inside the writable binds (or
 * the workspace), no variable in them.  A path the policy already lists
 * keeps the policy's mount, unless it was a read-write bind: a protected
 * or hidden path is never left writable by a wider listing (a profile
 * drops a catalog entry by naming it in unprotect/unhide). */
static int plan_add_abs(struct wplan *plan, const char *path, enum wmount_kind kind,
                        struct werr *err)
{
	for (size_t i = 0; i < plan->n; i++) {
		struct wmount *m = &plan->m[i];

		if (strcmp(m->path, path))
			continue;
		if (m->kind == WM_BIND_RW && kind != WM_PIN)
			m->kind = kind;
		return 0;
	}
	plan_grow(plan);
	plan->m[plan->n++] = (struct wmount){ .kind = kind, .path = xstrdup(path),
	                                       .optional = true, .src_fd = -1, .tree_fd = -1 };
	(void)err;
	return 0;
}

static int plan_add(struct wplan *plan, enum wmount_kind kind,
                    const char *raw, const struct jail_spec *spec, uint64_t size,
                    bool optional, struct werr *err)
{
	char *path = NULL;
	size_t i;

	if (policy_expand(raw, spec->workspace, spec->home, &path, err) < 0)
		return -1;
	/* trailing slashes would defeat the duplicate check and the sort */
	for (size_t l = strlen(path); l > 1 && path[l - 1] == '/'; l--)
		path[l - 1] = '\0';
	for (i = 0; i < plan->n; i++) {
		struct wmount *m = &plan->m[i];
		if (strcmp(m->path, path))
			continue;
		/* the same path twice: the stronger kind wins (hide > tmpfs > rw > ro) */
		if (kind > m->kind) {
			m->kind = kind;
			m->size = size;
		}
		m->optional = m->optional && optional;
		free(path);
		return 0;
	}
	plan_grow(plan);
	plan->m[plan->n++] = (struct wmount){ .kind = kind, .path = path, .size = size,
	                                       .optional = optional, .src_fd = -1,
	                                       .tree_fd = -1 };
	return 0;
}

/* below: path is base or under it */
static bool at_or_below(const char *path, const char *base)
{
	size_t n = strlen(base);
	return !strncmp(path, base, n) && (path[n] == '\0' || path[n] == '/');
}

/* No "." or empty component: then a path that opens without following a
 * link is the one realpath() would give. */
static bool plain_path(const char *p)
{
	return !strstr(p, "//") && !strstr(p, "/./") &&
	       !(strlen(p) >= 2 && !strcmp(p + strlen(p) - 2, "/."));
}

/* Open path following no link, the last component included (no O_NOFOLLOW,
 * so a final link is ELOOP, not an fd of the link): -1 on any failure, and
 * the caller takes the slow path, which reports. */
static int open_no_links(const char *path)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC,
	                        .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };

	return (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
}

/* Resolve a bind's source once, here in the parent, and hold it as an fd
 * (docs/design.md, "Building the root").  The child binds the object this
 * fd names, after checking that the path it walks (without following any
 * link) still leads to it.
 *   - the workspace: the fd its opener has held since it was resolved;
 *   - a path at or below a writable bind (the workspace, a read_write
 *     path): jailed code may have planted links there, so none is followed;
 *   - any other path (/usr, /etc/ssl, ...): trusted host paths, whose links
 *     (/etc/localtime -> /usr/share/zoneinfo/...) are resolved here, once,
 *     into the canonical path the child walks.  A path with no link on the
 *     way (an openat2 that follows none succeeds) is its own canonical path:
 *     realpath() and its readlink per component only run for the others. */
static int plan_source(const struct jail_spec *spec, const struct wplan *plan,
                       struct wmount *m, const char **below, struct werr *err)
{
	char canon[PATH_MAX];
	bool below_writable = false;
	const char *wbase = NULL;   /* the writable place m lies in */
	struct stat st;
	size_t i;

	if (!strcmp(m->path, spec->workspace)) {
		m->src = xstrdup(m->path);
		m->src_fd = spec->workspace_fd >= 0 ? fcntl(spec->workspace_fd, F_DUPFD_CLOEXEC, 3)
		                                   : jail_open_nofollow(AT_FDCWD, m->src, err);
		if (m->src_fd < 0)
			return spec->workspace_fd >= 0 ? werr_set(err, errno, "holding the workspace") :
			       (werr_wrap(err, "workspace"), -1);
		if (fstat(m->src_fd, &st) < 0 || !S_ISDIR(st.st_mode))
			return werr_set(err, ENOTDIR, "workspace %s", m->src);
		return 0;
	}
	if (at_or_below(m->path, spec->workspace))
		wbase = spec->workspace;
	for (i = 0; i < plan->n; i++)
		if (plan->m[i].kind == WM_BIND_RW && &plan->m[i] != m &&
		    at_or_below(m->path, plan->m[i].path))
			wbase = plan->m[i].path;
	below_writable = wbase != NULL;
	*below = wbase;
	if (below_writable) {
		m->src = xstrdup(m->path);
	} else if (plain_path(m->path) &&
	           (m->src_fd = open_no_links(m->path)) >= 0) {
		/* the usual case: no link on the way, so the path is already
		 * canonical; one openat2, no readlink per component */
		m->src = xstrdup(m->path);
		return 0;
	} else if (m->src_fd = -1, !realpath(m->path, canon)) {
		if (m->optional && (errno == ENOENT || errno == ENOTDIR))
			return 0;
		return werr_set(err, 0, "the policy %s binds %s, but it cannot be used (%s); "
		                "create it, or remove it from the policy (a read_only path that "
		                "may be missing goes in \"optional\" too)", spec->pol->name,
		                m->path, strerror(errno));
	} else {
		m->src = xstrdup(canon);
	}
	m->src_fd = jail_open_nofollow(AT_FDCWD, m->src, err);
	if (m->src_fd >= 0 && fstat(m->src_fd, &st) == 0 && S_ISLNK(st.st_mode))
		return werr_set(err, 0, "the policy %s binds %s, which is a symlink below %s, a "
		                "place the jail can write: warden does not follow links jailed code "
		                "can plant; bind a narrower writable path than %s, or leave %s out",
		                spec->pol->name, m->path, wbase, wbase, m->path);
	if (m->src_fd >= 0)
		return 0;
	if (m->optional && (errno == ENOENT || errno == ENOTDIR)) {
		werr_clear(err);
		return 0;
	}
	if (errno == ELOOP)
		return werr_set(err, 0, "the policy %s binds %s, whose path holds a symlink below "
		                "%s, a place the jail can write: warden does not follow links jailed "
		                "code can plant; bind a narrower writable path than %s, or leave %s "
		                "out", spec->pol->name, m->path, wbase ? wbase : "a writable bind",
		                wbase ? wbase : "it", m->path);
	werr_wrap(err, "policy %s binds %s", spec->pol->name, m->path);
	return -1;
}

/* A read-only bind strictly below a tmpfs (the workspace under the strict
 * profile, in $HOME or /tmp) is mounted under WPLAN_RELOC instead, with a
 * symlink at its own path leading there, and so is everything planned
 * below it.  Landlock grants a rule's rights to the whole tree beneath the
 * ruled directory, mounts included, and a tmpfs must be writable as a
 * whole (a new file in /tmp needs write on /tmp itself): beneath the
 * tmpfs, the bind would inherit those rights, and the read-only mount
 * alone does not stop writes to a FIFO or a socket a host process reads
 * there (the kernel's read-only check is for files and directories).
 * Under WPLAN_RELOC its ancestors are the jail's root, which Landlock
 * grants only reading, so both walls hold (SECURITY.md G2).  The path
 * still works, through the link; getcwd() names the relocated place.
 * A read-only place below a writable *bind* cannot be moved out of it and
 * is guarded by its mount alone (SECURITY.md, "What is not guaranteed"). */
static bool strictly_below(const char *path, const char *base)
{
	return strcmp(path, base) && at_or_below(path, base);
}

static void plan_relocate(struct wplan *plan)
{
	size_t i, k;

	for (i = 0; i < plan->n; i++) {
		struct wmount *m = &plan->m[i];
		bool under_tmpfs = false;

		if (m->kind != WM_BIND_RO || m->at)
			continue;
		for (k = 0; k < plan->n; k++)
			if (plan->m[k].kind == WM_TMPFS && strictly_below(m->path, plan->m[k].path))
				under_tmpfs = true;
		if (!under_tmpfs)
			continue;
		m->link = true;
		for (k = 0; k < plan->n; k++)
			if (!plan->m[k].at && at_or_below(plan->m[k].path, m->path))
				plan->m[k].at = xasprintf(WPLAN_RELOC "%s", plan->m[k].path);
	}
	for (i = 0; i < plan->n; i++)
		if (!plan->m[i].at)
			plan->m[i].at = xstrdup(plan->m[i].path);
}

static int cmp_mount(const void *a, const void *b)
{
	/* strcmp puts every path before the paths below it ("/a" < "/a/b"), so
	 * parents are mounted first and hides land on top of their binds. */
	return strcmp(((const struct wmount *)a)->path, ((const struct wmount *)b)->path);
}

/* The private HOME tmpfs when HOME is the workspace or lies inside it
 * (`cd ~ && warden run ...`, or --workspace /home): mounted, it would hide
 * the user's files and swallow the program's writes without a word.  The
 * workspace wins: HOME is then the user's own directory, as bound by the
 * workspace's rule.  Nothing is exposed that the workspace did not already
 * bind, and the workspace's hides (.ssh, .env, ...) still apply. */
static bool home_in_workspace(const struct jail_spec *spec, const char *raw)
{
	_cleanup_free_ char *path = NULL, *home = NULL;
	struct werr ignored = { 0 };
	size_t l;

	if (!spec->home || !spec->workspace ||
	    policy_expand(raw, spec->workspace, spec->home, &path, &ignored) < 0)
		return false;
	home = xstrdup(spec->home);
	for (l = strlen(path); l > 1 && path[l - 1] == '/'; l--)
		path[l - 1] = '\0';
	for (l = strlen(home); l > 1 && home[l - 1] == '/'; l--)
		home[l - 1] = '\0';
	return at_or_below(home, spec->workspace) && !strcmp(path, home);
}

/* An error of the plan.  Collecting (jail_plan_check: pr), it is noted
 * with the path at fault and the plan goes on; else it ends the plan (-1). */
struct problems { struct wstrv *paths, *below, *msgs; size_t n; };

static int problem(struct problems *pr, const char *path, const char *below, struct werr *err)
{
	if (!pr)
		return -1;
	wstrv_push(pr->paths, path);
	wstrv_push(pr->below, below ? below : "");
	wstrv_push(pr->msgs, err->msg);
	werr_clear(err);
	pr->n++;
	return 0;
}

static int plan_make(const struct jail_spec *spec, struct wplan *plan, struct problems *pr,
                     struct werr *err)
{
	const struct wpolicy *p = spec->pol;
	size_t i;

	memset(plan, 0, sizeof(*plan));
	plan->uid = getuid();
	plan->gid = getgid();
	plan->host_uid = plan->uid;   /* as root, jail_idmap_prepare changes them */
	plan->host_gid = plan->gid;
	plan->slot_fd = -1;

	for (i = 0; i < p->read_only.n; i++)
		if (plan_add(plan, WM_BIND_RO, p->read_only.v[i], spec, 0,
		             wstrv_contains(&p->optional, p->read_only.v[i]), err) < 0)
			goto fail;
	for (i = 0; i < p->optional.n; i++)
		if (plan_add(plan, WM_BIND_RO, p->optional.v[i], spec, 0, true, err) < 0)
			goto fail;
	for (i = 0; i < p->read_write.n; i++)
		if (plan_add(plan, WM_BIND_RW, p->read_write.v[i], spec, 0, false, err) < 0)
			goto fail;
	/* The workspace is always there: read-write or read-only per policy. */
	if (plan_add(plan, p->workspace_writable ? WM_BIND_RW : WM_BIND_RO,
	             "$WORKSPACE", spec, 0, false, err) < 0)
		goto fail;
	for (i = 0; i < p->n_tmpfs; i++) {
		if (home_in_workspace(spec, p->tmpfs[i].path))
			continue;
		if (plan_add(plan, WM_TMPFS, p->tmpfs[i].path, spec, p->tmpfs[i].size,
		             false, err) < 0)
			goto fail;
	}
	for (i = 0; i < p->hide.n; i++)
		if (plan_add(plan, WM_HIDE, p->hide.v[i], spec, 0, true, err) < 0)
			goto fail;
	for (char *const *h = spec->hide_extra; h && *h; h++)
		if (plan_add(plan, WM_HIDE, *h, spec, 0, true, err) < 0)
			goto fail;
	/* what the host runs or trusts inside the workspace, and credentials:
	 * after the policy's own entries, which they may strengthen */
	wtiming("plan: policy");
	if (jail_protect(spec, plan, plan_add_abs, err) < 0)
		goto fail;
	wtiming("plan: protect");

	for (i = 0; i < plan->n; i++) {
		const char *q = plan->m[i].path;
		if (q[0] != '/' || strstr(q, "/../") || !strcmp(q, "/") ||
		    (strlen(q) >= 3 && !strcmp(q + strlen(q) - 3, "/.."))) {
			werr_set(err, 0, "policy %s: path '%s' must be absolute, below / and "
			         "without '..'", p->name, q);
			if (problem(pr, q, NULL, err) < 0)
				goto fail;
		/* these are built by the jail itself */
		} else if (at_or_below(q, "/proc") || at_or_below(q, "/dev") ||
		           at_or_below(q, WPLAN_RELOC)) {
			werr_set(err, 0, "policy %s: '%s' cannot be mounted: warden builds /proc, "
			         "/dev and " WPLAN_RELOC " itself; remove it", p->name, q);
			if (problem(pr, q, NULL, err) < 0)
				goto fail;
		}
	}
	if (pr && pr->n)
		goto fail;   /* no source of a plan with such paths is looked at */
	qsort(plan->m, plan->n, sizeof(*plan->m), cmp_mount);
	plan_relocate(plan);
	for (i = 0; i < plan->n; i++) {
		const char *below = NULL;

		if ((plan->m[i].kind == WM_BIND_RO || plan->m[i].kind == WM_BIND_RW) &&
		    plan_source(spec, plan, &plan->m[i], &below, err) < 0 &&
		    problem(pr, plan->m[i].path, below, err) < 0)
			goto fail;
	}
	if (pr && pr->n)
		goto fail;
	return 0;
fail:
	jail_plan_free(plan);
	return -1;
}

int jail_plan(const struct jail_spec *spec, struct wplan *plan, struct werr *err)
{
	return plan_make(spec, plan, NULL, err);
}

int jail_plan_check(const struct jail_spec *spec, struct wstrv *paths, struct wstrv *below,
                    struct wstrv *msgs)
{
	struct problems pr = { .paths = paths, .below = below, .msgs = msgs };
	struct wplan plan;
	struct werr err = { 0 };

	if (spec->protect_reg)
		return -1;   /* a check makes nothing on the host */
	if (plan_make(spec, &plan, &pr, &err) < 0) {
		if (!pr.n)
			problem(&pr, "", NULL, &err);   /* one that ends the plan anyway */
		return -1;
	}
	jail_plan_free(&plan);
	return 0;
}

void jail_plan_free(struct wplan *plan)
{
	size_t i;

	if (!plan)
		return;
	for (i = 0; i < plan->n; i++) {
		free(plan->m[i].path);
		free(plan->m[i].at);
		free(plan->m[i].src);
		if (plan->m[i].src_fd >= 0)
			close(plan->m[i].src_fd);
		if (plan->m[i].tree_fd >= 0)
			close(plan->m[i].tree_fd);
		plan->m[i].src_fd = plan->m[i].tree_fd = -1;
	}
	free(plan->m);
	closep(&plan->slot_fd);
	plan->slot_fd = -1;
	plan->m = NULL;
	plan->n = plan->cap = 0;
}
