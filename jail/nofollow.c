/* jail_open_nofollow (include/warden/jail.h): the one way jail/ and the
 * supervisor open a path that jailed code may have planted links in. */
#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "jail_impl.h"

/* Open path (absolute) as O_PATH without following a symlink in any
 * component, the final one included. */
int jail_open_nofollow(int dirfd, const char *path, struct werr *err)
{
	struct open_how how = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
	                        .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));

	if (fd < 0 && errno == ENOSYS)
		return werr_set(err, errno, "opening %s: openat2 is missing (warden needs "
		                "Linux 5.12 or later)", path);
	if (fd < 0)
		return werr_set(err, errno, "opening %s without following symlinks", path);
	return (int)fd;
}
