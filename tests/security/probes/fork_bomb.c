/* Fork bomb: processes that never exit, until fork fails.  The pids limit
 * (cgroup pids.max, or RLIMIT_NPROC as a fallback) must stop it with
 * EAGAIN long before 10000 processes.  The children are killed before
 * the probe reports. */
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "probe.h"

#define MAX_PROCS 10000

static pid_t kids[MAX_PROCS];

static void reap(int n)
{
	for (int i = 0; i < n; i++)
		kill(kids[i], SIGKILL);
	for (int i = 0; i < n; i++)
		waitpid(kids[i], NULL, 0);
}

int main(void)
{
	int n, e;

	for (n = 0; n < MAX_PROCS; n++) {
		pid_t pid = fork();

		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);   /* never outlive the probe */
			for (;;)
				pause();
		}
		if (pid < 0)
			break;
		kids[n] = pid;
	}
	e = errno;
	reap(n);
	if (n >= MAX_PROCS)
		ESCAPED("%d processes forked without hitting a limit", n);
	if (e != EAGAIN)
		PROBE_FAIL("fork failed after %d processes with %s, not EAGAIN", n,
		           strerrorname_np(e));
	BLOCKED("fork failed with EAGAIN after %d processes", n);
}
