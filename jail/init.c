/* The jail's init: pid 1 of its pid namespace, after every entry step.
 *
 * It runs fully confined, exactly like the program (capabilities dropped,
 * no_new_privs, Landlock, the same seccomp filter: it is the process that
 * loaded it) and non-dumpable, so jailed code can neither read nor write
 * its memory (/proc/1/mem, ptrace), and, being the namespace's init, it
 * cannot be killed from inside the jail.  The supervisor still trusts it
 * for nothing but reports: the program's status, and the ack of a sweep.
 *
 *   clone(CLONE_VM|CLONE_VFORK) -> the program (its own process group),
 *         which execs (step 13); init resumes once it has exec'd
 *   init: exec report pipe -> SYNC_STARTED or SYNC_EXEC_FAILED on the sync
 *         socket; then, with every signal blocked, sigwaitinfo():
 *     SIGCHLD          reap everything; the program's end -> SYNC_STATUS,
 *                      SIGKILL to every other process, exit
 *     JAIL_SIG_FREEZE  (from the supervisor only) SIGKILL every process but
 *                      init and the program, with the program stopped
 *                      (SIGSTOP: every thread of it) throughout, then
 *                      SYNC_SWEPT: between blocks no jailed code runs
 *     JAIL_SIG_THAW    (from the supervisor only) SIGCONT to the program
 *     anything else from outside the namespace (the supervisor: SIGINT,
 *                      SIGTERM, ...) -> the program's process group
 *   Signals sent from inside the jail are dropped: the program can signal
 *   its own processes itself. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jail_impl.h"
#include "warden/util.h"

static void report(int sync, uint8_t type, int32_t status)
{
	struct sync_frame f = { .type = type, .status = status };

	(void)!send(sync, &f, sizeof(f), MSG_NOSIGNAL);
}

/* Reap every child that has ended; true when the program is among them. */
static bool reap(pid_t prog, int *prog_status)
{
	bool ended = false;
	pid_t p;
	int st;

	while ((p = waitpid(-1, &st, WNOHANG | __WALL)) > 0)
		if (p == prog) {
			*prog_status = st;
			ended = true;
		}
	return ended;
}

/* A thread's state letter in its stat file (dirfd/name/stat), or 0. */
static char stat_state(int dirfd, const char *name)
{
	char buf[256];
	const char *f = proc_stat_fields(dirfd, name, buf, sizeof(buf));

	return f ? *f : 0;
}

/* A process of our namespace that can still run code: a thread of it that
 * is not a zombie.  Its leader's state is not enough: a process whose main
 * thread ended (exit(2), not exit_group) shows Z there while its other
 * threads run on (issue 18).  Zombies proper are skipped: they cannot be
 * killed, and those whose parent is the program are the program's to
 * reap. */
static bool alive(int procfd, const char *name)
{
	char path[64];
	struct dirent *de;
	bool live = false;
	DIR *d;
	int fd;
	char st = stat_state(procfd, name);

	if (st && st != 'Z' && st != 'X')
		return true;
	if (!st || snprintf(path, sizeof(path), "%s/task", name) >= (int)sizeof(path))
		return false;   /* gone */
	fd = openat(procfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	while (!live && (de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		st = stat_state(dirfd(d), de->d_name);
		live = st && st != 'Z' && st != 'X';
	}
	closedir(d);
	return live;
}

/* Wait until the program is stopped (every thread: its group stop is
 * complete) or has ended; true when it is stopped.  WNOWAIT leaves the
 * report in place, so is_stopped can read it again; nothing else in init
 * asks for stops (reap's waitpid has no WUNTRACED). */
static bool wait_stopped(pid_t prog)
{
	siginfo_t si;

	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)prog, &si, WSTOPPED | WEXITED | WNOWAIT) == 0)
			return si.si_code == CLD_STOPPED;
		if (errno != EINTR)
			return false;
	}
}

/* Still stopped now: a SIGCONT since wait_stopped cleared the report. */
static bool is_stopped(pid_t prog)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	return waitid(P_PID, (id_t)prog, &si, WSTOPPED | WNOHANG | WNOWAIT) == 0 &&
	       si.si_pid == prog && si.si_code == CLD_STOPPED;
}

/* SIGKILL every process of the namespace but init and the program, until a
 * pass finds none alive: processes forked meanwhile are found by the next
 * pass, and a killed process cannot fork again.  Each pass first stops the
 * program and waits until every thread of it is stopped, so it cannot fork
 * during the pass; a pass that found nobody else alive ends the sweep only
 * if the program is still stopped then (a process killed in the pass
 * before may have sent it a SIGCONT on its way out; once nobody else is
 * alive, nobody can). */
static bool sweep(pid_t prog, int *prog_status)
{
	bool ended = false, freeze = true;

	for (;;) {
		int procfd;
		DIR *d;
		struct dirent *de;
		unsigned found = 0;

		if (freeze) {
			kill(prog, SIGSTOP);
			if (!wait_stopped(prog))
				freeze = false;   /* it ended: reaped below */
		}
		procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		d = procfd >= 0 ? fdopendir(procfd) : NULL;
		if (!d) {
			if (procfd >= 0)
				close(procfd);
			return ended; /* no /proc: nothing we can see */
		}
		while ((de = readdir(d))) {
			char *end;
			long pid = strtol(de->d_name, &end, 10);
			if (*end || pid <= 1 || pid == prog || !alive(dirfd(d), de->d_name))
				continue;
			kill((pid_t)pid, SIGKILL);
			found++;
		}
		closedir(d);
		ended |= reap(prog, prog_status);
		if (ended)
			freeze = false;
		if (!found && (!freeze || is_stopped(prog)))
			return ended;
		/* let the killed ones die before looking again */
		if (found)
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
		ended |= reap(prog, prog_status);
	}
}

/* The program's side of the clone below, until its execve (step 13). */
struct prog_start {
	const struct jail_spec *spec;
	int sync, ep[2];
};

/* The child shares init's memory (CLONE_VM) until it execs, and init is
 * suspended meanwhile (CLONE_VFORK): it touches nothing of init's but its
 * own stack (prog_stack) and errno, which init does not read after a
 * successful clone.  It allocates nothing and uses no stdio: close, setpgid,
 * sigprocmask, then jail_exec's PATH search (snprintf into its stack) and
 * execve; on failure jail_exec formats the report on its stack (strerror of
 * an errno execve returns is a constant string), writes it to the pipe and
 * _exits (no atexit handler runs).  Every signal's disposition is the
 * default (jail_child reset them), so no handler ever runs on this stack.
 * Nothing in the jail can signal it: no jailed code runs yet, and init,
 * which forwards the supervisor's signals, is suspended. */
static int prog_main(void *arg)
{
	const struct prog_start *p = arg;
	sigset_t none;

	close(p->ep[0]);   /* its own fd table: no CLONE_FILES */
	close(p->sync);
	/* its own process group: what init forwards reaches the program
	 * and its children, as a terminal's signals would */
	setpgid(0, 0);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	jail_exec(p->spec, p->ep[1]);
}

/* jail_exec's frame holds a PATH_MAX buffer and a struct werr, and its
 * failure path formats a message: 64 KiB is several times that. */
static char prog_stack[64 * 1024] __attribute__((aligned(64)));

static __attribute__((noreturn)) void finish(int sync, int status)
{
	report(sync, SYNC_STATUS, status);
	/* No kill(-1, SIGKILL) (a walk of every process on the host): when
	 * the namespace's init exits, the kernel SIGKILLs every other process
	 * of it and reaps them before init's exit is seen (zap_pid_ns_processes),
	 * so the supervisor's pidfd still reports an empty namespace (G13). */
	/* init's own status is only a fallback: the supervisor reads STATUS */
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

/* The next signal: from sigwaitinfo, or with a network watch from the
 * signalfd, reading the watch meanwhile (jail/netseen.c).  A signalfd
 * gives the same sender facts sigwaitinfo does (code, pid). */
static int next_signal(const sigset_t *all, bool watch, int sync, siginfo_t *si)
{
	/* static: a watch that broke (POLLNVAL, POLLHUP) stays out of the
	 * poll, which would otherwise return at once, forever */
	static struct pollfd pf[2] = { { .fd = JAIL_WATCH_SIG_FD, .events = POLLIN },
	                               { .fd = JAIL_WATCH_FD, .events = POLLIN } };
	struct signalfd_siginfo ss;

	if (!watch)
		return sigwaitinfo(all, si);
	for (;;) {
		if (read(JAIL_WATCH_SIG_FD, &ss, sizeof(ss)) == (ssize_t)sizeof(ss)) {
			memset(si, 0, sizeof(*si));
			si->si_signo = (int)ss.ssi_signo;
			si->si_code = ss.ssi_code;
			si->si_pid = (pid_t)ss.ssi_pid;
			return (int)ss.ssi_signo;
		}
		if (poll(pf, 2, -1) <= 0)
			continue;
		/* a pending socket error is read (and cleared) like a packet */
		if (pf[1].revents & (POLLIN | POLLERR))
			jail_watch_read(JAIL_WATCH_FD, sync);
		if (pf[1].revents & (POLLNVAL | POLLHUP))
			pf[1].fd = -1;
	}
}

void jail_init(const struct jail_spec *spec, int sync, bool watch)
{
	struct sync_frame f;
	struct prog_start ps = { .spec = spec, .sync = sync };
	sigset_t all;
	int *ep = ps.ep;
	int status = 0;
	pid_t prog;
	ssize_t n;

	/* Every signal blocked before the fork: the ones that arrive before
	 * the loop wait, queued, for sigwaitinfo. */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	/* Non-dumpable: /proc/1/mem, /proc/1/environ and ptrace are closed to
	 * the jail (it holds no CAP_SYS_PTRACE).  The program gets its own mm
	 * at execve, dumpable again as usual. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 || pipe2(ep, O_CLOEXEC) < 0) {
		struct werr e = { 0 };
		werr_set(&e, errno, "starting the jail's init");
		jail_child_fail(sync, SYNC_ERROR, &e);
	}
	/* A vfork-style clone: no copy of init's page tables for a child that
	 * execs at once (fork's copy, and its teardown at execve, were most of
	 * the 0.2-0.6 ms from here to the exec); init resumes when the program
	 * has exec'd or died.  See prog_main for what the child may touch. */
	prog = clone(prog_main, prog_stack + sizeof(prog_stack),
	             CLONE_VM | CLONE_VFORK | SIGCHLD, &ps);
	if (prog < 0) {
		struct werr e = { 0 };
		werr_set(&e, errno, "starting the program from the jail's init");
		jail_child_fail(sync, SYNC_ERROR, &e);
	}
	close(ep[1]);
	wtiming("init: clone+exec");
	prctl(PR_SET_NAME, "warden-init", 0, 0, 0);

	/* The pipe is close-on-exec: EOF means execve worked. */
	do
		n = read(ep[0], &f, sizeof(f));
	while (n < 0 && errno == EINTR);
	/* init holds nothing of the program's: not its stdio (so pipes see
	 * EOF when the program closes them), not the control fd; only the
	 * sync socket (3). */
	syscall(SYS_close_range, 0, 2, 0);
	if (watch) {
		syscall(SYS_close_range, 4, JAIL_WATCH_FD - 1, 0);
		syscall(SYS_close_range, JAIL_WATCH_SIG_FD + 1, ~0U, 0);
	} else {
		syscall(SYS_close_range, 4, ~0U, 0);
	}
	if (n == (ssize_t)sizeof(f) && f.type == SYNC_EXEC_FAILED) {
		f.err.msg[sizeof(f.err.msg) - 1] = '\0';
		(void)!send(sync, &f, sizeof(f), MSG_NOSIGNAL);
		waitpid(prog, NULL, 0);
		_exit(f.err.exit_code);
	}
	report(sync, SYNC_STARTED, 0);

	for (;;) {
		siginfo_t si;
		int sig = next_signal(&all, watch, sync, &si);
		bool outside;

		if (sig < 0)
			continue;
		/* kill()/pidfd_send_signal() from an ancestor namespace: SI_USER
		 * with si_pid 0 (the sender is not visible here).  Nothing in the
		 * jail can forge that: sigqueue-like calls need si_code < 0. */
		outside = si.si_code == SI_USER && si.si_pid == 0;
		if (sig == SIGCHLD) {
			if (reap(prog, &status)) {
				/* what it sent on its way out is reported first */
				if (watch)
					jail_watch_read(JAIL_WATCH_FD, sync);
				finish(sync, status);
			}
		} else if (sig == JAIL_SIG_FREEZE) {
			if (!outside)
				continue;
			if (watch)
				jail_watch_read(JAIL_WATCH_FD, sync);
			if (sweep(prog, &status))
				finish(sync, status);
			/* the block is over: the next one's tries are new */
			jail_watch_forget();
			report(sync, SYNC_SWEPT, 0);
		} else if (sig == JAIL_SIG_THAW) {
			if (outside)
				kill(prog, SIGCONT);
		} else if (outside) {
			if (kill(-prog, sig) < 0)
				kill(prog, sig);
		}
	}
}
