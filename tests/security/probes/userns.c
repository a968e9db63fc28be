/* Nested namespaces: a new user namespace gives back a full capability set
 * (over the new namespace) and with it the kernel's namespaced attack
 * surface (mounts, netfilter, ...).  unshare, clone and clone3 with
 * namespace flags must all fail; no child may ever start. */
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "probe.h"

static void try_clone(unsigned long flags, const char *what)
{
	long pid = syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, 0);

	if (pid == 0)
		_exit(0);               /* child: never do anything */
	if (pid > 0) {
		waitpid(pid, NULL, 0);
		ESCAPED("%s created a process", what);
	}
	note("%s: %s", what, strerrorname_np(errno));
}

static void try_clone3(uint64_t flags, const char *what)
{
	struct clone_args args;
	long pid;

	memset(&args, 0, sizeof(args));
	args.flags = flags;
	args.exit_signal = SIGCHLD;
	pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid == 0)
		_exit(0);
	if (pid > 0) {
		waitpid(pid, NULL, 0);
		ESCAPED("%s created a process", what);
	}
	note("%s: %s", what, strerrorname_np(errno));
}

int main(void)
{
	must_fail(unshare(CLONE_NEWUSER), "unshare(NEWUSER)");
	must_fail(unshare(CLONE_NEWNS), "unshare(NEWNS)");
	must_fail(unshare(CLONE_NEWNET), "unshare(NEWNET)");
	must_fail(unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare(NEWUSER|NEWNS)");
	try_clone(CLONE_NEWUSER, "clone(NEWUSER)");
	try_clone(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID, "clone(NEWUSER|NEWNS|NEWPID)");
	try_clone(CLONE_NEWNET, "clone(NEWNET)");
	try_clone3(CLONE_NEWUSER, "clone3(NEWUSER)");
	must_fail(setns(0, CLONE_NEWUSER), "setns");
	BLOCKED("%s", probe_notes);
}
