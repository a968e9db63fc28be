/* Sessions and their jails (supervisor/session.h).
 *
 * A session holds at most one jail per language it has used; each jail runs
 * that language's driver (supervisor/lang.h) under warden's init, with the
 * session's policy, its own cgroup and its own seccomp listener.  A block
 * goes to the driver as "R <len>\n<code>" on the control socket and ends
 * when the driver answers "D <status>\n" -- or when the jail ends, or when
 * the supervisor kills it (wall time, cpu time, an interrupt that was not
 * honoured).  Everything that comes from a jail is hostile: the control
 * socket is parsed byte by byte with a fixed-size buffer and anything but
 * a well-formed answer ends the jail; output is counted, cut to the
 * policy's limit (head streamed, tail kept in a bounded ring) and never
 * buffered without bound.
 *
 * Timing: one 100 ms tick per busy jail checks the wall time, the cpu time
 * and the interrupt grace period; idle jails cost no wakeups. */
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
#include "jailrun.h"
#include "sv.h"
#include "warden/filter.h"
#include "warden/jail.h"
#include "warden/log.h"
#include "warden/util.h"

#define TICK_MS 100
#define INTERRUPT_GRACE_MS 3000
#define DRAIN_MAX (256u * 1024)         /* per pipe, when a block ends */
#define IDLE_OUTPUT_MAX (64u * 1024)    /* relayed between blocks, then dropped */
#define IDLE_TICK_MS 250                /* between blocks: session-wide limits */
/* init must ack a sweep within this.  A sweep is a few syscalls for init,
 * but under load (hundreds of jails starting at once on 2 cores, measured)
 * init may not run for seconds: 3 s ended healthy blocks there.  The limit
 * only stops a jail whose init no longer answers from holding a block open
 * for ever, so it is generous; a block's own wall time still applies. */
#define SWEEP_MAX_MS 30000
/* The pool's tick (idle jails' expiry, and the refills below). */
#define POOL_TICK_MS 250
/* A session that took a jail (from the pool or not) tops the pool up at a
 * tick at least REFILL_IDLE_MS later that finds it between blocks -- never
 * while its first block runs, nor right behind its RESULT: a jail's start
 * is 2.5 ms on the loop and 25 ms of CPU, which would otherwise land
 * between OPENED and that block's RESULT, or on a block sent right after
 * it.  A session whose blocks keep the ticks from finding it idle tops the
 * pool up at the end of a block once REFILL_OVERDUE_MS more have passed;
 * one that closes first, at its close.  docs/design.md, "The warm pool". */
#define REFILL_IDLE_MS 250
#define REFILL_OVERDUE_MS 1000

static int sess_want(struct sv *sv, struct sv_sess *s, const struct wlang *lang,
                     struct werr *err);
static void start_failed(struct sv *sv, struct sv_jail *j, const struct werr *e);
static void fail_block(struct sv *sv, struct sv_sess *s, uint32_t block, const char *why);
static int jail_started(struct sv *sv, struct sv_jail *j, struct werr *err);

/* s's deferred pool refills are due (REFILL_IDLE_MS): sess_idle runs them
 * when the loop is next idle. */
static void refill_now(struct sv *sv, struct sv_sess *s)
{
	if (s->refill_later) {
		s->refill |= s->refill_later;
		s->refill_later = 0;
		sv->idle_work = true;
	}
}

struct sv_sess *sess_find(struct sv *sv, uint32_t id)
{
	for (struct sv_sess *s = sv->sessions; s; s = s->next)
		if (s->id == id)
			return s;
	return NULL;
}

static json_object *audit_rec(const struct sv_sess *s)
{
	json_object *rec = json_object_new_object();
	json_object_object_add(rec, "session", json_object_new_string(s->audit_id));
	return rec;
}

int sess_open(struct sv *sv, const struct wpolicy *pol, const char *ws,
              const struct wstrv *hide_extra, bool oneshot, struct sv_sess **out,
              struct werr *err)
{
	struct sv_sess *s = xcalloc(1, sizeof(*s));
	json_object *rec;

	*out = NULL;
	s->pol = pol;
	s->oneshot = oneshot;
	snprintf(s->ws, sizeof(s->ws), "%s", ws);
	/* The workspace is held from now on: every jail of the session binds
	 * this directory, whatever its path leads to later (jail/plan.c). */
	s->ws_fd = sv_open_workspace(s->ws, err);
	if (s->ws_fd < 0) {
		free(s);
		return -1;
	}
	for (size_t i = 0; hide_extra && i < hide_extra->n; i++)
		wstrv_push(&s->hide_extra, hide_extra->v[i]);
	sv_own_hides(s->ws, waudit_path(sv->audit), &s->own);
	s->env = sv_build_env(pol, NULL, 0, s->ws, sv_caller_home(), err);
	if (!s->env) {
		close(s->ws_fd);
		wstrv_free(&s->hide_extra);
		wstrv_free(&s->own);
		free(s);
		return -1;
	}
	s->id = ++sv->next_session;
	sv_new_session_id(s->audit_id, sizeof(s->audit_id));
	s->next = sv->sessions;
	sv->sessions = s;
	sv->n_sessions++;

	rec = audit_rec(s);
	json_object_object_add(rec, "profile", json_object_new_string(pol->name));
	json_object_object_add(rec, "policy", json_object_new_string(pol->source ? pol->source : "built-in"));
	json_object_object_add(rec, "workspace", json_object_new_string(s->ws));
	json_object_object_add(rec, "oneshot", json_object_new_boolean(oneshot));
	json_object_object_add(rec, "uid", json_object_new_int((int)getuid()));
	json_object_object_add(rec, "mode", json_object_new_string(sv->chat ? "chat" : "serve"));
	waudit_emit(sv->audit, "session_open", rec);
	*out = s;
	return 0;
}

void sess_prestart(struct sv *sv, struct sv_sess *s)
{
	/* A guess at its first block's language: the last block's on this
	 * server; in chat, the first language (Python) before any; in serve,
	 * none before a block ran (a burst of sessions opened before their
	 * first blocks would boot a guess each).  A failure is the first
	 * block's RESULT, where it is started again. */
	const struct wlang *lang = sv->guess ? sv->guess : sv->chat ? &wlangs[0] : NULL;

	if (lang && wlang_installed(lang)) {
		s->want |= 1u << (lang - wlangs);
		sv->idle_work = true;
	}
}

/* --- one jail ------------------------------------------------------------- */


static void jail_kill(struct sv_jail *j, enum wblock_reason why)
{
	jr_kill(&j->jr, why);
}

/* The jails between jail_begin and the driver's exec (sess_idle starts
 * no more than SV_IDLE_STARTS of them at once). */
static void not_starting(struct sv *sv, struct sv_jail *j)
{
	if (j->starting) {
		j->starting = false;
		sv->n_starting--;
	}
}

/* Out of the pool or its session: nothing reaches it any more. */
static void jail_detach(struct sv *sv, struct sv_jail *j)
{
	free(j->pool_ws);
	j->pool_ws = NULL;
	if (!j->s) {   /* in the pool */
		for (struct sv_jail **pp = &sv->pool; *pp; pp = &(*pp)->pool_next)
			if (*pp == j) {
				*pp = j->pool_next;
				sv->n_pool--;
				break;
			}
	}
	if (j->s) {
		j->s->jails[j->lang - wlangs] = NULL;
		if (j->s->busy == j)
			j->s->busy = NULL;
		j->s = NULL;
	}
}

static void jail_unwatch_all(struct sv *sv, struct sv_jail *j)
{
	wloop_unwatch(&sv->loop, &j->ctl_src);
	wloop_unwatch(&sv->loop, &j->out_src);
	wloop_unwatch(&sv->loop, &j->err_src);
	wloop_unwatch(&sv->loop, &j->tick_src);
	wloop_unwatch(&sv->loop, &j->sync_src);
	j->jr.jl.sync_fd = -1;    /* sync_src's, closed */
	if (j->notify.fd >= 0)
		wloop_unwatch(&sv->loop, &j->notify_src);
	j->notify.fd = -1;
}

/* Synchronous: SIGKILL (pid 1 takes its namespace with it), reap, remove
 * the cgroup.  Called only when the jail's result, if any, is sent.  A
 * jail whose cgroup attach is still asked of the attacher is killed but
 * not reaped until the attacher answered (attacher_answered): while it is
 * a zombie its pid cannot go to another process that the attacher would
 * then move into the jail's group. */
static void jail_destroy(struct sv *sv, struct sv_jail *j)
{
	if (!j)
		return;
	jail_detach(sv, j);
	not_starting(sv, j);
	if (j->jr.jl.pidfd >= 0)
		syscall(SYS_pidfd_send_signal, j->jr.jl.pidfd, SIGKILL, NULL, 0);
	jail_unwatch_all(sv, j);
	wloop_forget(&sv->loop, &j->pid_src);   /* the fd stays in jr.jl.pidfd */
	if (j->attaching) {
		j->doomed = true;
		return;
	}
	if (j->jr.jl.pidfd >= 0) {
		siginfo_t si;
		while (syscall(SYS_waitid, P_PIDFD, j->jr.jl.pidfd, &si, WEXITED, NULL) < 0 &&
		       errno == EINTR)
			;
	}
	wnotify_free(&j->notify);
	jr_end(&j->jr);           /* reaped above: pidfd, host uid slot and cgroup go */
	wbuf_free(&j->ctl_out);
	rich_free(&j->rich);
	free(j->tail);
	j->tail = NULL;
	/* Freed after the current batch of events: a later event of the same
	 * batch may still name one of its (now closed, fd -1) sources. */
	j->grave_next = sv->grave;
	sv->grave = j;
}

/* --- output ----------------------------------------------------------------- */

static void send_output(struct sv *sv, struct sv_jail *j, uint8_t stream, const uint8_t *p,
                        size_t n)
{
	struct werr err = { 0 };

	while (n) {
		size_t k = n < WPROTO_OUTPUT_CHUNK ? n : WPROTO_OUTPUT_CHUNK;
		wloop_send(&sv->loop, wproto_output(&sv->broker.out, j->s->id, j->busy ? j->block : 0,
		                                    stream, p, k, &err), &err);
		p += k;
		n -= k;
	}
}

static void tail_keep(struct sv_jail *j, const uint8_t *p, size_t n)
{
	if (!j->tail_cap)
		return;
	if (!j->tail)
		j->tail = xmalloc(j->tail_cap);
	if (n >= j->tail_cap) {   /* only the last tail_cap bytes matter */
		memcpy(j->tail, p + n - j->tail_cap, j->tail_cap);
		j->tail_pos = 0;
		j->tail_full = true;
		return;
	}
	while (n) {
		size_t k = j->tail_cap - j->tail_pos;
		if (k > n)
			k = n;
		memcpy(j->tail + j->tail_pos, p, k);
		j->tail_pos = (j->tail_pos + k) % j->tail_cap;
		if (j->tail_pos == 0)
			j->tail_full = true;
		p += k;
		n -= k;
	}
}

/* The head (half the limit) is streamed; past it the bytes go to the tail
 * ring (the other half), sent when the block ends. */
static void relay(struct sv *sv, struct sv_jail *j, uint8_t stream, const uint8_t *p, size_t n)
{
	uint64_t limit = j->s->pol->limits.output, head = limit - limit / 2;

	if (!j->busy) {   /* a background process writing between blocks */
		if (j->idle_out < IDLE_OUTPUT_MAX) {
			size_t k = IDLE_OUTPUT_MAX - j->idle_out < n ? IDLE_OUTPUT_MAX - j->idle_out : n;
			send_output(sv, j, stream, p, k);
		}
		j->idle_out += n;
		return;
	}
	if (!limit) {
		j->out_total += n;
		send_output(sv, j, stream, p, n);
		return;
	}
	if (j->out_total < head) {
		size_t k = head - j->out_total < n ? (size_t)(head - j->out_total) : n;
		send_output(sv, j, stream, p, k);
		j->out_total += k;
		p += k;
		n -= k;
	}
	if (n) {
		j->tail_cap = (size_t)(limit / 2);
		tail_keep(j, p, n);
		j->out_total += n;
	}
}

/* Read one pipe once (max bytes at most); false at EOF or error. */
static bool pipe_read(struct sv *sv, struct sv_jail *j, struct wsrc *src, uint8_t stream,
                      size_t max, size_t *got)
{
	ssize_t n = read(src->fd, sv->buf, max < sizeof(sv->buf) ? max : sizeof(sv->buf));

	*got = 0;
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	if (n <= 0) {
		wloop_unwatch(&sv->loop, src);
		return false;
	}
	*got = (size_t)n;
	relay(sv, j, stream, sv->buf, (size_t)n);
	return true;
}

static void on_pipe(struct wloop *l, struct wsrc *src, uint32_t events)
{
	struct sv *sv = sv_of(l);
	struct sv_jail *j = src->ctx;
	size_t got;

	(void)pipe_read(sv, j, src, src == &j->out_src ? WSTREAM_STDOUT : WSTREAM_STDERR,
	                sizeof(sv->buf), &got);
	if (src->fd >= 0 && wloop_peer_behind(&sv->loop)) {
		/* backpressure: stop reading jails until the broker catches up */
		wloop_rearm(&sv->loop, &j->out_src, 0);
		wloop_rearm(&sv->loop, &j->err_src, 0);
		j->paused = true;
	}
}

void sess_resume_output(struct sv *sv)
{
	for (struct sv_sess *s = sv->sessions; s; s = s->next)
		for (size_t i = 0; i < ARRAY_SIZE(s->jails); i++) {
			struct sv_jail *j = s->jails[i];
			if (j && j->paused) {
				j->paused = false;
				wloop_rearm(&sv->loop, &j->out_src, EPOLLIN);
				wloop_rearm(&sv->loop, &j->err_src, EPOLLIN);
			}
			if (j && j->ctl_paused) {
				j->ctl_paused = false;
				wloop_rearm(&sv->loop, &j->ctl_src,
				            EPOLLIN | (j->ctl_out.len ? EPOLLOUT : 0));
			}
		}
}

/* Everything the driver wrote before "D" is in the pipes already; read it,
 * boundedly (a background writer could go on forever). */
static void drain(struct sv *sv, struct sv_jail *j)
{
	struct wsrc *srcs[2] = { &j->out_src, &j->err_src };

	for (int i = 0; i < 2; i++) {
		size_t total = 0, got;
		while (srcs[i]->fd >= 0 && total < DRAIN_MAX &&
		       pipe_read(sv, j, srcs[i], i ? WSTREAM_STDERR : WSTREAM_STDOUT,
		                 DRAIN_MAX - total, &got) && got)
			total += got;
	}
}

static void flush_tail(struct sv *sv, struct sv_jail *j)
{
	char note[128];
	size_t kept = j->tail_full ? j->tail_cap : j->tail_pos;
	uint64_t head = j->s->pol->limits.output - j->s->pol->limits.output / 2;

	if (!j->tail || !kept)
		return;
	snprintf(note, sizeof(note), "\n[warden: %" PRIu64 " bytes of output omitted]\n",
	         j->out_total - head - kept);
	send_output(sv, j, WSTREAM_STDERR, (const uint8_t *)note, strlen(note));
	if (j->tail_full)
		send_output(sv, j, WSTREAM_STDOUT, j->tail + j->tail_pos, j->tail_cap - j->tail_pos);
	send_output(sv, j, WSTREAM_STDOUT, j->tail, j->tail_pos);
}

/* --- results ---------------------------------------------------------------- */

/* The block is over: status from the driver (exited == false) or the jail
 * ended (exited == true, si its wait status). */
static void finish_block(struct sv *sv, struct sv_jail *j, bool exited, const siginfo_t *si,
                         int status)
{
	struct sv_sess *s = j->s;
	struct wresult r = { 0 };
	struct wcg_stats st;
	struct werr err = { 0 };
	struct wdenied_count denied[WPROTO_DENIED_MAX];
	char msg[256] = "";
	json_object *rec, *dj;
	bool lost = exited || s->oneshot;

	if (s->refill_later && sv_now_ms() >= s->refill_at_ms + REFILL_OVERDUE_MS)
		refill_now(sv, s);   /* the ticks never found it idle */
	drain(sv, j);
	if (j->tail)
		flush_tail(sv, j);
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
	switch (r.reason) {
	case WB_TIMEOUT: {
		char d[32];
		format_duration_ms(s->pol->limits.wall_ms, d, sizeof(d));
		snprintf(msg, sizeof(msg), "stopped: the %s wall-time limit was reached", d);
		break;
	}
	case WB_CPU_TIME:
		snprintf(msg, sizeof(msg), "stopped: the cpu-time limit was reached");
		break;
	case WB_OOM:
		snprintf(msg, sizeof(msg), "stopped: out of memory (the policy's memory limit)");
		break;
	case WB_PIDS:
		snprintf(msg, sizeof(msg), "the process limit (%" PRIu64 ") was reached", s->pol->limits.pids);
		break;
	case WB_INTERRUPTED:
		snprintf(msg, sizeof(msg), "interrupted");
		break;
	case WB_ERROR:
		if (j->sweep_late)
			snprintf(msg, sizeof(msg), "the jail's init did not confirm within %d s that the "
			         "block's processes were gone, so the jail was ended (is the machine "
			         "overloaded?)", SWEEP_MAX_MS / 1000);
		else
			snprintf(msg, sizeof(msg), "the %s driver broke the control protocol",
			         j->lang->name);
		break;
	default:
		if (exited)
			snprintf(msg, sizeof(msg), "the %s interpreter ended", j->lang->name);
		break;
	}
	if (exited && !s->oneshot)
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg),
		         "%sthe session's %s state was lost; the next block starts a fresh jail",
		         msg[0] ? "; " : "", j->lang->name);
	if (j->tail)
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg),
		         "%soutput cut to the policy's limit: %" PRIu64 " bytes in all", msg[0] ? "; " : "",
		         j->out_total);
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
	rec = audit_rec(s);
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
	dj = wnotify_to_json(&j->notify);
	json_object_object_add(rec, "denied_syscalls", dj);
	{
		json_object *drop = audit_rec(s);
		json_object_object_add(drop, "block", json_object_new_int64(j->block));
		wnotify_flush_dropped(&j->notify, drop);
	}
	waudit_emit(sv->audit, "block_end", rec);
	wloop_send(&sv->loop, wproto_result(&sv->broker.out, &r, &err), &err);
	wnotify_mark(&j->notify);

	j->busy = false;
	s->busy = NULL;
	free(j->tail);
	j->tail = NULL;
	j->tail_cap = j->tail_pos = 0;
	j->tail_full = false;
	if (lost) {
		const struct wlang *lang = j->lang;

		jail_destroy(sv, j);
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

static void on_exit_ev(struct wloop *l, struct wsrc *src, uint32_t events)
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
		start_failed(sv, j, &e);
		return;
	}
	jr_reap(&j->jr, &si, NULL);   /* the driver's real status, as init reported it */
	wloop_unwatch(&sv->loop, src);
	j->jr.jl.pidfd = -1;
	if (!j->s) {
		jail_destroy(sv, j);   /* a pooled jail ended: never replaced here */
	} else if (j->busy) {
		finish_block(sv, j, true, &si, 0);   /* destroys j, starts the next */
	} else {
		struct sv_sess *s = j->s;
		const struct wlang *lang = j->lang;

		s->lost_idle = true;
		jail_destroy(sv, j);
		s->want |= 1u << (lang - wlangs);
		sv->idle_work = true;
	}
}

/* Sweep the jail and stop its driver until the next block (jail_freeze);
 * SWEPT answers it (on_sync). */
static int freeze(struct sv_jail *j)
{
	j->sweeping = true;
	j->frozen = true;
	j->sweep_at_ms = sv_now_ms();
	return jail_freeze(&j->jr.jl);
}

/* A block's code is waiting in ctl_out and the sweep is acked: the driver
 * runs again and reads it. */
static int thaw(struct sv_jail *j)
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

static void on_ctl(struct wloop *l, struct wsrc *src, uint32_t events)
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
			/* Backpressure, as for stdout (on_pipe): an image is up
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
			if (!j->busy || j->ctl_out.len || j->done_pending)
				goto broken;
			n = rich_line(sv, j, j->ctl_in);
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
				if (!j->sweeping && freeze(j) < 0)
					goto broken;
				return;
			}
			/* may destroy j (one-shot): touch nothing after it */
			finish_block(sv, j, false, NULL, status);
			return;
		}
	}
	return;
broken:
	jail_kill(j, WB_ERROR);
	wloop_unwatch(&sv->loop, src);
}

/* init's reports: SWEPT ends a sweep; STATUS is kept for on_exit_ev. */
static void on_sync(struct wloop *l, struct wsrc *src, uint32_t events)
{
	struct sv *sv = sv_of(l);
	struct sv_jail *j = src->ctx;

	if (j->starting) {
		struct werr e = { 0 };
		int rc = jail_finish(&j->jr.jl, &e);

		if (rc == 0)
			return;
		if (rc < 0) {
			start_failed(sv, j, &e);
			return;
		}
		if (jail_started(sv, j, &e) < 0) {
			jail_kill(j, WB_ERROR);
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
			finish_block(sv, j, false, NULL, j->done_status);
			return;
		}
		if (j->busy) { /* a block waited for an idle sweep: send its code now */
			if (thaw(j) < 0) {
				jail_kill(j, WB_ERROR);
				return;
			}
			wloop_rearm(&sv->loop, &j->ctl_src, EPOLLIN | EPOLLOUT);
		}
	}
}

static void on_notify(struct wloop *l, struct wsrc *src, uint32_t events)
{
	struct sv *sv = sv_of(l);
	struct sv_jail *j = src->ctx;
	struct werr err = { 0 };

	if (!(events & EPOLLIN)) {
		wloop_rearm(&sv->loop, src, 0);
		return;
	}
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

static void on_tick(struct wloop *l, struct wsrc *src, uint32_t events)
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
				jail_kill(j, WB_CPU_TIME);
				return;
			}
		}
		if (j->bg_deadline_ms && now >= j->bg_deadline_ms && !j->sweeping) {
			/* background work was allowed until now */
			j->bg_deadline_ms = 0;
			if (freeze(j) < 0)
				jail_kill(j, WB_ERROR);
		}
		if (j->sweeping && now - j->sweep_at_ms >= SWEEP_MAX_MS) {
			j->sweep_late = true;
			jail_kill(j, WB_ERROR);
		}
		return;
	}
	if (j->sweeping && now - j->sweep_at_ms >= SWEEP_MAX_MS) {
		j->sweep_late = true;
		jail_kill(j, WB_ERROR);   /* init did not ack: nothing is left trusted */
		return;
	}
	if (lim->wall_ms && now - j->t0_ms >= lim->wall_ms) {
		jail_kill(j, WB_TIMEOUT);
		return;
	}
	if (j->grace_at_ms && now >= j->grace_at_ms) {
		jail_kill(j, WB_INTERRUPTED);
		return;
	}
	if (lim->cpu_ms) {
		struct wcg_stats st;
		wcg_stats(j->jr.cg, &st);
		if (jr_cpu_ns(&j->jr, &st) - j->cpu0_ns >= lim->cpu_ms * 1000000ULL)
			jail_kill(j, WB_CPU_TIME);
	}
}

/* --- starting a jail ---------------------------------------------------------- *
 *
 * Off the loop (docs/design.md, "Starting a session's jail"): jail_spawn
 * does the parent's share of jail_start (plan, clone, id maps, "go", the
 * cgroup attach or its request to the attacher) and returns; the child's setup and the driver's exec run
 * while the loop serves everyone else, and the sync socket's reports
 * finish the start (on_sync: jail_finish, then jail_started).  A block
 * sent meanwhile waits in the control socket, which the driver reads once
 * it runs.
 *
 * The pool: jails started ahead of any session for a (profile, workspace,
 * language) that a session used, so a new session -- or a session whose
 * jail lost its state -- takes one ready.  A pooled jail is started by
 * the same jail_spawn from the same spec as the session's own would be
 * (same namespaces, filter, Landlock, limits), runs nothing but the
 * driver until a session takes it, is taken by one session only and is
 * never given back: it ends with that session, like a cold one. */

/* The parent's share of a jail's start, for the session tmpl (its
 * profile, workspace, hides, environment); the jail is not yet anybody's. */
static struct sv_jail *jail_spawn(struct sv *sv, const struct sv_sess *tmpl,
                                  const struct wlang *lang, bool pool, struct werr *err)
{
	struct sv_jail *j = xcalloc(1, sizeof(*j));
	int ctl[2] = { -1, -1 }, out_p[2] = { -1, -1 }, err_p[2] = { -1, -1 };
	char **argv = NULL, cgname[64];
	struct jail_spec spec = { 0 };
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
	if (jr_prepare(&j->jr, cgname, false, &spec, err) < 0)
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
	spec.stdin_fd = -1;
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
	wloop_watch(&sv->loop, &j->pid_src, j->jr.jl.pidfd, EPOLLIN, on_exit_ev, j);
	wloop_watch(&sv->loop, &j->sync_src, j->jr.jl.sync_fd, EPOLLIN, on_sync, j);
	fcntl(ctl[0], F_SETFL, O_NONBLOCK);
	fcntl(out_p[0], F_SETFL, O_NONBLOCK);
	fcntl(err_p[0], F_SETFL, O_NONBLOCK);
	j->ctl_src.fd = steal_fd(&ctl[0]);
	j->out_src.fd = steal_fd(&out_p[0]);
	j->err_src.fd = steal_fd(&err_p[0]);
	ok = true;
out:
	if (!ok) {
		jail_destroy(sv, j);
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
static int jail_arm(struct sv *sv, struct sv_jail *j, struct werr *err)
{
	struct sv_sess *s = j->s;

	if (wnotify_init(&j->notify, j->jr.jl.notify_fd, sv->audit, s->audit_id, &s->budget,
	                 err) < 0)
		return -1;   /* jr_end closes notify_fd */
	j->jr.jl.notify_fd = -1;
	if (j->notify.fd >= 0)
		wloop_watch(&sv->loop, &j->notify_src, j->notify.fd, EPOLLIN, on_notify, j);
	/* network mode proxy: served, and audited under s, until
	 * jail_destroy (jr_end); until now the listener only queued what a
	 * pooled jail's driver could have sent (nothing: it runs no code) */
	return jr_serve_proxy(&j->jr, &sv->loop, sv->audit, s->audit_id, err);
}

/* The driver was exec'ed: the one place every jail's start completes
 * (a hook for what attaches to a started jail goes here). */
static int jail_started(struct sv *sv, struct sv_jail *j, struct werr *err)
{
	not_starting(sv, j);
	j->started = true;
	return j->s ? jail_arm(sv, j, err) : 0;
}

/* j becomes s's jail for its language. */
static int jail_attach(struct sv *sv, struct sv_jail *j, struct sv_sess *s, struct werr *err)
{
	int fds[3] = { j->ctl_src.fd, j->out_src.fd, j->err_src.fd };

	j->s = s;
	s->jails[j->lang - wlangs] = j;
	wloop_watch(&sv->loop, &j->ctl_src, fds[0], EPOLLIN, on_ctl, j);
	wloop_watch(&sv->loop, &j->out_src, fds[1], EPOLLIN, on_pipe, j);
	wloop_watch(&sv->loop, &j->err_src, fds[2], EPOLLIN, on_pipe, j);
	wloop_timer(&sv->loop, &j->tick_src, 0, on_tick, j);
	if (j->pooled) {
		json_object *rec = audit_rec(s);
		json_object_object_add(rec, "language", json_object_new_string(j->lang->name));
		json_object_object_add(rec, "pooled", json_object_new_boolean(true));
		json_object_object_add(rec, "pid", json_object_new_int(j->jr.jl.pid));
		waudit_emit(sv->audit, "jail", rec);
	}
	return j->started ? jail_arm(sv, j, err) : 0;
}

/* A start that failed: the block waiting for it gets its RESULT. */
static void start_failed(struct sv *sv, struct sv_jail *j, const struct werr *e)
{
	struct sv_sess *s = j->s;

	not_starting(sv, j);
	if (s && j->busy) {
		uint32_t block = j->block;
		jail_destroy(sv, j);
		fail_block(sv, s, block, e->msg);
		return;
	}
	jail_destroy(sv, j);   /* the next RUN starts one again, and says why */
}

/* The one thing a jail's start reads from a workspace that its sessions
 * (and the person) keep changing: which hide paths exist and what they
 * are (jail/mounts.c hides what is there when the jail starts, and skips
 * what is not).  A pooled jail started before .env appeared, or before
 * another session put a symlink at .ssh, is not what a cold start would
 * build now: this sum, taken before the pooled jail started and again
 * when a session would take it, tells them apart.  Each path is opened as
 * the jail opens it, no symlink followed in any component. */
static void sum_mix(uint64_t *h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		*h = (*h ^ b[i]) * 1099511628211ULL;   /* FNV-1a */
}

static void sum_path(uint64_t *h, const char *path)
{
	struct werr e = { 0 };
	struct stat st;
	int fd = jail_open_nofollow(AT_FDCWD, path, &e);
	uint64_t v[3] = { 0, 0, 0 };

	sum_mix(h, path, strlen(path) + 1);
	if (fd < 0) {
		v[0] = (uint64_t)errno;
	} else {
		if (fstat(fd, &st) == 0) {
			v[0] = st.st_dev;
			v[1] = st.st_ino;
			v[2] = st.st_mode & S_IFMT;
		}
		close(fd);
	}
	sum_mix(h, v, sizeof(v));
}

static uint64_t hide_sum(const struct sv_sess *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < s->pol->hide.n; i++) {
		_cleanup_free_ char *p = NULL;
		struct werr e = { 0 };

		if (policy_expand(s->pol->hide.v[i], s->ws, sv_caller_home(), &p, &e) == 0)
			sum_path(&h, p);
	}
	for (size_t i = 0; i < s->hide_extra.n; i++)
		sum_path(&h, s->hide_extra.v[i]);
	return h;
}

/* The catalogs' paths at the workspace's root and the home, and warden's
 * own directories: taken right after a pooled jail's plan made its
 * placeholders (jail_protect_sum), and when a session would take it. */
static uint64_t protect_sum(const struct sv_sess *s)
{
	return jail_protect_sum(s->ws, sv_caller_home(), s->pol, s->own.v);
}

static bool pool_match(const struct sv_jail *j, const struct sv_sess *s, const struct wlang *lang,
                       const struct stat *ws)
{
	return j->jr.pol == s->pol && j->lang == lang && j->ws_dev == ws->st_dev &&
	       j->ws_ino == ws->st_ino && !strcmp(j->pool_ws, s->ws);
}

/* One more jail in the pool for s's (profile, workspace, lang), when it
 * has fewer than --pool and the server's budget has room: sessions and
 * pooled jails together stay within --max-sessions (each holds a jail's
 * fds).  False when there is nothing to do. */
static bool pool_fill_one(struct sv *sv, const struct sv_sess *s, const struct wlang *lang)
{
	struct stat ws;
	unsigned have = 0;
	struct werr e = { 0 };
	struct sv_jail *j;
	uint64_t sum;

	if (fstat(s->ws_fd, &ws) < 0)
		return false;
	for (j = sv->pool; j; j = j->pool_next)
		have += pool_match(j, s, lang, &ws);
	if (have >= sv->pool_size || sv->n_sessions + sv->n_pool >= sv->max_sessions)
		return false;
	sum = hide_sum(s);   /* before it starts: see hide_sum */
	j = jail_spawn(sv, s, lang, true, &e);
	if (!j)
		return false;   /* the session's own start will say why */
	j->pool_ws = xstrdup(s->ws);
	j->hide_sum = sum;
	j->protect_sum = protect_sum(s);   /* after its plan: placeholders in place */
	j->ws_dev = ws.st_dev;
	j->ws_ino = ws.st_ino;
	j->pooled = true;
	j->pool_until_ms = sv_now_ms() + sv->pool_idle_ms;
	j->pool_next = sv->pool;
	sv->pool = j;
	sv->n_pool++;
	wloop_timer_set(&sv->pool_tick, POOL_TICK_MS, POOL_TICK_MS);
	return true;
}

/* s has, or is starting, a jail for lang: one from the pool when one is
 * there (ready, or still starting), else one started now; then the pool
 * is topped up behind it. */
static int sess_want(struct sv *sv, struct sv_sess *s, const struct wlang *lang,
                     struct werr *err)
{
	struct stat ws;
	struct sv_jail *j = NULL;
	uint64_t sum = 0, psum = 0;
	bool sum_taken = false;

	if (s->jails[lang - wlangs])
		return 0;
	if (fstat(s->ws_fd, &ws) < 0)
		return werr_set(err, errno, "workspace %s", s->ws);
	for (struct sv_jail **pp = &sv->pool; *pp;) {
		struct sv_jail *c = *pp;

		if (!pool_match(c, s, lang, &ws)) {
			pp = &c->pool_next;
			continue;
		}
		if (!sum_taken) {
			sum = hide_sum(s);
			psum = protect_sum(s);
			sum_taken = true;
		}
		if (c->hide_sum != sum || c->protect_sum != psum ||
		    (c->cpu_low && wcg_set_cpu_low(c->jr.cg, false) < 0)) {
			/* its hides or protections are stale, or it would keep the pool's
			 * CPU weight: it goes (unlinked, so *pp is the next
			 * one now), and a fresh one is started */
			jail_destroy(sv, c);
			continue;
		}
		c->cpu_low = false;   /* a cold jail's limits from here on */
		j = c;
		*pp = c->pool_next;   /* out of the pool, for good */
		c->pool_next = NULL;
		sv->n_pool--;
		free(c->pool_ws);
		c->pool_ws = NULL;
		break;
	}
	if (!j) {
		/* room for it: a pooled jail of another key gives way */
		if (sv->pool && sv->n_sessions + sv->n_pool > sv->max_sessions)
			jail_destroy(sv, sv->pool);
		j = jail_spawn(sv, s, lang, false, err);
		if (!j)
			return -1;
	}
	if (jail_attach(sv, j, s, err) < 0) {
		jail_destroy(sv, j);
		return -1;
	}
	if (sv->pool_size && s->oneshot) {
		/* a jail per block: the pool is topped up at once, so the next
		 * block's jail is ready when this one's ends */
		s->refill |= 1u << (lang - wlangs);
		sv->idle_work = true;
	} else if (sv->pool_size) {
		/* the pool is topped up behind it, but not before the block
		 * this jail was taken for has ended (REFILL_IDLE_MS, on_pool_tick) */
		s->refill_later |= 1u << (lang - wlangs);
		s->refill_at_ms = sv_now_ms() + REFILL_IDLE_MS;
		if (!sv->pool)   /* else it ticks already */
			wloop_timer_set(&sv->pool_tick, POOL_TICK_MS, POOL_TICK_MS);
	}
	return 0;
}

bool sess_idle_pending(const struct sv *sv)
{
	return sv->idle_work && sv->n_starting < SV_IDLE_STARTS;
}

bool sess_idle(struct sv *sv)
{
	for (struct sv_sess *s = sv->sessions; s; s = s->next) {
		if (s->want) {
			unsigned i = (unsigned)__builtin_ctz(s->want);
			struct werr e = { 0 };

			s->want &= ~(1u << i);
			if (!s->jails[i])
				(void)sess_want(sv, s, &wlangs[i], &e);
			return true;
		}
	}
	for (struct sv_sess *s = sv->sessions; s; s = s->next) {
		while (s->refill) {
			unsigned i = (unsigned)__builtin_ctz(s->refill);

			if (pool_fill_one(sv, s, &wlangs[i]))
				return true;
			s->refill &= ~(1u << i);
		}
	}
	sv->idle_work = false;
	return false;
}

static void on_pool_tick(struct wloop *l, struct wsrc *src, uint32_t events)
{
	struct sv *sv = sv_of(l);
	uint64_t ticks, now = sv_now_ms();
	struct sv_jail *j = sv->pool, *next;
	bool later = false;

	(void)!read(src->fd, &ticks, sizeof(ticks));
	for (; j; j = next) {
		next = j->pool_next;
		if (now >= j->pool_until_ms)
			jail_destroy(sv, j);   /* idle: emptied */
	}
	/* a session that took a jail REFILL_IDLE_MS ago or more and is
	 * between blocks: its refill is due; one whose block runs waits */
	for (struct sv_sess *s = sv->sessions; s; s = s->next) {
		if (s->refill_later && !s->busy && now >= s->refill_at_ms)
			refill_now(sv, s);
		later |= s->refill_later != 0;
	}
	if (!sv->pool && !later)
		wloop_timer_set(&sv->pool_tick, 0, 0);
}

/* The attacher moved j into its groups (err_no 0), or could not. */
static void attach_done(struct sv *sv, struct sv_jail *j, int err_no)
{
	struct werr e = { 0 };

	j->attaching = false;
	if (j->doomed) {   /* destroyed meanwhile: now it may be reaped */
		j->doomed = false;
		jail_destroy(sv, j);
		return;
	}
	if (err_no)
		werr_set(&e, err_no, "moving the jail into its cgroup");
	if (err_no || jail_go(&j->jr.jl, &e) < 0)
		start_failed(sv, j, &e);
}

static struct sv_jail *attaching_pop(struct sv *sv)
{
	struct sv_jail *j = sv->attaching;

	if (j) {
		sv->attaching = j->attach_next;
		j->attach_next = NULL;
	}
	return j;
}

static void on_attacher(struct wloop *l, struct wsrc *src, uint32_t events)
{
	struct sv *sv = sv_of(l);
	uint32_t tag;
	int err_no, rc;

	while ((rc = sv_attacher_answer(&sv->attacher, &tag, &err_no)) > 0) {
		struct sv_jail *j = sv->attaching;

		if (!j || j->attach_tag != tag)
			break;   /* out of order: not ours to trust; end it below */
		attaching_pop(sv);
		attach_done(sv, j, err_no);
	}
	if (rc == 0)
		return;
	/* gone (or confused): no write of it can follow once it is reaped;
	 * every jail that waited for it fails its start, and jails attach on
	 * the loop from now on */
	wloop_forget(&sv->loop, src);
	sv_attacher_stop(&sv->attacher);
	while (sv->attaching)
		attach_done(sv, attaching_pop(sv), EIO);
}

int sess_pool_init(struct sv *sv, struct werr *err)
{
	struct werr aerr = { 0 };

	if (wloop_timer(&sv->loop, &sv->pool_tick, EPOLLIN, on_pool_tick, NULL) < 0)
		return werr_set(err, errno, "creating the pool's timer");
	if (sv_attacher_start(&sv->attacher, &aerr) == 0)
		wloop_watch(&sv->loop, &sv->attacher_src, sv->attacher.fd, EPOLLIN, on_attacher, NULL);
	else
		wlog_warn("%s; jails are attached to their cgroups on the loop", aerr.msg);
	return 0;
}

void sess_pool_empty(struct sv *sv)
{
	while (sv->pool)
		jail_destroy(sv, sv->pool);
	/* the jails still waiting for the attacher: once it is reaped they
	 * may be */
	wloop_forget(&sv->loop, &sv->attacher_src);
	sv_attacher_stop(&sv->attacher);
	while (sv->attaching) {
		struct sv_jail *j = attaching_pop(sv);
		j->attaching = false;
		j->doomed = false;
		jail_destroy(sv, j);
	}
}

/* A block that could not start is still answered with a RESULT, so every
 * RUN gets exactly one. */
static void fail_block(struct sv *sv, struct sv_sess *s, uint32_t block, const char *why)
{
	struct wresult r = { .session = s->id, .block = block, .exit_code = -1,
	                     .reason = WB_ERROR, .message = (char *)why };
	struct werr err = { 0 };
	json_object *rec = audit_rec(s);

	wloop_send(&sv->loop, wproto_result(&sv->broker.out, &r, &err), &err);
	json_object_object_add(rec, "block", json_object_new_int64(block));
	json_object_object_add(rec, "reason", json_object_new_string("error"));
	json_object_object_add(rec, "error", json_object_new_string(why));
	waudit_emit(sv->audit, "block_end", rec);
}

int sess_run(struct sv *sv, struct sv_sess *s, uint32_t block, const char *language,
             const uint8_t *code, size_t len, uint32_t approval, struct werr *err)
{
	const struct wlang *lang = wlang_find(language);
	struct sv_jail *j;
	struct werr jerr = { 0 };
	char sha[65], hdr[32];
	json_object *rec;
	bool fresh = false;

	if (s->busy)
		return werr_set(err, 0, "session %s is running block %u; wait for its result "
		                "or interrupt it", s->audit_id, s->busy->block);
	if (!lang || !wlang_installed(lang)) {
		_cleanup_free_ char *names = wlang_names();
		return werr_set(err, 0, "%s language \"%s\"; available: %s",
		                lang ? "not installed:" : "unknown", language, names);
	}
	if (memchr(code, '\0', len))
		return werr_set(err, 0, "the code holds a NUL byte");

	sv_sha256_hex(code, len, sha);
	rec = audit_rec(s);
	json_object_object_add(rec, "block", json_object_new_int64(block));
	json_object_object_add(rec, "language", json_object_new_string(lang->name));
	json_object_object_add(rec, "code", json_object_new_string_len((const char *)code, (int)len));
	json_object_object_add(rec, "sha256", json_object_new_string(sha));
	json_object_object_add(rec, "approval", json_object_new_string(wapproval_name(approval)));
	json_object_object_add(rec, "approval_source", json_object_new_string("broker"));
	waudit_emit(sv->audit, "block", rec);
	s->blocks++;

	/* The jail started at OPEN was a guess at the language (the first);
	 * a session whose first block is in another one does not keep an
	 * unused jail besides it. */
	s->want &= 1u << (lang - wlangs);
	for (size_t i = 0; i < ARRAY_SIZE(s->jails); i++)
		if (s->jails[i] && s->jails[i]->lang != lang && !s->jails[i]->used)
			jail_destroy(sv, s->jails[i]);
	sv->guess = lang;   /* the next sessions' first jail */
	if (sess_want(sv, s, lang, &jerr) < 0) {
		fail_block(sv, s, block, jerr.msg);
		return 0;
	}
	j = s->jails[lang - wlangs];
	fresh = !j->used;
	j->used = true;
	j->busy = true;
	j->fresh = fresh;
	j->block = block;
	j->interrupted = false;
	j->grace_at_ms = 0;
	j->jr.killed_for = WB__N;
	j->out_total = 0;
	j->idle_out = 0;
	rich_block_start(&j->rich);
	j->t0_ms = sv_now_ms();
	{
		struct wcg_stats st;
		wcg_stats(j->jr.cg, &st);
		j->cpu0_ns = jr_cpu_ns(&j->jr, &st);
		if (!fresh)   /* the idle period that ends now */
			j->idle_cpu_ns += j->cpu0_ns - j->idle0_ns;
	}
	s->busy = j;
	snprintf(hdr, sizeof(hdr), "R %zu\n", len);
	wbuf_reset(&j->ctl_out);
	if (wbuf_put_raw(&j->ctl_out, hdr, strlen(hdr)) < 0 || wbuf_put_raw(&j->ctl_out, code, len) < 0) {
		jail_kill(j, WB_ERROR);
		return 0;
	}
	/* an idle sweep still running: the code goes once init acked it;
	 * else the driver, stopped since the last block, runs again */
	if (!j->sweeping && thaw(j) < 0) {
		jail_kill(j, WB_ERROR);
		return 0;
	}
	wloop_rearm(&sv->loop, &j->ctl_src, j->sweeping ? EPOLLIN : EPOLLIN | EPOLLOUT);
	wloop_timer_set(&j->tick_src, TICK_MS, TICK_MS);
	wloop_rearm(&sv->loop, &j->tick_src, EPOLLIN);
	if (s->lost_idle && fresh) {
		static const char note[] = "[warden: the previous jail of this session ended between "
		                           "blocks; its state was lost]\n";
		send_output(sv, j, WSTREAM_STDERR, (const uint8_t *)note, sizeof(note) - 1);
	}
	s->lost_idle = false;
	return 0;
}

/* SIGINT to the driver's process group (the block's processes included,
 * as a terminal's Ctrl-C would); the jail is killed if the block has not
 * ended INTERRUPT_GRACE_MS later. */
void sess_interrupt(struct sv *sv, struct sv_sess *s)
{
	struct sv_jail *j = s->busy;

	if (!j || j->interrupted)
		return;
	j->interrupted = true;
	j->grace_at_ms = sv_now_ms() + INTERRUPT_GRACE_MS;
	kill(-j->jr.jl.pid, SIGINT);
}

void sess_close(struct sv *sv, struct sv_sess *s, const char *why)
{
	struct sv_sess **pp;
	json_object *rec;

	for (size_t i = 0; i < ARRAY_SIZE(s->jails); i++)
		if (s->jails[i])
			jail_destroy(sv, s->jails[i]);
	for (pp = &sv->sessions; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	sv->n_sessions--;
	/* a refill still owed (its block was cut short by the close, or the
	 * loop was not idle since): the pool is topped up from this session's
	 * profile, workspace, hides and environment while they exist */
	s->refill |= s->refill_later;
	while (s->refill) {
		unsigned i = (unsigned)__builtin_ctz(s->refill);

		s->refill &= ~(1u << i);
		(void)pool_fill_one(sv, s, &wlangs[i]);
	}
	rec = audit_rec(s);
	json_object_object_add(rec, "blocks", json_object_new_int64((int64_t)s->blocks));
	json_object_object_add(rec, "why", json_object_new_string(why));
	waudit_emit(sv->audit, "session_close", rec);
	sv_free_env(s->env);
	close(s->ws_fd);
	wstrv_free(&s->hide_extra);
	wstrv_free(&s->own);
	free(s);
}

void sess_close_all(struct sv *sv, const char *why)
{
	sv->pool_size = 0;   /* the server ends: nothing refills the pool now */
	while (sv->sessions)
		sess_close(sv, sv->sessions, why);
	sess_pool_empty(sv);
}
