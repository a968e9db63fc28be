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
#include <stddef.h>
#include <poll.h>
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

#include "audit.h"
#include "warden/cgroup.h"
#include "warden/log.h"
#include "warden/filter.h"
#include "warden/jail.h"
#include "notify.h"
#include "warden/reaper.h"
#include "run.h"
#include "warden/sanitize.h"
#include "warden/util.h"
#include "jailrun.h"
#include "limrep.h"
#include "warden/loop.h"
#include "sv.h"
#include "run_int.h"

#define RELAY_SPLICE (1024 * 1024) /* per splice(2): what a pipe holds, at most */
#define CPU_POLL_MS 100

static int apply_overrides(struct wpolicy *p, const struct wrun_opts *o, struct werr *err)
{
	if (o->set_memory) p->limits.memory = o->memory;
	if (o->set_pids) p->limits.pids = o->pids;
	if (o->set_cpus) p->limits.cpus = o->cpus;
	if (o->set_timeout) p->limits.wall_ms = o->timeout_ms;
	if (o->set_cpu_time) p->limits.cpu_ms = o->cpu_ms;
	if (o->set_output) p->limits.output = o->output;
	return sv_apply_net(p, o->net, o->allow, o->n_allow, err);
}

/* --- the event loop (supervisor/loop.c) ----------------------------------- */


#define run_of(lp) ((struct run *)((char *)(lp) - offsetof(struct run, loop)))

/* The run is over once the program has exited and its output is drained. */
static void check_done(struct run *r)
{
	if (r->exited && r->out.fd < 0 && r->err.fd < 0)
		wloop_quit(&r->loop, 0);
}

static void kill_jail(struct run *r, enum wblock_reason why)
{
	if (r->exited)
		return;
	jr_kill(&r->jr, why);
}

/* Write n bytes of the jail's output (n == 0 with a sanitizer: the end of
 * the stream, flush what it holds back). */
static int put_out(struct run *r, int dst, struct wsan *san, const char *p, size_t n)
{
	if (!san)
		return write_all(dst, p, n);
	sbuf_reset(&r->san_buf);
	if (n)
		wsan_feed(san, p, n, &r->san_buf);
	else
		wsan_end(san, &r->san_buf);
	return r->san_buf.len ? write_all(dst, r->san_buf.d, r->san_buf.len) : 0;
}

/* Move up to want bytes from the jail's pipe to dst without copying them
 * through warden (splice(2): pipe to pipe, file or socket).  Returns what
 * splice does: > 0 moved, 0 the end of the stream, -1 with errno (EAGAIN:
 * the jail's pipe is empty).  With a non-blocking end, splice answers
 * EAGAIN for a full destination too; then wait for dst as write(2) would
 * block on it (the read/write path blocks there the same way). */
static ssize_t relay_splice(int src, int dst, size_t want)
{
	for (;;) {
		struct pollfd p = { .fd = dst, .events = POLLOUT };
		ssize_t n = splice(src, NULL, dst, NULL, want, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);

		if (n >= 0 || (errno != EAGAIN && errno != EINTR))
			return n;
		if (errno == EINTR)
			continue;
		if (poll(&p, 1, 0) == 1 && (p.revents & POLLOUT)) {
			errno = EAGAIN; /* dst has room: the jail's pipe is empty */
			return -1;
		}
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			return -1;
		if (p.revents & (POLLERR | POLLHUP | POLLNVAL) && !(p.revents & POLLOUT)) {
			errno = EPIPE;
			return -1;
		}
	}
}

/* Relay one chunk from a jail pipe.  The output limit counts the jail's
 * bytes, before any sanitizing.  Bytes that pass unchanged (no sanitizer,
 * the reader still there) are spliced, at most the allowance left, so the
 * limit stays exact; at the limit, or when splice cannot reach dst (a
 * terminal with --raw, an O_APPEND file), read(2) and write(2) through the
 * one buffer. */
static void on_output(struct wloop *lp, struct wsrc *src, uint32_t events)
{
	struct run *r = run_of(lp);
	bool is_out = src == &r->out;
	int dst = is_out ? r->out_fd : r->err_fd;
	struct wsan *san = is_out ? r->san_out : r->san_err;
	bool *no_splice = &r->no_splice[is_out ? 0 : 1];
	ssize_t n;

	if (!san && !r->out_closed && !*no_splice &&
	    (!r->output_limit || r->output < r->output_limit)) {
		size_t want = RELAY_SPLICE;
		if (r->output_limit && r->output_limit - r->output < want)
			want = (size_t)(r->output_limit - r->output);
		n = relay_splice(src->fd, dst, want);
		if (n > 0) {
			r->output += (uint64_t)n;
			return;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n < 0 && errno == EPIPE)
			r->out_closed = true; /* reader went away: keep draining, stop writing */
		else if (n < 0)
			*no_splice = true;    /* EINVAL: dst cannot take a splice */
		/* n == 0 (the end) and the fallbacks: the read below says */
	}
	n = read(src->fd, r->buf, sizeof(r->buf));
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		wloop_unwatch(lp, src);
		if (san && !r->out_closed)
			(void)put_out(r, dst, san, NULL, 0);
		check_done(r);
		return;
	}
	if (r->output_limit && r->output + (uint64_t)n > r->output_limit) {
		uint64_t room = r->output_limit - r->output;
		if (room && !r->out_closed)
			(void)put_out(r, dst, san, r->buf, (size_t)room);
		r->output = r->output_limit;
		/* A program that wrote its whole output into the pipe (1 MiB
		 * fits) may have exited before the relay reached the limit:
		 * the output was still cut, so that is why the run ended. */
		if (r->exited && r->jr.killed_for == WB__N)
			r->jr.killed_for = WB_OUTPUT;
		kill_jail(r, WB_OUTPUT);
		return;
	}
	r->output += (uint64_t)n;
	if (!r->out_closed && put_out(r, dst, san, r->buf, (size_t)n) < 0 && errno == EPIPE)
		r->out_closed = true; /* reader went away: keep draining, stop writing */
}

/* warden's stdin -> the jail's stdin pipe, never blocking on the pipe. */
static void relay_in(struct run *r)
{
	for (;;) {
		if (r->in_len == r->in_off) {
			ssize_t n;
			if (r->in_src.fd < 0)
				break;
			n = read(r->in_src.fd, r->inbuf, sizeof(r->inbuf));
			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				break;
			if (n <= 0) {
				/* EOF: the jail sees EOF too (warden's stdin stays open) */
				wloop_forget(&r->loop, &r->in_src);
				wloop_unwatch(&r->loop, &r->in_dst);
				return;
			}
			r->in_len = (size_t)n;
			r->in_off = 0;
		}
		{
			ssize_t w = write(r->in_dst.fd, r->inbuf + r->in_off, r->in_len - r->in_off);
			if (w < 0) {
				if (errno == EAGAIN)
					break;
				/* the jail closed its stdin: stop relaying */
				wloop_forget(&r->loop, &r->in_src);
				wloop_unwatch(&r->loop, &r->in_dst);
				return;
			}
			r->in_off += (size_t)w;
		}
		if (r->in_src_pollable && r->in_len == r->in_off)
			break; /* wait for the next readiness event */
	}
	/* when the pipe is full wait for EPOLLOUT, else for input */
	wloop_rearm(&r->loop, &r->in_dst, r->in_len > r->in_off || !r->in_src_pollable ? EPOLLOUT : 0);
}

static void on_input(struct wloop *lp, struct wsrc *src, uint32_t events)
{
	struct run *r = run_of(lp);

	/* The jail closed its stdin (or exited): stop relaying without
	 * reading warden's stdin, which may be a terminal in blocking mode: a
	 * read would wait for (and take) the user's next key (G50). */
	if (src == &r->in_dst && r->in_dst.fd >= 0 && (events & (EPOLLERR | EPOLLHUP))) {
		wloop_forget(&r->loop, &r->in_src);
		wloop_unwatch(&r->loop, &r->in_dst);
		return;
	}
	if (r->in_dst.fd >= 0)
		relay_in(r);
}

static void on_exit_ev(struct wloop *lp, struct wsrc *src, uint32_t events)
{
	struct run *r = run_of(lp);

	r->exited = true;
	wtiming_mark(WT_EXITED);
	wloop_forget(lp, src);   /* the pidfd is reaped by wrun */
	check_done(r);
}

static void on_wall(struct wloop *lp, struct wsrc *src, uint32_t events)
{
	kill_jail(run_of(lp), WB_TIMEOUT);
}

static void on_notify(struct wloop *lp, struct wsrc *src, uint32_t events)
{
	struct run *r = run_of(lp);

	if (events & EPOLLIN)
		wnotify_handle(&r->notify);
	else if (events & (EPOLLHUP | EPOLLERR))
		wloop_forget(lp, src);   /* the fd is the notify's */
}

static void on_signal(struct wloop *lp, struct wsrc *src, uint32_t events)
{
	struct run *r = run_of(lp);
	struct signalfd_siginfo si;

	while (read(src->fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGINT && ++r->sigints == 1 && !r->exited) {
			/* first Ctrl-C: pass it on; the program may handle it */
			syscall(SYS_pidfd_send_signal, r->jr.jl.pidfd, SIGINT, NULL, 0);
			continue;
		}
		if (!r->exited && !r->stop_signal)
			r->stop_signal = (int)si.ssi_signo;
		kill_jail(r, WB_SIGNALED);
	}
}

static void on_cpu_tick(struct wloop *lp, struct wsrc *src, uint32_t events)
{
	struct run *r = run_of(lp);
	uint64_t ticks, ns = 0;
	struct wcg_stats st;
	enum wmech m = wcg_mech(r->jr.cg, WLIM_CPU_TIME);

	(void)!read(src->fd, &ticks, sizeof(ticks));
	if (m == WMECH_CGROUP_V1 || m == WMECH_CGROUP_V2) {
		wcg_stats(r->jr.cg, &st);
		if (!st.have_cpu)
			return;
		ns = st.cpu_ns;
	} else if (!sv_jail_cpu_ns(r->jr.jl.pid, &ns)) {
		return;
	}
	if (ns >= r->cpu_limit_ns)
		kill_jail(r, WB_CPU_TIME);
}

static void run_loop(struct run *r)
{
	while (!r->loop.quitting)
		if (wloop_wait(&r->loop, -1) < 0)
			break;
}

/* --- wrun: the steps ------------------------------------------------------- */

/* The policy, the workspace, the environment and the audit log. */
static int run_policy(struct run *r, struct wrun_result *res, struct werr *err)
{
	const struct wrun_opts *o = r->o;

	if (o->policy_file && o->profile)
		return werr_set(err, 0, "--policy and --profile are exclusive; choose one");
	if (o->policy_file ? policy_load_file(o->policy_file, &r->pol, err) < 0
	                   : policy_load_profile(o->profile ? o->profile : "workspace", &r->pol, err) < 0)
		return -1;
	if (run_learn_policy(r, err) < 0 || apply_overrides(r->pol, o, err) < 0)
		return -1;
	wtiming("policy");
	/* workspace: resolved, must be a directory, never / itself */
	if (sv_resolve_workspace(o->workspace, r->ws, err) < 0)
		return -1;
	r->home = sv_caller_home();
	r->env = sv_build_env(r->pol, o->env, o->n_env, r->ws, r->home, err);
	if (!r->env)
		return -1;
	if (waudit_open(o->audit_log, &r->audit, err) < 0)
		return -1;
	sv_own_hides(r->ws, waudit_path(r->audit), &r->hides);
	if (sv_open_reg(&r->reg, err) < 0)
		return -1;
	wtiming("env+audit");
	return 0;
}

/* `--output unlimited` into a pipe: the relay is the one thing between the
 * program and the pipe, and any relaying process costs the pipe a quarter
 * of its speed on a busy 2-CPU machine (docs/design.md).  With no limit to
 * count and nothing to sanitize, the program may write into the caller's
 * pipe itself, when the jail cannot misuse it (SECURITY.md G130):
 *   - the pipe belongs to host root and grants nothing to group or others
 *     (pipes are 0600 to their creator), and a jail is never host root
 *     (docs/design.md "Ids"), so the jail cannot reopen it for reading
 *     through /proc/self/fd (nor chmod it to allow that);
 *   - it gets a fresh open file description (opened here through
 *     /proc/self/fd), so its fcntl flags (O_NONBLOCK, ...) are its own and
 *     never reach the caller or the processes sharing the caller's;
 *   - the pipe's size, the one property it can change (F_SETPIPE_SZ, at
 *     most 1 MiB without CAP_SYS_RESOURCE), is put back after the run --
 *     unless the pipe then holds more than its old size, which the kernel
 *     will not shrink below: it stays bigger (1 MiB at most) until read;
 *   - F_SETOWN/F_SETSIG/O_ASYNC are its own description's and name only
 *     pids of its pid namespace: it can signal only itself;
 *   - it cannot write after warden's exit: every process of the jail is
 *     dead once init is reaped.
 * As anyone else the jail is the pipe's owner and could reopen it for
 * reading: the output is relayed.  Returns the fd for the jail, or -1. */
static int direct_stdout(struct run *r)
{
	struct stat st;
	char path[64];
	int fd;

	if (r->pol->limits.output || r->san_out || geteuid() != 0 ||
	    fstat(r->out_fd, &st) < 0 || !S_ISFIFO(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & 077))
		return -1;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", r->out_fd);
	/* O_NONBLOCK: a named FIFO without a reader fails (ENXIO) instead of
	 * waiting; the program gets a blocking descriptor, as with a pipe */
	fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode) || fcntl(fd, F_SETFL, 0) < 0) {
		close(fd);
		return -1;
	}
	r->direct_pipe_size = fcntl(fd, F_GETPIPE_SZ);
	return fd;
}

/* Limits and filter (jailrun.h), the pipes, the signals, the loop. */
static int run_prepare(struct run *r, struct jail_spec *spec, struct werr *err)
{
	static unsigned run_counter;
	const struct wrun_opts *o = r->o;
	char cgname[64];

	/* cgroups left by a SIGKILLed warden: collected by the watchdog
	 * (jr_prepare), off this path */
	snprintf(cgname, sizeof(cgname), "warden-%d-%u", getpid(), run_counter++);
	jr_init(&r->jr, r->pol);
	if (jr_prepare(&r->jr, cgname, true, spec, err) < 0)
		return -1;
	/* A cpu bandwidth limit without a writable cpu cgroup is enforced by
	 * nothing (no rlimit caps bandwidth): said before the program starts,
	 * or refused with --strict-limits (issue 13). */
	if (wcg_mech(r->jr.cg, WLIM_CPUS) == WMECH_UNAVAILABLE && (o->set_cpus || o->strict_limits)) {
		char what[64];

		snprintf(what, sizeof(what), "%s %g", o->set_cpus ? "--cpus" : "limits.cpus",
		         r->pol->limits.cpus);
		if (o->strict_limits)
			return werr_set(err, 0, "--strict-limits: %s is enforced by nothing here (no "
			                "writable cpu cgroup); see `warden doctor` for the fix, or "
			                "drop --strict-limits", what);
		wlog_warn("%s is enforced by nothing here (no writable cpu cgroup); see "
		          "`warden doctor`", what);
	}
	if (pipe2(r->out_p, O_CLOEXEC) < 0 || pipe2(r->err_p, O_CLOEXEC) < 0 ||
	    (!o->no_stdin && pipe2(r->in_p, O_CLOEXEC) < 0))
		return werr_set(err, errno, "creating pipes");
	/* A bigger stdout pipe halves the wakeups of a bulk relay (1 MiB, the
	 * unprivileged maximum; best effort: the default 64 KiB still works) */
	(void)fcntl(r->out_p[0], F_SETPIPE_SZ, RELAY_SPLICE);
	/* Signals come through a signalfd; the child unblocks them itself. */
	sigemptyset(&r->mask);
	sigaddset(&r->mask, SIGINT);
	sigaddset(&r->mask, SIGTERM);
	sigaddset(&r->mask, SIGHUP);
	sigaddset(&r->mask, SIGQUIT);
	sigprocmask(SIG_BLOCK, &r->mask, &r->oldmask);
	r->sig_blocked = true;
	signal(SIGPIPE, SIG_IGN);
	if (wloop_init(&r->loop, err) < 0)
		return -1;
	r->out_fd = o->out_fd > 0 ? o->out_fd : 1;
	r->err_fd = o->err_fd > 0 ? o->err_fd : 2;
	/* each stream judged on its own: `warden run ... 2>log` keeps the raw
	 * bytes in the log and neutralises what reaches the terminal */
	if (!o->raw && isatty(r->out_fd)) {
		wsan_init(&r->san[0]);
		r->san_out = &r->san[0];
	}
	if (!o->raw && isatty(r->err_fd)) {
		wsan_init(&r->san[1]);
		r->san_err = &r->san[1];
	}
	r->output_limit = r->pol->limits.output;

	spec->workspace = r->ws;
	spec->home = r->home;
	spec->protect_extra = r->hides.v;
	spec->protect_reg = &r->reg;
	spec->argv = o->argv;
	spec->envp = r->env;
	spec->stdin_fd = o->no_stdin ? -1 : r->in_p[0];
	r->direct_fd = direct_stdout(r);
	if (r->direct_fd >= 0) {
		close(steal_fd(&r->out_p[0]));
		close(steal_fd(&r->out_p[1]));
	}
	spec->stdout_fd = r->direct_fd >= 0 ? r->direct_fd : r->out_p[1];
	spec->stderr_fd = r->err_p[1];
	spec->hostname = "warden";
	spec->new_session = true;
	return run_learn_prepare(r, spec, err);
}

/* run_start in the audit log, then the jail; a jail that cannot start is
 * its run_end (reason error). */
static int run_start(struct run *r, const struct jail_spec *spec, struct wrun_result *res,
                     struct werr *err)
{
	json_object *rec = json_object_new_object();

	json_object_object_add(rec, "session", json_object_new_string(res->session));
	json_object_object_add(rec, "argv", strv_json(r->o->argv));
	json_object_object_add(rec, "profile", json_object_new_string(r->pol->name));
	json_object_object_add(rec, "policy", json_object_new_string(r->pol->source ? r->pol->source : "built-in"));
	json_object_object_add(rec, "workspace", json_object_new_string(r->ws));
	json_object_object_add(rec, "uid", json_object_new_int((int)getuid()));
	waudit_emit(r->audit, "run_start", rec);

	r->t0 = sv_now_ms();
	if ((r->learn ? run_learn_start(r, spec, res, err) : jr_start(&r->jr, spec, err)) < 0) {
		rec = json_object_new_object();
		json_object_object_add(rec, "session", json_object_new_string(res->session));
		json_object_object_add(rec, "reason", json_object_new_string("error"));
		json_object_object_add(rec, "error", json_object_new_string(err->msg));
		json_object_object_add(rec, "exit_code", json_object_new_int(werr_exit_code(err)));
		waudit_emit(r->audit, "run_end", rec);
		return -1;
	}
	wtiming("jail start");
	wtiming_mark(WT_EXEC);
	report_protect(r);
	/* the jail holds its own copies now */
	closep(&r->out_p[1]);
	if (r->direct_fd >= 0) {
		closep(&r->direct_fd);
		r->direct_fd = -2;   /* the program writes into the caller's pipe */
	}
	closep(&r->err_p[1]);
	closep(&r->in_p[0]);
	return 0;
}

/* Every source on the loop, then the loop until the program has ended and
 * its output is drained. */
static int run_watch(struct run *r, struct wrun_result *res, struct werr *err)
{
	const struct wlimits *lim = &r->pol->limits;

	fcntl(r->err_p[0], F_SETFL, O_NONBLOCK);
	if (r->out_p[0] >= 0) {
		fcntl(r->out_p[0], F_SETFL, O_NONBLOCK);
		wloop_watch(&r->loop, &r->out, steal_fd(&r->out_p[0]), EPOLLIN, on_output, NULL);
	}
	wloop_watch(&r->loop, &r->err, steal_fd(&r->err_p[0]), EPOLLIN, on_output, NULL);
	wloop_watch(&r->loop, &r->pid, r->jr.jl.pidfd, EPOLLIN, on_exit_ev, NULL);
	/* a learning run watches its listener since the jail started */
	if (!r->learn) {
		if (wnotify_init(&r->notify, r->jr.jl.notify_fd, r->audit, res->session, NULL,
		                 err) < 0)
			return -1;
		r->jr.jl.notify_fd = -1;
		if (r->notify.fd >= 0)
			wloop_watch(&r->loop, &r->notify_src, r->notify.fd, EPOLLIN, on_notify,
			            NULL);
	}
	/* network mode proxy: served on this loop until run_free */
	if (jr_serve_proxy(&r->jr, &r->loop, r->audit, res->session, err) < 0)
		return -1;
	wloop_watch(&r->loop, &r->sig, signalfd(-1, &r->mask, SFD_CLOEXEC | SFD_NONBLOCK), EPOLLIN,
	            on_signal, NULL);
	if (lim->wall_ms) {
		wloop_timer(&r->loop, &r->wall, EPOLLIN, on_wall, NULL);
		wloop_timer_set(&r->wall, lim->wall_ms, 0);
	}
	if (lim->cpu_ms) { /* the group's CPU, or the jail's tree (on_cpu_tick) */
		r->cpu_limit_ns = lim->cpu_ms * 1000000ULL;
		wloop_timer(&r->loop, &r->cpu, EPOLLIN, on_cpu_tick, NULL);
		wloop_timer_set(&r->cpu, CPU_POLL_MS, CPU_POLL_MS);
	}
	if (r->in_p[1] >= 0) {
		fcntl(r->in_p[1], F_SETFL, O_NONBLOCK);
		wloop_watch(&r->loop, &r->in_dst, steal_fd(&r->in_p[1]), 0, on_input, NULL);
		/* stdin that epoll refuses (a file) is read whenever the pipe has room */
		r->in_src_pollable = wloop_watch(&r->loop, &r->in_src, 0, EPOLLIN, on_input, NULL) == 0;
		if (!r->in_src_pollable)
			wloop_rearm(&r->loop, &r->in_dst, EPOLLOUT);
	}
	wtiming("loop setup");
	run_loop(r);
	wtiming("program ran");
	return 0;
}

/* Reap init (the kernel has already killed the rest of its namespace) and
 * decide why the program ended (reason.h). */
static void run_judge(struct run *r, struct wrun_result *res)
{
	siginfo_t si;
	struct rusage ru;
	struct wcg_stats st;
	struct wend e;

	jr_reap(&r->jr, &si, &ru);
	res->wall_ms = sv_now_ms() - r->t0;
	wcg_stats(r->jr.cg, &st);
	res->cpu_ms = st.have_cpu ? st.cpu_ns / 1000000
	                          : (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
	                            (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
	res->peak_memory = st.have_peak ? st.peak_memory : (uint64_t)ru.ru_maxrss * 1024;
	res->output_bytes = r->output;
	res->output_direct = r->direct_fd == -2;
	/* the one property of the caller's pipe the program could change */
	if (res->output_direct && r->direct_pipe_size > 0 &&
	    fcntl(r->out_fd, F_GETPIPE_SZ) != r->direct_pipe_size)
		(void)fcntl(r->out_fd, F_SETPIPE_SZ, r->direct_pipe_size);
	res->denied_total = r->notify.total;
	/* the namespace's counters outlive init: its files are held open */
	res->have_net = jail_net_unreachable(&r->jr.jl, &res->net_unreachable) == 0;
	res->net_watch = r->jr.jl.watched;
	jr_judge(&r->jr, &st, false, &si, 0, false, &e);
	res->reason = e.reason;
	res->exit_code = e.exit_code;
	res->signal = e.signal;
	res->exit_status = e.exit_status;
	/* warden itself was told to stop and killed the jail: exit as a tool
	 * killed by that signal would (128+N, as timeout(1) does), not with the
	 * SIGKILL it sent.  A program that ended on its own keeps its status. */
	if (r->stop_signal && r->jr.killed_for == WB_SIGNALED && e.signal == SIGKILL)
		res->exit_status = 128 + r->stop_signal;
	else
		r->stop_signal = 0;
}

static void run_free(struct run *r)
{
	run_learn_free(r);      /* its sources are on the loop */
	jr_proxy_end(&r->jr);   /* its connections are on the loop: first */
	wproxy_shutdown();      /* the egress process's last records, then it ends */
	if (r->loop.ep >= 0) {
		if (r->in_src.fd >= 0)
			wloop_forget(&r->loop, &r->in_src);     /* warden's stdin: not ours to close */
		wloop_forget(&r->loop, &r->pid);            /* the jail's pidfd: jr_end's */
		if (r->notify_src.fd >= 0)
			wloop_forget(&r->loop, &r->notify_src); /* the notify's, freed below */
		wloop_unwatch(&r->loop, &r->out);
		wloop_unwatch(&r->loop, &r->err);
		wloop_unwatch(&r->loop, &r->in_dst);
		wloop_unwatch(&r->loop, &r->wall);
		wloop_unwatch(&r->loop, &r->cpu);
		wloop_unwatch(&r->loop, &r->sig);
		wloop_free(&r->loop);
	}
	wnotify_free(&r->notify);
	sbuf_free(&r->san_buf);
	closep(&r->direct_fd);
	for (int i = 0; i < 2; i++) {
		closep(&r->out_p[i]);
		closep(&r->err_p[i]);
		closep(&r->in_p[i]);
	}
	if (r->sig_blocked)
		sigprocmask(SIG_SETMASK, &r->oldmask, NULL);
	jr_end(&r->jr);   /* reaped, or never started */
	waudit_close(r->audit);
	sv_free_env(r->env);
	wstrv_free(&r->hides);
	wprotect_reg_close(&r->reg);   /* after jr_end: the jail is gone */
	policy_free(r->pol);
	free(r);
}

/* --- wrun ---------------------------------------------------------------- */

int wrun(const struct wrun_opts *o, struct wrun_result *res, struct werr *err)
{
	struct run *r = xcalloc(1, sizeof(*r));
	struct jail_spec spec = JAIL_SPEC_INIT;
	int ret = -1;

	r->reg.dir_fd = r->reg.lock_fd = -1;

	wtiming("command line");
	memset(res, 0, sizeof(*res));
	res->reason = WB_ERROR;
	res->exit_status = 125;
	sv_new_session_id(res->session, sizeof(res->session));
	r->o = o;
	r->loop.ep = -1;
	r->out.fd = r->err.fd = r->in_src.fd = r->in_dst.fd = -1;
	r->pid.fd = r->wall.fd = r->cpu.fd = r->notify_src.fd = r->sig.fd = r->learn_sync.fd = -1;
	r->notify.fd = -1;
	for (int i = 0; i < 2; i++)
		r->out_p[i] = r->err_p[i] = r->in_p[i] = -1;
	r->direct_fd = -1;
	jr_init(&r->jr, NULL);

	if (run_policy(r, res, err) < 0 || run_prepare(r, &spec, err) < 0 ||
	    run_start(r, &spec, res, err) < 0)
		goto out;
	if (run_watch(r, res, err) < 0) {
		/* the jail started but cannot be watched: kill and reap it */
		jr_kill(&r->jr, WB_ERROR);
		waitpid(r->jr.jl.pid, NULL, __WALL);
		goto out;
	}
	run_judge(r, res);
	run_learn_end(r, res);
	run_report(r, res);
	wtiming("summary");
	wtiming_mark(WT_REPORTED);
	ret = 0;
out:
	run_free(r);
	return ret;
}
