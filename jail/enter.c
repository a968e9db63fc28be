/* Starting a jail: the parent's half (jail_start) and the child's entry
 * order (jail_child), in the fixed order of docs/design.md:
 *
 *   parent                               child
 *   as root: a host uid slot, idmapped
 *   trees of the writable binds (idmap.c)
 *   clone3(NEWUSER|NEWNS|NEWPID|NEWNET|
 *          NEWIPC|NEWUTS, pidfd,          PDEATHSIG=SIGKILL; wait for "go"
 *          [INTO_CGROUP]); as root from a
 *          helper with the slot's ids only
 *          that first joined the v1 groups
 *          (the jail is born in them)
 *   uid_map/gid_map
 *   send "go"                       -->     5  a netlink socket and the
 *   receive them                    <--        watch's packet socket, sent
 *   meanwhile: lo up (loopback,                (SYNC_NETFDS); new session
 *   proxy) and the network watch     3-4 mounts, pivot_root (jail/mounts.c)
 *   through them (jail/netwatch.c);     6  hostname
 *   attach cgroups
 *   send "attached" (with or        -->     wait for "attached" (without
 *   without the watch)                      the watch: close it)
 *                                       5b proxy: listen on 127.0.0.1:3128,
 *                                          send it (SYNC_PROXY), close it
 *                                       0  new cgroup namespace (rooted at the
 *                                          jail's cgroup)
 *                                       7  stdio, close every other fd
 *                                       8  rlimits (after 7: see below)
 *                                       9  drop capabilities   10 no_new_privs
 *                                       11 Landlock            12 seccomp
 *   receive the seccomp listener    <--   send the listener fd
 *                                       13 clone(CLONE_VM|CLONE_VFORK):
 *                                          the child execve()s the
 *                                          program; this process stays as
 *                                          the jail's init (jail/init.c)
 *   wait for STARTED or an error    <--  init: STARTED or EXEC_FAILED
 *   (keep the socket: init's reports)    init: SWEPT, STATUS (jail/init.c)
 *
 * Until step 9 the child still holds capabilities inside its own user
 * namespace (which own nothing on the host); from step 9 on, any failure
 * ends the child: it never tries to recover.  Every failure travels back
 * over the sync socket as a struct werr, so one clear line reaches the user
 * (crun's idea).  After STARTED the socket stays open: init reports the
 * program's real wait status on it, and acks freezes (jail_freeze).
 *
 * The cgroup attach overlaps steps 3-6 (jail_begin; with defer_go the
 * session server's attacher does it, and jail_go sends "attached").  As
 * root there is nothing left to attach on cgroup v1: the helper that
 * creates the jail joined its groups (jail_clone_as, wcg_join_fds), which
 * takes no global lock, and the jail is born in them.  On cgroup v1 the first write to
 * cgroup.procs after a while waits for an RCU grace period (the kernel's
 * cgroup_threadgroup_rwsem; 1-20 ms on this VM), and nothing in 3-6 needs
 * the cgroup: it is warden's own code, which forks nothing and allocates
 * little, so its memory is charged to warden's group for that time.  The
 * child waits for "attached" before anything the jail controls: the
 * cgroup namespace (0, which must be rooted at the jail's group, so it
 * moved after the wait), the fds, the limits and the program.
 *
 * Steps 7 and 8 are swapped from ../shared/design.md's order: the child
 * inherits every fd the supervisor holds (hundreds with many sessions),
 * and an open-files limit applied first (say 64) leaves no free number
 * below it, so moving stdio failed with EMFILE once warden held more fds
 * than the policy allows.  Closing first makes the limit count only what
 * the jail keeps (0-4).  Nothing between the two steps needs a closed fd. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <linux/sched.h>

#include "jail_impl.h"
#include "warden/filter.h"
#include "warden/util.h"

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* --- child ------------------------------------------------------------ */

#define child_fail jail_child_fail

static int set_rlimit(int res, uint64_t soft, uint64_t hard, const char *what, struct werr *err)
{
	struct rlimit rl = { .rlim_cur = soft, .rlim_max = hard };
	struct rlimit old;

	/* Never raise above what warden itself was given.  The kernel refuses
	 * to raise a hard limit without CAP_SYS_RESOURCE in the initial user
	 * namespace, which this process (in its own user namespace) never has:
	 * a set that succeeds raised nothing, so the current limits are read
	 * only when it fails (EPERM), to lower the request to them. */
	if (setrlimit(res, &rl) == 0)
		return 0;
	if (getrlimit(res, &old) == 0) {
		if (old.rlim_max != RLIM_INFINITY && rl.rlim_max > old.rlim_max)
			rl.rlim_max = old.rlim_max;
		if (rl.rlim_cur > rl.rlim_max)
			rl.rlim_cur = rl.rlim_max;
	}
	if (setrlimit(res, &rl) < 0)
		return werr_set(err, errno, "setting the %s limit", what);
	return 0;
}

static int child_rlimits(const struct jail_spec *spec, struct werr *err)
{
	const struct wlimits *l = &spec->pol->limits;

	if (set_rlimit(RLIMIT_CORE, 0, 0, "core size", err) < 0)
		return -1;
	if (l->file_size && set_rlimit(RLIMIT_FSIZE, l->file_size, l->file_size, "file size", err) < 0)
		return -1;
	if (l->open_files && set_rlimit(RLIMIT_NOFILE, l->open_files, l->open_files, "open files", err) < 0)
		return -1;
	if (l->cpu_ms) {
		/* per process; the supervisor also counts the whole group when a
		 * cgroup can.  SIGXCPU at the limit, SIGKILL a second later. */
		uint64_t s = (l->cpu_ms + 999) / 1000;
		if (set_rlimit(RLIMIT_CPU, s, s + 1, "cpu time", err) < 0)
			return -1;
	}
	if (spec->rlimit_memory && l->memory &&
	    set_rlimit(RLIMIT_AS, l->memory, l->memory, "address space", err) < 0)
		return -1;
	if (spec->rlimit_pids && l->pids &&
	    set_rlimit(RLIMIT_NPROC, l->pids, l->pids, "process count", err) < 0)
		return -1;
	return 0;
}

/* Step 7: stdio onto 0-2, the sync socket onto 3 (close-on-exec), an optional
 * kept fd onto 4, the network watch and init's signalfd (when there is a
 * watch) onto JAIL_WATCH_FD and JAIL_WATCH_SIG_FD (close-on-exec), and
 * every other fd closed. */
static int child_fds(const struct jail_spec *spec, int *sync, int watch[2], struct werr *err)
{
	int in = spec->stdin_fd, keep = spec->keep_fd;
	int fds[3];
	int i;

	if (in < 0) {
		in = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (in < 0)
			return werr_set(err, errno, "opening /dev/null");
	}
	fds[0] = in;
	fds[1] = spec->stdout_fd;
	fds[2] = spec->stderr_fd;
	/* Move everything we still need above the target numbers first, so
	 * dup2 never overwrites a source that is still to be copied. */
	for (i = 0; i < 3; i++)
		if ((fds[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 10)) < 0)
			return werr_set(err, errno, "duplicating stdio");
	if ((*sync = fcntl(*sync, F_DUPFD_CLOEXEC, 10)) < 0)
		return werr_set(err, errno, "duplicating the sync socket");
	if (keep >= 0 && (keep = fcntl(keep, F_DUPFD_CLOEXEC, 10)) < 0)
		return werr_set(err, errno, "duplicating the control fd");
	for (i = 0; i < 2 && watch[0] >= 0; i++)
		if ((watch[i] = fcntl(watch[i], F_DUPFD_CLOEXEC, 10)) < 0)
			return werr_set(err, errno, "duplicating the network watch");
	for (i = 0; i < 3; i++)
		if (dup2(fds[i], i) < 0)
			return werr_set(err, errno, "setting up fd %d", i);
	if (dup3(*sync, 3, O_CLOEXEC) < 0)
		return werr_set(err, errno, "placing the sync socket");
	*sync = 3;
	if (keep >= 0) {
		if (dup2(keep, 4) < 0) /* no O_CLOEXEC: the driver inherits it */
			return werr_set(err, errno, "placing the control fd");
	}
	if (watch[0] >= 0) {
		if (dup3(watch[0], JAIL_WATCH_FD, O_CLOEXEC) < 0 ||
		    dup3(watch[1], JAIL_WATCH_SIG_FD, O_CLOEXEC) < 0)
			return werr_set(err, errno, "placing the network watch");
		if (keep < 0)
			close(4);
	}
	if (syscall(SYS_close_range, watch[0] >= 0 ? JAIL_WATCH_SIG_FD + 1 : keep >= 0 ? 5 : 4,
	            ~0U, 0) < 0)
		return werr_set(err, errno, "closing inherited fds");
	return 0;
}


static __attribute__((noreturn)) void jail_child(const struct jail_spec *spec,
                                                 const struct wplan *plan, int sync)
{
	struct werr e = { 0 };
	struct sync_frame f = { .type = SYNC_READY };
	sigset_t all;
	char go;
	int notify_fd = -1;
	int abi = 0;
	int watch[2] = { -1, -1 };   /* step 5: the watch's socket, init's signalfd */

	/* If warden dies, so does the jail (and with pid 1, its namespace).
	 * The parent may already be gone: then "go" never comes (EOF). */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			signal(s, SIG_DFL);
	if (read(sync, &go, 1) != 1 || go != SYNC_GO)
		_exit(125);
	/* 5, first of all: the sockets warden sets this namespace up with
	 * while we mount (jail/netwatch.c); the watch's socket stays, for
	 * init, with init's signalfd made now, before the seccomp filter */
	{
		int nl, fds[2];
		sigset_t every;

		if (jail_net_socks(&nl, &watch[0], &e) < 0)
			child_fail(sync, SYNC_ERROR, &e);
		sigfillset(&every);
		if (watch[0] >= 0 && (watch[1] = signalfd(-1, &every, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
			close(watch[0]);
			watch[0] = -1;
		}
		fds[0] = nl;
		fds[1] = watch[0];
		if (jail_sync_send_fds(sync, SYNC_NETFDS, fds, watch[0] >= 0 ? 2 : 1,
		                       "the jail's network sockets", &e) < 0)
			_exit(125);
		close(nl);
	}

	wtiming("released");
	if (spec->new_session && setsid() < 0) {
		werr_set(&e, errno, "setsid");
		child_fail(sync, SYNC_ERROR, &e);
	}
	/* No setgroups here: as root the jail is cloned only by the slot's
	 * helper (jail_clone_as), which cleared the groups and checked that
	 * getgroups() is 0 before its clone3, and the jail inherits them;
	 * unprivileged, warden's own groups stay (mapped to nobody) and
	 * setgroups is denied in the jail's namespace. */
	wtiming("setsid");
	/* 3-4 */
	if (jail_mounts(spec, plan, &e) < 0)
		child_fail(sync, SYNC_ERROR, &e);
	wtiming("mounts");
	/* 6 */
	{
		const char *h = spec->hostname ? spec->hostname : "warden";
		if (sethostname(h, strlen(h)) < 0 || setdomainname("", 0) < 0) {
			werr_set(&e, errno, "setting the hostname");
			child_fail(sync, SYNC_ERROR, &e);
		}
	}
	wtiming("hostname");
	/* the parent attached us to the jail's cgroups meanwhile (see the
	 * header); EOF: it failed and kills us */
	if (read(sync, &go, 1) != 1 || (go != SYNC_ATTACHED && go != SYNC_ATTACHED_BARE))
		_exit(125);
	wtiming("attached (wait)");
	/* the network is set up now: without the watch, if warden could not */
	if (go == SYNC_ATTACHED_BARE) {
		closep(&watch[0]);
		closep(&watch[1]);
		watch[0] = watch[1] = -1;
	}
	/* 5b: lo is up (the parent did it); while the sync socket is still
	 * where the parent left it */
	if (spec->pol->net == WNET_PROXY && jail_net_proxy_listener(sync, &e) < 0)
		child_fail(sync, SYNC_ERROR, &e);
	/* 0. The cgroup namespace is created now, after the parent attached
	 * us, so the jail sees its own group as "/". */
	if (unshare(CLONE_NEWCGROUP) < 0) {
		werr_set(&e, errno, "creating the cgroup namespace");
		child_fail(sync, SYNC_ERROR, &e);
	}
	/* 7: before the rlimits, so RLIMIT_NOFILE never counts the
	 * supervisor's inherited fds (see the header) */
	if (child_fds(spec, &sync, watch, &e) < 0)
		child_fail(sync, SYNC_ERROR, &e);
	wtiming("fds");
	/* 8 */
	if (child_rlimits(spec, &e) < 0)
		child_fail(sync, SYNC_ERROR, &e);
	wtiming("rlimit");
	/* 9 */
	if (jail_drop_caps(&e) < 0)
		child_fail(sync, SYNC_ERROR, &e);
	/* 10 */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
		werr_set(&e, errno, "setting no_new_privs");
		child_fail(sync, SYNC_ERROR, &e);
	}
	wtiming("caps+nnp");
	/* 11 */
	if (jail_landlock(spec, plan, &abi, &e) < 0)
		child_fail(sync, SYNC_ERROR, &e);
	wtiming("landlock");
	/* 12: last, so the filter does not have to allow any setup step */
	if (spec->prog ? wfilter_load_prog(spec->prog, &notify_fd, &e) < 0
	               : spec->filter && wfilter_load_as(spec->filter, spec->learn, &notify_fd, &e) < 0)
		child_fail(sync, SYNC_ERROR, &e);
	wtiming("seccomp load");
	f.landlock_abi = abi;
	{
		char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
		struct iovec iov = { .iov_base = &f, .iov_len = sizeof(f) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
		if (notify_fd >= 0) {
			struct cmsghdr *c;
			mh.msg_control = cbuf;
			mh.msg_controllen = sizeof(cbuf);
			c = CMSG_FIRSTHDR(&mh);
			c->cmsg_level = SOL_SOCKET;
			c->cmsg_type = SCM_RIGHTS;
			c->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(c), &notify_fd, sizeof(int));
		}
		/* An fd in flight over a unix socket counts against the
		 * sender's RLIMIT_NOFILE, per user: with many jails starting at
		 * once (the session server) the listeners the supervisor has
		 * not taken yet can exceed a small open_files, and sendmsg
		 * fails with ETOOMANYREFS until it takes some.  Wait for that
		 * (1 ms at a time, 10 s at most); any other failure ends the
		 * child. */
		for (int tries = 0; sendmsg(sync, &mh, MSG_NOSIGNAL) < 0; tries++) {
			struct timespec ms1 = { 0, 1000000 };

			if (errno == EINTR)
				continue;
			if (errno != ETOOMANYREFS || tries >= 10000)
				_exit(125);
			nanosleep(&ms1, NULL);
		}
		if (notify_fd >= 0)
			close(notify_fd);
	}
	wtiming("ready sent");
	/* 13: init starts the program, which execs (jail/init.c) */
	jail_init(spec, sync, watch[0] >= 0);
}

/* --- parent ----------------------------------------------------------- */

static int write_id_maps(pid_t pid, const struct wplan *plan, struct werr *err)
{
	char path[64], line[64];

	/* An unprivileged caller maps to itself: the jail's uid/gid are the
	 * caller's, so files it writes in the workspace belong to the caller;
	 * it must deny setgroups before writing gid_map.  As root the jail is
	 * uid/gid 0 inside and the slot's ids on the host (never host 0); its
	 * writable binds are idmapped to their owners (jail/idmap.c). */
	if (plan->uid != 0) {
		snprintf(path, sizeof(path), "/proc/%d/setgroups", pid);
		if (write_file_str(path, "deny", err) < 0)
			return -1;
	}
	snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
	snprintf(line, sizeof(line), "%u %u 1\n", plan->uid, plan->host_uid);
	if (write_file_str(path, line, err) < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/gid_map", pid);
	snprintf(line, sizeof(line), "%u %u 1\n", plan->gid, plan->host_gid);
	return write_file_str(path, line, err);
}

/* The proxy's listener as the child sent it: a listening TCP socket on
 * IPv4, or the jail is refused (an fd the child did not make is never
 * served). */
static int check_listener(int fd, struct werr *err)
{
	int v = 0;
	socklen_t l = sizeof(v);

	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &l) < 0 || !v)
		return werr_set(err, 0, "malformed report from the jail (the proxy's fd "
		                "is not listening)");
	l = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &l) < 0 || v != AF_INET)
		return werr_set(err, 0, "malformed report from the jail (the proxy's fd "
		                "is not a TCP/IPv4 socket)");
	return 0;
}

/* fd is a socket of domain. */
static bool is_domain(int fd, int domain)
{
	int v = 0;
	socklen_t l = sizeof(v);

	return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &l) == 0 && v == domain;
}

/* "attached", and whether the network watch is there. */
static char attached_byte(const struct jail *j)
{
	return j->watched ? SYNC_ATTACHED : SYNC_ATTACHED_BARE;
}

/* The child's first report after "go": its netlink socket and, when it
 * could make one, the watch's packet socket (jail/netwatch.c).  Set the
 * namespace up with them: lo, then the watch, whose socket stays in
 * j->watch_fd; the netlink socket is closed.  -1 with err when the child
 * died, sent something else, or lo cannot come up. */
static int net_setup(int sync, struct jail *j, enum wnet_mode mode, struct werr *err)
{
	struct sync_frame f;
	char cbuf[CMSG_SPACE(sizeof(int) * 2)];
	struct iovec iov = { .iov_base = &f, .iov_len = sizeof(f) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
	                     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	int fds[2] = { -1, -1 }, nfd = 0;
	bool watched;
	ssize_t n;

	struct pollfd pf = { .fd = sync, .events = POLLIN };

	/* it is the child's first act after "go"; 10 s: a child stopped
	 * from outside must not hold warden forever */
	while (poll(&pf, 1, 10000) < 0 && errno == EINTR)
		;
	if (!(pf.revents & (POLLIN | POLLHUP | POLLERR)))
		return werr_set(err, 0, "the jail did not start (no report in 10 s)");
	do
		n = recvmsg(sync, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); n > 0 && c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && !nfd) {
			nfd = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			if (nfd > 2)
				nfd = 2;   /* MSG_CTRUNC: the kernel closed the rest */
			memcpy(fds, CMSG_DATA(c), sizeof(int) * (size_t)nfd);
		}
	if (n != (ssize_t)sizeof(f) || f.type != SYNC_NETFDS || nfd < 1 ||
	    !is_domain(fds[0], AF_NETLINK) || (nfd == 2 && !is_domain(fds[1], AF_PACKET))) {
		closep(&fds[0]);
		wclose_later(&fds[1]);
		if (n == (ssize_t)sizeof(f) && f.type == SYNC_ERROR) {
			f.err.msg[sizeof(f.err.msg) - 1] = '\0';
			*err = f.err;
			err->exit_code = 125;
			return werr_wrap(err, "setting up the jail");
		}
		return werr_set(err, n < 0 ? errno : 0, n == 0 ? "the jail died while being set up"
		                : "malformed report from the jail (its network sockets)");
	}
	/* the copy is held whatever happens (j->watch_fd, dropped by
	 * wclose_later): a packet socket's last close is slow, and must not
	 * be the child's or init's.  WARDEN_NO_NET_WATCH (warden's own
	 * environment, the caller's): a jail as on a kernel without veth,
	 * its attempts only counted. */
	j->watch_fd = fds[1];
	if (jail_net_setup(fds[0], getenv("WARDEN_NO_NET_WATCH") ? -1 : fds[1], mode, &watched,
	                   err) < 0)
		return -1;
	j->watched = watched;
	return 0;
}

/* Read what the child reported so far: an error, or (proxy mode) PROXY +
 * the proxy's listener, READY (+ seccomp listener fd) then STARTED.  1 once
 * STARTED, 0 when the socket has nothing more now (it is non-blocking), -1
 * with err. */
static int read_report(int sync, struct jail *out, bool want_proxy, struct werr *err)
{
	bool reset = false;

	for (;;) {
		struct sync_frame f;
		char cbuf[CMSG_SPACE(sizeof(int))];
		struct iovec iov = { .iov_base = &f, .iov_len = sizeof(f) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
		                     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
		ssize_t n = recvmsg(sync, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		int fd = -1;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		/* The child's setup failed while "attached" was on its way: it
		 * exited with that byte unread, so the kernel reports a reset
		 * once (and clears it); its error report is still queued. */
		if (n < 0 && errno == ECONNRESET && !reset) {
			reset = true;
			continue;
		}
		if (n < 0)
			return werr_set(err, errno, "reading the jail's report");
		if (n == 0) /* EOF: the child died */
			return werr_set(err, 0, "the jail died while being set up");
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
			    c->cmsg_len == CMSG_LEN(sizeof(int)))
				memcpy(&fd, CMSG_DATA(c), sizeof(int));
		if ((size_t)n != sizeof(f)) {
			closep(&fd);
			return werr_set(err, 0, "malformed report from the jail");
		}
		f.err.msg[sizeof(f.err.msg) - 1] = '\0';
		switch (f.type) {
		case SYNC_PROXY:
			if (!want_proxy || out->ready || out->proxy_fd >= 0 || fd < 0) {
				closep(&fd);
				return werr_set(err, 0, "malformed report from the jail (a proxy "
				                "listener out of place)");
			}
			out->proxy_fd = fd;
			if (check_listener(fd, err) < 0)
				return -1;
			continue;
		case SYNC_READY:
			if (out->ready || out->notify_fd >= 0 || (want_proxy && out->proxy_fd < 0)) {
				closep(&fd);
				return werr_set(err, 0, "malformed report from the jail (%s)",
				                out->ready ? "a second READY" : "no proxy listener");
			}
			out->notify_fd = fd;
			out->landlock_abi = f.landlock_abi;
			out->landlock = f.landlock_abi > 0;
			out->ready = true;
			continue;
		case SYNC_STARTED:
			closep(&fd);
			if (!out->ready)
				return werr_set(err, 0, "malformed report from the jail");
			return 1;
		case SYNC_EXEC_FAILED:
		case SYNC_ERROR:
			closep(&fd);
			*err = f.err;
			if (f.type == SYNC_ERROR) {
				err->exit_code = 125;
				werr_wrap(err, "setting up the jail");
			}
			return -1;
		default:
			closep(&fd);
			return werr_set(err, 0, "unknown report %d from the jail", f.type);
		}
	}
}

/* The jail's entry when a helper creates it (jail_clone_as): called on the
 * jail's own stack, never returns. */
struct child_entry {
	const struct jail_spec *spec;
	const struct wplan *plan;
	int sp[2];
};

static __attribute__((noreturn)) void child_entry(void *p)
{
	const struct child_entry *c = p;

	close(c->sp[0]);
	jail_child(c->spec, c->plan, c->sp[1]);
}

int jail_begin(const struct jail_spec *spec, struct jail *out, struct werr *err)
{
	struct wplan plan;
	struct clone_args ca = { 0 };
	int sp[2] = { -1, -1 };
	int pidfd = -1;
	bool joined = false;    /* born in its v1 cgroups (the helper joined them) */
	long pid;

	memset(out, 0, sizeof(*out));
	out->pidfd = out->notify_fd = out->proxy_fd = out->sync_fd = out->slot_fd = -1;
	out->watch_fd = -1;
	out->watched = false;
	out->snmp_fd = out->snmp6_fd = -1;
	if (jail_plan(spec, &plan, err) < 0)
		return -1;
	/* As root: never host uid 0 (docs/design.md "Ids") */
	if (plan.uid == 0 && jail_idmap_prepare(&plan, spec, err) < 0) {
		jail_plan_free(&plan);
		return -1;
	}
	out->host_uid = plan.host_uid;
	out->host_gid = plan.host_gid;
	out->protect = plan.protect;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
		jail_plan_free(&plan);
		return werr_set(err, errno, "socketpair");
	}
	ca.flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET |
	           CLONE_NEWIPC | CLONE_NEWUTS | CLONE_PIDFD;
	ca.pidfd = (uint64_t)(uintptr_t)&pidfd;
	ca.exit_signal = SIGCHLD;
	if (spec->cg && wcg_clone_fd(spec->cg) >= 0 && plan.slot_fd < 0) {
		ca.flags |= CLONE_INTO_CGROUP;
		ca.cgroup = (uint64_t)wcg_clone_fd(spec->cg);
	}
	wtiming("plan+socket");
	if (plan.uid == 0 && plan.slot_fd < 0) {
		/* never: jail_idmap_prepare gives root a slot or fails.  Only the
		 * slot's helper clears root's groups for the jail (no setgroups
		 * in jail_child). */
		close(sp[0]);
		close(sp[1]);
		jail_plan_free(&plan);
		return werr_set(err, EPERM, "as root, a jail needs a host uid slot");
	}
	if (plan.slot_fd >= 0) {
		/* the helper, still root, joins the jail's v1 groups before it
		 * drops its ids; v2 groups (none on a v1-only host) are left to
		 * wcg_attach below, before the jail is told "attached" */
		struct child_entry ce = { .spec = spec, .plan = &plan, .sp = { sp[0], sp[1] } };
		int join[8], n_join = 0;

		ca.flags &= ~(uint64_t)CLONE_PIDFD;
		ca.pidfd = 0;
		/* the helper joins the v1 groups and the jail is born in them:
		 * no cgroup.procs write, no RCU grace period (wcg_join_fds) */
		if (spec->cg && (n_join = wcg_join_fds(spec->cg, join, ARRAY_SIZE(join), err)) < 0)
			pid = -1;
		else
			pid = jail_clone_as(&ca, plan.host_uid, plan.host_gid, join, (size_t)n_join,
			                    child_entry, &ce, &pidfd, err);
		for (int i = 0; i < n_join; i++)
			close(join[i]);
		joined = n_join > 0;
		if (pid < 0) {
			close(sp[0]);
			close(sp[1]);
			jail_plan_free(&plan);
			return -1;
		}
	} else
		pid = syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid < 0) {
		int e = errno;
		close(sp[0]);
		close(sp[1]);
		jail_plan_free(&plan);
		if (e == EPERM || e == ENOSPC || e == EINVAL)
			return werr_set(err, e, "creating the jail's namespaces (are user "
			                "namespaces enabled? see `warden doctor`)");
		return werr_set(err, e, "clone3");
	}
	if (pid == 0) {
		close(sp[0]);
		jail_child(spec, &plan, sp[1]);
	}
	close(sp[1]);
	out->pid = (pid_t)pid;
	out->pidfd = pidfd;
	/* the child waits for "go": nothing of the program has run yet, and
	 * init cannot have been reaped (it is ours), so the pid is the jail's */
	jail_net_open(out);

	/* v1 hierarchies always need the pid written; on v2 it is already in
	 * place when cloned into the group, and writing it again is a no-op. */
	if (write_id_maps(out->pid, &plan, err) < 0)
		goto fail;
	wtiming("clone+maps");
	if (write(sp[0], &(char){ SYNC_GO }, 1) != 1) {
		werr_set(err, errno, "starting the jail");
		goto fail;
	}
	/* lo and the network watch, while the child mounts */
	if (net_setup(sp[0], out, spec->pol->net, err) < 0)
		goto fail;
	wtiming("network set up");
	/* While the child mounts (see the header): attach it here, or (defer_go)
	 * the caller has it attached off its loop and calls jail_go. */
	if (!spec->defer_go &&
	    ((spec->cg && wcg_attach(spec->cg, out->pid, joined, err) < 0) ||
	     (send(sp[0], &(char){ attached_byte(out) }, 1, MSG_NOSIGNAL) != 1 &&
	      werr_set(err, errno, "starting the jail") < 0))) {
		/* A child whose setup failed meanwhile has exited (so the
		 * attach or the write failed): its own report says why. */
		struct pollfd p = { .fd = sp[0], .events = POLLIN };
		if (poll(&p, 1, 0) == 1 && (p.revents & POLLIN))
			(void)read_report(sp[0], out, spec->pol->net == WNET_PROXY, err);
		closep(&out->notify_fd);
		closep(&out->proxy_fd);
		wclose_later(&out->watch_fd);
		goto fail;
	}
	if (!spec->defer_go)
		wtiming("cgroup attach");
	out->want_proxy = spec->pol->net == WNET_PROXY;
	/* the rest is the child's: read its reports with jail_finish */
	out->sync_fd = sp[0];
	fcntl(out->sync_fd, F_SETFL, O_NONBLOCK);
	out->slot_fd = steal_fd(&plan.slot_fd);   /* released only once reaped */
	out->cg_joined = joined;
	jail_plan_free(&plan);
	return 0;
fail:
	close(sp[0]);
	kill(out->pid, SIGKILL);
	waitpid(out->pid, NULL, __WALL);
	wclose_later(&out->watch_fd);
	jail_plan_free(&plan);  /* the slot only now that the jail is reaped */
	close(out->pidfd);
	closep(&out->snmp_fd);
	closep(&out->snmp6_fd);
	out->pid = 0;
	out->pidfd = -1;
	return -1;
}

int jail_go(struct jail *j, struct werr *err)
{
	/* the child got "go" in jail_begin; this tells it that it is attached */
	if (j->sync_fd < 0 || send(j->sync_fd, &(char){ attached_byte(j) }, 1, MSG_NOSIGNAL) != 1)
		return werr_set(err, errno, "starting the jail");
	return 0;
}

int jail_finish(struct jail *j, struct werr *err)
{
	int rc;

	if (j->sync_fd < 0)
		return werr_set(err, 0, "the jail died while being set up");
	rc = read_report(j->sync_fd, j, j->want_proxy, err);
	if (rc > 0)
		wtiming("child ready+exec");
	return rc;
}

void jail_abort(struct jail *j)
{
	if (j->pid > 0) {
		kill(j->pid, SIGKILL);
		waitpid(j->pid, NULL, __WALL);
	}
	closep(&j->sync_fd);
	closep(&j->notify_fd);
	closep(&j->proxy_fd);
	closep(&j->pidfd);
	wclose_later(&j->watch_fd);   /* the jail is reaped: this is the last */
	closep(&j->slot_fd);   /* reaped: its host uid is free */
	closep(&j->snmp_fd);
	closep(&j->snmp6_fd);
	j->pid = 0;
}

int jail_start(const struct jail_spec *spec, struct jail *out, struct werr *err)
{
	int rc;

	if (jail_begin(spec, out, err) < 0)
		return -1;
	while ((rc = jail_finish(out, err)) == 0) {
		struct pollfd p = { .fd = out->sync_fd, .events = POLLIN };
		if (poll(&p, 1, -1) < 0 && errno != EINTR) {
			werr_set(err, errno, "waiting for the jail");
			break;
		}
	}
	if (rc > 0)
		return 0;
	jail_abort(out);
	return -1;
}
