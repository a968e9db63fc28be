/* Steps 3 and 4 of the entry order: the jail's filesystem.
 *
 * We are in a fresh mount namespace owned by the jail's user namespace.
 *   1. make every mount private, so nothing we do propagates to the host;
 *   2. mount a small tmpfs and pivot_root into it, keeping the host's tree
 *      at /oldroot for a moment;
 *   3. build the tree from the plan: read-only binds of system paths, the
 *      workspace, size-limited tmpfs, hidden paths, a generated /etc/passwd,
 *      a minimal /dev and a new /proc with its known leaks masked;
 *   4. detach /oldroot (MNT_DETACH) so no path leads back to the host, and
 *      make the root itself read-only.
 * The host is never modified: every mount lives in the private namespace
 * and disappears with it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <linux/mount.h>
#include <linux/openat2.h>

#include "jail_impl.h"
#include "warden/util.h"

#define OLDROOT "/oldroot"

#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#define MOUNT_ATTR_NOSUID 0x00000002
#define MOUNT_ATTR_NODEV  0x00000004
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif

/* The same structure as the kernel's struct mount_attr (uapi). */
struct wmount_attr { uint64_t attr_set, attr_clr, propagation, userns_fd; };

/* Make a bind read-only (or not) recursively, nosuid and nodev.  mount_setattr
 * applies to every submount at once; without it (kernel < 5.12) fall back to
 * remounting the top mount with the flags it must keep (in a user namespace
 * the kernel refuses to clear locked flags, so read them back first). */
static int seal_bind(const char *path, bool ro, struct werr *err)
{
	struct wmount_attr a = { .attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
	                                     (ro ? MOUNT_ATTR_RDONLY : 0) };
	unsigned long flags = MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV | (ro ? MS_RDONLY : 0);
	struct statvfs sv;

	if (syscall(SYS_mount_setattr, AT_FDCWD, path, AT_RECURSIVE, &a, sizeof(a)) == 0)
		return 0;
	if (errno != ENOSYS)
		return werr_set(err, errno, "making %s %s", path, ro ? "read-only" : "nosuid");
	/* keep the flags the source mount may have locked (noexec, ...) */
	if (statvfs(path, &sv) < 0)
		return werr_set(err, errno, "statvfs %s", path);
	if (sv.f_flag & ST_NOEXEC)
		flags |= MS_NOEXEC;
	if (sv.f_flag & ST_NOATIME)
		flags |= MS_NOATIME;
	if (sv.f_flag & ST_RELATIME)
		flags |= MS_RELATIME;
	if (mount(NULL, path, NULL, flags, NULL) < 0)
		return werr_set(err, errno, "remounting %s", path);
	return 0;
}

/* --- binds and mounts by file descriptor -----------------------------------
 *
 * A path is walked once and never again: sources were resolved by the
 * parent (jail/plan.c) and are held as fds; here each source path is walked
 * under /oldroot without following any symlink and must lead to the very
 * object the parent holds (st_dev/st_ino), else the jail refuses to start.
 * The tree is cloned from that fd (open_tree) and moved onto a target fd
 * (move_mount) that was itself reached without following any link, so a
 * link planted by jailed code (a session sharing the workspace) is never
 * followed on either side. */

enum target_kind { TGT_DIR, TGT_FILE, TGT_HIDE };

/* The jail's root and the last parent directory a target was reached
 * through, both O_PATH fds reached without following any link.  Targets
 * come sorted (jail/plan.c), so siblings (/etc/ssl, /etc/fonts, ...) share
 * a parent: each is reached from it with one openat2 instead of a walk
 * from / with an open, an fstat and a close per component.  A mount placed
 * at or above the cached directory would hide it, so it is forgotten then
 * (placed()).  This process is single-threaded: one cache, set up in
 * jail_mounts and closed before the host is detached. */
static struct {
	int root;                 /* / of the new root, -1 */
	int dir;                  /* the cached parent, -1 */
	char path[PATH_MAX];      /* its path in the jail */
} walk = { -1, -1, "" };

static bool at_or_below(const char *path, const char *base)
{
	size_t n = strlen(base);

	if (!strcmp(base, "/"))
		return true;
	return !strncmp(path, base, n) && (path[n] == '\0' || path[n] == '/');
}

static void retire(int fd);

static void forget_parent(void)
{
	retire(walk.dir);
	walk.dir = -1;
	walk.path[0] = '\0';
}

/* A mount now covers path: a cached parent at or below it names the
 * directory underneath, no longer what the path leads to. */
static void placed(const char *path)
{
	if (walk.dir >= 0 && at_or_below(walk.path, path))
		forget_parent();
}

/* fds done with on the success path: closed together by close_spent, in a
 * few close_range calls (fds come lowest-free first, so they form runs)
 * instead of one close each.  A full list closes at once. */
static struct {
	int fd[96];
	size_t n;
} spent;

static void retire(int fd)
{
	if (fd < 0)
		return;
	if (spent.n < ARRAY_SIZE(spent.fd))
		spent.fd[spent.n++] = fd;
	else
		close(fd);
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static void close_spent(void)
{
	size_t i = 0, j;

	qsort(spent.fd, spent.n, sizeof(spent.fd[0]), cmp_int);
	while (i < spent.n) {
		for (j = i; j + 1 < spent.n && spent.fd[j + 1] == spent.fd[j] + 1; j++)
			;
		syscall(SYS_close_range, (unsigned)spent.fd[i], (unsigned)spent.fd[j], 0);
		i = j + 1;
	}
	spent.n = 0;
}

/* The slow walk: reach path (absolute, in the jail's tree) one component at
 * a time from /, never following a symlink.  TGT_DIR/TGT_FILE create what
 * is missing (the last component as a directory or an empty file) and
 * refuse a symlink on the way; TGT_HIDE creates nothing and returns the
 * first symlink on the way, which is what must be covered.  Returns an
 * O_PATH fd; *parent gets the directory the last component was reached
 * from (an O_PATH fd) when the walk got there, else -1. */
static int walk_target(const char *path, enum target_kind want, int *parent, struct werr *err)
{
	char buf[PATH_MAX];
	char *comp, *next;
	int dir, fd;

	*parent = -1;
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return werr_set(err, ENAMETOOLONG, "%s", path);
	dir = fcntl(walk.root, F_DUPFD_CLOEXEC, 3);
	if (dir < 0)
		return werr_set(err, errno, "opening the jail's root");
	for (comp = buf; *comp == '/'; comp++)
		;
	for (;;) {
		struct stat st;
		bool last;

		next = strchr(comp, '/');
		if (next) {
			*next++ = '\0';
			while (*next == '/')
				next++;
		}
		last = !next || !*next;
		fd = jail_open_nofollow(dir, comp, err);
		if (fd < 0 && errno == ENOENT && want != TGT_HIDE) {
			int r, t = -1;
			if (!last || want == TGT_DIR)
				r = mkdirat(dir, comp, 0755);
			else
				r = (t = openat(dir, comp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
				                O_CLOEXEC, 0644)) < 0 ? -1 : 0;
			if (t >= 0)
				close(t);
			if (r < 0 && errno != EEXIST) {
				werr_set(err, errno, "creating the mount point %s", path);
				close(dir);
				return -1;
			}
			fd = jail_open_nofollow(dir, comp, err);
		}
		if (last && fd >= 0)
			*parent = dir;
		else
			close(dir);
		if (fd < 0)
			return -1;
		if (fstat(fd, &st) < 0) {
			werr_set(err, errno, "stat %s", path);
			close(fd);
			return -1;
		}
		if (S_ISLNK(st.st_mode)) {
			if (want == TGT_HIDE)
				return fd;   /* covered itself, never followed */
			close(fd);
			return werr_set(err, ELOOP, "mounting on %s: '%s' is a symlink; warden does "
			                "not mount through links jailed code can plant", path, comp);
		}
		if (last)
			return fd;
		if (!S_ISDIR(st.st_mode)) {
			close(fd);
			return werr_set(err, ENOTDIR, "mounting on %s: '%s' is not a directory", path, comp);
		}
		dir = fd;
		comp = next;
	}
}

/* Reach a mount target without following any link (the meaning of the
 * walk above), from the cached parent when it is the target's parent, else
 * from / with one openat2(RESOLVE_NO_SYMLINKS) for the whole parent path.
 * Whatever that cannot settle (a missing or linked parent, a link at the
 * end) takes the walk, which creates or refuses as it always did and names
 * the component at fault.  Returns an O_PATH fd. */
static int open_target(const char *path, enum target_kind want, struct werr *err)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC,
	                        .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	const char *last = strrchr(path, '/');
	size_t plen;
	int fd, parent;

	if (!last || !last[1] || (size_t)(last - path) >= sizeof(walk.path))
		goto slow;
	plen = (size_t)(last - path);
	last++;
	if (walk.dir < 0 || strlen(walk.path) != plen || strncmp(walk.path, path, plen)) {
		struct open_how dh = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		                       .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
		char rel[PATH_MAX];

		/* relative to the root fd: "." for /, "etc" for /etc */
		snprintf(rel, sizeof(rel), "%.*s", (int)(plen ? plen - 1 : 1), plen ? path + 1 : ".");
		fd = (int)syscall(SYS_openat2, walk.root, rel, &dh, sizeof(dh));
		if (fd < 0)
			goto slow;   /* missing (to create) or a link: the walk says which */
		forget_parent();
		walk.dir = fd;
		memcpy(walk.path, path, plen);
		walk.path[plen] = '\0';
	}
	if (want == TGT_HIDE) {
		/* a link at the end is returned itself (O_NOFOLLOW), to be covered */
		how.flags |= O_NOFOLLOW;
	} else if (want == TGT_DIR) {
		/* create first: mkdirat never follows a link; EEXIST is checked
		 * by the open below */
		if (mkdirat(walk.dir, last, 0755) < 0 && errno != EEXIST)
			goto slow;
	} else if (mknodat(walk.dir, last, S_IFREG | 0644, 0) < 0 && errno != EEXIST) {
		goto slow;   /* an empty regular file; mknodat never follows a link */
	}
	/* without O_NOFOLLOW a link at the end is ELOOP, as on the way */
	fd = (int)syscall(SYS_openat2, walk.dir, last, &how, sizeof(how));
	if (fd >= 0)
		return fd;
	if (want == TGT_HIDE && (errno == ENOENT || errno == ENOTDIR))
		return werr_set(err, errno, "%s", path);
slow:
	fd = walk_target(path, want, &parent, err);
	if (parent >= 0) {
		size_t n = (size_t)(strrchr(path, '/') - path);

		forget_parent();
		if (n < sizeof(walk.path)) {
			walk.dir = parent;
			memcpy(walk.path, path, n);
			walk.path[n] = '\0';
		} else {
			close(parent);
		}
	}
	return fd;
}

/* Move a detached tree onto target (what: its path).  Consumes nothing. */
static int place_tree(int tree, int target, const char *what, struct werr *err)
{
	if (syscall(SYS_move_mount, tree, "", target, "",
	            MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return werr_set(err, errno, "mounting %s", what);
	placed(what);
	return 0;
}

/* Seal a detached tree (read-only or not, nosuid, nodev, every submount)
 * and move it onto target.  Consumes nothing: the caller closes both. */
static int attach_tree(int tree, int target, bool ro, const char *what, struct werr *err)
{
	struct wmount_attr a = { .attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
	                                     (ro ? MOUNT_ATTR_RDONLY : 0) };

	if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof(a)) < 0)
		return werr_set(err, errno, "making %s %s", what, ro ? "read-only" : "nosuid");
	return place_tree(tree, target, what, err);
}

/* Clone the tree at src (an fd opened in this namespace, of type mode) onto
 * path. */
static int bind_fd(int src, mode_t mode, const char *path, bool ro, struct werr *err)
{
	int tree, target, r;

	tree = (int)syscall(SYS_open_tree, src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
	                    AT_EMPTY_PATH | AT_RECURSIVE);
	if (tree < 0)
		return werr_set(err, errno, "cloning the tree of %s (open_tree needs Linux 5.2)", path);
	target = open_target(path, S_ISDIR(mode) ? TGT_DIR : TGT_FILE, err);
	r = target < 0 ? -1 : attach_tree(tree, target, ro, path, err);
	retire(tree);
	retire(target);
	return r;
}

/* A bind of the plan.  The parent holds m->src_fd; the path under /oldroot
 * must still lead to that object, without any symlink on the way. */
static int bind_from_host(const struct wmount *m, struct werr *err)
{
	char src[PATH_MAX];
	struct stat want, got;
	int fd, target, r;

	if (m->tree_fd >= 0) {   /* prepared by the parent (an idmapped tree) */
		if (fstat(m->tree_fd, &want) < 0)
			return werr_set(err, errno, "stat %s", m->path);
		target = open_target(m->at, S_ISDIR(want.st_mode) ? TGT_DIR : TGT_FILE, err);
		if (target < 0)
			return -1;
		r = attach_tree(m->tree_fd, target, m->kind == WM_BIND_RO, m->at, err);
		retire(target);
		return r;
	}
	if (m->src_fd < 0)
		return 0;   /* optional and missing when the plan was made */
	if (snprintf(src, sizeof(src), OLDROOT "%s", m->src) >= (int)sizeof(src))
		return werr_set(err, ENAMETOOLONG, "%s", m->src);
	if (fstat(m->src_fd, &want) < 0)
		return werr_set(err, errno, "stat %s", m->src);
	fd = jail_open_nofollow(AT_FDCWD, src, err);
	if (fd < 0)
		return werr_set(err, errno, "%s changed since it was opened (%s); refusing to "
		                "bind it", m->src, errno == ELOOP ? "a symlink is in its path now" :
		                "it cannot be reached the same way");
	if (fstat(fd, &got) < 0 || got.st_dev != want.st_dev || got.st_ino != want.st_ino) {
		retire(fd);
		return werr_set(err, 0, "%s changed since it was opened (another file is at "
		                "its path now); refusing to bind it", m->src);
	}
	r = bind_fd(fd, got.st_mode, m->at, m->kind == WM_BIND_RO, err);
	retire(fd);
	return r;
}

/* A new tmpfs (fsopen/fsmount), moved onto target. */
static int tmpfs_at(int target, const char *path, uint64_t size, const char *mode, bool ro,
                    struct werr *err)
{
	char sz[32];
	int fs, mnt, r = -1;

	snprintf(sz, sizeof(sz), "%llu", (unsigned long long)size);
	fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0)
		return werr_set(err, errno, "creating a tmpfs for %s (fsopen needs Linux 5.2)", path);
	if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "size", sz, 0) < 0 ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", mode, 0) < 0 ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		werr_set(err, errno, "configuring a size=%s,mode=%s tmpfs for %s", sz, mode, path);
		retire(fs);
		return -1;
	}
	mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
	                   (ro ? MOUNT_ATTR_RDONLY : 0));
	retire(fs);
	if (mnt < 0)
		return werr_set(err, errno, "mounting a tmpfs for %s", path);
	r = place_tree(mnt, target, path, err);
	retire(mnt);
	return r;
}

static int plan_tmpfs(const struct wmount *m, struct werr *err)
{
	int target = open_target(m->at, TGT_DIR, err);
	int r;

	if (target < 0)
		return -1;
	r = tmpfs_at(target, m->at, m->size, strcmp(m->at, "/tmp") ? "0700" : "1777", false, err);
	retire(target);
	return r;
}

static int mount_tmpfs(const char *path, uint64_t size, const char *mode,
                       unsigned long extra, struct werr *err)
{
	char opts[96];

	snprintf(opts, sizeof(opts), "size=%llu,mode=%s", (unsigned long long)size, mode);
	if (mkdir_p(path, 0755, err) < 0)
		return -1;
	if (mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV | extra, opts) < 0)
		return werr_set(err, errno, "mounting a %s tmpfs on %s", opts, path);
	placed(path);
	return 0;
}

/* The first /proc mask of each kind (build_proc), sealed: later masks and
 * hides are copies of it.  A bind copies the source mount's flags (ro,
 * nosuid, nodev, noexec), so a copy needs no sealing of its own, and the
 * masks of directories share one empty read-only tmpfs instead of one
 * superblock each.  Paths in the jail's own /proc, which no jailed code can
 * rearrange; "" while there is none. */
static char mask_file[64], mask_dir[64];

/* A copy of a sealed mask (mask_file or mask_dir) onto target. */
static int copy_mask(const char *mask, int target, const char *path, struct werr *err)
{
	int tree = (int)syscall(SYS_open_tree, AT_FDCWD, mask, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
	                        AT_SYMLINK_NOFOLLOW);
	int r;

	if (tree < 0)
		return werr_set(err, errno, "hiding %s (a copy of %s)", path, mask);
	r = place_tree(tree, target, path, err);
	retire(tree);
	return r;
}

/* Hide a path: /dev/null (read-only) over a file, an empty read-only tmpfs
 * over a directory.  The path is reached without following links; a
 * symlink on the way (planted in a shared workspace) is itself covered with
 * /dev/null, so it neither leads anywhere nor breaks the jail.  Missing
 * paths need no hiding. */
static int hide_path(const char *path, struct werr *err)
{
	struct stat st;
	int target = open_target(path, TGT_HIDE, err);
	int r, tree;

	if (target < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			return werr_wrap(err, "hiding %s", path);
		werr_clear(err);
		return 0;
	}
	if (fstat(target, &st) < 0) {
		retire(target);
		return werr_set(err, errno, "hiding %s", path);
	}
	if (S_ISDIR(st.st_mode) || mask_file[0]) {
		if (!S_ISDIR(st.st_mode))
			r = copy_mask(mask_file, target, path, err);
		else if (mask_dir[0])
			r = copy_mask(mask_dir, target, path, err);
		else
			r = tmpfs_at(target, path, 4096, "0555", true, err);
		retire(target);
		return r;
	}
	tree = (int)syscall(SYS_open_tree, AT_FDCWD, "/dev/null", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (tree < 0) {
		retire(target);
		return werr_set(err, errno, "hiding %s", path);
	}
	r = attach_tree(tree, target, true, path, err);
	retire(tree);
	retire(target);
	return r;
}

/* --- protected paths (jail/protect.c) ------------------------------------ */

/* A path of the jail's own tree (inside the workspace, already bound)
 * bound onto itself: read-only (WM_PROTECT), or read-write (WM_PIN: a
 * mount point cannot be renamed or removed).  Cloned from the jail's tree,
 * so as root it keeps the workspace's idmapping.  A path gone since the
 * plan needs nothing; one that became a symlink meanwhile (another
 * session's jail) is covered instead, never followed. */
static int cover_path(const char *path, struct werr *err);

static int self_bind(const char *path, bool ro, struct werr *err)
{
	struct stat st;
	int target = open_target(path, TGT_HIDE, err), tree, r;

	if (target < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			return werr_wrap(err, "protecting %s", path);
		werr_clear(err);
		return 0;
	}
	if (fstat(target, &st) < 0) {
		retire(target);
		return werr_set(err, errno, "protecting %s", path);
	}
	if (S_ISLNK(st.st_mode) || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
		retire(target);
		return cover_path(path, err);
	}
	tree = (int)syscall(SYS_open_tree, target, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
	                    AT_EMPTY_PATH | AT_RECURSIVE);
	if (tree < 0) {
		retire(target);
		return werr_set(err, errno, "protecting %s", path);
	}
	r = attach_tree(tree, target, ro, path, err);
	retire(tree);
	retire(target);
	return r;
}

/* An empty regular file in the jail's root tmpfs, the source of every file
 * cover: a bind of it sealed read-only, so a write gets EROFS (a /dev/null
 * would swallow it and let a program think it was kept).  It stays: an
 * unlinked file still bound elsewhere would keep the root from being
 * remounted read-only (EBUSY). */
#define EMPTY_FILE "/.warden-empty"
static bool empty_made;

/* An empty read-only file or directory over path (a placeholder, or a
 * symlink or special file at a protected path), reached like a hide. */
static int cover_path(const char *path, struct werr *err)
{
	struct stat st;
	int target = open_target(path, TGT_HIDE, err), tree, r;

	if (target < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			return werr_wrap(err, "covering %s", path);
		werr_clear(err);
		return 0;
	}
	if (fstat(target, &st) < 0) {
		retire(target);
		return werr_set(err, errno, "covering %s", path);
	}
	if (S_ISDIR(st.st_mode)) {
		r = mask_dir[0] ? copy_mask(mask_dir, target, path, err)
		                : tmpfs_at(target, path, 4096, "0555", true, err);
		retire(target);
		return r;
	}
	if (!empty_made) {
		if (mknod(EMPTY_FILE, S_IFREG | 0444, 0) < 0) {
			retire(target);
			return werr_set(err, errno, "creating " EMPTY_FILE);
		}
		empty_made = true;
	}
	tree = (int)syscall(SYS_open_tree, AT_FDCWD, EMPTY_FILE, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (tree < 0) {
		retire(target);
		return werr_set(err, errno, "covering %s", path);
	}
	r = attach_tree(tree, target, true, path, err);
	retire(tree);
	retire(target);
	return r;
}

/* A read-only bind relocated out from under a tmpfs (jail/plan.c,
 * plan_relocate): a symlink at its own path, in that tmpfs, leads to where
 * it is mounted; the directories on the way are created there. */
static int link_relocated(const struct wmount *m, struct werr *err)
{
	const char *base = strrchr(m->path, '/');
	char parent[PATH_MAX];
	int dir, r = 0;

	if (!base || base == m->path || (size_t)(base - m->path) >= sizeof(parent))
		return werr_set(err, EINVAL, "relocating %s", m->path);
	snprintf(parent, sizeof(parent), "%.*s", (int)(base - m->path), m->path);
	dir = open_target(parent, TGT_DIR, err);
	if (dir < 0)
		return werr_wrap(err, "linking %s", m->path);
	if (symlinkat(m->at, dir, base + 1) < 0)
		r = werr_set(err, errno, "linking %s to %s", m->path, m->at);
	retire(dir);
	return r;
}

/* Top-level entries that are symlinks on merged-/usr systems (/bin -> usr/bin).
 * Recreate them as they are on the host; on a split-/usr system bind them. */
static int link_toplevel(struct werr *err)
{
	static const char *const names[] = { "bin", "sbin", "lib", "lib32", "lib64", "libx32" };
	char src[64], dst[64], target[256];
	struct stat st;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		/* readlink first: a link (the usual case) costs no lstat */
		ssize_t n;

		snprintf(src, sizeof(src), OLDROOT "/%s", names[i]);
		snprintf(dst, sizeof(dst), "/%s", names[i]);
		n = readlink(src, target, sizeof(target) - 1);
		if (n >= 0) {
			target[n] = '\0';
			if (symlink(target, dst) < 0 && errno != EEXIST)
				return werr_set(err, errno, "creating link %s", dst);
			continue;
		}
		if (errno != EINVAL)   /* EINVAL: there, but not a link */
			continue;
		if (lstat(src, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			int fd = jail_open_nofollow(AT_FDCWD, src, err);
			int r = fd < 0 ? -1 : bind_fd(fd, st.st_mode, dst, true, err);
			if (fd >= 0)
				close(fd);
			if (r < 0)
				return -1;
		}
	}
	return 0;
}

static int write_new_file(const char *path, const char *text, struct werr *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	if (fd < 0)
		return werr_set(err, errno, "creating %s", path);
	if (write_all(fd, text, strlen(text)) < 0) {
		close(fd);
		return werr_set(err, errno, "writing %s", path);
	}
	close(fd);
	return 0;
}

/* A generated /etc/passwd and /etc/group that name only the jail's user, so
 * the host's account list does not leak and tools that look up the current
 * user (python's getpass, ssh, git) still work. */
static int write_identity(const struct jail_spec *spec, const struct wplan *plan,
                          struct werr *err)
{
	char buf[1024];

	if (mkdir_p("/etc", 0755, err) < 0)
		return -1;
	if (plan->uid == 0)
		snprintf(buf, sizeof(buf), "root:x:0:0:root:%s:/bin/sh\n"
		         "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n", spec->home);
	else
		snprintf(buf, sizeof(buf), "root:x:0:0:root:/root:/usr/sbin/nologin\n"
		         "user:x:%u:%u:warden jail:%s:/bin/sh\n"
		         "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
		         plan->uid, plan->gid, spec->home);
	if (write_new_file("/etc/passwd", buf, err) < 0)
		return -1;
	if (plan->gid == 0)
		snprintf(buf, sizeof(buf), "root:x:0:\nnogroup:x:65534:\n");
	else
		snprintf(buf, sizeof(buf), "root:x:0:\nuser:x:%u:\nnogroup:x:65534:\n", plan->gid);
	if (write_new_file("/etc/group", buf, err) < 0)
		return -1;
	snprintf(buf, sizeof(buf), "%s\n", spec->hostname ? spec->hostname : "warden");
	if (write_new_file("/etc/hostname", buf, err) < 0)
		return -1;
	return write_new_file("/etc/hosts", "127.0.0.1\tlocalhost\n::1\tlocalhost\n", err);
}

/* The device nodes need dev and nothing else: one recursive mount_setattr
 * makes /dev and everything on it (the nodes' binds, /dev/shm) nosuid and
 * noexec, adding flags only, so none the kernel locked is cleared (SECURITY.md
 * G180).  Without mount_setattr (kernel < 5.12), each node is remounted,
 * keeping the atime flag the kernel may have locked. */
static int seal_dev(const char *const *nodes, size_t n, struct werr *err)
{
	struct wmount_attr a = { .attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC };
	char dst[64];
	struct statvfs sv;

	if (syscall(SYS_mount_setattr, AT_FDCWD, "/dev", AT_RECURSIVE, &a, sizeof(a)) == 0)
		return 0;
	if (errno != ENOSYS)
		return werr_set(err, errno, "making /dev and its nodes nosuid and noexec");
	for (size_t i = 0; i < n; i++) {
		unsigned long flags = MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NOEXEC;

		snprintf(dst, sizeof(dst), "/dev/%s", nodes[i]);
		if (statvfs(dst, &sv) < 0)
			return werr_set(err, errno, "statvfs %s", dst);
		flags |= (sv.f_flag & ST_NOATIME) ? MS_NOATIME : 0;
		flags |= (sv.f_flag & ST_RELATIME) ? MS_RELATIME : 0;
		if (mount(NULL, dst, NULL, flags, NULL) < 0)
			return werr_set(err, errno, "making %s nosuid and noexec", dst);
	}
	return 0;
}

/* A minimal /dev: the five harmless character devices bound from the host
 * (mknod is impossible in a user namespace), the usual links, a private
 * /dev/shm, and nothing else: no terminal, no disks. */
static int build_dev(struct werr *err)
{
	static const char *const nodes[] = { "null", "zero", "full", "random", "urandom" };
	static const char *const links[][2] = {
		{ "/proc/self/fd", "/dev/fd" },     { "/proc/self/fd/0", "/dev/stdin" },
		{ "/proc/self/fd/1", "/dev/stdout" }, { "/proc/self/fd/2", "/dev/stderr" },
	};
	char src[64], dst[64];
	size_t i;

	if (mount_tmpfs("/dev", 64 * 1024, "0755", 0, err) < 0)
		return -1;
	for (i = 0; i < ARRAY_SIZE(nodes); i++) {
		snprintf(src, sizeof(src), OLDROOT "/dev/%s", nodes[i]);
		snprintf(dst, sizeof(dst), "/dev/%s", nodes[i]);
		/* an empty regular file to bind onto, in our fresh tmpfs (mknod of
		 * a regular file needs no privilege, and no open/close) */
		if (mknod(dst, S_IFREG | 0644, 0) < 0)
			return werr_set(err, errno, "creating the mount point %s", dst);
		if (mount(src, dst, NULL, MS_BIND, NULL) < 0)
			return werr_set(err, errno, "binding %s", dst);
	}
	for (i = 0; i < ARRAY_SIZE(links); i++)
		if (symlink(links[i][0], links[i][1]) < 0)
			return werr_set(err, errno, "creating %s", links[i][1]);
	if (mount_tmpfs("/dev/shm", 64ULL << 20, "1777", MS_NOEXEC, err) < 0)
		return -1;
	if (mount(NULL, "/dev", NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, "size=65536,mode=0755") < 0)
		return werr_set(err, errno, "making /dev read-only");
	return seal_dev(nodes, ARRAY_SIZE(nodes), err);
}

/* A new /proc for the jail's pid namespace: it shows only the jail's
 * processes.  System-wide files that leak kernel state (addresses, timers,
 * keys) are masked the way container runtimes do, and the writable kernel
 * knobs are made read-only. */
static int build_proc(struct werr *err)
{
	static const char *const mask_files[] = {
		"/proc/kcore", "/proc/keys", "/proc/key-users", "/proc/timer_list",
		"/proc/timer_stats", "/proc/sched_debug", "/proc/latency_stats",
		"/proc/kallsyms", "/proc/kpagecount", "/proc/kpageflags",
		"/proc/kpagecgroup", "/proc/sysrq-trigger", "/proc/config.gz",
		"/proc/vmallocinfo", "/proc/slabinfo", "/proc/pagetypeinfo",
		"/proc/zoneinfo", "/proc/buddyinfo", "/proc/iomem", "/proc/ioports",
		"/proc/modules", "/proc/lockdep", "/proc/lockdep_stats",
		/* the host's boot line (and what its init was given), and an id
		 * that names this boot of the host across jails */
		"/proc/cmdline", "/proc/sys/kernel/random/boot_id",
	};
	static const char *const mask_dirs[] = {
		"/proc/acpi", "/proc/scsi", "/proc/asound", "/proc/driver", "/proc/tty",
		"/proc/pressure",   /* the host's load (PSI), a side channel on its activity */
	};
	static const char *const ro_dirs[] = {
		"/proc/sys", "/proc/irq", "/proc/bus", "/proc/fs",
	};
	size_t i;

	if (mkdir("/proc", 0555) < 0)
		return werr_set(err, errno, "creating /proc");
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=invisible") < 0 &&
	    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return werr_set(err, errno, "mounting /proc (a host /proc with masked parts "
		                "prevents it in a user namespace)");
	/* The knobs first, so that a mask below them (boot_id) is made once, on
	 * top of the read-only copy, not under it and again in the copy.  A
	 * path this kernel lacks fails with ENOENT: nothing to do there. */
	for (i = 0; i < ARRAY_SIZE(ro_dirs); i++) {
		if (mount(ro_dirs[i], ro_dirs[i], NULL, MS_BIND | MS_REC, NULL) < 0) {
			if (errno == ENOENT)
				continue;
			return werr_set(err, errno, "binding %s", ro_dirs[i]);
		}
		if (seal_bind(ro_dirs[i], true, err) < 0)
			return -1;
	}
	/* The first mask of each kind is made and sealed; every other one is a
	 * bind of it, which copies its flags (see mask_file). */
	mask_file[0] = mask_dir[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(mask_files); i++) {
		const char *m = mask_files[i];

		if (mount(mask_file[0] ? mask_file : "/dev/null", m, NULL, MS_BIND, NULL) < 0) {
			if (errno == ENOENT)
				continue;
			return werr_set(err, errno, "masking %s", m);
		}
		if (!mask_file[0]) {
			if (seal_bind(m, true, err) < 0)
				return -1;
			snprintf(mask_file, sizeof(mask_file), "%s", m);
		}
	}
	for (i = 0; i < ARRAY_SIZE(mask_dirs); i++) {
		const char *m = mask_dirs[i];
		int r = mask_dir[0] ? mount(mask_dir, m, NULL, MS_BIND, NULL)
		                    : mount("tmpfs", m, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV |
		                            MS_NOEXEC, "size=0,mode=0555");
		if (r < 0) {
			if (errno == ENOENT)
				continue;
			return werr_set(err, errno, "masking %s", m);
		}
		if (!mask_dir[0])
			snprintf(mask_dir, sizeof(mask_dir), "%s", m);
	}
	return 0;
}

int jail_mounts(const struct jail_spec *spec, const struct wplan *plan, struct werr *err)
{
	size_t i;

	/* 1. Nothing below propagates back to the host. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return werr_set(err, errno, "making mounts private");

	/* 2. A fresh root.  It is mounted on /tmp only as a place to stand:
	 * after pivot_root the tmpfs is the root and the host's /tmp is
	 * visible again under /oldroot/tmp for binds. */
	if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755") < 0)
		return werr_set(err, errno, "mounting the jail's root tmpfs");
	if (chdir("/tmp") < 0 || mkdir("oldroot", 0700) < 0)
		return werr_set(err, errno, "preparing the jail's root");
	if (syscall(SYS_pivot_root, ".", "oldroot") < 0)
		return werr_set(err, errno, "pivot_root");
	if (chdir("/") < 0)
		return werr_set(err, errno, "chdir /");
	walk.root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (walk.root < 0)
		return werr_set(err, errno, "opening the jail's root");

	/* 3. The tree. */
	if (write_identity(spec, plan, err) < 0 || link_toplevel(err) < 0)
		return -1;
	for (i = 0; i < plan->n; i++) {
		const struct wmount *m = &plan->m[i];
		int r = 0;

		switch (m->kind) {
		case WM_BIND_RO:
		case WM_BIND_RW:
			r = bind_from_host(m, err);
			break;
		case WM_TMPFS:
			r = plan_tmpfs(m, err);
			break;
		case WM_PIN:
		case WM_PROTECT:
			r = self_bind(m->at, m->kind == WM_PROTECT, err);
			break;
		case WM_HIDE:
		case WM_COVER:
			continue; /* after /dev and /proc exist: hides use /dev/null, covers the masks */
		}
		if (r < 0)
			return -1;
	}
	if (build_dev(err) < 0 || build_proc(err) < 0)
		return -1;
	for (i = 0; i < plan->n; i++)
		if ((plan->m[i].kind == WM_HIDE && hide_path(plan->m[i].at, err) < 0) ||
		    (plan->m[i].kind == WM_COVER && cover_path(plan->m[i].at, err) < 0))
			return -1;
	for (i = 0; i < plan->n; i++)
		if (plan->m[i].link && link_relocated(&plan->m[i], err) < 0)
			return -1;

	/* 4. Cut the way back to the host, then freeze the root itself.  Every
	 * fd the steps above held (host objects among them) is closed first. */
	forget_parent();
	retire(walk.root);
	walk.root = -1;
	close_spent();
	if (umount2(OLDROOT, MNT_DETACH) < 0)
		return werr_set(err, errno, "detaching the host's root");
	if (rmdir(OLDROOT) < 0)
		return werr_set(err, errno, "removing " OLDROOT);
	if (mount(NULL, "/", NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, "size=1m,mode=0755") < 0)
		return werr_set(err, errno, "making the jail's root read-only");
	if (chdir(spec->workspace) < 0)
		return werr_set(err, errno, "entering the workspace %s", spec->workspace);
	return 0;
}
