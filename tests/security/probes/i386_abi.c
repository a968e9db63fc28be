/* The i386 ABI: `int $0x80` reaches the 32-bit syscall table, which an
 * x86_64-only filter would not cover.  The filter must kill the caller
 * (SIGSYS); a kernel without the i386 entry faults (SIGSEGV) or returns
 * -ENOSYS, which closes it as well.  ESCAPED if the call returned a pid. */
#include <signal.h>
#include <sys/wait.h>

#include "probe.h"

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
		long r = 20;   /* __NR_getpid on i386 */

		close(p[0]);
		__asm__ volatile("int $0x80" : "+a"(r) : : "memory");
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
		BLOCKED("int $0x80 getpid: killed by SIGSYS (seccomp)");
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV)
		BLOCKED("int $0x80 getpid: SIGSEGV (this kernel has no i386 entry)");
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		if (ret > 0)
			ESCAPED("int $0x80 getpid returned %ld", ret);
		BLOCKED("int $0x80 getpid returned error %ld", ret);
	}
	PROBE_FAIL("child ended with status 0x%x", status);
}
