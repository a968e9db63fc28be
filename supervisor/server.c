/* warden serve --stdio, warden mcp and warden chat: the supervisor half of the
 * privilege split (design.md §2).
 *
 *   1. load every profile the user allowed, and resolve the workspace
 *      roots (trusted input: the command line and the policy files);
 *   2. start one cgroup watchdog for the whole server;
 *   3. start the broker (warden-broker, supervisor/broker.c) with a
 *      socketpair on its fd 3 and the caller's config and data directories
 *      on fds 4 and 5 -- as root, as its own system user;
 *   4. serve it in one epoll loop until it exits or misbehaves, then kill
 *      every jail and exit with the broker's status.
 *
 * The supervisor never parses JSON from the broker and never links
 * libcurl; the broker never holds a capability or a jail's fds. */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <json-c/json.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proxy.h"
#include "session.h"
#include "sv.h"
#include "warden/supervisor.h"
#include "warden/log.h"
#include "warden/util.h"

static void quit(struct sv *sv, int status)
{
	wloop_quit(&sv->loop, status);
}

static void on_broker(struct wloop *l, struct wsrc *src, uint32_t events)
{
	struct sv *sv = sv_of(l);
	struct werr err = { 0 };
	struct wmsg m;
	int rc;

	if ((events & EPOLLOUT) && wloop_peer_writable(l))
		sess_resume_output(sv);
	if (sv->loop.quitting)
		return;
	if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		return;
	if (wconn_fill(&sv->broker, &err) < 0) {
		/* EOF: the broker is gone; its exit status comes by pidfd */
		wloop_rearm(&sv->loop, src, 0);
		if (!sv->broker.eof)
			quit(sv, 125);
		sess_close_all(sv, "the broker ended");
		return;
	}
	while (!sv->loop.quitting && (rc = wconn_next(&sv->broker, &m, &err)) != 0) {
		if (rc < 0 || sv_dispatch(sv, &m) < 0) {
			if (rc < 0)
				wlog_error("malformed frame from the broker: %s; ending it", err.msg);
			wmsg_free(&m);
			if (sv->broker_pid > 0)
				kill(sv->broker_pid, SIGKILL);
			quit(sv, 125);
			return;
		}
		wmsg_free(&m);
	}
}

static void on_broker_exit(struct wloop *l, struct wsrc *src, uint32_t events)
{
	struct sv *sv = sv_of(l);
	siginfo_t si = { 0 };

	while (syscall(SYS_waitid, P_PIDFD, src->fd, &si, WEXITED, NULL) < 0 && errno == EINTR)
		;
	wloop_unwatch(&sv->loop, src);
	sv->broker_pid = 0;
	quit(sv, si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status);
}

static void on_signal(struct wloop *l, struct wsrc *src, uint32_t events)
{
	struct sv *sv = sv_of(l);
	struct signalfd_siginfo si;

	while (read(src->fd, &si, sizeof(si)) == sizeof(si)) {
		if (sv->broker_pid > 0)
			kill(sv->broker_pid, SIGTERM);
		quit(sv, 128 + (int)si.ssi_signo);
	}
}

/* --- starting the broker ---------------------------------------------------- */

/* --- the command line --------------------------------------------------------- */


static int add_policy(struct sv *sv, struct wpolicy *p)
{
	for (size_t i = 0; i < sv->n_pols; i++)
		if (!strcmp(sv->pols[i]->name, p->name)) {
			policy_free(p);
			return 0;
		}
	sv->pols = realloc(sv->pols, (sv->n_pols + 1) * sizeof(*sv->pols));
	if (!sv->pols)
		abort();
	sv->pols[sv->n_pols++] = p;
	return 0;
}

/* Every allowed profile is loaded now, so a broken one fails at start with
 * its file:line:column, never in the middle of a conversation. */
static int load_policies(struct sv *sv, const struct wserve_opts *o, struct werr *err)
{
	struct wpolicy *p = NULL;

	if (o->policy_file) {
		if (policy_load_file(o->policy_file, &p, err) < 0)
			return -1;
		add_policy(sv, p);
	}
	/* without --profile or --policy the default is "workspace", also when
	 * --allow-profile names others: those are allowed, never the default */
	if (!o->named_default && !o->policy_file) {
		if (policy_load_profile("workspace", &p, err) < 0)
			return -1;
		add_policy(sv, p);
	}
	for (size_t i = 0; i < o->n_profiles; i++) {
		if (policy_load_profile(o->profiles[i], &p, err) < 0)
			return -1;
		add_policy(sv, p);
	}
	/* --net and --allow shape every profile now, once: a session's "open"
	 * only picks one of these, so the broker can never widen a list */
	for (size_t i = 0; i < sv->n_pols; i++)
		if (sv_apply_net(sv->pols[i], o->net, o->allow, o->n_allow, err) < 0)
			return -1;
	return 0;
}

static int load_roots(struct sv *sv, const struct wserve_opts *o, struct werr *err)
{
	char ws[PATH_MAX];

	if (sv_resolve_workspace(o->n_roots ? o->roots[0] : ".", ws, err) < 0)
		return -1;
	sv->roots = xcalloc(o->n_roots + 1, sizeof(char *));
	sv->roots[sv->n_roots++] = xstrdup(ws);
	for (size_t i = 1; i < o->n_roots; i++) {
		if (sv_resolve_workspace(o->roots[i], ws, err) < 0)
			return -1;
		sv->roots[sv->n_roots++] = xstrdup(ws);
	}
	return 0;
}

/* chat: the sandbox profiles named in the user's own config.json
 * (sandbox_profile, at the top and in each chat profile) are allowed too;
 * the user wrote them.  A config that does not parse is the broker's to
 * report, with its line; here it only allows nothing. */
static void config_profiles(struct wserve_opts *o)
{
	struct werr err = { 0 };
	_cleanup_free_ char *dir = sv_xdg_dir("XDG_CONFIG_HOME", ".config", &err), *path = NULL;
	json_object *root, *v, *profs;

	if (!dir)
		return;
	path = xasprintf("%s/config.json", dir);
	root = json_object_from_file(path);
	if (!root)
		return;
	if (json_object_object_get_ex(root, "sandbox_profile", &v) && json_object_is_type(v, json_type_string) &&
	    o->n_profiles < ARRAY_SIZE(o->profiles))
		o->profiles[o->n_profiles++] = strdup(json_object_get_string(v));
	if (json_object_object_get_ex(root, "profiles", &profs) && json_object_is_type(profs, json_type_object)) {
		json_object_object_foreach(profs, name, prof) {
			(void)name;
			if (json_object_object_get_ex(prof, "sandbox_profile", &v) &&
			    json_object_is_type(v, json_type_string) && o->n_profiles < ARRAY_SIZE(o->profiles))
				o->profiles[o->n_profiles++] = strdup(json_object_get_string(v));
		}
	}
	json_object_put(root);
}

static int set_max_sessions(struct sv *sv, const struct wserve_opts *o)
{
	struct rlimit rl;
	size_t want = o->max_sessions ? o->max_sessions : SV_MAX_SESSIONS, room = want;

	sv->nofile = 0;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		sv->nofile = (uint64_t)rl.rlim_cur;
		/* the whole limit but the server's reserve: the jails' proxies'
		 * connections live in warden-egress's fd table (issue 21), and
		 * a proxy jail's listener copy is within its session's 16 */
		room = rl.rlim_cur > SV_FDS_RESERVE ? (size_t)((rl.rlim_cur - SV_FDS_RESERVE) / SV_FDS_PER_SESSION) : 0;
	}
	if (o->max_sessions && room < want) {
		wlog_error("--max-sessions %zu needs about %zu open files and the limit is %" PRIu64
		           " (room for %zu sessions); raise it (ulimit -n %zu, or LimitNOFILE= in a "
		           "systemd unit) or ask for fewer", want,
		           want * SV_FDS_PER_SESSION + SV_FDS_RESERVE, sv->nofile, room,
		           want * SV_FDS_PER_SESSION + SV_FDS_RESERVE);
		return -1;
	}
	sv->max_sessions = room < want ? room : want;
	sv->max_by_nofile = room < want;
	if (!sv->max_sessions) {
		wlog_error("the open-files limit (%" PRIu64 ") leaves no room for a session; raise it "
		           "(ulimit -n %d)", sv->nofile, SV_FDS_RESERVE + SV_FDS_PER_SESSION);
		return -1;
	}
	return 0;
}

int sv_serve(const struct wserve_opts *opts, char **rest, int n_rest, bool chat)
{
	struct sv *sv = xcalloc(1, sizeof(*sv));
	struct wserve_opts o = *opts;
	struct werr err = { 0 };
	char **bargv = NULL;
	int sp[2] = { -1, -1 }, watchdog = -1, status = 125, pidfd;
	struct sv_listen ls = SV_LISTEN_INIT;
	sigset_t mask;
	struct rlimit rl;

	sv->loop.ep = -1;
	sv->reg.dir_fd = sv->reg.lock_fd = -1;
	sv->broker.fd = -1;
	if (!chat && !o.mcp && !o.stdio == !o.listen) {
		wlog_error("serve: say how to serve: --stdio (JSON lines on stdin and stdout) or "
		           "--listen ADDR (WebSocket and HTTP), one of them");
		status = 2;
		goto out;
	}
	if (chat)
		config_profiles(&o);
	if (load_policies(sv, &o, &err) < 0 || load_roots(sv, &o, &err) < 0 ||
	    waudit_open(o.audit_log, &sv->audit, &err) < 0 || sv_open_reg(&sv->reg, &err) < 0) {
		wlog_error("%s", err.msg);
		goto out;
	}
	/* Many sessions hold many fds: use what we are given (the soft
	 * limit up to the hard one; the jails get their policy's open_files,
	 * applied after they closed ours: jail/enter.c). */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (set_max_sessions(sv, &o) < 0)
		goto out;
	/* as root, the egress proxy's process runs as the broker's user */
	wproxy_user(o.broker_user);
	sv->pool_size = o.pool;
	sv->pool_idle_ms = (uint64_t)o.pool_idle_s * 1000;
	sv->chat = chat;
	sv->edit_ok = chat && isatty(0) && isatty(1);
	sv->learn_all = o.learn;
	wcg_gc();
	watchdog = wreaper_start_server();

	/* The signals we act on come through a signalfd.  In chat, Ctrl-C is
	 * the broker's (it interrupts a block or the model), never ours. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	if (chat) {
		signal(SIGINT, SIG_IGN);
		signal(SIGQUIT, SIG_IGN);
	} else {
		sigaddset(&mask, SIGINT);
		sigaddset(&mask, SIGQUIT);
	}
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (o.listen && sv_listen_prepare(&o, sv->roots, sv->n_roots, &ls, &err) < 0) {
		wlog_error("%s", err.msg);
		goto out;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0) {
		wlog_error("socketpair: %s", strerror(errno));
		goto out;
	}
	bargv = xcalloc((size_t)n_rest + 5, sizeof(char *));
	{
		int b = 0;

		bargv[b++] = "warden-broker";
		/* the broker's mode is all that differs between serve and mcp: the
		 * supervisor serves the same frames, with the same checks, to both */
		bargv[b++] = chat ? "chat" : o.mcp ? "mcp" : "serve";
		if (!chat && !o.mcp)
			bargv[b++] = o.listen ? "--listen" : "--stdio";
		if (o.listen && o.tls_cert)
			bargv[b++] = "--tls";
		for (int i = 0; i < n_rest; i++)
			bargv[b++] = rest[i];
	}
	{
		struct sv_broker_start bs = { .argv = bargv, .sock = sp[1], .user = o.broker_user,
		                              .listen_fds = o.listen ? ls.fds : NULL };

		memcpy(bs.files, o.files, sizeof(bs.files));
		sv->broker_pid = sv_start_broker(&bs, &err);
	}
	close(sp[1]);
	sv_listen_handed(&ls);   /* the broker alone holds the listener now */
	if (sv->broker_pid < 0) {
		wlog_error("%s", err.msg);
		goto out;
	}
	if (wloop_init(&sv->loop, &err) < 0) {
		wlog_error("%s", err.msg);
		close(sp[0]);
		goto out;
	}
	if (sess_pool_init(sv, &err) < 0) {
		wlog_error("%s", err.msg);
		close(sp[0]);
		goto out;
	}
	fcntl(sp[0], F_SETFL, O_NONBLOCK);
	wconn_init(&sv->broker, sp[0]);
	sp[0] = -1;
	wloop_watch(&sv->loop, &sv->broker_src, sv->broker.fd, EPOLLIN, on_broker, sv);
	wloop_peer(&sv->loop, &sv->broker, &sv->broker_src);
	pidfd = (int)syscall(SYS_pidfd_open, sv->broker_pid, 0);
	wloop_watch(&sv->loop, &sv->broker_pid_src, pidfd, EPOLLIN, on_broker_exit, sv);
	wloop_watch(&sv->loop, &sv->sig_src, signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK), EPOLLIN,
	            on_signal, sv);

	while (!sv->loop.quitting) {
		/* jail starts that can wait (sess_idle) run only when no event
		 * is ready: one per idle moment */
		bool idle = sess_idle_pending(sv);
		int n = wloop_wait(&sv->loop, idle ? 0 : -1);

		if (n < 0)
			break;
		if (n == 0 && idle && !sv->loop.quitting)
			sess_idle(sv);
		while (sv->grave) {
			struct sv_jail *j = sv->grave;
			sv->grave = j->grave_next;
			free(j);
		}
	}
	status = sv->loop.exit_status;
out:
	sess_close_all(sv, "warden is exiting");
	wproxy_shutdown();   /* after every jail's proxy: their last records */
	while (sv->grave) {
		struct sv_jail *j = sv->grave;
		sv->grave = j->grave_next;
		free(j);
	}
	if (sv->broker_pid > 0) {
		/* the broker is asked to go, then made to */
		kill(sv->broker_pid, SIGTERM);
		for (int i = 0; i < 50 && waitpid(sv->broker_pid, NULL, WNOHANG) == 0; i++)
			usleep(10000);
		kill(sv->broker_pid, SIGKILL);
		waitpid(sv->broker_pid, NULL, 0);
	}
	if (sv->broker.fd >= 0)
		wconn_flush(&sv->broker, &err);
	wconn_free(&sv->broker);
	wloop_free(&sv->loop);
	closep(&watchdog);
	sv_listen_close(&ls);
	wprotect_reg_close(&sv->reg);   /* every jail is gone */
	waudit_close(sv->audit);
	for (size_t i = 0; i < sv->n_pols; i++)
		policy_free(sv->pols[i]);
	free(sv->pols);
	for (size_t i = 0; i < sv->n_roots; i++)
		free(sv->roots[i]);
	free(sv->roots);
	free(bargv);
	free(sv);
	return status;
}
