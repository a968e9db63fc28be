/* Reaching mount targets in the jail's new root without following any
 * link, and placing detached trees on them (jail/mounts_int.h): the
 * lowest layer of the root's construction, under jail/mounts.c (the plan's
 * mounts) and jail/mounts_sys.c (/dev, /proc, /etc). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/mount.h>
#include <linux/openat2.h>

#include "mounts_int.h"
#include "warden/util.h"

/* Make a bind read-only (or not) recursively, nosuid and nodev.  mount_setattr
 * applies to every submount at once; without it (kernel < 5.12) fall back to
 * remounting the top mount with the flags it must keep (in a user namespace
 * the kernel refuses to clear locked flags, so read them back first). */
int jm_seal_bind(const char *path, bool ro, struct werr *err)
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


/* The jail's root and the last parent directory a target was reached
 * through, both O_PATH fds reached without following any link.  Targets
 * come sorted (jail/plan.c), so siblings (/etc/ssl, /etc/fonts, ...) share
 * a parent: each is reached from it with one openat2 instead of a walk
 * from / with an open, an fstat and a close per component.  A mount placed
 * at or above the cached directory would hide it, so it is forgotten then
 * (jm_placed()).  This process is single-threaded: one cache, opened by
 * jm_walk_begin and closed by jm_walk_end before the host is detached. */
static struct {
	int root;                 /* / of the new root, -1 */
	int dir;                  /* the cached parent, -1 */
	char path[PATH_MAX];      /* its path in the jail */
} walk = { -1, -1, "" };

bool jm_at_or_below(const char *path, const char *base)
{
	size_t n = strlen(base);

	if (!strcmp(base, "/"))
		return true;
	return !strncmp(path, base, n) && (path[n] == '\0' || path[n] == '/');
}


void jm_forget_parent(void)
{
	jm_retire(walk.dir);
	walk.dir = -1;
	walk.path[0] = '\0';
}

/* A mount now covers path: a cached parent at or below it names the
 * directory underneath, no longer what the path leads to. */
void jm_placed(const char *path)
{
	if (walk.dir >= 0 && jm_at_or_below(walk.path, path))
		jm_forget_parent();
}

/* fds done with on the success path: closed together by jm_close_spent, in a
 * few close_range calls (fds come lowest-free first, so they form runs)
 * instead of one close each.  A full list closes at once. */
static struct {
	int fd[96];
	size_t n;
} spent;

void jm_retire(int fd)
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

void jm_close_spent(void)
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

/* The slow jm_walk: reach path (absolute, in the jail's tree) one component at
 * a time from /, never following a symlink.  TGT_DIR/TGT_FILE create what
 * is missing (the last component as a directory or an empty file) and
 * refuse a symlink on the way; TGT_HIDE creates nothing and returns the
 * first symlink on the way, which is what must be covered.  Returns an
 * O_PATH fd; *parent gets the directory the last component was reached
 * from (an O_PATH fd) when the jm_walk got there, else -1. */
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
 * jm_walk above), from the cached parent when it is the target's parent, else
 * from / with one openat2(RESOLVE_NO_SYMLINKS) for the whole parent path.
 * Whatever that cannot settle (a missing or linked parent, a link at the
 * end) takes the jm_walk, which creates or refuses as it always did and names
 * the component at fault.  Returns an O_PATH fd. */
int jm_open_target(const char *path, enum target_kind want, struct werr *err)
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
			goto slow;   /* missing (to create) or a link: the jm_walk says which */
		jm_forget_parent();
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

		jm_forget_parent();
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
int jm_place_tree(int tree, int target, const char *what, struct werr *err)
{
	if (syscall(SYS_move_mount, tree, "", target, "",
	            MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return werr_set(err, errno, "mounting %s", what);
	jm_placed(what);
	return 0;
}

/* Seal a detached tree (read-only or not, nosuid, nodev, every submount)
 * and move it onto target.  Consumes nothing: the caller closes both. */
int jm_attach_tree(int tree, int target, bool ro, const char *what, struct werr *err)
{
	struct wmount_attr a = { .attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
	                                     (ro ? MOUNT_ATTR_RDONLY : 0) };

	if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof(a)) < 0)
		return werr_set(err, errno, "making %s %s", what, ro ? "read-only" : "nosuid");
	return jm_place_tree(tree, target, what, err);
}

/* Clone the tree at src (an fd opened in this namespace, of type mode) onto
 * path. */
int jm_bind_fd(int src, mode_t mode, const char *path, bool ro, struct werr *err)
{
	int tree, target, r;

	tree = (int)syscall(SYS_open_tree, src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
	                    AT_EMPTY_PATH | AT_RECURSIVE);
	if (tree < 0)
		return werr_set(err, errno, "cloning the tree of %s (open_tree needs Linux 5.2)", path);
	target = jm_open_target(path, S_ISDIR(mode) ? TGT_DIR : TGT_FILE, err);
	r = target < 0 ? -1 : jm_attach_tree(tree, target, ro, path, err);
	jm_retire(tree);
	jm_retire(target);
	return r;
}

/* A new tmpfs (fsopen/fsmount), moved onto target. */
int jm_tmpfs_at(int target, const char *path, uint64_t size, const char *mode, bool ro,
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
		jm_retire(fs);
		return -1;
	}
	mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
	                   (ro ? MOUNT_ATTR_RDONLY : 0));
	jm_retire(fs);
	if (mnt < 0)
		return werr_set(err, errno, "mounting a tmpfs for %s", path);
	r = jm_place_tree(mnt, target, path, err);
	jm_retire(mnt);
	return r;
}

int jm_mount_tmpfs(const char *path, uint64_t size, const char *mode,
                       unsigned long extra, struct werr *err)
{
	char opts[96];

	snprintf(opts, sizeof(opts), "size=%llu,mode=%s", (unsigned long long)size, mode);
	if (mkdir_p(path, 0755, err) < 0)
		return -1;
	if (mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV | extra, opts) < 0)
		return werr_set(err, errno, "mounting a %s tmpfs on %s", opts, path);
	jm_placed(path);
	return 0;
}

/* A copy of a sealed mask (jm_mask_file or jm_mask_dir) onto target. */
int jm_copy_mask(const char *mask, int target, const char *path, struct werr *err)
{
	int tree = (int)syscall(SYS_open_tree, AT_FDCWD, mask, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
	                        AT_SYMLINK_NOFOLLOW);
	int r;

	if (tree < 0)
		return werr_set(err, errno, "hiding %s (a copy of %s)", path, mask);
	r = jm_place_tree(tree, target, path, err);
	jm_retire(tree);
	return r;
}

int jm_walk_begin(struct werr *err)
{
	walk.root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (walk.root < 0)
		return werr_set(err, errno, "opening the jail's root");
	return 0;
}

void jm_walk_end(void)
{
	jm_forget_parent();
	jm_retire(walk.root);
	walk.root = -1;
	jm_close_spent();
}
