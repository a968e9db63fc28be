/* The jail's root beyond the plan (jail/mounts_int.h): the top-level
 * links of a merged /usr, a generated /etc/passwd and friends, a minimal
 * /dev and a new /proc with its leaks masked. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/mount.h>

#include "mounts_int.h"
#include "warden/util.h"

/* The first /proc mask of each kind (build_proc), sealed: later masks and
 * hides are copies of it.  A bind copies the source mount's flags (ro,
 * nosuid, nodev, noexec), so a copy needs no sealing of its own, and the
 * masks of directories share one empty read-only tmpfs instead of one
 * superblock each.  Paths in the jail's own /proc, which no jailed code can
 * rearrange; "" while there is none. */
char jm_mask_file[64], jm_mask_dir[64];

/* Top-level entries that are symlinks on merged-/usr systems (/bin -> usr/bin).
 * Recreate them as they are on the host; on a split-/usr system bind them. */
int jm_link_toplevel(struct werr *err)
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
			int r = fd < 0 ? -1 : jm_bind_fd(fd, st.st_mode, dst, true, err);
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
int jm_write_identity(const struct jail_spec *spec, const struct wplan *plan,
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
int jm_build_dev(struct werr *err)
{
	static const char *const nodes[] = { "null", "zero", "full", "random", "urandom" };
	static const char *const links[][2] = {
		{ "/proc/self/fd", "/dev/fd" },     { "/proc/self/fd/0", "/dev/stdin" },
		{ "/proc/self/fd/1", "/dev/stdout" }, { "/proc/self/fd/2", "/dev/stderr" },
	};
	char src[64], dst[64];
	size_t i;

	if (jm_mount_tmpfs("/dev", 64 * 1024, "0755", 0, err) < 0)
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
	if (jm_mount_tmpfs("/dev/shm", 64ULL << 20, "1777", MS_NOEXEC, err) < 0)
		return -1;
	if (mount(NULL, "/dev", NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, "size=65536,mode=0755") < 0)
		return werr_set(err, errno, "making /dev read-only");
	return seal_dev(nodes, ARRAY_SIZE(nodes), err);
}

/* A new /proc for the jail's pid namespace: it shows only the jail's
 * processes.  System-wide files that leak kernel state (addresses, timers,
 * keys) are masked the way container runtimes do, and the writable kernel
 * knobs are made read-only. */
int jm_build_proc(struct werr *err)
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
		if (jm_seal_bind(ro_dirs[i], true, err) < 0)
			return -1;
	}
	/* The first mask of each kind is made and sealed; every other one is a
	 * bind of it, which copies its flags (see jm_mask_file). */
	jm_mask_file[0] = jm_mask_dir[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(mask_files); i++) {
		const char *m = mask_files[i];

		if (mount(jm_mask_file[0] ? jm_mask_file : "/dev/null", m, NULL, MS_BIND, NULL) < 0) {
			if (errno == ENOENT)
				continue;
			return werr_set(err, errno, "masking %s", m);
		}
		if (!jm_mask_file[0]) {
			if (jm_seal_bind(m, true, err) < 0)
				return -1;
			snprintf(jm_mask_file, sizeof(jm_mask_file), "%s", m);
		}
	}
	for (i = 0; i < ARRAY_SIZE(mask_dirs); i++) {
		const char *m = mask_dirs[i];
		int r = jm_mask_dir[0] ? mount(jm_mask_dir, m, NULL, MS_BIND, NULL)
		                    : mount("tmpfs", m, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV |
		                            MS_NOEXEC, "size=0,mode=0555");
		if (r < 0) {
			if (errno == ENOENT)
				continue;
			return werr_set(err, errno, "masking %s", m);
		}
		if (!jm_mask_dir[0])
			snprintf(jm_mask_dir, sizeof(jm_mask_dir), "%s", m);
	}
	return 0;
}
