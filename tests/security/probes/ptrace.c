/* ptrace and its cousins: tracing another process of the jail is a way
 * around every per-process restriction (and, with a shared pid namespace,
 * into the host).  TRACEME, ATTACH/SEIZE on a child and on pid 1, and
 * process_vm_readv must all fail. */
#include <signal.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "probe.h"

int main(void)
{
	char buf[8], what[64];
	struct iovec local = { buf, sizeof(buf) }, remote = { (void *)&main, sizeof(buf) };
	pid_t child;

	child = fork();
	if (child < 0)
		PROBE_FAIL("fork: %s", strerror(errno));
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);   /* never outlive the probe */
		for (;;)
			pause();
	}
	must_fail(syscall(SYS_ptrace, PTRACE_TRACEME, 0, 0, 0), "PTRACE_TRACEME");
	snprintf(what, sizeof(what), "PTRACE_ATTACH child %d", child);
	must_fail(syscall(SYS_ptrace, PTRACE_ATTACH, child, 0, 0), what);
	snprintf(what, sizeof(what), "PTRACE_SEIZE child %d", child);
	must_fail(syscall(SYS_ptrace, PTRACE_SEIZE, child, 0, 0), what);
	if (getpid() != 1)
		must_fail(syscall(SYS_ptrace, PTRACE_ATTACH, 1, 0, 0), "PTRACE_ATTACH 1");
	must_fail(process_vm_readv(child, &local, 1, &remote, 1, 0), "process_vm_readv");
	must_fail(process_vm_writev(child, &local, 1, &remote, 1, 0), "process_vm_writev");
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	BLOCKED("%s", probe_notes);
}
