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
#include "session_int.h"
#include "jailrun.h"
#include "sv.h"
#include "warden/filter.h"
#include "warden/jail.h"
#include "warden/log.h"
#include "warden/util.h"

int sess_open(struct sv *sv, const struct wpolicy *pol, const char *ws,
              const struct wstrv *hide_extra, bool oneshot, bool learn, struct sv_sess **out,
              struct werr *err)
{
	struct sv_sess *s = xcalloc(1, sizeof(*s));
	json_object *rec;

	*out = NULL;
	s->pol = pol;
	s->base = pol;
	s->oneshot = oneshot;
	s->learn = learn || sv->learn_all;
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

	rec = sess_audit_rec(s);
	json_object_object_add(rec, "profile", json_object_new_string(pol->name));
	json_object_object_add(rec, "policy", json_object_new_string(pol->source ? pol->source : "built-in"));
	json_object_object_add(rec, "workspace", json_object_new_string(s->ws));
	json_object_object_add(rec, "oneshot", json_object_new_boolean(oneshot));
	json_object_object_add(rec, "uid", json_object_new_int((int)getuid()));
	json_object_object_add(rec, "mode", json_object_new_string(sv->chat ? "chat" : "serve"));
	json_object_object_add(rec, "learn", json_object_new_boolean(s->learn));
	waudit_emit(sv->audit, "session_open", rec);
	sl_session_open(sv, s);
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
	rec = sess_audit_rec(s);
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
			sj_destroy(sv, s->jails[i]);
	sv->guess = lang;   /* the next sessions' first jail */
	if (sess_want(sv, s, lang, &jerr) < 0) {
		sj_fail_block(sv, s, block, jerr.msg);
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
	j->sigint_again_ms = 0;
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
		/* the namespace counts for the jail's life: this block's from here */
		(void)jail_net_unreachable(&j->jr.jl, &j->net0);
		/* and where it tries to go: init forgot the last block's at
		 * its sweep, before this block's code could run */
		memset(&j->jr.jl.seen, 0, sizeof(j->jr.jl.seen));
	}
	s->busy = j;
	sl_block_start(j);   /* a learning jail's report is this block's only */
	snprintf(hdr, sizeof(hdr), "R %zu\n", len);
	wbuf_reset(&j->ctl_out);
	if (wbuf_put_raw(&j->ctl_out, hdr, strlen(hdr)) < 0 || wbuf_put_raw(&j->ctl_out, code, len) < 0) {
		sj_kill(j, WB_ERROR);
		return 0;
	}
	/* an idle sweep still running: the code goes once init acked it;
	 * else the driver, stopped since the last block, runs again */
	if (!j->sweeping && sj_thaw(j) < 0) {
		sj_kill(j, WB_ERROR);
		return 0;
	}
	wloop_rearm(&sv->loop, &j->ctl_src, j->sweeping ? EPOLLIN : EPOLLIN | EPOLLOUT);
	wloop_timer_set(&j->tick_src, TICK_MS, TICK_MS);
	wloop_rearm(&sv->loop, &j->tick_src, EPOLLIN);
	if (s->lost_idle && fresh) {
		static const char note[] = "[warden: the previous jail of this session ended between "
		                           "blocks; its state was lost]\n";
		sj_send_output(sv, j, WSTREAM_STDERR, (const uint8_t *)note, sizeof(note) - 1);
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
	j->sigint_again_ms = j->lang->sigint_repeat_ms ? sv_now_ms() + j->lang->sigint_repeat_ms : 0;
	kill(-j->jr.jl.pid, SIGINT);
}

void sess_close(struct sv *sv, struct sv_sess *s, const char *why)
{
	struct sv_sess **pp;
	json_object *rec;

	for (size_t i = 0; i < ARRAY_SIZE(s->jails); i++)
		if (s->jails[i])
			sj_destroy(sv, s->jails[i]);
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
	rec = sess_audit_rec(s);
	json_object_object_add(rec, "blocks", json_object_new_int64((int64_t)s->blocks));
	json_object_object_add(rec, "why", json_object_new_string(why));
	waudit_emit(sv->audit, "session_close", rec);
	widen_free(s);
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
