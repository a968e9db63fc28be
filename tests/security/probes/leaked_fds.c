/* Leaked file descriptors: nothing of warden's (sync socket, listener,
 * cgroup or log fds) may reach the program: only 0, 1 and 2 are open. */
#include <dirent.h>
#include <limits.h>

#include "probe.h"

int main(void)
{
	char path[64], target[PATH_MAX], found[1024] = "";
	struct dirent *de;
	int n = 0;
	DIR *d;

	/* the raw fd range first, without opening anything */
	for (int fd = 3; fd < 1024; fd++) {
		if (dup2(fd, fd) == fd) {
			ssize_t len;

			snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
			len = readlink(path, target, sizeof(target) - 1);
			target[len > 0 ? len : 0] = '\0';
			snprintf(found + strlen(found), sizeof(found) - strlen(found),
			         "%s%d -> %.200s", n ? ", " : "", fd, target);
			n++;
		}
	}
	if (n)
		ESCAPED("%d fd(s) leaked into the jail: %s", n, found);

	d = opendir("/proc/self/fd");
	if (!d)
		PROBE_FAIL("opendir /proc/self/fd: %s", strerror(errno));
	while ((de = readdir(d))) {
		int fd = atoi(de->d_name);

		if (de->d_name[0] == '.' || fd <= 2 || fd == dirfd(d))
			continue;
		ESCAPED("fd %d open (seen in /proc/self/fd)", fd);
	}
	closedir(d);
	BLOCKED("only fds 0, 1, 2 are open");
}
