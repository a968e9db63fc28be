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
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <linux/mount.h>

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
#ifndef SYS_move_mount
#define SYS_move_mount 429
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
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

/* Create an empty mount point of the same type (file or directory) as src. */
static int make_mountpoint(const char *path, bool dir, struct werr *err)
{
	char parent[4096];
	char *slash;
	int fd;

	if (snprintf(parent, sizeof(parent), "%s", path) >= (int)sizeof(parent))
		return werr_set(err, ENAMETOOLONG, "%s", path);
	slash = strrchr(parent, '/');
	if (slash && slash != parent) {
		*slash = '\0';
		if (mkdir_p(parent, 0755, err) < 0)
			return -1;
	}
	if (dir)
		return (mkdir(path, 0755) < 0 && errno != EEXIST)
		       ? werr_set(err, errno, "creating %s", path) : 0;
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0 && errno != EEXIST)
		return werr_set(err, errno, "creating %s", path);
	if (fd >= 0)
		close(fd);
	return 0;
}

static int bind_from_host(const char *path, bool ro, bool optional, struct werr *err)
{
	char src[4096];
	struct stat st;

	if (snprintf(src, sizeof(src), OLDROOT "%s", path) >= (int)sizeof(src))
		return werr_set(err, ENAMETOOLONG, "%s", path);
	if (stat(src, &st) < 0) {
		if (optional && (errno == ENOENT || errno == ENOTDIR))
			return 0;
		return werr_set(err, errno, "the policy binds %s, but it cannot be used", path);
	}
	if (make_mountpoint(path, S_ISDIR(st.st_mode), err) < 0)
		return -1;
	if (mount(src, path, NULL, MS_BIND | MS_REC, NULL) < 0)
		return werr_set(err, errno, "binding %s", path);
	return seal_bind(path, ro, err);
}

/* A tree the parent prepared (an idmapped copy of a writable bind, see
 * jail/idmap.c): move it into place, then seal it like any bind. */
static int attach_tree(const char *path, int tree_fd, bool ro, struct werr *err)
{
	struct stat st;

	if (fstat(tree_fd, &st) < 0)
		return werr_set(err, errno, "the prepared mount of %s", path);
	if (make_mountpoint(path, S_ISDIR(st.st_mode), err) < 0)
		return -1;
	if (syscall(SYS_move_mount, tree_fd, "", AT_FDCWD, path, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return werr_set(err, errno, "mounting %s (move_mount)", path);
	return seal_bind(path, ro, err);
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
	return 0;
}

/* Hide a path: /dev/null (read-only) over a file, an empty read-only tmpfs
 * over a directory.  Missing paths need no hiding. */
static int hide_path(const char *path, struct werr *err)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return (errno == ENOENT || errno == ENOTDIR) ? 0 : werr_set(err, errno, "hiding %s", path);
	if (S_ISDIR(st.st_mode))
		return mount_tmpfs(path, 4096, "0555", MS_RDONLY, err);
	if (mount("/dev/null", path, NULL, MS_BIND, NULL) < 0)
		return werr_set(err, errno, "hiding %s", path);
	return seal_bind(path, true, err);
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
		snprintf(src, sizeof(src), OLDROOT "/%s", names[i]);
		snprintf(dst, sizeof(dst), "/%s", names[i]);
		if (lstat(src, &st) < 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			ssize_t n = readlink(src, target, sizeof(target) - 1);
			if (n < 0)
				return werr_set(err, errno, "reading link %s", dst);
			target[n] = '\0';
			if (symlink(target, dst) < 0 && errno != EEXIST)
				return werr_set(err, errno, "creating link %s", dst);
		} else if (S_ISDIR(st.st_mode)) {
			if (bind_from_host(dst, true, true, err) < 0)
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
		if (make_mountpoint(dst, false, err) < 0)
			return -1;
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
	return 0;
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
	};
	static const char *const mask_dirs[] = {
		"/proc/acpi", "/proc/scsi", "/proc/asound", "/proc/driver", "/proc/tty",
	};
	static const char *const ro_dirs[] = {
		"/proc/sys", "/proc/irq", "/proc/bus", "/proc/fs",
	};
	struct stat st;
	size_t i;

	if (mkdir_p("/proc", 0555, err) < 0)
		return -1;
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=invisible") < 0 &&
	    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return werr_set(err, errno, "mounting /proc (a host /proc with masked parts "
		                "prevents it in a user namespace)");
	for (i = 0; i < ARRAY_SIZE(mask_files); i++) {
		if (stat(mask_files[i], &st) < 0)
			continue;
		if (mount("/dev/null", mask_files[i], NULL, MS_BIND, NULL) < 0)
			return werr_set(err, errno, "masking %s", mask_files[i]);
		if (seal_bind(mask_files[i], true, err) < 0)
			return -1;
	}
	for (i = 0; i < ARRAY_SIZE(mask_dirs); i++) {
		if (stat(mask_dirs[i], &st) < 0)
			continue;
		if (mount("tmpfs", mask_dirs[i], "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
		          "size=0,mode=0555") < 0)
			return werr_set(err, errno, "masking %s", mask_dirs[i]);
	}
	for (i = 0; i < ARRAY_SIZE(ro_dirs); i++) {
		if (stat(ro_dirs[i], &st) < 0)
			continue;
		if (mount(ro_dirs[i], ro_dirs[i], NULL, MS_BIND | MS_REC, NULL) < 0)
			return werr_set(err, errno, "binding %s", ro_dirs[i]);
		if (seal_bind(ro_dirs[i], true, err) < 0)
			return -1;
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

	/* 3. The tree. */
	if (write_identity(spec, plan, err) < 0 || link_toplevel(err) < 0)
		return -1;
	for (i = 0; i < plan->n; i++) {
		const struct wmount *m = &plan->m[i];
		int r = 0;

		switch (m->kind) {
		case WM_BIND_RO:
		case WM_BIND_RW:
			r = m->tree_fd >= 0 ? attach_tree(m->path, m->tree_fd, m->kind == WM_BIND_RO, err)
			                    : bind_from_host(m->path, m->kind == WM_BIND_RO, m->optional, err);
			break;
		case WM_TMPFS:
			r = mount_tmpfs(m->path, m->size, strcmp(m->path, "/tmp") ? "0700" : "1777", 0, err);
			break;
		case WM_HIDE:
			continue; /* after /dev exists: hides use /dev/null */
		}
		if (r < 0)
			return -1;
	}
	if (build_dev(err) < 0 || build_proc(err) < 0)
		return -1;
	for (i = 0; i < plan->n; i++)
		if (plan->m[i].kind == WM_HIDE && hide_path(plan->m[i].path, err) < 0)
			return -1;

	/* 4. Cut the way back to the host, then freeze the root itself. */
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
