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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "session.h"
#include "jailrun.h"
#include "sv.h"
#include "warden/filter.h"
#include "warden/jail.h"
#include "warden/util.h"

#define TICK_MS 100
#define INTERRUPT_GRACE_MS 3000
#define DRAIN_MAX (256u * 1024)         /* per pipe, when a block ends */
#define IDLE_OUTPUT_MAX (64u * 1024)    /* relayed between blocks, then dropped */
#define IDLE_TICK_MS 250                /* between blocks: session-wide limits */
#define SWEEP_MAX_MS 3000               /* init must ack a sweep within this */

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
	sv_own_hides(s->ws, waudit_path(sv->audit), &s->hide_extra);
	s->env = sv_build_env(pol, NULL, 0, s->ws, sv_caller_home(), err);
	if (!s->env) {
		close(s->ws_fd);
		wstrv_free(&s->hide_extra);
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

/* --- one jail ------------------------------------------------------------- */

static void jail_kill(struct sv_jail *j, enum wblock_reason why)
{
	jr_kill(&j->jr, why);
}

/* Synchronous: SIGKILL (pid 1 takes its namespace with it), reap, remove
 * the cgroup.  Called only when the jail's result, if any, is sent. */
static void jail_destroy(struct sv *sv, struct sv_jail *j)
{
	if (!j)
		return;
	if (j->pid_src.fd >= 0) {
		siginfo_t si;
		syscall(SYS_pidfd_send_signal, j->pid_src.fd, SIGKILL, NULL, 0);
		while (syscall(SYS_waitid, P_PIDFD, j->pid_src.fd, &si, WEXITED, NULL) < 0 && errno == EINTR)
			;
	}
	wloop_unwatch(&sv->loop, &j->pid_src);
	j->jr.jl.pidfd = -1;      /* pid_src's, closed */
	wloop_unwatch(&sv->loop, &j->ctl_src);
	wloop_unwatch(&sv->loop, &j->out_src);
	wloop_unwatch(&sv->loop, &j->err_src);
	wloop_unwatch(&sv->loop, &j->tick_src);
	wloop_unwatch(&sv->loop, &j->sync_src);
	j->jr.jl.sync_fd = -1;    /* sync_src's, closed */
	if (j->notify.fd >= 0)
		wloop_unwatch(&sv->loop, &j->notify_src);
	j->notify.fd = -1;
	wnotify_free(&j->notify);
	jr_end(&j->jr);           /* reaped above: its host uid slot and cgroup go */
	wbuf_free(&j->ctl_out);
	rich_free(&j->rich);
	free(j->tail);
	j->tail = NULL;
	if (j->s) {
		j->s->jails[j->lang - wlangs] = NULL;
		if (j->s->busy == j)
			j->s->busy = NULL;
		j->s = NULL;
	}
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
		snprintf(msg, sizeof(msg), "the %s driver broke the control protocol", j->lang->name);
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
		jail_destroy(sv, j);
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

	jr_reap(&j->jr, &si, NULL);   /* the driver's real status, as init reported it */
	if (j->jr.jl.sync_fd < 0)
		j->sync_src.fd = -1; /* closed by jail_read at EOF */
	wloop_unwatch(&sv->loop, src);
	j->jr.jl.pidfd = -1;
	if (j->busy) {
		finish_block(sv, j, true, &si, 0);   /* destroys j */
	} else {
		j->s->lost_idle = true;
		jail_destroy(sv, j);
	}
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
				 * left running is killed before its RESULT, so the
				 * next block's processes are never hit. */
				j->done_pending = true;
				j->done_status = status;
				if (!j->sweeping) {
					j->sweeping = true;
					j->sweep_at_ms = sv_now_ms();
					if (jail_sweep(&j->jr.jl) < 0)
						goto broken;
				}
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

	for (;;) {
		enum jail_ev ev = jail_read(&j->jr.jl);
		if (ev == JAIL_EV_NONE || ev == JAIL_EV_STATUS)
			return;
		if (ev == JAIL_EV_EOF) {
			/* init is ending; jail_read closed the fd (and so took
			 * it out of epoll); its pidfd finishes the jail */
			src->fd = -1;
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
		if (j->busy) /* a block waited for an idle sweep: send its code now */
			wloop_rearm(&sv->loop, &j->ctl_src, EPOLLIN | EPOLLOUT);
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
			j->bg_deadline_ms = 0;
			j->sweeping = true;
			j->sweep_at_ms = now;
			if (jail_sweep(&j->jr.jl) < 0)
				jail_kill(j, WB_ERROR);
		}
		if (j->sweeping && now - j->sweep_at_ms >= SWEEP_MAX_MS)
			jail_kill(j, WB_ERROR);
		return;
	}
	if (j->sweeping && now - j->sweep_at_ms >= SWEEP_MAX_MS) {
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

/* --- starting a jail ---------------------------------------------------------- */

static int jail_new(struct sv *sv, struct sv_sess *s, const struct wlang *lang,
                    struct sv_jail **out, struct werr *err)
{
	struct sv_jail *j = xcalloc(1, sizeof(*j));
	int ctl[2] = { -1, -1 }, out_p[2] = { -1, -1 }, err_p[2] = { -1, -1 };
	char **argv = NULL, cgname[64];
	int rc = -1;
	struct jail_spec spec = { 0 };

	*out = NULL;
	j->s = s;
	j->lang = lang;
	jr_init(&j->jr, s->pol);
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
	if (jr_prepare(&j->jr, cgname, false, &spec, err) < 0)
		goto out;
	/* The control socket: the driver's end becomes fd 4 in the jail. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) < 0 ||
	    pipe2(out_p, O_CLOEXEC) < 0 || pipe2(err_p, O_CLOEXEC) < 0) {
		werr_set(err, errno, "creating the session's pipes");
		goto out;
	}
	spec.workspace = s->ws;
	spec.workspace_fd = s->ws_fd;
	spec.hide_extra = s->hide_extra.v;
	spec.home = sv_caller_home();
	spec.argv = argv;
	spec.envp = s->env;
	spec.stdin_fd = -1;
	spec.stdout_fd = out_p[1];
	spec.stderr_fd = err_p[1];
	spec.keep_fd = ctl[1];
	spec.hostname = "warden";
	spec.new_session = true;
	if (jr_start(&j->jr, &spec, err) < 0)
		goto out;
	/* from here every fd of the jail has one owner: pidfd pid_src (shared
	 * with jr.jl for signals), sync_fd sync_src, notify_fd the notify */
	wloop_watch(&sv->loop, &j->pid_src, j->jr.jl.pidfd, EPOLLIN, on_exit_ev, j);
	wloop_watch(&sv->loop, &j->sync_src, j->jr.jl.sync_fd, EPOLLIN, on_sync, j);
	if (wnotify_init(&j->notify, j->jr.jl.notify_fd, sv->audit, s->audit_id, &s->budget, err) < 0)
		goto out;   /* jail_destroy kills and reaps it; jr_end closes notify_fd */
	/* network mode proxy: served until jail_destroy (jr_end) */
	if (jr_serve_proxy(&j->jr, &sv->loop, sv->audit, s->audit_id, err) < 0)
		goto out;
	j->jr.jl.notify_fd = -1;
	fcntl(ctl[0], F_SETFL, O_NONBLOCK);
	fcntl(out_p[0], F_SETFL, O_NONBLOCK);
	fcntl(err_p[0], F_SETFL, O_NONBLOCK);
	wloop_watch(&sv->loop, &j->ctl_src, steal_fd(&ctl[0]), EPOLLIN, on_ctl, j);
	wloop_watch(&sv->loop, &j->out_src, steal_fd(&out_p[0]), EPOLLIN, on_pipe, j);
	wloop_watch(&sv->loop, &j->err_src, steal_fd(&err_p[0]), EPOLLIN, on_pipe, j);
	if (j->notify.fd >= 0)
		wloop_watch(&sv->loop, &j->notify_src, j->notify.fd, EPOLLIN, on_notify, j);
	wloop_timer(&sv->loop, &j->tick_src, 0, on_tick, j);
	s->jails[lang - wlangs] = j;
	*out = j;
	j = NULL;
	rc = 0;
out:
	if (j)
		jail_destroy(sv, j);
	for (int i = 0; i < 2; i++) {
		closep(&ctl[i]);
		closep(&out_p[i]);
		closep(&err_p[i]);
	}
	wlang_argv_free(argv);
	return rc;
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

	j = s->jails[lang - wlangs];
	if (!j) {
		if (jail_new(sv, s, lang, &j, &jerr) < 0) {
			fail_block(sv, s, block, jerr.msg);
			return 0;
		}
		fresh = true;
	}
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
	/* an idle sweep still running: the code goes once init acked it */
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
	rec = audit_rec(s);
	json_object_object_add(rec, "blocks", json_object_new_int64((int64_t)s->blocks));
	json_object_object_add(rec, "why", json_object_new_string(why));
	waudit_emit(sv->audit, "session_close", rec);
	sv_free_env(s->env);
	close(s->ws_fd);
	wstrv_free(&s->hide_extra);
	free(s);
}

void sess_close_all(struct sv *sv, const char *why)
{
	while (sv->sessions)
		sess_close(sv, sv->sessions, why);
}
