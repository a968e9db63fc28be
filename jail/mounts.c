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
#include "mounts_int.h"
#include "warden/util.h"

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
		target = jm_open_target(m->at, S_ISDIR(want.st_mode) ? TGT_DIR : TGT_FILE, err);
		if (target < 0)
			return -1;
		r = jm_attach_tree(m->tree_fd, target, m->kind == WM_BIND_RO, m->at, err);
		jm_retire(target);
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
		jm_retire(fd);
		return werr_set(err, 0, "%s changed since it was opened (another file is at "
		                "its path now); refusing to bind it", m->src);
	}
	r = jm_bind_fd(fd, got.st_mode, m->at, m->kind == WM_BIND_RO, err);
	jm_retire(fd);
	return r;
}

static int plan_tmpfs(const struct wmount *m, struct werr *err)
{
	int target = jm_open_target(m->at, TGT_DIR, err);
	int r;

	if (target < 0)
		return -1;
	r = jm_tmpfs_at(target, m->at, m->size, strcmp(m->at, "/tmp") ? "0700" : "1777", false, err);
	jm_retire(target);
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
	int target = jm_open_target(path, TGT_HIDE, err);
	int r, tree;

	if (target < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			return werr_wrap(err, "hiding %s", path);
		werr_clear(err);
		return 0;
	}
	if (fstat(target, &st) < 0) {
		jm_retire(target);
		return werr_set(err, errno, "hiding %s", path);
	}
	if (S_ISDIR(st.st_mode) || jm_mask_file[0]) {
		if (!S_ISDIR(st.st_mode))
			r = jm_copy_mask(jm_mask_file, target, path, err);
		else if (jm_mask_dir[0])
			r = jm_copy_mask(jm_mask_dir, target, path, err);
		else
			r = jm_tmpfs_at(target, path, 4096, "0555", true, err);
		jm_retire(target);
		return r;
	}
	tree = (int)syscall(SYS_open_tree, AT_FDCWD, "/dev/null", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (tree < 0) {
		jm_retire(target);
		return werr_set(err, errno, "hiding %s", path);
	}
	r = jm_attach_tree(tree, target, true, path, err);
	jm_retire(tree);
	jm_retire(target);
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
	int target = jm_open_target(path, TGT_HIDE, err), tree, r;

	if (target < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			return werr_wrap(err, "protecting %s", path);
		werr_clear(err);
		return 0;
	}
	if (fstat(target, &st) < 0) {
		jm_retire(target);
		return werr_set(err, errno, "protecting %s", path);
	}
	if (S_ISLNK(st.st_mode) || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
		jm_retire(target);
		return cover_path(path, err);
	}
	tree = (int)syscall(SYS_open_tree, target, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
	                    AT_EMPTY_PATH | AT_RECURSIVE);
	if (tree < 0) {
		jm_retire(target);
		return werr_set(err, errno, "protecting %s", path);
	}
	r = jm_attach_tree(tree, target, ro, path, err);
	jm_retire(tree);
	jm_retire(target);
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
	int target = jm_open_target(path, TGT_HIDE, err), tree, r;

	if (target < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			return werr_wrap(err, "covering %s", path);
		werr_clear(err);
		return 0;
	}
	if (fstat(target, &st) < 0) {
		jm_retire(target);
		return werr_set(err, errno, "covering %s", path);
	}
	if (S_ISDIR(st.st_mode)) {
		r = jm_mask_dir[0] ? jm_copy_mask(jm_mask_dir, target, path, err)
		                : jm_tmpfs_at(target, path, 4096, "0555", true, err);
		jm_retire(target);
		return r;
	}
	if (!empty_made) {
		if (mknod(EMPTY_FILE, S_IFREG | 0444, 0) < 0) {
			jm_retire(target);
			return werr_set(err, errno, "creating " EMPTY_FILE);
		}
		empty_made = true;
	}
	tree = (int)syscall(SYS_open_tree, AT_FDCWD, EMPTY_FILE, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (tree < 0) {
		jm_retire(target);
		return werr_set(err, errno, "covering %s", path);
	}
	r = jm_attach_tree(tree, target, true, path, err);
	jm_retire(tree);
	jm_retire(target);
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
	dir = jm_open_target(parent, TGT_DIR, err);
	if (dir < 0)
		return werr_wrap(err, "linking %s", m->path);
	if (symlinkat(m->at, dir, base + 1) < 0)
		r = werr_set(err, errno, "linking %s to %s", m->path, m->at);
	jm_retire(dir);
	return r;
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
	if (jm_walk_begin(err) < 0)
		return -1;

	/* 3. The tree. */
	if (jm_write_identity(spec, plan, err) < 0 || jm_link_toplevel(err) < 0)
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
	if (jm_build_dev(err) < 0 || jm_build_proc(err) < 0)
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
	jm_walk_end();
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
