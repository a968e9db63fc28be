/* Starting the egress proxy's process, warden-egress (proxy.h, egress/main.c;
 * docs/design.md "Network: the egress proxy's process").  As the broker is
 * started (broker.c), with less to hand over:
 *
 * Before the first fork, with the caller's privileges:
 *   1. find the binary (WARDEN_EGRESS, else next to warden, else
 *      PREFIX/libexec/warden) and open it O_PATH once: every restart runs
 *      that same file, never a path looked up again after privileges drop;
 *   2. as root, look up the user it runs as: the broker's (`warden`, or
 *      --broker-user), never root.
 * In the child of each fork:
 *   3. its end of the socketpair on fd 3 (WEGRESS_FD), /dev/null on 0 and 1
 *      (serve's stdin and stdout are the API), stderr on 2 unless it is a
 *      terminal (the process's words reach people as LOG frames, through
 *      the supervisor; a terminal is not its to write to);
 *   4. a session of its own (no terminal's signals: Ctrl-C in `warden run`
 *      is the supervisor's to handle, not a reason to restart the proxy);
 *   5. as root: the bounding and ambient capability sets emptied (it holds
 *      CAP_SETPCAP until the uid change), then groups, gid and uid set to
 *      the user for good and read back: a half-dropped proxy never runs;
 *      as an ordinary user, the ambient set emptied (the bounding set
 *      cannot be changed without CAP_SETPCAP; no_new_privs, set by the
 *      process first thing, makes it unreachable anyway);
 *   6. the parent-death signal (after the uid change, which clears it), an
 *      empty signal mask, and execveat of the fd with an environment of
 *      the sanitizers' options only (c-ares would read LOCALDOMAIN and
 *      RES_OPTIONS).  The process confines itself before it reads a frame
 *      (egress/confine.c). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "egress_start.h"
#include "sv.h"
#include "warden/egress.h"
#include "warden/supervisor.h"
#include "warden/util.h"

extern char **environ;

/* WARDEN_EGRESS, else next to warden itself (the build tree), else
 * PREFIX/libexec/warden (warden/supervisor.h: `warden doctor` checks the
 * same file). */
char *wegress_exe_path(void)
{
	return sv_helper_path("WARDEN_EGRESS", "warden-egress");
}

int sv_egress_prepare(struct sv_egress_exe *x, const char *user, struct werr *err)
{
	_cleanup_free_ char *path = wegress_exe_path();

	x->fd = -1;
	x->drop = geteuid() == 0;
	if (x->drop) {
		struct passwd *pw = getpwnam(user);

		if (!pw)
			return werr_set(err, 0, "the egress proxy's user \"%s\" does not exist: as root, "
			                "warden runs its egress proxy (and its broker) as that user; "
			                "create it with `useradd --system --no-create-home --home-dir "
			                "/nonexistent --shell /usr/sbin/nologin %s`", user, user);
		if (pw->pw_uid == 0 || pw->pw_gid == 0)
			return werr_set(err, 0, "the egress proxy's user %s is root or has group root: "
			                "it never runs as either", user);
		x->uid = pw->pw_uid;
		x->gid = pw->pw_gid;
	}
	x->fd = open(path, O_PATH | O_CLOEXEC);
	if (x->fd < 0)
		return werr_set(err, errno, "cannot find the egress proxy %s: reinstall warden or set "
		                "WARDEN_EGRESS", path);
	return 0;
}

/* Every capability out of the bounding and ambient sets (as root, before
 * the uid change: PR_CAPBSET_DROP needs CAP_SETPCAP). */
static int drop_caps(bool bounding)
{
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -1;
	for (int c = 0; bounding && c <= CAP_LAST_CAP + 8; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
			return -1;
	return 0;
}

static char **egress_env(void)
{
	static const char *const keep[] = { "ASAN_OPTIONS=", "UBSAN_OPTIONS=" };
	char **env = xcalloc(ARRAY_SIZE(keep) + 1, sizeof(char *));
	size_t n = 0;

	for (char **e = environ; *e; e++)
		for (size_t i = 0; i < ARRAY_SIZE(keep); i++)
			if (!strncmp(*e, keep[i], strlen(keep[i])))
				env[n++] = *e;
	return env;
}

pid_t sv_egress_spawn(const struct sv_egress_exe *x, int sock, struct werr *err)
{
	static char *const argv[] = { "warden-egress", NULL };
	char **env = egress_env();
	bool tty_err = isatty(2);
	pid_t pid = fork();

	if (pid < 0) {
		free(env);
		werr_set(err, errno, "starting the egress proxy");
		return -1;
	}
	if (pid > 0) {
		free(env);
		return pid;
	}
	{
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		/* above every target first, so that no dup2 below clobbers a source;
		 * the binary's fd stays open across execveat (a script given as
		 * WARDEN_EGRESS, the tests' hostile fake, is run through
		 * /dev/fd/N); warden-egress closes every fd above 3 first thing */
		int exe = fcntl(x->fd, F_DUPFD, 16), s = fcntl(sock, F_DUPFD_CLOEXEC, 16);
		sigset_t none;

		if (null < 0 || exe < 0 || s < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
		    (tty_err && dup2(null, 2) < 0) || dup2(s, WEGRESS_FD) < 0)
			_exit(125);
		setsid();
		/* Privileged step: give up root for good before the proxy runs.
		 * The capability sets first (CAP_SETPCAP is still held), then
		 * groups, gid, uid; read back. */
		if (drop_caps(x->drop) < 0)
			_exit(125);
		if (x->drop &&
		    (setgroups(0, NULL) < 0 || setresgid(x->gid, x->gid, x->gid) < 0 ||
		     setresuid(x->uid, x->uid, x->uid) < 0 || getuid() != x->uid ||
		     geteuid() != x->uid || getegid() != x->gid || setuid(0) == 0)) {
			fprintf(stderr, "warden: could not switch the egress proxy to its user\n");
			_exit(125);
		}
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(125);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		syscall(SYS_execveat, exe, "", argv, env, AT_EMPTY_PATH);
		fprintf(stderr, "warden: cannot run the egress proxy: %s; reinstall warden or set "
		        "WARDEN_EGRESS\n", strerror(errno));
		_exit(125);
	}
}

void sv_egress_exe_close(struct sv_egress_exe *x)
{
	closep(&x->fd);
}

/* --- `warden doctor` ----------------------------------------------------------
 * warden-egress started as a session's would be (as root as user), given a
 * CONFIG, its READY awaited (it has confined itself: egress/confine.c works
 * on this kernel), then its socket closed: it exits 0 on that EOF.  Each
 * wait is bounded (10 s), then it is killed: doctor never hangs on it. */
#define PROBE_MS 10000

static const char *probe_end(pid_t pid, int pidfd, bool ready, char *buf, size_t len)
{
	struct pollfd pf = { .fd = pidfd, .events = POLLIN };
	int st = 0;

	if (!ready || pidfd < 0 || poll(&pf, 1, PROBE_MS) <= 0)
		kill(pid, SIGKILL);
	if (waitpid(pid, &st, 0) != pid)
		return "could not be reaped";
	if (WIFSIGNALED(st) && ready)
		snprintf(buf, len, "did not end on its socket's EOF: killed after %d s", PROBE_MS / 1000);
	else if (WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS)
		snprintf(buf, len, "was killed by SIGSYS: a call its seccomp filter does not allow "
		         "(egress/confine.c) on this kernel or libc");
	else if (WIFSIGNALED(st))
		snprintf(buf, len, "was killed by signal %d", WTERMSIG(st));
	else if (WEXITSTATUS(st) || !ready)
		snprintf(buf, len, "exited %d before it was ready", WEXITSTATUS(st));
	else
		return NULL;
	return buf;
}

int wegress_probe(const char *user, struct werr *err)
{
	struct sv_egress_exe x;
	struct wegress_conf conf = { .fd_reserve = 64 };
	struct wbuf b;
	int sp[2], pidfd;
	bool ready = false;
	char log[WEGRESS_LOG_MAX + 1] = "", how[160];
	const char *end;
	pid_t pid;

	if (sv_egress_prepare(&x, user, err) < 0)
		return -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
		sv_egress_exe_close(&x);
		return werr_set(err, errno, "a socketpair for the egress proxy");
	}
	pid = sv_egress_spawn(&x, sp[1], err);
	close(sp[1]);
	sv_egress_exe_close(&x);
	if (pid < 0) {
		close(sp[0]);
		return -1;
	}
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	wbuf_init(&b, WEGRESS_FRAME_MAX);
	if (wegress_config(&b, &conf, err) == 0 &&
	    send(sp[0], b.d, b.len, MSG_NOSIGNAL) == (ssize_t)b.len) {
		struct pollfd pf = { .fd = sp[0], .events = POLLIN };

		/* LOG frames (its warnings) before READY are kept: the last one
		 * says why it stopped */
		while (!ready && poll(&pf, 1, PROBE_MS) > 0) {
			struct wegress_msg m;
			struct werr e = { 0 };
			ssize_t got = recv(sp[0], b.d, b.max, 0);

			if (got <= 0 || wegress_decode(b.d, (size_t)got, true, &m, &e) < 0)
				break;
			if (m.type == WE_LOG)
				snprintf(log, sizeof(log), "%s", m.text);
			ready = m.type == WE_READY;
			wegress_msg_free(&m);
		}
	}
	wbuf_free(&b);
	close(sp[0]);   /* its EOF: it ends */
	end = probe_end(pid, pidfd, ready, how, sizeof(how));
	if (pidfd >= 0)
		close(pidfd);
	if (!end)
		return 0;
	return werr_set(err, 0, "it %s%s%s", end, log[0] ? ": " : "", log);
}
