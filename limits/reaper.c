/* See include/warden/reaper.h. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "warden/reaper.h"

/* Watchdogs that were still finishing when released; reaped later so that
 * releasing never waits (it used to cost ~0.5 ms per run). */
static pid_t pending[64];

static void reap_pending(void)
{
	for (size_t i = 0; i < sizeof(pending) / sizeof(pending[0]); i++)
		if (pending[i] > 0 && waitpid(pending[i], NULL, WNOHANG) != 0)
			pending[i] = 0;
}

/* A watchdog outlives warden: it keeps stderr for its warnings only where
 * nobody waits for its EOF (a terminal, a file).  A pipe or socket becomes
 * /dev/null, so whoever captures warden's stderr sees EOF when warden
 * exits, not after the watchdog's rmdirs and gc. */
static void stderr_off_pipes(void)
{
	struct stat st;

	if (fstat(2, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		if (null < 0 || dup2(null, 2) < 0)
			close(2);   /* no /dev/null: closed beats held */
		if (null > 2)
			close(null);
	}
}

void wreaper_start(struct wreaper *r, struct wcg *cg)
{
	int p[2];
	char c;

	r->pid = 0;
	r->fd = -1;
	reap_pending();
	if (!wcg_has_groups(cg) || pipe2(p, O_CLOEXEC) < 0)
		return;
	r->pid = fork();
	if (r->pid < 0) {
		r->pid = 0;
		close(p[0]);
		close(p[1]);
		return;
	}
	if (r->pid == 0) {
		sigset_t all;

		/* Out of warden's session and process group, so a Ctrl-C or a
		 * kill of the group does not take the watchdog with it. */
		setsid();
		sigfillset(&all);
		sigdelset(&all, SIGKILL);
		sigprocmask(SIG_SETMASK, &all, NULL);
		/* Started before any jail pipe exists, so the only other fds are
		 * the audit log and the cgroup directories, which wcg_destroy
		 * needs.  stdin/stdout go, so a pipeline reading warden's output
		 * does not wait for us.  stderr stays for wcg_destroy's warning
		 * when it is a terminal or a file; a pipe or socket becomes
		 * /dev/null, or whoever captures warden's stderr (a harness,
		 * `$(warden run ... 2>&1)`) would see its EOF only after our
		 * rmdirs and gc (0.7 ms as root; "outside main" in
		 * docs/design.md).  A group left behind is removed, with a
		 * warning, by the next run's gc. */
		close(p[1]);
		close(0);
		close(1);
		stderr_off_pipes();
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		/* warden has closed its end: after reporting the run (handed
		 * over), or because it died. */
		wcg_destroy(cg);
		/* then the groups of wardens that were SIGKILLed (with their
		 * watchdogs): work that no run waits for, done once warden no
		 * longer competes for the CPU */
		wcg_gc();
		_exit(0);
	}
	close(p[0]);
	r->fd = p[1];
}

void wreaper_stop(struct wreaper *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	reap_pending();
	if (r->pid > 0 && waitpid(r->pid, NULL, WNOHANG) == 0) {
		size_t i;
		for (i = 0; i < sizeof(pending) / sizeof(pending[0]); i++)
			if (pending[i] <= 0) {
				pending[i] = r->pid;
				break;
			}
		/* more than 64 still exiting: wait for this one */
		if (i == sizeof(pending) / sizeof(pending[0]))
			while (waitpid(r->pid, NULL, 0) < 0 && errno == EINTR)
				;
	}
	r->pid = 0;
}

void wreaper_handover(struct wreaper *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	/* not waited for: the process exits soon, or a later start reaps */
	for (size_t i = 0; r->pid > 0 && i < sizeof(pending) / sizeof(pending[0]); i++)
		if (pending[i] <= 0) {
			pending[i] = r->pid;
			break;
		}
	r->pid = 0;
}

/* One watchdog for the server's cgroups: when the server is gone, for any
 * reason, it kills and removes every "warden-<server pid>-*" group. */
int wreaper_start_server(void)
{
	int p[2];
	pid_t owner = getpid(), pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		sigset_t all;
		char c;
		setsid();
		sigfillset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		close(p[1]);
		for (int fd = 0; fd < 3; fd++)
			if (fd != 2)
				close(fd);
		stderr_off_pipes();
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		wcg_gc_owner(owner);
		_exit(0);
	}
	close(p[0]);
	if (pid < 0) {
		close(p[1]);
		return -1;
	}
	return p[1];
}
