/* Protected and hidden paths inside the jail's writable binds
 * (include/warden/protect.h, include/warden/catalog.h; docs/design.md,
 * "Protected and hidden paths").  Runs in the parent, as jail_plan's last
 * step, and adds to the plan:
 *   WM_PROTECT  a read-only bind of an existing path onto itself;
 *   WM_PIN      a read-write bind of each directory between the bind and a
 *               protected or covered path onto itself: a mount point can be
 *               neither renamed nor removed, so `mv .git x` or `mv proj x`
 *               cannot move a protection away from the path the host uses;
 *   WM_COVER    an empty read-only file or directory over a placeholder, or
 *               over a symlink at a protected path (never followed);
 *   WM_HIDE     the hidden catalog's existing paths.
 * Everything here reads the workspace, which jailed code writes: no
 * symlink is followed (every component is opened O_NOFOLLOW from the held
 * directory above it), and names are only compared with the catalog.
 * Placeholders are created with the directory fd held, never by path. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "jail_impl.h"
#include "warden/catalog.h"
#include "warden/util.h"

/* The scan for nested repositories and project files: bounded, so a home
 * with millions of files costs at most this much; past the bound the run
 * says so (stats.incomplete).  Directories that hold no repository of the
 * person's, or are covered whole anyway, are not entered. */
#define SCAN_MAX_ENTRIES 100000
#define SCAN_MAX_DEPTH 24
#define LINK_HOPS 8

struct act { char *path; enum wmount_kind kind; };

struct pctx {
	const struct jail_spec *spec;
	struct wplan *plan;
	const char *root;          /* the writable bind (host path) */
	int root_fd;               /* O_PATH of it */
	bool ro;                   /* a read-only workspace: hides only */
	struct act *a;
	size_t n, cap;
	unsigned scanned;
	struct werr *err;
};

static bool under(const char *path, const char *base)
{
	size_t n = strlen(base);

	return !strncmp(path, base, n) && (path[n] == '\0' || path[n] == '/');
}

/* Record what path gets; a stronger action for the same path wins
 * (hide > cover > protect > pin). */
static void act(struct pctx *c, const char *path, enum wmount_kind kind)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->a[i].path, path)) {
			if (kind > c->a[i].kind)
				c->a[i].kind = kind;
			return;
		}
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 32;
		c->a = realloc(c->a, c->cap * sizeof(*c->a));
		if (!c->a)
			abort();
	}
	c->a[c->n++] = (struct act){ xstrdup(path), kind };
}

/* What path already gets, or -1. */
static int acted(const struct pctx *c, const char *path)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->a[i].path, path))
			return (int)c->a[i].kind;
	return -1;
}

/* Is catalog entry e dropped by the policy (unprotect / unhide)? */
static unsigned effective(const struct wpolicy *p, const struct wcat_entry *e)
{
	unsigned what = e->what;

	if (wstrv_contains(&p->unprotect, e->name))
		what &= ~WCAT_PROTECT;
	if (wstrv_contains(&p->unhide, e->name))
		what &= ~WCAT_HIDE;
	return what;
}

/* Only these components are created for real when missing on the way to
 * an entry below them (the XDG base directories: empty, they change
 * nothing); any other missing component is the placeholder. */
static bool container(const char *rel)
{
	return !strcmp(rel, ".config") || !strcmp(rel, ".local") ||
	       !strcmp(rel, ".local/share") || !strcmp(rel, ".local/state");
}

/* --- the registry of placeholders --------------------------------------- */

static void reg_add(const struct jail_spec *spec, const char *path)
{
	int fd;

	if (!spec->protect_reg || spec->protect_reg->dir_fd < 0)
		return;
	fd = openat(spec->protect_reg->dir_fd, "placeholders", O_WRONLY | O_APPEND | O_CREAT |
	            O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	(void)!write(fd, path, strlen(path) + 1);   /* NUL-separated: one write each */
	close(fd);
}

/* As root, what we create belongs to the directory's owner, who can then
 * remove it (a placeholder left by a killed warden is theirs to delete). */
static void give_to_owner(int dir, const char *name)
{
	struct stat st;

	if (geteuid() == 0 && fstat(dir, &st) == 0)
		(void)!fchownat(dir, name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW);
}

/* The placeholder for the missing name in dir (path: its full path): an
 * empty directory, or a symlink to the never-resolving target.  0, or -1
 * when it cannot be made (a read-only filesystem: then jailed code cannot
 * make it either). */
static int placeholder(struct pctx *c, int dir, const char *name, const char *path, bool as_dir)
{
	int r;

	if (!c->spec->protect_reg)
		return -1;   /* nowhere to list it (`warden policy check`): none is made */
	r = as_dir ? mkdirat(dir, name, 0700) : symlinkat(WPROTECT_PLACEHOLDER_TARGET, dir, name);

	if (r < 0 && errno != EEXIST)
		return -1;
	if (r == 0) {
		give_to_owner(dir, name);
		reg_add(c->spec, path);
	}
	return 0;
}

/* Remove one listed placeholder if it still is one: our symlink, or an
 * empty directory (rmdir refuses anything else).  Its directory is reached
 * without following a link (the listed paths had none when they were
 * made): a link put there since leads this cleaner, root perhaps, nowhere. */
static void unplace(const char *path)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
	                        .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	char buf[sizeof(WPROTECT_PLACEHOLDER_TARGET) + 1], parent[PATH_MAX];
	const char *name = strrchr(path, '/');
	ssize_t n;
	int dir;

	if (!name || name == path || (size_t)(name - path) >= sizeof(parent))
		return;
	snprintf(parent, sizeof(parent), "%.*s", (int)(name - path), path);
	name++;
	dir = (int)syscall(SYS_openat2, AT_FDCWD, parent, &how, sizeof(how));
	if (dir < 0)
		return;
	n = readlinkat(dir, name, buf, sizeof(buf) - 1);
	if (n >= 0) {
		buf[n] = '\0';
		if (!strcmp(buf, WPROTECT_PLACEHOLDER_TARGET))
			(void)unlinkat(dir, name, 0);
	} else if (errno == EINVAL) {
		(void)unlinkat(dir, name, AT_REMOVEDIR);
	}
	close(dir);
}

/* With the registry's lock held exclusively: remove every placeholder it
 * lists, deepest (latest) first, and empty it. */
static void clean_locked(int dir_fd)
{
	int fd = openat(dir_fd, "placeholders", O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_free_ char *buf = NULL;
	struct werr ignored = { 0 };
	size_t len = 0;

	if (fd < 0)
		return;
	if (read_fd_buf(fd, "placeholders", 16u << 20, &buf, &len, &ignored) == 0) {
		for (size_t i = len; i > 0;) {
			size_t j = i - 1;
			while (j > 0 && buf[j - 1] != '\0')
				j--;
			if (buf[i - 1] == '\0' && buf[j] == '/')
				unplace(buf + j);
			i = j;
		}
		(void)!ftruncate(fd, 0);
	}
	close(fd);
}

int wprotect_reg_open(struct wprotect_reg *r, const char *dir, struct werr *err)
{
	int d;

	r->dir_fd = r->lock_fd = -1;
	if (mkdir_p(dir, 0700, err) < 0)
		return werr_wrap(err, "the placeholders' registry");
	d = jail_open_nofollow(AT_FDCWD, dir, err);
	if (d < 0)
		return werr_wrap(err, "the placeholders' registry (a directory reached "
		                 "without a symlink)");
	r->dir_fd = openat(d, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(d);
	if (r->dir_fd >= 0)
		r->lock_fd = openat(r->dir_fd, "placeholders.lock", O_RDWR | O_CREAT | O_NOFOLLOW |
		                    O_CLOEXEC, 0600);
	if (r->dir_fd < 0 || r->lock_fd < 0) {
		int e = errno;
		closep(&r->dir_fd);
		r->dir_fd = -1;
		return werr_set(err, e, "the placeholders' registry in %s", dir);
	}
	/* what a killed warden left: removed now when no other warden (nor a
	 * cleaner still waiting) holds the lock; never waited for */
	if (flock(r->lock_fd, LOCK_EX | LOCK_NB) == 0)
		clean_locked(r->dir_fd);
	if (flock(r->lock_fd, LOCK_SH) < 0) {
		int e = errno;
		wprotect_reg_close(r);
		return werr_set(err, e, "locking the placeholders' registry in %s", dir);
	}
	return 0;
}

/* Removing a placeholder right after its jail ended costs an RCU grace
 * period per mount still on it in the dying namespace (~2 ms each, 65 in a
 * home directory), and the next run would make them all again.  So a
 * detached cleaner, holding our share of the lock, waits this long first:
 * back-to-back runs keep and reuse the placeholders, and a warden that
 * starts meanwhile takes the cleanup over (the cleaner then cannot get the
 * lock alone, and leaves). */
#define CLEAN_DELAY_MS 2000

void wprotect_reg_close(struct wprotect_reg *r)
{
	struct stat st;
	pid_t pid;

	if (r->dir_fd < 0 || r->lock_fd < 0)
		goto out;
	if (fstatat(r->dir_fd, "placeholders", &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_size == 0)
		goto out;   /* nothing to clean */
	pid = fork();
	if (pid == 0) {
		/* a grandchild, in its own session, holding nothing of ours but
		 * the registry (as fds 3 and 4): the caller is not kept waiting,
		 * whoever reads warden's output or stderr sees EOF when warden
		 * exits, and it is warden afresh (exec), not a copy that looks
		 * like the run it outlives */
		static char *const argv[] = { "warden-cleanup", WPROTECT_CLEANER_ARG, NULL };
		int null;

		if (fork() != 0)
			_exit(0);
		setsid();
		null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null < 0 || dup2(r->dir_fd, 10) < 0 || dup2(r->lock_fd, 11) < 0 ||
		    dup2(10, 3) < 0 || dup2(11, 4) < 0)
			_exit(1);
		for (int fd = 0; fd < 3; fd++)
			dup2(null, fd);
		syscall(SYS_close_range, 5, ~0U, 0);
		execv("/proc/self/exe", argv);
		_exit(1);
	}
	if (pid > 0)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
out:
	closep(&r->lock_fd);
	closep(&r->dir_fd);
	r->lock_fd = r->dir_fd = -1;
}

int wprotect_cleaner_main(void)
{
	nanosleep(&(struct timespec){ CLEAN_DELAY_MS / 1000, (CLEAN_DELAY_MS % 1000) * 1000000L },
	          NULL);
	if (flock(4, LOCK_EX | LOCK_NB) == 0)
		clean_locked(3);
	return 0;
}

char *wprotect_reg_default_dir(const char *home)
{
	const char *rt = getenv("XDG_RUNTIME_DIR"), *state = getenv("XDG_STATE_HOME");

	struct stat st;

	/* the runtime directory as the XDG spec defines it: ours, 0700.  One
	 * that is not (XDG_RUNTIME_DIR kept from another user by su or sudo)
	 * is passed over, as the spec asks */
	if (rt && rt[0] == '/' && stat(rt, &st) == 0 && S_ISDIR(st.st_mode) &&
	    st.st_uid == geteuid() && !(st.st_mode & 077))
		return xasprintf("%s/warden", rt);
	if (geteuid() == 0)
		return xstrdup("/run/warden");
	if (state && state[0] == '/')
		return xasprintf("%s/warden", state);
	return home && home[0] == '/' ? xasprintf("%s/.local/state/warden", home) : NULL;
}

/* --- one path ------------------------------------------------------------ */

static void resolve_link(struct pctx *c, const char *rel, unsigned what, int kind, int hops);

/* Apply what (WCAT_PROTECT / WCAT_HIDE) to rel, a path below the bind.
 * Walks it from the bind, a component at a time, following no link:
 *   a missing component: nothing for a hide; for a protect, a placeholder
 *     there (or, for .config and the like, the directory itself), covered;
 *   a symlink: covered, never followed; its target, when it lies in the
 *     bind, gets the same treatment (dotfiles linked from a repository);
 *   the end: hidden, or protected (a FIFO or socket is covered);
 *   a file where a directory is needed: protected itself (nothing can be
 *     created below it unless it is replaced).
 * The directories walked through are pinned. */
static void apply(struct pctx *c, const char *rel, unsigned what, int kind, int hops)
{
	char buf[PATH_MAX], full[PATH_MAX], sofar[PATH_MAX] = "";
	char *comp, *next;
	int dir;

	if (c->ro)
		what &= WCAT_HIDE;   /* nothing there can be written or created */
	if (!what || snprintf(buf, sizeof(buf), "%s", rel) >= (int)sizeof(buf))
		return;
	dir = fcntl(c->root_fd, F_DUPFD_CLOEXEC, 3);
	if (dir < 0)
		return;
	for (comp = buf; comp; comp = next) {
		struct stat st;
		int fd, k;
		bool last;

		next = strchr(comp, '/');
		if (next)
			*next++ = '\0';
		last = !next;
		if (strlen(sofar) + strlen(comp) + 2 > sizeof(sofar))
			break;
		if (sofar[0])
			strcat(sofar, "/");
		strcat(sofar, comp);
		if (snprintf(full, sizeof(full), "%s/%s", c->root, sofar) >= (int)sizeof(full))
			break;
		fd = openat(dir, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT && !last && (what & WCAT_PROTECT) && container(sofar) &&
		    c->spec->protect_reg && mkdirat(dir, comp, 0700) == 0) {
			give_to_owner(dir, comp);
			reg_add(c->spec, full);   /* removed with the rest if still empty */
			fd = openat(dir, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		}
		if (fd < 0) {
			if (errno == ENOENT && (what & WCAT_PROTECT) &&
			    placeholder(c, dir, comp, full, !last || kind == WCAT_DIR) == 0)
				act(c, full, WM_COVER);
			break;
		}
		if (fstat(fd, &st) < 0) {
			close(fd);
			break;
		}
		if (S_ISLNK(st.st_mode)) {
			close(fd);
			act(c, full, WM_COVER);
			resolve_link(c, sofar, what, kind, hops);
			if (!last) {
				/* the rest lies behind the link: its target was
				 * handled with the whole path */
			}
			break;
		}
		if (last) {
			close(fd);
			if (what & WCAT_HIDE)
				act(c, full, WM_HIDE);
			else if (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))
				act(c, full, WM_PROTECT);
			else
				act(c, full, WM_COVER);
			break;
		}
		if (!S_ISDIR(st.st_mode)) {
			close(fd);
			if (what & WCAT_PROTECT)
				act(c, full, S_ISREG(st.st_mode) ? WM_PROTECT : WM_COVER);
			break;
		}
		/* a directory this plan already makes read-only (protected, or
		 * a placeholder's cover): nothing below it can be changed or
		 * created, so no placeholder is made inside it (the person's
		 * own ~/.cargo would get one per missing credential file) */
		k = acted(c, full);
		if (k == WM_PROTECT || k == WM_COVER || k == WM_HIDE) {
			what &= ~WCAT_PROTECT;
			if (!what) {
				close(fd);
				break;
			}
		}
		if (what & WCAT_PROTECT)
			act(c, full, WM_PIN);
		close(dir);
		dir = fd;
	}
	close(dir);
}

/* A symlink at a protected or hidden path: where it leads, if that is in
 * the bind (RESOLVE_BENEATH: never outside it), gets the same treatment,
 * for the host follows the link. */
static void resolve_link(struct pctx *c, const char *rel, unsigned what, int kind, int hops)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_BENEATH |
	                        RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV };
	char proc[64], target[PATH_MAX];
	size_t rl = strlen(c->root);
	ssize_t n;
	int fd;

	if (hops >= LINK_HOPS)
		return;
	fd = (int)syscall(SYS_openat2, c->root_fd, rel, &how, sizeof(how));
	if (fd < 0)
		return;   /* leads outside the bind, or nowhere */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, target, sizeof(target) - 1);
	close(fd);
	if (n <= 0)
		return;
	target[n] = '\0';
	if (strncmp(target, c->root, rl) || target[rl] != '/')
		return;
	apply(c, target + rl + 1, what, kind, hops + 1);
}

/* --- the catalogs at one place --------------------------------------------- */

/* The project catalog at the directory rel ("" for the bind itself).  At
 * a nested repository (nested) only what exists is protected: a missing
 * entry there gets no placeholder (a dozen nested repositories would put
 * six empty directories each into the person's tree, and a mount over
 * each into every jail); its .git, which defines it, always exists. */
static void project_at(struct pctx *c, const char *rel, int dfd, bool nested)
{
	DIR *d = NULL;

	for (size_t i = 0; i < wcat_n; i++) {
		const struct wcat_entry *e = &wcat_entries[i];
		unsigned what = effective(c->spec->pol, e);
		const char *name = wcat_rel(e);
		_cleanup_free_ char *p = NULL;

		if (e->base != WCAT_PROJECT || !what)
			continue;
		if (name[strlen(name) - 1] == '*') {
			/* a pattern: the directory's entries that match */
			struct dirent *de;
			int fd;

			if (!d) {
				fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
				d = fd >= 0 ? fdopendir(fd) : NULL;
				if (!d) {
					if (fd >= 0)
						close(fd);
					continue;
				}
			}
			rewinddir(d);
			while ((de = readdir(d))) {
				if (!wcat_match(e, de->d_name))
					continue;
				p = xasprintf("%s%s%s", rel, rel[0] ? "/" : "", de->d_name);
				apply(c, p, what & WCAT_HIDE, e->kind, 0);
				free(steal_pointer(&p));
			}
			continue;
		}
		/* A missing file at a project root is not covered: its
		 * placeholder (a symlink) would show in `git status` and be
		 * committed by `git add -A`; the tools that read these files ask
		 * before they act on a new one (SECURITY.md). */
		if ((e->kind == WCAT_FILE || nested) &&
		    faccessat(dfd, name, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		p = xasprintf("%s%s%s", rel, rel[0] ? "/" : "", name);
		apply(c, p, what, e->kind, 0);
	}
	if (d)
		closedir(d);
}

static unsigned depth_of(const char *rel)
{
	unsigned n = 0;

	for (; *rel; rel++)
		n += *rel == '/';
	return n;
}

/* The home catalog at rel (the caller's home, below the bind), shallower
 * entries first: ~/.cargo is settled before ~/.cargo/credentials.toml,
 * which then needs no placeholder of its own (apply). */
static void home_at(struct pctx *c, const char *rel)
{
	unsigned depth, deepest = 0;

	for (size_t i = 0; i < wcat_n; i++)
		if (depth_of(wcat_rel(&wcat_entries[i])) > deepest)
			deepest = depth_of(wcat_rel(&wcat_entries[i]));
	for (depth = 0; depth <= deepest; depth++)
		for (size_t i = 0; i < wcat_n; i++) {
			const struct wcat_entry *e = &wcat_entries[i];
			unsigned what = effective(c->spec->pol, e);
			_cleanup_free_ char *p = NULL;

			if (e->base != WCAT_HOME || !what || depth_of(wcat_rel(e)) != depth)
				continue;
			p = xasprintf("%s%s%s", rel, rel[0] ? "/" : "", wcat_rel(e));
			apply(c, p, what, e->kind, 0);
		}
}

/* Directories the scan does not enter: hidden ones (a dot first: caches,
 * tools' state, and the catalogs' own, which are covered whole; a
 * repository's .git) and a few known to hold dependencies or build output
 * rather than the person's repositories. */
static bool skip_dir(const char *name)
{
	static const char *const skip[] = {
		"node_modules", "__pycache__", "venv", "target", "snap", "site-packages",
	};

	if (name[0] == '.')
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(skip); i++)
		if (!strcmp(name, skip[i]))
			return true;
	return false;
}

/* Depth first below the bind, each directory opened from its parent's fd
 * (one component, O_NOFOLLOW: no link is followed), at most SCAN_MAX_DEPTH
 * directories deep (that many fds open) and SCAN_MAX_ENTRIES entries in
 * all: every directory that holds .git is a project root.  rel is a
 * PATH_MAX buffer holding the directory's path below the bind. */
static void scan_dir(struct pctx *c, int fd, char *rel, int depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	size_t rl = strlen(rel);
	bool repo = false;

	if (!d) {
		close(fd);
		return;
	}
	while (!c->plan->protect.incomplete && (de = readdir(d))) {
		bool isdir = de->d_type == DT_DIR;
		int sub;

		if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		if (++c->scanned > SCAN_MAX_ENTRIES) {
			c->plan->protect.incomplete = true;
			break;
		}
		if (!strcmp(de->d_name, ".git"))
			repo = true;
		if (de->d_type == DT_UNKNOWN) {
			struct stat st;
			isdir = fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			        S_ISDIR(st.st_mode);
		}
		if (!isdir || skip_dir(de->d_name) || depth >= SCAN_MAX_DEPTH ||
		    rl + strlen(de->d_name) + 2 >= PATH_MAX)
			continue;
		sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue;
		if (rl)
			rel[rl] = '/';
		strcpy(rel + rl + (rl ? 1 : 0), de->d_name);
		scan_dir(c, sub, rel, depth + 1);
		rel[rl] = '\0';
	}
	/* the bind's own root is a project root anyway (one_bind) */
	if (repo && rl) {
		c->plan->protect.repos++;
		project_at(c, rel, dirfd(d), true);
	}
	closedir(d);
}

static void scan(struct pctx *c)
{
	char rel[PATH_MAX] = "";
	int fd = openat(c->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0)
		scan_dir(c, fd, rel, 0);
}

/* --- what a pooled jail's protections depended on ----------------------------- */

static void sum_mix(uint64_t *h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		*h = (*h ^ b[i]) * 1099511628211ULL;   /* FNV-1a */
}

/* One candidate path: what object is there (none, or its identity). */
static void sum_one(uint64_t *h, const char *path)
{
	struct stat st;
	uint64_t v[3] = { 0, 0, 0 };

	sum_mix(h, path, strlen(path) + 1);
	if (lstat(path, &st) == 0) {
		v[0] = st.st_dev;
		v[1] = st.st_ino;
		v[2] = st.st_mode & S_IFMT;
	}
	sum_mix(h, v, sizeof(v));
}

uint64_t jail_protect_sum(const char *ws, const char *home, const struct wpolicy *pol,
                          char *const *extra)
{
	uint64_t h = 1469598103934665603ULL;
	bool home_in = home && under(home, ws);

	for (char *const *x = extra; x && *x; x++)
		sum_one(&h, *x);
	for (size_t i = 0; i < wcat_n; i++) {
		const struct wcat_entry *e = &wcat_entries[i];
		_cleanup_free_ char *a = NULL, *b = NULL;

		if (!effective(pol, e))
			continue;
		if (e->base == WCAT_HOME) {
			if (home_in) {
				a = xasprintf("%s/%s", home, wcat_rel(e));
				sum_one(&h, a);
			}
			continue;
		}
		if (wcat_rel(e)[strlen(wcat_rel(e)) - 1] == '*')
			continue;
		a = xasprintf("%s/%s", ws, wcat_rel(e));
		sum_one(&h, a);
		if (home_in && strcmp(home, ws)) {
			b = xasprintf("%s/%s", home, wcat_rel(e));
			sum_one(&h, b);
		}
	}
	return h;
}

/* --- the plan -------------------------------------------------------------- */

static void one_bind(struct pctx *c)
{
	const struct jail_spec *spec = c->spec;
	const char *home = spec->home, *path = getenv("PATH");
	int dfd;

	/* the bind itself is a project root */
	dfd = openat(c->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		project_at(c, "", dfd, false);
		close(dfd);
	}
	/* the caller's home, when it is here: its catalog, and it is a
	 * project root too (a dotfiles repository) */
	if (home && under(home, c->root)) {
		const char *rel = home + strlen(c->root) + (home[strlen(c->root)] == '/');
		struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
		                        .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH };

		c->plan->protect.home = true;
		home_at(c, rel);
		if (rel[0] && (dfd = (int)syscall(SYS_openat2, c->root_fd, rel, &how, sizeof(how))) >= 0) {
			project_at(c, rel, dfd, false);
			close(dfd);
		}
	}
	/* the directories on the caller's PATH that are here */
	for (const char *p = path; p && *p;) {
		const char *e = strchr(p, ':');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		_cleanup_free_ char *d = xasprintf("%.*s", (int)l, p);

		if (d[0] == '/' && under(d, c->root) && strcmp(d, c->root))
			apply(c, d + strlen(c->root) + 1, WCAT_PROTECT, WCAT_DIR, 0);
		p = e ? e + 1 : NULL;
	}
	/* warden's own directories where they are not the catalog's */
	for (char *const *x = spec->protect_extra; x && *x; x++)
		if (under(*x, c->root) && strcmp(*x, c->root))
			apply(c, *x + strlen(c->root) + 1, WCAT_PROTECT | WCAT_HIDE, WCAT_DIR, 0);
	/* the policy's own protect list */
	for (size_t i = 0; i < spec->pol->protect.n; i++) {
		_cleanup_free_ char *abs = NULL;
		struct werr ignored = { 0 };

		if (policy_expand(spec->pol->protect.v[i], spec->workspace, spec->home, &abs,
		                  &ignored) == 0 && under(abs, c->root) && strcmp(abs, c->root))
			apply(c, abs + strlen(c->root) + 1, WCAT_PROTECT, WCAT_FILE, 0);
	}
	scan(c);
}

int jail_protect(const struct jail_spec *spec, struct wplan *plan,
                 int (*add)(struct wplan *, const char *, enum wmount_kind, struct werr *),
                 struct werr *err)
{
	struct pctx c = { .spec = spec, .plan = plan, .err = err };
	size_t nbinds = plan->n, i;
	int r = 0;

	for (i = 0; i < nbinds; i++) {
		const struct wmount *m = &plan->m[i];
		bool ws = spec->workspace && !strcmp(m->path, spec->workspace);

		if (m->kind != WM_BIND_RW && !ws)
			continue;
		c.root = m->path;
		c.ro = m->kind != WM_BIND_RW;
		c.root_fd = ws && spec->workspace_fd >= 0 ?
		            fcntl(spec->workspace_fd, F_DUPFD_CLOEXEC, 3) :
		            jail_open_nofollow(AT_FDCWD, m->path, err);
		if (c.root_fd < 0) {
			werr_clear(err);
			continue;   /* plan_source reports a bind it cannot open */
		}
		one_bind(&c);
		close(c.root_fd);
	}
	for (i = 0; i < c.n; i++) {
		if (r == 0)
			r = add(plan, c.a[i].path, c.a[i].kind, err);
		switch (c.a[i].kind) {
		case WM_PROTECT: plan->protect.protected_n++; break;
		case WM_HIDE:    plan->protect.hidden_n++; break;
		case WM_COVER:   plan->protect.covered_n++; break;
		default:         break;
		}
		free(c.a[i].path);
	}
	free(c.a);
	return r;
}
