/* A session's jail at work (supervisor/session_int.h): its start off the
 * loop (sj_spawn does the parent's share; the sync socket's reports finish
 * it), its event sources (output pipes, the control socket parsed byte by
 * byte, init's reports, the pidfd, the timers), the freeze and thaw
 * between blocks, and each block's RESULT.  What it reads from the jail is
 * hostile. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "session.h"
#include "session_int.h"
#include "jailrun.h"
#include "sv.h"
#include "warden/filter.h"
#include "warden/jail.h"
#include "warden/log.h"
#include "warden/util.h"

static int sj_started(struct sv *sv, struct sv_jail *j, struct werr *err);
static int sj_arm_notify(struct sv *sv, struct sv_jail *j, struct werr *err);

static void sj_on_pipe(struct wloop *l, struct wsrc *src, uint32_t events)
{
	struct sv *sv = sv_of(l);
	struct sv_jail *j = src->ctx;
	size_t got;

	(void)sj_pipe_read(sv, j, src, src == &j->out_src ? WSTREAM_STDOUT : WSTREAM_STDERR,
	                sizeof(sv->buf), &got);
	if (src->fd >= 0 && wloop_peer_behind(&sv->loop)) {
		/* backpressure: stop reading jails until the broker catches up */
		wloop_rearm(&sv->loop, &j->out_src, 0);
		wloop_rearm(&sv->loop, &j->err_src, 0);
		j->paused = true;
	}
}

/* --- results ---------------------------------------------------------------- */

static void sj_block_done(struct sv *sv, struct sv_jail *j);

/* The block is over: status from the driver (exited == false) or the jail
 * ended (exited == true, si its wait status).  Its RESULT goes out at once,
 * or, in a learning session, after the learner's report (sess_learn.c). */
void sj_finish_block(struct sv *sv, struct sv_jail *j, bool exited, const siginfo_t *si,
                         int status)
{
	struct sv_sess *s = j->s;
	struct wresult r = { 0 };
	struct wcg_stats st;
	struct werr err = { 0 };
	struct wdenied_count denied[WPROTO_DENIED_MAX];
	char msg[4096] = "";
	json_object *rec, *dj;
	bool lost = exited || s->oneshot, have_net;
	uint64_t net = 0;

	if (s->refill_later && sv_now_ms() >= s->refill_at_ms + REFILL_OVERDUE_MS)
		sj_refill_now(sv, s);   /* the ticks never found it idle */
	sj_drain(sv, j);
	if (j->tail)
		sj_flush_tail(sv, j);
	wcg_stats(j->jr.cg, &st);
	r.session = s->id;
	r.block = j->block;
	r.wall_ms = sv_now_ms() - j->t0_ms;
	r.cpu_ms = (jr_cpu_ns(&j->jr, &st) - j->cpu0_ns) / 1000000;
	r.peak_memory = st.have_peak ? st.peak_memory : 0;
	r.output_bytes = j->out_total;
	r.flags = (uint8_t)((exited ? WRES_STATE_LOST : 0) | (st.have_peak ? 0 : WRES_NO_PEAK) |
	                    (j->tail ? WRES_TRUNCATED : 0) | (j->fresh ? WRES_FRESH : 0));
	{
		struct wend e;

		jr_judge(&j->jr, &st, !exited, si, status, j->interrupted, &e);
		r.reason = (uint8_t)e.reason;
		r.signal = (uint32_t)e.signal;
		/* the wire's exit_code: a shell's 124 on timeout, as `warden run` exits */
		r.exit_code = e.reason == WB_TIMEOUT ? e.exit_status : e.exit_code;
	}
	/* what else warden knows of the block's end (supervisor/sjail_msg.c) */
	sj_block_words(j, &r, exited, msg, sizeof(msg));
	/* tried the network and found no route: the kernel's count */
	have_net = jail_net_unreachable(&j->jr.jl, &net) == 0 && net >= j->net0;
	jail_net_take(&j->jr.jl);   /* init's reports queued before its exit */
	if ((have_net && net > j->net0) || j->jr.jl.seen.n) {
		char note[2048];

		sv_net_note(s->pol, have_net ? net - j->net0 : 0, &j->jr.jl.seen, "the block",
		            sv->chat ? "--sandbox-profile "
		            "network (or %profile network), or --net proxy --allow HOST," :
		            "--profile network, or --net proxy --allow HOST,", note, sizeof(note));
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), "%s%s", msg[0] ? "; " : "",
		         note);
	}
	r.message = msg;
	/* this block's denials only: the counts restart at each block's end */
	for (size_t i = 0; i < j->notify.n && r.n_denied < WPROTO_DENIED_MAX; i++) {
		if (!j->notify.tab[i].count)
			continue;
		denied[r.n_denied].name = j->notify.tab[i].name;
		denied[r.n_denied++].count = j->notify.tab[i].count;
	}
	r.denied = denied;

	/* the audit log first: once the broker has the RESULT, the log has
	 * the block_end */
	rec = sess_audit_rec(s);
	json_object_object_add(rec, "block", json_object_new_int64(j->block));
	json_object_object_add(rec, "language", json_object_new_string(j->lang->name));
	json_object_object_add(rec, "exit_code", r.signal ? json_object_new_null() : json_object_new_int(r.exit_code));
	json_object_object_add(rec, "signal", r.signal ? json_object_new_int((int)r.signal) : json_object_new_null());
	json_object_object_add(rec, "reason", json_object_new_string(wblock_reason_name(r.reason)));
	json_object_object_add(rec, "wall_ms", json_object_new_int64((int64_t)r.wall_ms));
	json_object_object_add(rec, "cpu_ms", json_object_new_int64((int64_t)r.cpu_ms));
	/* null, not 0, when no cgroup counts memory (issue 13) */
	json_object_object_add(rec, "peak_memory_bytes",
	                       st.have_peak ? json_object_new_int64((int64_t)r.peak_memory) : NULL);
	json_object_object_add(rec, "output_bytes", json_object_new_int64((int64_t)r.output_bytes));
	json_object_object_add(rec, "state_lost", json_object_new_boolean(exited));
	json_object_object_add(rec, "network_unreachable",
	                       have_net ? json_object_new_int64((int64_t)(net - j->net0)) : NULL);
	json_object_object_add(rec, "network_tried", sv_net_tried_json(&j->jr.jl.seen));
	dj = wnotify_to_json(&j->notify);
	json_object_object_add(rec, "denied_syscalls", dj);
	{
		json_object *drop = sess_audit_rec(s);
		json_object_object_add(drop, "block", json_object_new_int64(j->block));
		wnotify_flush_dropped(&j->notify, drop);
	}
	waudit_emit(sv->audit, "block_end", rec);
	wbuf_init(&j->fin, WPROTO_FRAME_MAX);
	if (wproto_result(&j->fin, &r, &err) < 0) {
		wloop_send(&sv->loop, -1, &err);
		return;
	}
	wnotify_mark(&j->notify);
	j->fin_lost = lost;
	j->finishing = true;
	if (!sl_block_end(sv, j, sj_block_done))
		sj_block_done(sv, j);
}

/* The RESULT goes out; the jail waits for the next block, or goes. */
static void sj_block_done(struct sv *sv, struct sv_jail *j)
{
	struct sv_sess *s = j->s;
	struct werr err = { 0 };
	struct wcg_stats st;
	bool lost = j->fin_lost;

	j->finishing = false;
	wloop_send(&sv->loop, wbuf_put_raw(&sv->broker.out, j->fin.d, j->fin.len), &err);
	wbuf_free(&j->fin);
	j->busy = false;
	s->busy = NULL;
	free(j->tail);
	j->tail = NULL;
	j->tail_cap = j->tail_pos = 0;
	j->tail_full = false;
	if (lost) {
		const struct wlang *lang = j->lang;

		sj_destroy(sv, j);
		/* its state is gone: the next block's jail starts as soon as
		 * the loop is idle, or is taken ready from the pool, while
		 * the model thinks */
		s->want |= 1u << (lang - wlangs);
		sv->idle_work = true;
		return;
	}
	/* Between blocks the jail stays under session-wide limits: its cpu
	 * counts (a forged "D", a background job), and with background
	 * processes allowed, they live until the block's wall time. */
	wcg_stats(j->jr.cg, &st);
	j->idle0_ns = jr_cpu_ns(&j->jr, &st);
	if (s->pol->limits.background && s->pol->limits.wall_ms)
		j->bg_deadline_ms = j->t0_ms + s->pol->limits.wall_ms;
	if (s->pol->limits.cpu_ms || j->bg_deadline_ms) {
		wloop_timer_set(&j->tick_src, IDLE_TICK_MS, IDLE_TICK_MS);
	} else {
		wloop_rearm(&sv->loop, &j->tick_src, 0);
		wloop_timer_set(&j->tick_src, 0, 0);
	}
}

/* --- the jail's event sources ------------------------------------------------- */

static void sj_on_exit(struct wloop *l, struct wsrc *src, uint32_t events)
{
	struct sv *sv = sv_of(l);
	struct sv_jail *j = src->ctx;
	siginfo_t si;

	if (j->starting) {
		/* died while being set up: its report says why, when it sent one */
		struct werr e = { 0 };

		if (jail_finish(&j->jr.jl, &e) >= 0) {
			memset(&si, 0, sizeof(si));
			/* no report: say how it ended (reaped here, once) */
			while (syscall(SYS_waitid, P_PIDFD, j->jr.jl.pidfd, &si, WEXITED, NULL) < 0 &&
			       errno == EINTR)
				;
			wloop_forget(&sv->loop, src);
			closep(&j->jr.jl.pidfd);
			if (si.si_code == CLD_EXITED)
				werr_set(&e, 0, "the jail died while being set up (exit status %d)",
				         si.si_status);
			else
				werr_set(&e, 0, "the jail died while being set up (signal %d)",
				         si.si_status);
		}
		sj_start_failed(sv, j, &e);
		return;
	}
	jr_reap(&j->jr, &si, NULL);   /* the driver's real status, as init reported it */
	wloop_unwatch(&sv->loop, src);
	j->jr.jl.pidfd = -1;
	if (j->finishing) {
		/* ended while its block's report is awaited: its RESULT is
		 * made; the jail goes after it, and the next block says so */
		j->fin_lost = true;
		j->s->lost_idle = true;
		return;
	}
	if (!j->s) {
		sj_destroy(sv, j);   /* a pooled jail ended: never replaced here */
	} else if (j->busy) {
		sj_finish_block(sv, j, true, &si, 0);   /* destroys j, starts the next */
	} else {
		struct sv_sess *s = j->s;
		const struct wlang *lang = j->lang;

		s->lost_idle = true;
		sj_destroy(sv, j);
		s->want |= 1u << (lang - wlangs);
		sv->idle_work = true;
	}
}

/* Sweep the jail and stop its driver until the next block (jail_freeze);
 * SWEPT answers it (sj_on_sync). */
int sj_freeze(struct sv_jail *j)
{
	j->sweeping = true;
	j->frozen = true;
	j->sweep_at_ms = sv_now_ms();
	return jail_freeze(&j->jr.jl);
}

/* A block's code is waiting in ctl_out and the sweep is acked: the driver
 * runs again and reads it. */
int sj_thaw(struct sv_jail *j)
{
	if (!j->frozen)
		return 0;
	j->frozen = false;
	return jail_thaw(&j->jr.jl);
}

/* "D <status>\n", nothing else, ever. */
static int parse_done(const char *line, int *status)
{
	int v = 0, digits = 0;

	if (line[0] != 'D' || line[1] != ' ')
		return -1;
	for (const char *p = line + 2; *p; p++, digits++) {
		if (*p < '0' || *p > '9' || digits >= 3)
			return -1;
		v = v * 10 + (*p - '0');
	}
	if (!digits || v > 255)
		return -1;
	*status = v;
	return 0;
}

static void sj_on_ctl(struct wloop *l, struct wsrc *src, uint32_t events)
{
	struct sv *sv = sv_of(l);
	struct sv_jail *j = src->ctx;
	if ((events & EPOLLOUT) && j->ctl_out.len) {
		ssize_t n = write(src->fd, j->ctl_out.d, j->ctl_out.len);
		if (n > 0)
			wbuf_consume(&j->ctl_out, (size_t)n);
		else if (n < 0 && errno != EAGAIN && errno != EINTR)
			goto broken;
		if (!j->ctl_out.len) {
			wbuf_free(&j->ctl_out);
			wloop_rearm(&sv->loop, src, EPOLLIN);
		}
	}
	if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
		char c;
		for (;;) {
			ssize_t n;
			int status;
			/* Backpressure, as for stdout (sj_on_pipe): an image is up
			 * to 3 MiB and a profile may have no output limit, so
			 * an image's bytes are read only while the broker keeps
			 * up; otherwise jailed code could queue images until
			 * the supervisor drops the broker, and every session
			 * with it (SECURITY.md G144).  Lines ("A", "D") are
			 * small and bounded per block: they are read on, so a
			 * block's end is never held up by another session's
			 * output.  A hung-up socket is read on too: its rest is
			 * bounded by its buffer, and epoll would report the
			 * hang-up again and again while paused. */
			if (j->rich.left && !(events & (EPOLLHUP | EPOLLERR)) &&
			    wloop_peer_behind(&sv->loop)) {
				j->ctl_paused = true;
				wloop_rearm(&sv->loop, src, j->ctl_out.len ? EPOLLOUT : 0);
				return;
			}
			if (j->rich.left) {   /* an "M" frame's bytes (rich.c) */
				n = rich_read(sv, j, src->fd);
				if (n == 0)
					break;
				if (n > 0)
					continue;
				wloop_unwatch(&sv->loop, src);
				return;
			}
			n = read(src->fd, &c, 1);
			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				break;
			if (n <= 0) {
				/* the driver closed its end: it is ending; its exit
				 * finishes the block */
				wloop_unwatch(&sv->loop, src);
				return;
			}
			if (c != '\n') {
				if (j->ctl_in_len >= sizeof(j->ctl_in) - 1)
					goto broken;
				j->ctl_in[j->ctl_in_len++] = c;
				continue;
			}
			j->ctl_in[j->ctl_in_len] = '\0';
			j->ctl_in_len = 0;
			if (!j->busy || j->ctl_out.len || j->done_pending || j->finishing)
				goto broken;
			n = rich_line(sv, j, j->ctl_in);
			if (n > 0 && j->ctl_in[0] == 'A')
				sl_block_began(j);
			if (n > 0)
				continue;
			if (n < 0 || parse_done(j->ctl_in, &status) < 0)
				goto broken;
			if (!j->s->pol->limits.background && !j->s->oneshot) {
				/* The driver's word is not trusted: what the block
				 * left running is killed, and the driver stopped
				 * with every thread of it, before its RESULT, so the
				 * next block's processes are never hit and nothing
				 * of the jail runs between blocks (G36). */
				j->done_pending = true;
				j->done_status = status;
				if (!j->sweeping && sj_freeze(j) < 0)
					goto broken;
				return;
			}
			/* may destroy j (one-shot): touch nothing after it */
			sj_finish_block(sv, j, false, NULL, status);
			return;
		}
	}
	return;
broken:
	sj_kill(j, WB_ERROR);
	wloop_unwatch(&sv->loop, src);
}

/* init's reports: SWEPT ends a sweep; STATUS is kept for sj_on_exit. */
static void sj_on_sync(struct wloop *l, struct wsrc *src, uint32_t events)
{
	struct sv *sv = sv_of(l);
	struct sv_jail *j = src->ctx;

	if (j->starting) {
		struct werr e = { 0 };
		int rc = jail_finish(&j->jr.jl, &e);

		/* a learning jail's calls notify from READY on, before the
		 * driver's exec is confirmed: they are answered from then
		 * (supervisor/run_learn.c does the same) */
		if (rc >= 0 && j->learning && j->jr.jl.ready && j->s &&
		    sj_arm_notify(sv, j, &e) < 0) {
			sj_start_failed(sv, j, &e);
			return;
		}
		if (rc == 0)
			return;
		if (rc < 0) {
			sj_start_failed(sv, j, &e);
			return;
		}
		if (sj_started(sv, j, &e) < 0) {
			sj_kill(j, WB_ERROR);
			return;
		}
	}
	for (;;) {
		enum jail_ev ev = jail_read(&j->jr.jl);
		if (ev == JAIL_EV_NONE || ev == JAIL_EV_STATUS)
			return;
		if (ev == JAIL_EV_EOF) {
			/* init is ending; its pidfd finishes the jail.  Out of
			 * epoll before the close (jail_read's note): a jail
			 * starting now holds a copy of this fd, and a stale
			 * registration would name j after it is freed */
			wloop_unwatch(&sv->loop, src);
			j->jr.jl.sync_fd = -1;
			return;
		}
		if (!j->sweeping)
			continue; /* an ack nobody asked for */
		j->sweeping = false;
		if (j->done_pending) {
			j->done_pending = false;
			/* may destroy j (one-shot): touch nothing after it */
			sj_finish_block(sv, j, false, NULL, j->done_status);
			return;
		}
		if (j->busy) { /* a block waited for an idle sweep: send its code now */
			if (sj_thaw(j) < 0) {
				sj_kill(j, WB_ERROR);
				return;
			}
			wloop_rearm(&sv->loop, &j->ctl_src, EPOLLIN | EPOLLOUT);
		}
	}
}

static void sj_on_notify(struct wloop *l, struct wsrc *src, uint32_t events)
{
	struct sv *sv = sv_of(l);
	struct sv_jail *j = src->ctx;
	struct werr err = { 0 };

	if (!(events & EPOLLIN)) {
		wloop_rearm(&sv->loop, src, 0);
		return;
	}
	if (j->learning && j->busy && !j->learn_began && sl_block_begun(j))
		sl_block_began(j);
	if (wnotify_handle(&j->notify) < 0) {
		wloop_rearm(&sv->loop, src, 0);
		return;
	}
	/* as bounded as the audit log: only calls that got a "denied" record */
	if (j->notify.last && j->notify.last_audited) {
		wloop_send(&sv->loop, wproto_audit(&sv->broker.out, j->s->id, j->busy ? j->block : 0,
		                                   j->notify.last->name, j->notify.last->count, &err), &err);
	}
}

static void sj_on_tick(struct wloop *l, struct wsrc *src, uint32_t events)
{
	struct sv_jail *j = src->ctx;
	const struct wlimits *lim = &j->s->pol->limits;
	uint64_t ticks, now = sv_now_ms();

	(void)!read(src->fd, &ticks, sizeof(ticks));
	if (j->jr.killed_for != WB__N)
		return;
	if (!j->busy) {
		/* session-wide: cpu burnt between blocks adds up */
		if (lim->cpu_ms) {
			struct wcg_stats st;
			wcg_stats(j->jr.cg, &st);
			if (j->idle_cpu_ns + (jr_cpu_ns(&j->jr, &st) - j->idle0_ns) >= lim->cpu_ms * 1000000ULL) {
				sj_kill(j, WB_CPU_TIME);
				return;
			}
		}
		if (j->bg_deadline_ms && now >= j->bg_deadline_ms && !j->sweeping) {
			/* background work was allowed until now */
			j->bg_deadline_ms = 0;
			if (sj_freeze(j) < 0)
				sj_kill(j, WB_ERROR);
		}
		if (j->sweeping && ms_since(now, j->sweep_at_ms) >= SWEEP_MAX_MS) {
			j->sweep_late = true;
			sj_kill(j, WB_ERROR);
		}
		return;
	}
	if (j->sweeping && ms_since(now, j->sweep_at_ms) >= SWEEP_MAX_MS) {
		j->sweep_late = true;
		sj_kill(j, WB_ERROR);   /* init did not ack: nothing is left trusted */
		return;
	}
	if (lim->wall_ms && ms_since(now, j->t0_ms) >= lim->wall_ms) {
		sj_kill(j, WB_TIMEOUT);
		return;
	}
	if (j->grace_at_ms && now >= j->grace_at_ms) {
		sj_kill(j, WB_INTERRUPTED);
		return;
	}
	if (j->sigint_again_ms && now >= j->sigint_again_ms) {
		j->sigint_again_ms = now + j->lang->sigint_repeat_ms;
		kill(-j->jr.jl.pid, SIGINT);
	}
	if (lim->cpu_ms) {
		struct wcg_stats st;
		wcg_stats(j->jr.cg, &st);
		if (jr_cpu_ns(&j->jr, &st) - j->cpu0_ns >= lim->cpu_ms * 1000000ULL)
			sj_kill(j, WB_CPU_TIME);
	}
}

/* --- starting a jail ---------------------------------------------------------- *
 *
 * Off the loop (docs/design.md, "Starting a session's jail"): sj_spawn
 * does the parent's share of jail_start (plan, clone, id maps, "go", the
 * cgroup attach or its request to the attacher) and returns; the child's setup and the driver's exec run
 * while the loop serves everyone else, and the sync socket's reports
 * finish the start (sj_on_sync: jail_finish, then sj_started).  A block
 * sent meanwhile waits in the control socket, which the driver reads once
 * it runs.
 *
 * The pool: jails started ahead of any session for a (profile, workspace,
 * language) that a session used, so a new session -- or a session whose
 * jail lost its state -- takes one ready.  A pooled jail is started by
 * the same sj_spawn from the same spec as the session's own would be
 * (same namespaces, filter, Landlock, limits), runs nothing but the
 * driver until a session takes it, is taken by one session only and is
 * never given back: it ends with that session, like a cold one. */

/* The parent's share of a jail's start, for the session tmpl (its
 * profile, workspace, hides, environment); the jail is not yet anybody's. */
struct sv_jail *sj_spawn(struct sv *sv, const struct sv_sess *tmpl,
                                  const struct wlang *lang, bool pool, struct werr *err)
{
	struct sv_jail *j = xcalloc(1, sizeof(*j));
	int ctl[2] = { -1, -1 }, out_p[2] = { -1, -1 }, err_p[2] = { -1, -1 };
	char **argv = NULL, cgname[64];
	struct jail_spec spec = JAIL_SPEC_INIT;
	bool ok = false;

	j->lang = lang;
	jr_init(&j->jr, tmpl->pol);
	j->pid_src.fd = j->ctl_src.fd = j->out_src.fd = j->err_src.fd = -1;
	j->notify_src.fd = j->tick_src.fd = j->sync_src.fd = -1;
	j->notify.fd = -1;
	wbuf_init(&j->ctl_out, WPROTO_CODE_MAX + 32);

	argv = wlang_argv(lang);
	if (!argv) {
		werr_set(err, 0, "no driver is built in for %s", lang->name);
		goto out;
	}
	/* limits and filter; the server's one watchdog covers the cgroup */
	snprintf(cgname, sizeof(cgname), "warden-%d-s%u", getpid(), sv->jail_counter++);
	wtiming(NULL);   /* WARDEN_TIMING: this jail's phases from here */
	if (jr_prepare(&j->jr, cgname, false, &spec, err) < 0 ||
	    sl_prepare(sv, j, tmpl, &spec, err) < 0)
		goto out;
	/* For the pool: the least CPU weight before anything runs in the
	 * group, so its driver's start-up yields to the sessions' blocks;
	 * sess_want gives the default back (what a cold group has) before a
	 * session gets it.  No cpu group (no cpus limit, or the rlimit
	 * fallback): nothing to lower, and nothing to give back. */
	if (pool && wcg_set_cpu_low(j->jr.cg, true) == 0)
		j->cpu_low = true;
	/* The control socket: the driver's end becomes fd 4 in the jail. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) < 0 ||
	    pipe2(out_p, O_CLOEXEC) < 0 || pipe2(err_p, O_CLOEXEC) < 0) {
		werr_set(err, errno, "creating the session's pipes");
		goto out;
	}
	spec.workspace = tmpl->ws;
	spec.workspace_fd = tmpl->ws_fd;
	spec.hide_extra = tmpl->hide_extra.v;
	spec.protect_extra = tmpl->own.v;
	spec.protect_reg = &sv->reg;
	spec.home = sv_caller_home();
	spec.argv = argv;
	spec.envp = tmpl->env;
	spec.stdout_fd = out_p[1];
	spec.stderr_fd = err_p[1];
	spec.keep_fd = ctl[1];
	spec.hostname = "warden";
	spec.new_session = true;
	/* the cgroup attach, where there is one to do, goes to the attacher */
	spec.defer_go = sv->attacher.fd >= 0 && wcg_has_groups(j->jr.cg);
	if (jr_begin(&j->jr, &spec, err) < 0)
		goto out;
	j->starting = true;
	sv->n_starting++;
	if (sl_start(sv, j, tmpl, err) < 0)
		goto out;   /* sj_destroy: killed, reaped, not starting */
	if (spec.defer_go) {
		int fds[SV_ATTACH_FDS_MAX];
		/* as root the jail was born in its v1 groups (jail_clone_as):
		 * only v2 ones, if any, are left for the attacher */
		size_t n = wcg_attach_fds(j->jr.cg, fds, ARRAY_SIZE(fds), j->jr.jl.cg_joined);
		size_t inflight = 0;

		for (struct sv_jail *q = sv->attaching; q; q = q->attach_next)
			inflight++;
		if (n == 0) {
			if (jail_go(&j->jr.jl, err) < 0)
				goto out;
		} else if (inflight < SV_ATTACH_INFLIGHT &&
		    sv_attacher_ask(&sv->attacher, ++sv->attach_tag, j->jr.jl.pid, fds, n) == 0) {
			struct sv_jail **pp = &sv->attaching;

			j->attaching = true;
			j->attach_tag = sv->attach_tag;
			while (*pp)
				pp = &(*pp)->attach_next;
			*pp = j;   /* answers come in the order asked */
		} else if (wcg_attach(j->jr.cg, j->jr.jl.pid, j->jr.jl.cg_joined, err) < 0 ||
		           jail_go(&j->jr.jl, err) < 0) {
			goto out;   /* the attacher is gone or busy: here, as jail_start would */
		}
	}
	/* from here every fd of the jail has one owner: pidfd pid_src (shared
	 * with jr.jl for signals), sync_fd sync_src; the session's ends of
	 * the pipes wait in their sources, watched once a session has it */
	wloop_watch(&sv->loop, &j->pid_src, j->jr.jl.pidfd, EPOLLIN, sj_on_exit, j);
	wloop_watch(&sv->loop, &j->sync_src, j->jr.jl.sync_fd, EPOLLIN, sj_on_sync, j);
	fcntl(ctl[0], F_SETFL, O_NONBLOCK);
	fcntl(out_p[0], F_SETFL, O_NONBLOCK);
	fcntl(err_p[0], F_SETFL, O_NONBLOCK);
	j->ctl_src.fd = steal_fd(&ctl[0]);
	j->out_src.fd = steal_fd(&out_p[0]);
	j->err_src.fd = steal_fd(&err_p[0]);
	ok = true;
out:
	if (!ok) {
		sj_destroy(sv, j);
		j = NULL;
	}
	for (int i = 0; i < 2; i++) {
		closep(&ctl[i]);
		closep(&out_p[i]);
		closep(&err_p[i]);
	}
	wlang_argv_free(argv);
	return j;
}

/* Both started and the session's: its denied calls are answered and
 * audited under the session that uses it (the listener held them until
 * now).  This is where a jail joins its session's world, for every jail,
 * pooled or not. */
static int sj_arm_notify(struct sv *sv, struct sv_jail *j, struct werr *err)
{
	struct sv_sess *s = j->s;

	if (j->notify_armed)
		return 0;
	j->notify_armed = true;
	if (wnotify_init(&j->notify, j->jr.jl.notify_fd, sv->audit, s->audit_id, &s->budget,
	                 err) < 0)
		return -1;   /* jr_end closes notify_fd */
	j->jr.jl.notify_fd = -1;
	sl_arm(j);
	if (j->notify.fd >= 0)
		wloop_watch(&sv->loop, &j->notify_src, j->notify.fd, EPOLLIN, sj_on_notify, j);
	return 0;
}

static int sj_arm(struct sv *sv, struct sv_jail *j, struct werr *err)
{
	struct sv_sess *s = j->s;

	if (sj_arm_notify(sv, j, err) < 0)
		return -1;
	/* network mode proxy: served, and audited under s, until
	 * sj_destroy (jr_end); until now the listener only queued what a
	 * pooled jail's driver could have sent (nothing: it runs no code) */
	return jr_serve_proxy(&j->jr, &sv->loop, sv->audit, s->audit_id, err);
}

/* The driver was exec'ed: the one place every jail's start completes
 * (a hook for what attaches to a started jail goes here). */
static int sj_started(struct sv *sv, struct sv_jail *j, struct werr *err)
{
	sj_not_starting(sv, j);
	j->started = true;
	return j->s ? sj_arm(sv, j, err) : 0;
}

/* j becomes s's jail for its language. */
int sj_attach(struct sv *sv, struct sv_jail *j, struct sv_sess *s, struct werr *err)
{
	int fds[3] = { j->ctl_src.fd, j->out_src.fd, j->err_src.fd };

	j->s = s;
	s->jails[j->lang - wlangs] = j;
	wloop_watch(&sv->loop, &j->ctl_src, fds[0], EPOLLIN, sj_on_ctl, j);
	wloop_watch(&sv->loop, &j->out_src, fds[1], EPOLLIN, sj_on_pipe, j);
	wloop_watch(&sv->loop, &j->err_src, fds[2], EPOLLIN, sj_on_pipe, j);
	wloop_timer(&sv->loop, &j->tick_src, 0, sj_on_tick, j);
	if (j->pooled) {
		json_object *rec = sess_audit_rec(s);
		json_object_object_add(rec, "language", json_object_new_string(j->lang->name));
		json_object_object_add(rec, "pooled", json_object_new_boolean(true));
		json_object_object_add(rec, "pid", json_object_new_int(j->jr.jl.pid));
		waudit_emit(sv->audit, "jail", rec);
	}
	return j->started ? sj_arm(sv, j, err) : 0;
}

/* A start that failed: the block waiting for it gets its RESULT. */
void sj_start_failed(struct sv *sv, struct sv_jail *j, const struct werr *e)
{
	struct sv_sess *s = j->s;

	sj_not_starting(sv, j);
	if (s && j->busy) {
		uint32_t block = j->block;
		sj_destroy(sv, j);
		sj_fail_block(sv, s, block, e->msg);
		return;
	}
	sj_destroy(sv, j);   /* the next RUN starts one again, and says why */
}

/* A block that could not start is still answered with a RESULT, so every
 * RUN gets exactly one. */
void sj_fail_block(struct sv *sv, struct sv_sess *s, uint32_t block, const char *why)
{
	struct wresult r = { .session = s->id, .block = block, .exit_code = -1,
	                     .reason = WB_ERROR, .message = (char *)why };
	struct werr err = { 0 };
	json_object *rec = sess_audit_rec(s);

	wloop_send(&sv->loop, wproto_result(&sv->broker.out, &r, &err), &err);
	json_object_object_add(rec, "block", json_object_new_int64(block));
	json_object_object_add(rec, "reason", json_object_new_string("error"));
	json_object_object_add(rec, "error", json_object_new_string(why));
	waudit_emit(sv->audit, "block_end", rec);
}
