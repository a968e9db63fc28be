/* The x32 ABI: x86_64 syscall numbers with bit 30 set reach the x32 table
 * under the same AUDIT_ARCH as x86_64.  The filter must kill the caller
 * (SIGSYS); a kernel without x32 returns -ENOSYS.  ESCAPED if the call
 * returned a pid. */
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "probe.h"

#define X32_SYSCALL_BIT 0x40000000

int main(void)
{
	int p[2], status;
	long ret = 0;
	pid_t pid;

	if (pipe(p) < 0)
		PROBE_FAIL("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		PROBE_FAIL("fork: %s", strerror(errno));
	if (pid == 0) {
		long r;

		close(p[0]);
		r = syscall(X32_SYSCALL_BIT | SYS_getpid);
		if (r < 0)
			r = -errno;
		if (write(p[1], &r, sizeof(r)) != sizeof(r))
			_exit(3);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &ret, sizeof(ret)) != sizeof(ret))
		ret = 0;
	if (waitpid(pid, &status, 0) != pid)
		PROBE_FAIL("waitpid: %s", strerror(errno));
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS)
		BLOCKED("x32 getpid: killed by SIGSYS (seccomp)");
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		if (ret > 0)
			ESCAPED("x32 getpid returned %ld", ret);
		BLOCKED("x32 getpid failed: %s", strerrorname_np((int)-ret));
	}
	PROBE_FAIL("child ended with status 0x%x", status);
}
