/* Mounts, old and new API: remounting /usr read-write, mounting over the
 * workspace, detaching the tmpfs that hides something, or building a
 * mount with fsopen/fsmount and attaching it with move_mount.  All must
 * fail. */
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/syscall.h>

#include "probe.h"

#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef FSCONFIG_CMD_CREATE
#define FSCONFIG_CMD_CREATE 6
#endif

int main(void)
{
	long fd;

	must_fail(mount("none", "/tmp", "tmpfs", 0, NULL), "mount tmpfs");
	must_fail(mount(NULL, "/usr", NULL, MS_REMOUNT | MS_BIND, NULL), "remount /usr rw");
	must_fail(mount("/", "/tmp", NULL, MS_BIND | MS_REC, NULL), "bind /");
	must_fail(umount2("/proc", MNT_DETACH), "umount2 /proc");
	must_fail(syscall(SYS_pivot_root, ".", "."), "pivot_root");

	fd = syscall(SYS_fsopen, "tmpfs", 0);
	if (fd >= 0) {
		if (syscall(SYS_fsconfig, fd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0 &&
		    syscall(SYS_fsmount, fd, 0, 0) >= 0)
			ESCAPED("fsopen + fsconfig + fsmount built a tmpfs mount");
		ESCAPED("fsopen(tmpfs) succeeded");
	}
	note("fsopen: %s", strerrorname_np(errno));
	must_fail(syscall(SYS_fspick, AT_FDCWD, "/usr", 0), "fspick /usr");
	fd = syscall(SYS_open_tree, AT_FDCWD, "/", OPEN_TREE_CLONE);
	if (fd >= 0) {
		if (syscall(SYS_move_mount, fd, "", AT_FDCWD, "/tmp", 4 /* F_EMPTY_PATH */) == 0)
			ESCAPED("open_tree + move_mount attached a copy of /");
		ESCAPED("open_tree(OPEN_TREE_CLONE) succeeded");
	}
	note("open_tree: %s", strerrorname_np(errno));
	must_fail(syscall(SYS_move_mount, AT_FDCWD, "/usr", AT_FDCWD, "/tmp", 0), "move_mount");
	must_fail(syscall(SYS_mount_setattr, AT_FDCWD, "/usr", 0, NULL, 0), "mount_setattr");
	BLOCKED("%s", probe_notes);
}
