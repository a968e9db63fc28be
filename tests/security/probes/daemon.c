/* A daemon outliving the run: double fork + setsid, then append a line to
 * argv[1] (a file in the workspace) every 100 ms for up to 2 minutes.  The
 * probe itself returns at once; the harness then checks that no such
 * process survives warden and that the file stops growing.  The daemon's
 * command line contains argv[1], so the harness can look for it. */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "probe.h"

int main(int argc, char **argv)
{
	struct timespec tick = { 0, 100 * 1000 * 1000 };
	struct stat st;
	pid_t pid;
	int i;

	if (argc < 2)
		PROBE_FAIL("usage: daemon FILE");
	pid = fork();
	if (pid < 0)
		PROBE_FAIL("fork: %s", strerror(errno));
	if (pid == 0) {
		if (setsid() < 0)
			_exit(1);
		if (fork() != 0)
			_exit(0);
		/* the daemon: no stdio, its own session, reparented */
		for (i = 0; i < 1200; i++) {
			int fd = open(argv[1], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);

			if (fd >= 0) {
				dprintf(fd, "tick %d pid %d\n", i, getpid());
				close(fd);
			}
			nanosleep(&tick, NULL);
		}
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	for (i = 0; i < 50; i++) {        /* until the daemon has written once */
		if (stat(argv[1], &st) == 0 && st.st_size > 0)
			break;
		nanosleep(&tick, NULL);
	}
	if (i == 50)
		PROBE_FAIL("the daemon never wrote %s", argv[1]);
	probe_end(PROBE_OK, "STARTED", "daemon writing %s every 100ms; the harness "
	          "checks it dies with the run", argv[1]);
}
