/* Disk exhaustion: append to argv[1] (default /tmp/probe-fill) until the
 * write fails.  The tmpfs size (ENOSPC) or the file size limit
 * (RLIMIT_FSIZE: EFBIG, with SIGXFSZ ignored) must stop it before
 * argv[2] bytes (default 1 GiB).  The file is removed at the end, unless
 * argv[3] is "keep": then the harness measures it from the host. */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>

#include "probe.h"

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "/tmp/probe-fill";
	long long max = argc > 2 ? atoll(argv[2]) : 1LL << 30, total = 0;
	static char buf[1 << 16];
	int fd, e, keep = argc > 3 && !strcmp(argv[3], "keep");

	signal(SIGXFSZ, SIG_IGN);
	memset(buf, 'x', sizeof(buf));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		PROBE_FAIL("open %s: %s", path, strerror(errno));
	for (;;) {
		ssize_t n = write(fd, buf, sizeof(buf));

		if (n <= 0)
			break;
		total += n;
		if (total > max) {
			if (!keep)
				unlink(path);
			ESCAPED("wrote %lld bytes to %s, over %lld", total, path, max);
		}
	}
	e = errno;
	if (!keep)
		unlink(path);
	if (e != ENOSPC && e != EFBIG && e != EDQUOT)
		PROBE_FAIL("write %s failed after %lld bytes: %s", path, total, strerror(e));
	BLOCKED("write to %s stopped after %lld bytes: %s", path, total, strerrorname_np(e));
}
