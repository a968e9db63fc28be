/* The learner's judgement of a call that names a path (learn/learner.h).
 *
 * The call has not run yet: the thread waits in its notification.  The
 * path is read from the caller's memory (bounded, through the read-only fd
 * the supervisor opened), made absolute with the jail's path of the
 * directory it is relative to, and looked up twice:
 *   in the jail  openat2(jail root, path, O_PATH, RESOLVE_IN_ROOT): the
 *                jail's own view, its mounts and symlinks (an absolute
 *                link resolves inside the jail); fstatvfs says whether the
 *                mount is read-only;
 *   on the host  the same path (less /.warden-ro, where read-only binds
 *                below a tmpfs are mounted), with the learner's own uid:
 *                the jail's host uid as root, the caller otherwise, so a
 *                file the jail's uid could not read anyway is not proposed.
 * Only refusals are kept: a path missing in the jail that exists on the
 * host, a write to a read-only mount, a creation in a directory that is
 * read-only or missing in the jail.  What is proposed is the smallest
 * entry that would have let the call succeed (docs/learn.md): the file
 * itself; its directory only when the call lists, enters or creates in
 * it.  O_PATH opens and stat are not Landlock-checked, so the learner,
 * which may open nothing else, can do all of this. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "learner.h"
#include "warden/filter.h"
#include "warden/jail.h"
#include "warden/util.h"

#ifndef __O_TMPFILE
#define __O_TMPFILE 020000000
#endif

static const char *const K_RO = "filesystem.read_only";
static const char *const K_RW = "filesystem.read_write";

/* dir/p, or p when absolute; false when it does not fit or no directory
 * is known for a relative path */
static bool absolute(const char *dir, const char *p, char *out, size_t cap)
{
	int n;

	if (p[0] == '/')
		n = snprintf(out, cap, "%s", p);
	else if (dir && dir[0] == '/')
		n = snprintf(out, cap, "%s/%s", strcmp(dir, "/") ? dir : "", p);
	else
		return false;
	return n > 0 && (size_t)n < cap;
}

static int in_jail(const struct lctx *c, const char *path, bool follow)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};

	if (c->root < 0) {
		errno = EBADF;
		return -1;
	}
	return (int)syscall(SYS_openat2, c->root, path, &how, sizeof(how));
}

static bool read_only(int fd)
{
	struct statvfs sv;

	return fstatvfs(fd, &sv) == 0 && (sv.f_flag & ST_RDONLY);
}

/* The host's path of a jail path: the same, but for the relocation of
 * read-only binds below a tmpfs (jail/plan.c) */
static const char *host_path(const char *jp)
{
	size_t n = strlen(WPLAN_RELOC);

	if (!strncmp(jp, WPLAN_RELOC, n) && jp[n] == '/')
		return jp + n;
	return jp;
}

/* Does the host have hp (following a last link or not)?  Its canonical
 * path into canon (a last link's own, when not following) and whether it
 * is a directory. */
static bool on_host(const char *hp, bool follow, char *canon, size_t cap, bool *dir)
{
	char self[64], tmp[WL_PATH_MAX], *slash;
	struct stat st;
	ssize_t n;
	int fd;

	if (fstatat(AT_FDCWD, hp, &st, follow ? 0 : AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	*dir = S_ISDIR(st.st_mode);
	snprintf(tmp, sizeof(tmp), "%s", hp);
	slash = strrchr(tmp, '/');
	if (!follow && slash && slash[1])
		*slash = '\0';   /* the link's directory, then its name */
	fd = open(tmp[0] ? tmp : "/", O_PATH | O_CLOEXEC);
	if (fd < 0)
		return false;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	n = readlink(self, canon, cap - 1);
	close(fd);
	if (n <= 0)
		return false;
	canon[n] = '\0';
	if (!follow && slash && slash[1] &&
	    (size_t)snprintf(canon + n, cap - (size_t)n, "%s%s", strcmp(canon, "/") ? "/" : "",
	                     slash + 1) >= cap - (size_t)n)
		return false;
	return true;
}

/* warden builds the jail's /proc and /dev itself: nothing there to bind */
static bool own_tree(const char *jp)
{
	return !strncmp(jp, "/proc", 5) ? (jp[5] == '/' || !jp[5])
	                                  : !strncmp(jp, "/dev", 4) && (jp[4] == '/' || !jp[4]);
}

static const char *MISSING = "it is not in the jail; it exists on the host";

/* A path the call reads, lists, runs, writes or only looks at. */
static void judge(struct lctx *c, const char *call, enum wl_op op, const char *jp, bool follow)
{
	char canon[WL_PATH_MAX];
	bool dir = false;
	int fd;

	if (own_tree(jp))
		return;
	fd = in_jail(c, jp, follow);
	if (fd >= 0) {
		bool ro = op == WL_WRITE && read_only(fd);

		close(fd);
		if (ro && on_host(host_path(jp), follow, canon, sizeof(canon), &dir))
			lj_add(c, op, jp, call, "it is read-only in the jail", K_RW, canon);
		return;
	}
	if (errno != ENOENT && errno != ENOTDIR)
		return;   /* a link loop, a permission: not a policy's business */
	if (!on_host(host_path(jp), follow, canon, sizeof(canon), &dir))
		return;
	if (dir && op == WL_READ)
		op = WL_LIST;
	if (dir && op == WL_EXEC)
		return;
	lj_add(c, op, jp, call, MISSING, op == WL_WRITE ? K_RW : K_RO, canon);
}

/* A call that creates, removes or renames in jp's directory (or in jp
 * itself when self_dir: O_TMPFILE). */
static void judge_dir(struct lctx *c, const char *call, const char *jp, bool self_dir)
{
	char parent[WL_PATH_MAX], canon[WL_PATH_MAX], *slash;
	bool dir = false;
	int fd;

	snprintf(parent, sizeof(parent), "%s", jp);
	if (!self_dir) {
		if (!(slash = strrchr(parent, '/')))
			return;
		if (slash == parent)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	if (own_tree(parent))
		return;
	fd = in_jail(c, parent, true);
	if (fd >= 0) {
		bool ro = read_only(fd);

		close(fd);
		if (ro && on_host(host_path(parent), true, canon, sizeof(canon), &dir) && dir)
			lj_add(c, WL_CREATE, jp, call, "its directory is read-only in the jail", K_RW,
			       canon);
		return;
	}
	if ((errno == ENOENT || errno == ENOTDIR) &&
	    on_host(host_path(parent), true, canon, sizeof(canon), &dir) && dir)
		lj_add(c, WL_CREATE, jp, call, "its directory is not in the jail; it exists on "
		       "the host", K_RW, canon);
}

/* open(2)'s flags: a read, a listing, a write, a creation */
static void judge_open(struct lctx *c, const char *call, const char *jp, uint64_t flags)
{
	bool creat = flags & O_CREAT, tmpfile = (flags & __O_TMPFILE) == __O_TMPFILE;
	bool write = (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC) || creat;
	char canon[WL_PATH_MAX];
	bool dir = false;
	int fd;

	if (tmpfile) {
		judge_dir(c, call, jp, true);
		return;
	}
	if (!creat) {
		judge(c, call, write ? WL_WRITE : (flags & O_DIRECTORY) ? WL_LIST : WL_READ, jp,
		      !(flags & O_NOFOLLOW));
		return;
	}
	/* O_CREAT: the file itself when it exists (in the jail, or on the
	 * host: binding it is enough), else its directory */
	fd = in_jail(c, jp, !(flags & O_NOFOLLOW));
	if (fd >= 0) {
		close(fd);
		judge(c, call, WL_WRITE, jp, true);
	} else if (own_tree(jp)) {
		return;
	} else if (on_host(host_path(jp), true, canon, sizeof(canon), &dir) && !dir) {
		lj_add(c, WL_WRITE, jp, call, MISSING, K_RW, canon);
	} else {
		judge_dir(c, call, jp, false);
	}
}

/* A PATH search (execvp, a shell) tries each directory in turn: a refused
 * exec that the same thread follows with a successful one of the same name
 * was a step of the search, not a refusal. */
static void exec_seen(struct lctx *c, const char *jp, bool refused)
{
	const char *base = strrchr(jp, '/') ? strrchr(jp, '/') + 1 : jp;

	if (!refused) {
		for (size_t i = 0; i < c->ex_n; i++)
			if (c->ex[i].tid == c->tid && !strcmp(c->ex[i].base, base)) {
				wl_drop(&c->list, c->ex[i].id);
				c->ex[i] = c->ex[--c->ex_n];
				i--;
			}
		return;
	}
	if (strlen(base) >= sizeof(c->ex[0].base))
		return;
	if (c->ex_n == LJ_EXEC_MAX)
		memmove(&c->ex[0], &c->ex[1], --c->ex_n * sizeof(c->ex[0]));
	c->ex[c->ex_n].tid = c->tid;
	c->ex[c->ex_n].id = c->id;
	snprintf(c->ex[c->ex_n].base, sizeof(c->ex[0].base), "%s", base);
	c->ex_n++;
}

void lj_call(struct lctx *c, int nr, const uint64_t a[6], const char *dir, const char *dir2)
{
	const struct wfilter_learn_call *k = wfilter_learn_call(nr);
	char p1[WL_PATH_MAX], p2[WL_PATH_MAX], j1[WL_PATH_MAX], j2[WL_PATH_MAX];
	const char *n;
	int at_flags = 0;
	bool have2 = false;

	if (!k || k->path1 < 0)
		return;   /* the network's calls are lj_net's */
	n = k->name;
	if (lj_read_str(c, a[k->path1], p1, sizeof(p1)) < 0) {
		c->unread++;
		return;
	}
	if (!p1[0] || !absolute(dir, p1, j1, sizeof(j1)))
		return;   /* "" with AT_EMPTY_PATH: the dirfd itself, no path */
	if (k->path2 >= 0 && lj_read_str(c, a[k->path2], p2, sizeof(p2)) == 0 && p2[0])
		have2 = absolute(dir2, p2, j2, sizeof(j2));

	if (!strcmp(n, "open"))
		judge_open(c, n, j1, a[1]);
	else if (!strcmp(n, "openat"))
		judge_open(c, n, j1, a[2]);
	else if (!strcmp(n, "creat"))
		judge_open(c, n, j1, O_CREAT | O_WRONLY | O_TRUNC);
	else if (!strcmp(n, "execve") || !strcmp(n, "execveat")) {
		bool follow = !(!strcmp(n, "execveat") && (a[4] & AT_SYMLINK_NOFOLLOW));
		bool was = c->recorded;
		int fd = in_jail(c, j1, follow);

		if (fd >= 0) {
			close(fd);
			exec_seen(c, j1, false);
			return;
		}
		c->recorded = false;
		judge(c, n, WL_EXEC, j1, follow);
		if (c->recorded)
			exec_seen(c, j1, true);
		c->recorded |= was;
	} else if (!strcmp(n, "chdir"))
		judge(c, n, WL_LIST, j1, true);
	else if (!strcmp(n, "truncate"))
		judge(c, n, WL_WRITE, j1, true);
	else if (!strcmp(n, "mkdir") || !strcmp(n, "mkdirat") || !strcmp(n, "rmdir") ||
	         !strcmp(n, "unlink") || !strcmp(n, "unlinkat") || !strcmp(n, "symlink") ||
	         !strcmp(n, "symlinkat"))
		judge_dir(c, n, j1, false);
	else if (!strncmp(n, "rename", 6) || !strncmp(n, "link", 4)) {
		if (!strncmp(n, "rename", 6))
			judge_dir(c, n, j1, false);
		else
			judge(c, n, WL_READ, j1, !strcmp(n, "linkat") && (a[4] & AT_SYMLINK_FOLLOW));
		if (have2)
			judge_dir(c, n, j2, false);
	} else {
		/* stat, lstat, newfstatat, statx, access, faccessat(2), readlink(at) */
		if (!strcmp(n, "newfstatat"))
			at_flags = (int)a[3];
		else if (!strcmp(n, "statx") || !strcmp(n, "faccessat2"))
			at_flags = (int)(!strcmp(n, "statx") ? a[2] : a[3]);
		judge(c, n, WL_PROBE, j1, !(!strcmp(n, "lstat") || !strncmp(n, "readlink", 8) ||
		                            (at_flags & AT_SYMLINK_NOFOLLOW)));
	}
}

void lj_socket_path(struct lctx *c, const char *call, const char *path)
{
	if (path[0] == '/')
		judge(c, call, WL_CONNECT, path, true);
}
