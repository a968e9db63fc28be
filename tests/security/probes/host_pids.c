/* Host processes: the jail has its own pid namespace, so no host process
 * can be seen in /proc or signalled.  argv[1] is a host pid the harness
 * keeps alive (a `sleep`); kill(pid, 0) must fail with ESRCH.  kill(-1, 0)
 * from a lone process must find nobody (ESRCH): it reaches every process
 * the caller may signal. */
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>

#include "probe.h"

int main(int argc, char **argv)
{
	char path[64], seen[512] = "";
	struct dirent *de;
	int n = 0;
	DIR *d;

	if (argc > 1) {
		pid_t host = (pid_t)atol(argv[1]);

		if (host <= 1)
			PROBE_FAIL("bad host pid %s", argv[1]);
		if (kill(host, 0) == 0)
			ESCAPED("host pid %d can be signalled", host);
		if (errno != ESRCH)
			ESCAPED("host pid %d is visible (kill: %s)", host, strerrorname_np(errno));
		note("kill(host pid %d, 0): ESRCH", host);
		snprintf(path, sizeof(path), "/proc/%d", host);
		if (access(path, F_OK) == 0 && host != getpid())
			ESCAPED("%s exists", path);
	}
	if (kill(-1, 0) == 0)
		ESCAPED("kill(-1, 0) found processes to signal besides this one");
	note("kill(-1, 0): %s", strerrorname_np(errno));

	d = opendir("/proc");
	if (!d)
		PROBE_FAIL("opendir /proc: %s", strerror(errno));
	while ((de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		n++;
		snprintf(seen + strlen(seen), sizeof(seen) - strlen(seen), " %s", de->d_name);
	}
	closedir(d);
	/* this process, and nothing of the host; a jail-side init is fine */
	if (n > 2)
		ESCAPED("%d processes visible in /proc:%s", n, seen);
	note("/proc shows pid(s)%s, self is %d", seen, getpid());
	BLOCKED("%s", probe_notes);
}
