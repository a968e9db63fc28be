/* A session's jail, the lowest layer of the session files
 * (supervisor/session_int.h): tearing it down, and its output relayed to
 * the broker (head streamed, tail kept in a bounded ring).  Everything it
 * reads comes from the jail and is hostile. */
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

/* s's deferred pool refills are due (REFILL_IDLE_MS): sess_idle runs them
 * when the loop is next idle. */
void sj_refill_now(struct sv *sv, struct sv_sess *s)
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

json_object *sess_audit_rec(const struct sv_sess *s)
{
	json_object *rec = json_object_new_object();
	json_object_object_add(rec, "session", json_object_new_string(s->audit_id));
	return rec;
}

/* --- one jail ------------------------------------------------------------- */


void sj_kill(struct sv_jail *j, enum wblock_reason why)
{
	jr_kill(&j->jr, why);
}

/* The jails between jail_begin and the driver's exec (sess_idle starts
 * no more than SV_IDLE_STARTS of them at once). */
void sj_not_starting(struct sv *sv, struct sv_jail *j)
{
	if (j->starting) {
		j->starting = false;
		sv->n_starting--;
	}
}

/* Out of the pool or its session: nothing reaches it any more. */
void sj_detach(struct sv *sv, struct sv_jail *j)
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

static void sj_unwatch_all(struct sv *sv, struct sv_jail *j)
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
void sj_destroy(struct sv *sv, struct sv_jail *j)
{
	if (!j)
		return;
	sj_detach(sv, j);
	sj_not_starting(sv, j);
	if (j->jr.jl.pidfd >= 0)
		syscall(SYS_pidfd_send_signal, j->jr.jl.pidfd, SIGKILL, NULL, 0);
	sj_unwatch_all(sv, j);
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
	sl_free(j);               /* its learner, if it learned */
	wbuf_free(&j->fin);
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

void sj_send_output(struct sv *sv, struct sv_jail *j, uint8_t stream, const uint8_t *p,
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
			sj_send_output(sv, j, stream, p, k);
		}
		j->idle_out += n;
		return;
	}
	if (!limit) {
		j->out_total += n;
		sj_send_output(sv, j, stream, p, n);
		return;
	}
	if (j->out_total < head) {
		size_t k = head - j->out_total < n ? (size_t)(head - j->out_total) : n;
		sj_send_output(sv, j, stream, p, k);
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
bool sj_pipe_read(struct sv *sv, struct sv_jail *j, struct wsrc *src, uint8_t stream,
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
void sj_drain(struct sv *sv, struct sv_jail *j)
{
	struct wsrc *srcs[2] = { &j->out_src, &j->err_src };

	for (int i = 0; i < 2; i++) {
		size_t total = 0, got;
		while (srcs[i]->fd >= 0 && total < DRAIN_MAX &&
		       sj_pipe_read(sv, j, srcs[i], i ? WSTREAM_STDERR : WSTREAM_STDOUT,
		                 DRAIN_MAX - total, &got) && got)
			total += got;
	}
}

void sj_flush_tail(struct sv *sv, struct sv_jail *j)
{
	char note[128];
	size_t kept = j->tail_full ? j->tail_cap : j->tail_pos;
	uint64_t head = j->s->pol->limits.output - j->s->pol->limits.output / 2;

	if (!j->tail || !kept)
		return;
	snprintf(note, sizeof(note), "\n[warden: %" PRIu64 " bytes of output omitted]\n",
	         j->out_total - head - kept);
	sj_send_output(sv, j, WSTREAM_STDERR, (const uint8_t *)note, strlen(note));
	if (j->tail_full)
		sj_send_output(sv, j, WSTREAM_STDOUT, j->tail + j->tail_pos, j->tail_cap - j->tail_pos);
	sj_send_output(sv, j, WSTREAM_STDOUT, j->tail, j->tail_pos);
}
