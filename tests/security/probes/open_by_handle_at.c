/* File handles (the "shocker" escape): open_by_handle_at() opens a file by
 * its handle, relative to any fd on the same filesystem, ignoring the mount
 * namespace and the paths the jail was given.  Both halves must fail. */
#include <fcntl.h>
#include <sys/syscall.h>

#include "probe.h"

int main(void)
{
	struct {
		struct file_handle fh;
		unsigned char buf[MAX_HANDLE_SZ];
	} h;
	int mount_id, dirfd;

	memset(&h, 0, sizeof(h));
	h.fh.handle_bytes = MAX_HANDLE_SZ;
	dirfd = open("/usr", O_RDONLY | O_DIRECTORY);
	if (dirfd < 0)
		dirfd = open("/", O_RDONLY | O_DIRECTORY);
	if (dirfd < 0)
		PROBE_FAIL("no directory to start from: %s", strerror(errno));

	if (syscall(SYS_name_to_handle_at, dirfd, "", &h.fh, &mount_id, AT_EMPTY_PATH) == 0) {
		int fd = syscall(SYS_open_by_handle_at, dirfd, &h.fh, O_RDONLY);

		if (fd >= 0)
			ESCAPED("name_to_handle_at + open_by_handle_at worked");
		note("name_to_handle_at worked; open_by_handle_at: %s", strerrorname_np(errno));
	} else {
		note("name_to_handle_at: %s", strerrorname_np(errno));
	}

	/* a forged handle: ext4/xfs-style root inode (2), generation 0 */
	memset(&h, 0, sizeof(h));
	h.fh.handle_bytes = 8;
	h.fh.handle_type = 1;           /* FILEID_INO32_GEN */
	h.buf[0] = 2;
	must_fail(syscall(SYS_open_by_handle_at, dirfd, &h.fh, O_RDONLY),
	          "open_by_handle_at(forged root handle)");
	BLOCKED("%s", probe_notes);
}
