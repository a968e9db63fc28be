/* idprobe: a helper for tests/security/identity.bats, not an escape probe.
 * It keeps a jail alive in a known state so the test can judge from the
 * host (/proc/PID/status, the kernel's per-user counts).
 *   idprobe hold FILE      write FILE, wait until FILE.go exists
 *   idprobe inotify FILE   take inotify instances until the kernel refuses,
 *                          write "COUNT ERRNO" to FILE, hold them until
 *                          FILE.go exists
 *   idprobe inotify1       take one inotify instance: exit 0 if it worked,
 *                          1 if the per-user limit refused it */
#include <fcntl.h>
#include <sys/inotify.h>
#include <time.h>

#include "probe.h"

static void put(const char *file, const char *text)
{
	char tmp[4096];
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, text, strlen(text)) < 0 || close(fd) < 0 || rename(tmp, file) < 0)
		PROBE_FAIL("writing %s: %s", file, strerror(errno));
}

static void wait_go(const char *file)
{
	char go[4096];
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	snprintf(go, sizeof(go), "%s.go", file);
	while (access(go, F_OK) != 0)   /* the test creates it; the jail's wall time bounds us */
		nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	char buf[64];
	int n = 0, e = 0;

	if (argc == 3 && !strcmp(argv[1], "hold")) {
		put(argv[2], "ready\n");
		wait_go(argv[2]);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "inotify")) {
		while (n < 100000) {
			if (inotify_init1(IN_CLOEXEC) < 0) {
				e = errno;
				break;
			}
			n++;
		}
		snprintf(buf, sizeof(buf), "%d %s\n", n, strerrorname_np(e) ? strerrorname_np(e) : "none");
		put(argv[2], buf);
		wait_go(argv[2]);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "inotify1")) {
		if (inotify_init1(IN_CLOEXEC) < 0) {
			printf("inotify_init1: %s\n", strerrorname_np(errno));
			return 1;
		}
		printf("inotify_init1: ok\n");
		return 0;
	}
	fprintf(stderr, "usage: idprobe hold FILE | inotify FILE | inotify1\n");
	return 2;
}
