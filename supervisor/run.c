/* wrun(): policy -> cgroup -> filter -> jail -> event loop -> result.
 *
 * The supervisor side of a run is a single-threaded epoll loop over:
 *   the jail's stdout and stderr pipes (relayed, never handed over),
 *   warden's stdin (relayed into a pipe, never blocking on it),
 *   the jail's pidfd (exit), a timerfd (wall time), a periodic timerfd
 *   (group cpu time), the seccomp listener (denied syscalls), and a
 *   signalfd (Ctrl-C and termination).
 * Memory stays flat whatever the program prints: one fixed buffer. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>

#include "warden/audit.h"
#include "warden/cgroup.h"
#include "warden/cmd.h"
#include "warden/filter.h"
#include "warden/jail.h"
#include "warden/notify.h"
#include "warden/reaper.h"
#include "warden/run.h"
#include "warden/sanitize.h"
#include "warden/util.h"
#include "sv.h"

#define RELAY_BUF (64 * 1024)
#define CPU_POLL_MS 100

const char *wreason_name(enum wreason r)
{
	static const char *const n[] = { "exited", "signaled", "timeout", "oom", "pids",
	                                 "cpu_time", "output", "error" };
	return (unsigned)r < ARRAY_SIZE(n) ? n[r] : "error";
}

static void apply_overrides(struct wpolicy *p, const struct wrun_opts *o)
{
	if (o->set_memory) p->limits.memory = o->memory;
	if (o->set_pids) p->limits.pids = o->pids;
	if (o->set_cpus) p->limits.cpus = o->cpus;
	if (o->set_timeout) p->limits.wall_ms = o->timeout_ms;
	if (o->set_cpu_time) p->limits.cpu_ms = o->cpu_ms;
	if (o->set_output) p->limits.output = o->output;
	if (o->net && !strcmp(o->net, "none")) p->net = WNET_NONE;
	if (o->net && !strcmp(o->net, "proxy")) p->net = WNET_PROXY;
}

/* --- the event loop ---------------------------------------------------- */

enum { EV_OUT = 1, EV_ERR, EV_IN_SRC, EV_IN_DST, EV_PID, EV_WALL, EV_CPU, EV_NOTIFY, EV_SIG };

struct loop {
	int ep;
	int out_r, err_r;          /* jail's stdout/stderr (read ends) */
	int out_fd, err_fd;        /* where they go */
	/* A stream whose destination is a terminal goes through the terminal
	 * sanitizer (include/warden/sanitize.h), unless --raw: the jail must
	 * not retitle the window, move the cursor or set the clipboard.
	 * NULL: relayed byte for byte (a pipe, a file, --raw). */
	struct wsan *san_out, *san_err;
	struct wsan san[2];
	struct sbuf san_buf;
	int in_src, in_dst;        /* warden's stdin -> jail's stdin pipe */
	bool in_src_pollable;
	char inbuf[RELAY_BUF];
	size_t in_len, in_off;
	int pidfd, wall_fd, cpu_fd, sig_fd;
	pid_t pid;
	struct wnotify notify;
	uint64_t output, output_limit;
	bool exited, killed, out_closed;
	enum wreason kill_reason;
	int sigints;
	struct wcg *cg;
	uint64_t cpu_limit_ns;
	char buf[RELAY_BUF];
};

static void ep_add(struct loop *l, int fd, uint32_t events, uint64_t tag)
{
	struct epoll_event ev = { .events = events, .data.u64 = tag };
	if (fd >= 0 && epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &ev) < 0 && tag == EV_IN_SRC)
		l->in_src_pollable = false;
}

static void ep_del_close(struct loop *l, int *fd)
{
	if (*fd < 0)
		return;
	epoll_ctl(l->ep, EPOLL_CTL_DEL, *fd, NULL);
	close(*fd);
	*fd = -1;
}

static void kill_jail(struct loop *l, enum wreason why)
{
	if (l->exited)
		return;
	if (!l->killed) {
		l->killed = true;
		l->kill_reason = why;
	}
	syscall(SYS_pidfd_send_signal, l->pidfd, SIGKILL, NULL, 0);
	if (l->cg)
		wcg_kill(l->cg);
}

/* Write n bytes of the jail's output (n == 0 with a sanitizer: the end of
 * the stream, flush what it holds back). */
static int put_out(struct loop *l, int dst, struct wsan *san, const char *p, size_t n)
{
	if (!san)
		return write_all(dst, p, n);
	sbuf_reset(&l->san_buf);
	if (n)
		wsan_feed(san, p, n, &l->san_buf);
	else
		wsan_end(san, &l->san_buf);
	return l->san_buf.len ? write_all(dst, l->san_buf.d, l->san_buf.len) : 0;
}

/* Relay one chunk from a jail pipe.  Returns false at EOF.  The output
 * limit counts the jail's bytes, before any sanitizing. */
static bool relay_out(struct loop *l, int *rfd, int dst, struct wsan *san)
{
	ssize_t n = read(*rfd, l->buf, sizeof(l->buf));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	if (n <= 0) {
		ep_del_close(l, rfd);
		if (san && !l->out_closed)
			(void)put_out(l, dst, san, NULL, 0);
		return false;
	}
	if (l->output_limit && l->output + (uint64_t)n > l->output_limit) {
		uint64_t room = l->output_limit - l->output;
		if (room && !l->out_closed)
			(void)put_out(l, dst, san, l->buf, (size_t)room);
		l->output = l->output_limit;
		kill_jail(l, WR_OUTPUT);
		return true;
	}
	l->output += (uint64_t)n;
	if (!l->out_closed && put_out(l, dst, san, l->buf, (size_t)n) < 0 && errno == EPIPE)
		l->out_closed = true; /* reader went away: keep draining, stop writing */
	return true;
}

/* warden's stdin -> the jail's stdin pipe, never blocking on the pipe. */
static void relay_in(struct loop *l)
{
	for (;;) {
		if (l->in_len == l->in_off) {
			ssize_t n;
			if (l->in_src < 0)
				break;
			n = read(l->in_src, l->inbuf, sizeof(l->inbuf));
			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				break;
			if (n <= 0) {
				/* EOF: the jail sees EOF too */
				if (l->in_src_pollable)
					epoll_ctl(l->ep, EPOLL_CTL_DEL, l->in_src, NULL);
				l->in_src = -1;
				ep_del_close(l, &l->in_dst);
				return;
			}
			l->in_len = (size_t)n;
			l->in_off = 0;
		}
		{
			ssize_t w = write(l->in_dst, l->inbuf + l->in_off, l->in_len - l->in_off);
			if (w < 0) {
				if (errno == EAGAIN)
					break;
				/* the jail closed its stdin: stop relaying */
				if (l->in_src_pollable && l->in_src >= 0)
					epoll_ctl(l->ep, EPOLL_CTL_DEL, l->in_src, NULL);
				l->in_src = -1;
				ep_del_close(l, &l->in_dst);
				return;
			}
			l->in_off += (size_t)w;
		}
		if (l->in_src_pollable && l->in_len == l->in_off)
			break; /* wait for the next readiness event */
	}
	/* when the pipe is full wait for EPOLLOUT, else for input */
	if (l->in_dst >= 0) {
		struct epoll_event ev = { .events = l->in_len > l->in_off || !l->in_src_pollable
		                                    ? EPOLLOUT : 0, .data.u64 = EV_IN_DST };
		epoll_ctl(l->ep, EPOLL_CTL_MOD, l->in_dst, &ev);
	}
}

static void on_signal(struct loop *l)
{
	struct signalfd_siginfo si;

	while (read(l->sig_fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGINT && ++l->sigints == 1 && !l->exited) {
			/* first Ctrl-C: pass it on; the program may handle it */
			syscall(SYS_pidfd_send_signal, l->pidfd, SIGINT, NULL, 0);
			continue;
		}
		kill_jail(l, WR_SIGNALED);
	}
}

static void on_cpu_tick(struct loop *l)
{
	uint64_t ticks, ns = 0;
	struct wcg_stats st;
	enum wmech m = wcg_mech(l->cg, WLIM_CPU_TIME);

	(void)!read(l->cpu_fd, &ticks, sizeof(ticks));
	if (m == WMECH_CGROUP_V1 || m == WMECH_CGROUP_V2) {
		wcg_stats(l->cg, &st);
		if (!st.have_cpu)
			return;
		ns = st.cpu_ns;
	} else if (!sv_jail_cpu_ns(l->pid, &ns)) {
		return;
	}
	if (ns >= l->cpu_limit_ns)
		kill_jail(l, WR_CPU_TIME);
}

static int arm_timer(int fd, uint64_t first_ms, uint64_t every_ms)
{
	struct itimerspec its = {
		.it_value = { (time_t)(first_ms / 1000), (long)(first_ms % 1000) * 1000000 },
		.it_interval = { (time_t)(every_ms / 1000), (long)(every_ms % 1000) * 1000000 },
	};
	return timerfd_settime(fd, 0, &its, NULL);
}

static void loop_run(struct loop *l)
{
	struct epoll_event evs[16];

	while (!l->exited || l->out_r >= 0 || l->err_r >= 0) {
		int n = epoll_wait(l->ep, evs, ARRAY_SIZE(evs), -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < n; i++) {
			switch (evs[i].data.u64) {
			case EV_OUT:
				if (l->out_r >= 0)
					relay_out(l, &l->out_r, l->out_fd, l->san_out);
				break;
			case EV_ERR:
				if (l->err_r >= 0)
					relay_out(l, &l->err_r, l->err_fd, l->san_err);
				break;
			case EV_IN_DST:
				/* The jail closed its stdin (or exited): stop relaying
				 * without reading warden's stdin, which may be a
				 * terminal in blocking mode: a read would wait for
				 * (and take) the user's next key. */
				if (l->in_dst >= 0 && (evs[i].events & (EPOLLERR | EPOLLHUP))) {
					if (l->in_src_pollable && l->in_src >= 0)
						epoll_ctl(l->ep, EPOLL_CTL_DEL, l->in_src, NULL);
					l->in_src = -1;
					ep_del_close(l, &l->in_dst);
					break;
				}
				/* fall through */
			case EV_IN_SRC:
				if (l->in_dst >= 0)
					relay_in(l);
				break;
			case EV_PID:
				l->exited = true;
				epoll_ctl(l->ep, EPOLL_CTL_DEL, l->pidfd, NULL);
				break;
			case EV_WALL:
				kill_jail(l, WR_TIMEOUT);
				break;
			case EV_CPU:
				on_cpu_tick(l);
				break;
			case EV_NOTIFY:
				if (evs[i].events & EPOLLIN)
					wnotify_handle(&l->notify);
				else if (evs[i].events & (EPOLLHUP | EPOLLERR))
					epoll_ctl(l->ep, EPOLL_CTL_DEL, l->notify.fd, NULL);
				break;
			case EV_SIG:
				on_signal(l);
				break;
			}
		}
	}
}

/* --- summary ------------------------------------------------------------ */

static json_object *limits_json(const struct wpolicy *p, const struct wcg *cg, bool landlock,
                                int abi)
{
	json_object *o = json_object_new_object();
	char buf[64];

	for (int k = 0; k < WLIM__N; k++)
		json_object_object_add(o, wlimit_kind_name((enum wlimit_kind)k),
		                       json_object_new_string(wmech_name(wcg_mech(cg, (enum wlimit_kind)k))));
	json_object_object_add(o, "wall_time", json_object_new_string(p->limits.wall_ms ? "timerfd" : "none"));
	json_object_object_add(o, "file_size", json_object_new_string(p->limits.file_size ? "rlimit" : "none"));
	json_object_object_add(o, "open_files", json_object_new_string(p->limits.open_files ? "rlimit" : "none"));
	json_object_object_add(o, "output", json_object_new_string(p->limits.output ? "supervisor" : "none"));
	json_object_object_add(o, "tmpfs", json_object_new_string("tmpfs size"));
	if (landlock)
		snprintf(buf, sizeof(buf), "landlock-abi-%d", abi);
	else
		snprintf(buf, sizeof(buf), "unavailable");
	json_object_object_add(o, "filesystem", json_object_new_string(buf));
	return o;
}

static void write_json_file(const char *path, json_object *o)
{
	char *tmp = xasprintf("%s.tmp.%d", path, getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
	                                                  JSON_C_TO_STRING_NOSLASHESCAPE);

	if (fd < 0 || write_all(fd, s, strlen(s)) < 0 || write_all(fd, "\n", 1) < 0 ||
	    close(fd) < 0 || rename(tmp, path) < 0) {
		wlog_warn("writing the summary %s: %s", path, strerror(errno));
		unlink(tmp);
	}
	free(tmp);
}

static json_object *strv_json(char *const *v)
{
	json_object *a = json_object_new_array();
	for (; *v; v++)
		json_object_array_add(a, json_object_new_string(*v));
	return a;
}

/* --- wrun ---------------------------------------------------------------- */

int wrun(const struct wrun_opts *o, struct wrun_result *res, struct werr *err)
{
	static unsigned run_counter;
	struct wpolicy *pol = NULL;
	struct waudit *audit = NULL;
	struct wcg *cg = NULL;
	struct wreaper reaper = { 0, -1 };
	scmp_filter_ctx filter = NULL;
	const struct wfilter_prog *prog = NULL;
	struct jail jail = { .pid = 0, .pidfd = -1, .notify_fd = -1, .sync_fd = -1, .slot_fd = -1 };
	struct loop *l = NULL;
	char ws[PATH_MAX], cgname[64];
	const char *home;
	char **env = NULL;
	int out_p[2] = { -1, -1 }, err_p[2] = { -1, -1 }, in_p[2] = { -1, -1 };
	sigset_t mask, oldmask;
	uint64_t t0;
	siginfo_t si;
	struct rusage ru;
	struct wcg_stats st;
	json_object *denied, *summary;
	int ret = -1;
	bool sig_blocked = false;

	wtiming(NULL);
	memset(res, 0, sizeof(*res));
	res->reason = WR_ERROR;
	res->exit_status = 125;
	sv_new_session_id(res->session, sizeof(res->session));

	/* policy */
	if (o->policy_file && o->profile)
		return werr_set(err, 0, "--policy and --profile are exclusive; choose one");
	if (o->policy_file ? policy_load_file(o->policy_file, &pol, err) < 0
	                   : policy_load_profile(o->profile ? o->profile : "workspace", &pol, err) < 0)
		return -1;
	apply_overrides(pol, o);
	wtiming("policy");
	if (pol->net == WNET_PROXY) {
		werr_set(err, 0, "policy %s: network mode \"proxy\" is not supported yet; use "
		         "--net none or a profile whose network.mode is \"none\"", pol->name);
		goto out;
	}

	/* workspace: resolved, must be a directory, never / itself */
	if (sv_resolve_workspace(o->workspace, ws, err) < 0)
		goto out;
	home = sv_caller_home();
	env = sv_build_env(pol, o->env, o->n_env, ws, home, err);
	if (!env)
		goto out;

	if (waudit_open(o->audit_log, &audit, err) < 0)
		goto out;
	wtiming("env+audit");

	/* limits: a cgroup per jail (cgroups left by a SIGKILLed warden are
	 * collected first), falling back to rlimits where none is writable */
	wcg_gc();
	wtiming("cgroup gc");
	snprintf(cgname, sizeof(cgname), "warden-%d-%u", getpid(), run_counter++);
	if (wcg_create(cgname, &pol->limits, &cg, err) < 0)
		goto out;
	wtiming("cgroup create");
	wreaper_start(&reaper, cg);
	wtiming("reaper");
	prog = wfilter_find_prebuilt(pol);
	if (!prog && wfilter_build(pol, &filter, err) < 0)
		goto out;
	wtiming("filter build");

	if (pipe2(out_p, O_CLOEXEC) < 0 || pipe2(err_p, O_CLOEXEC) < 0 ||
	    (!o->no_stdin && pipe2(in_p, O_CLOEXEC) < 0)) {
		werr_set(err, errno, "creating pipes");
		goto out;
	}
	/* Signals come through a signalfd; the child unblocks them itself. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	sigprocmask(SIG_BLOCK, &mask, &oldmask);
	sig_blocked = true;
	signal(SIGPIPE, SIG_IGN);

	l = xcalloc(1, sizeof(*l));
	l->ep = -1;
	l->out_r = steal_fd(&out_p[0]);
	l->err_r = steal_fd(&err_p[0]);
	l->in_src = -1;
	l->in_dst = -1;
	l->wall_fd = l->cpu_fd = l->sig_fd = -1;
	l->notify.fd = -1;
	l->out_fd = o->out_fd > 0 ? o->out_fd : 1;
	l->err_fd = o->err_fd > 0 ? o->err_fd : 2;
	/* each stream judged on its own: `warden run ... 2>log` keeps the raw
	 * bytes in the log and neutralises what reaches the terminal */
	if (!o->raw && isatty(l->out_fd)) {
		wsan_init(&l->san[0]);
		l->san_out = &l->san[0];
	}
	if (!o->raw && isatty(l->err_fd)) {
		wsan_init(&l->san[1]);
		l->san_err = &l->san[1];
	}
	l->output_limit = pol->limits.output;
	l->cg = cg;

	{
		struct jail_spec spec = {
			.pol = pol, .workspace = ws, .workspace_fd = -1, .home = home,
			.argv = o->argv, .envp = env,
			.stdin_fd = o->no_stdin ? -1 : in_p[0], .stdout_fd = out_p[1],
			.stderr_fd = err_p[1], .keep_fd = -1, .hostname = "warden",
			.filter = filter, .prog = prog, .cg = cg, .new_session = true,
			.rlimit_memory = wcg_mech(cg, WLIM_MEMORY) == WMECH_RLIMIT,
			.rlimit_pids = wcg_mech(cg, WLIM_PIDS) == WMECH_RLIMIT,
		};
		json_object *rec = json_object_new_object();

		json_object_object_add(rec, "session", json_object_new_string(res->session));
		json_object_object_add(rec, "argv", strv_json(o->argv));
		json_object_object_add(rec, "profile", json_object_new_string(pol->name));
		json_object_object_add(rec, "policy", json_object_new_string(pol->source ? pol->source : "built-in"));
		json_object_object_add(rec, "workspace", json_object_new_string(ws));
		json_object_object_add(rec, "uid", json_object_new_int((int)getuid()));
		waudit_emit(audit, "run_start", rec);

		t0 = sv_now_ms();
		if (jail_start(&spec, &jail, err) < 0) {
			rec = json_object_new_object();
			json_object_object_add(rec, "session", json_object_new_string(res->session));
			json_object_object_add(rec, "reason", json_object_new_string("error"));
			json_object_object_add(rec, "error", json_object_new_string(err->msg));
			json_object_object_add(rec, "exit_code", json_object_new_int(werr_exit_code(err)));
			waudit_emit(audit, "run_end", rec);
			goto out;
		}
	}
	wtiming("jail start");
	/* the jail holds its own copies now */
	close(out_p[1]); out_p[1] = -1;
	close(err_p[1]); err_p[1] = -1;
	if (in_p[0] >= 0) { close(in_p[0]); in_p[0] = -1; }

	l->pidfd = jail.pidfd;
	l->pid = jail.pid;
	l->ep = epoll_create1(EPOLL_CLOEXEC);
	fcntl(l->out_r, F_SETFL, O_NONBLOCK);
	fcntl(l->err_r, F_SETFL, O_NONBLOCK);
	ep_add(l, l->out_r, EPOLLIN, EV_OUT);
	ep_add(l, l->err_r, EPOLLIN, EV_ERR);
	ep_add(l, l->pidfd, EPOLLIN, EV_PID);
	if (wnotify_init(&l->notify, jail.notify_fd, audit, res->session, NULL, err) < 0)
		goto out_kill;
	jail.notify_fd = -1;
	if (l->notify.fd >= 0)
		ep_add(l, l->notify.fd, EPOLLIN, EV_NOTIFY);
	l->sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	ep_add(l, l->sig_fd, EPOLLIN, EV_SIG);
	if (pol->limits.wall_ms) {
		l->wall_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		arm_timer(l->wall_fd, pol->limits.wall_ms, 0);
		ep_add(l, l->wall_fd, EPOLLIN, EV_WALL);
	}
	if (pol->limits.cpu_ms) { /* the group's CPU, or the jail's tree (on_cpu_tick) */
		l->cpu_limit_ns = pol->limits.cpu_ms * 1000000ULL;
		l->cpu_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		arm_timer(l->cpu_fd, CPU_POLL_MS, CPU_POLL_MS);
		ep_add(l, l->cpu_fd, EPOLLIN, EV_CPU);
	}
	if (in_p[1] >= 0) {
		l->in_dst = in_p[1];
		in_p[1] = -1;
		fcntl(l->in_dst, F_SETFL, O_NONBLOCK);
		l->in_src = 0;
		l->in_src_pollable = true;
		ep_add(l, l->in_src, EPOLLIN, EV_IN_SRC);
		ep_add(l, l->in_dst, l->in_src_pollable ? 0 : EPOLLOUT, EV_IN_DST);
	}

	wtiming("loop setup");
	loop_run(l);
	wtiming("program ran");

	/* reap init; the kernel has already killed the rest of its namespace.
	 * The status is the program's, as init reported it (jail/init.c);
	 * init's own when it sent none (it was killed). */
	memset(&si, 0, sizeof(si));
	memset(&ru, 0, sizeof(ru));
	while (syscall(SYS_waitid, P_PIDFD, jail.pidfd, &si, WEXITED, &ru) < 0 && errno == EINTR)
		;
	jail_exit_status(&jail, &si);
	res->wall_ms = sv_now_ms() - t0;
	wcg_stats(cg, &st);
	res->cpu_ms = st.have_cpu ? st.cpu_ns / 1000000
	                          : (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
	                            (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
	res->peak_memory = st.have_peak ? st.peak_memory : (uint64_t)ru.ru_maxrss * 1024;
	res->output_bytes = l->output;
	res->denied_total = l->notify.total;
	if (si.si_code == CLD_EXITED) {
		res->exit_code = si.si_status;
		res->signal = 0;
		res->reason = WR_EXITED;
		res->exit_status = si.si_status;
	} else {
		res->exit_code = -1;
		res->signal = si.si_status;
		res->reason = WR_SIGNALED;
		res->exit_status = 128 + si.si_status;
	}
	/* Why it ended: what we did first, then what the kernel counted. */
	if (l->killed && l->kill_reason != WR_SIGNALED)
		res->reason = l->kill_reason;
	else if (st.have_oom && st.oom_kills > 0)
		res->reason = WR_OOM;
	else if (st.have_pids && st.pids_max_hits > 0 && res->exit_status != 0)
		res->reason = WR_PIDS;
	else if (res->signal == SIGXCPU)
		res->reason = WR_CPU_TIME;
	if (res->reason == WR_TIMEOUT)
		res->exit_status = 124;

	denied = wnotify_to_json(&l->notify);
	summary = json_object_new_object();
	json_object_object_add(summary, "session", json_object_new_string(res->session));
	json_object_object_add(summary, "exit_code", res->signal ? json_object_new_null()
	                                                         : json_object_new_int(res->exit_code));
	json_object_object_add(summary, "signal", res->signal ? json_object_new_int(res->signal)
	                                                      : json_object_new_null());
	json_object_object_add(summary, "exit_status", json_object_new_int(res->exit_status));
	json_object_object_add(summary, "reason", json_object_new_string(wreason_name(res->reason)));
	json_object_object_add(summary, "wall_ms", json_object_new_int64((int64_t)res->wall_ms));
	json_object_object_add(summary, "cpu_ms", json_object_new_int64((int64_t)res->cpu_ms));
	json_object_object_add(summary, "peak_memory_bytes", json_object_new_int64((int64_t)res->peak_memory));
	json_object_object_add(summary, "output_bytes", json_object_new_int64((int64_t)res->output_bytes));
	json_object_object_add(summary, "denied_syscalls", denied);
	json_object_object_add(summary, "limits", limits_json(pol, cg, jail.landlock, jail.landlock_abi));
	json_object_object_add(summary, "profile", json_object_new_string(pol->name));
	if (o->json_file)
		write_json_file(o->json_file, summary);
	{
		json_object *drop = json_object_new_object();
		json_object_object_add(drop, "session", json_object_new_string(res->session));
		wnotify_flush_dropped(&l->notify, drop);
	}
	waudit_emit(audit, "run_end", json_object_get(summary));

	if (!o->quiet) {
		if (res->reason != WR_EXITED && res->reason != WR_SIGNALED) {
			char lim[32] = "";
			if (res->reason == WR_TIMEOUT)
				format_duration_ms(pol->limits.wall_ms, lim, sizeof(lim));
			else if (res->reason == WR_OUTPUT)
				format_size(pol->limits.output, lim, sizeof(lim));
			else if (res->reason == WR_OOM)
				format_size(pol->limits.memory, lim, sizeof(lim));
			else if (res->reason == WR_CPU_TIME)
				format_duration_ms(pol->limits.cpu_ms, lim, sizeof(lim));
			else if (res->reason == WR_PIDS)
				snprintf(lim, sizeof(lim), "%" PRIu64, pol->limits.pids);
			wlog_error("stopped: %s limit%s%s reached (session %s)", wreason_name(res->reason),
			           lim[0] ? " " : "", lim, res->session);
		}
		if (l->notify.n) {
			char line[512];
			size_t off = 0;
			for (size_t i = 0; i < l->notify.n && off < sizeof(line) - 64; i++)
				off += (size_t)snprintf(line + off, sizeof(line) - off, "%s%s (%" PRIu64 ")",
				                        i ? ", " : "", l->notify.tab[i].name, l->notify.tab[i].count);
			wlog_error("denied syscalls: %s; see `warden audit --session %s`", line, res->session);
		}
		{
			char weak[128] = "", none[64] = "";
			for (int k = 0; k < WLIM__N; k++) {
				enum wmech m = wcg_mech(cg, (enum wlimit_kind)k);
				char *dst = m == WMECH_RLIMIT ? weak : m == WMECH_UNAVAILABLE ? none : NULL;
				size_t cap = m == WMECH_RLIMIT ? sizeof(weak) : sizeof(none);
				if (dst)
					snprintf(dst + strlen(dst), cap - strlen(dst), "%s%s",
					         dst[0] ? ", " : "", wlimit_kind_name((enum wlimit_kind)k));
			}
			if (weak[0] || none[0])
				wlog_warn("no writable cgroup: %s%s%s%s%s; see `warden doctor`",
				          weak[0] ? weak : "", weak[0] ? " limit enforced by per-process rlimits only" : "",
				          weak[0] && none[0] ? ", " : "", none[0] ? none : "",
				          none[0] ? " limit enforced by nothing" : "");
		}
		if (!jail.landlock)
			wlog_warn("Landlock is unavailable on this kernel: mounts alone confine the filesystem");
	}
	json_object_put(summary);
	wtiming("summary");
	ret = 0;
	goto out;

out_kill:
	syscall(SYS_pidfd_send_signal, jail.pidfd, SIGKILL, NULL, 0);
	waitpid(jail.pid, NULL, __WALL);
out:
	if (l) {
		closep(&l->ep);
		closep(&l->out_r);
		closep(&l->err_r);
		closep(&l->in_dst);
		closep(&l->wall_fd);
		closep(&l->cpu_fd);
		closep(&l->sig_fd);
		wnotify_free(&l->notify);
		sbuf_free(&l->san_buf);
		free(l);
	}
	closep(&jail.pidfd);
	closep(&jail.notify_fd);
	closep(&jail.sync_fd);
	closep(&jail.slot_fd);  /* the jail is reaped (or never started): its host uid is free */
	for (int i = 0; i < 2; i++) {
		closep(&out_p[i]);
		closep(&err_p[i]);
		closep(&in_p[i]);
	}
	if (sig_blocked)
		sigprocmask(SIG_SETMASK, &oldmask, NULL);
	wcg_destroy(cg);
	wtiming("cgroup destroy");
	wreaper_stop(&reaper);
	wtiming("reaper stop");
	if (filter)
		seccomp_release(filter);
	waudit_close(audit);
	sv_free_env(env);
	policy_free(pol);
	return ret;
}
