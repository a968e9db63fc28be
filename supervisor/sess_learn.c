/* A learning session's jails (issue 23; supervisor/session_int.h): the
 * learner of `warden run --learn` (supervisor/learn.c, learn/), one per
 * jail, kept for the jail's life and asked for a report at each block's
 * end.  The report goes to the broker as REFUSALS, byte for byte, before
 * the block's RESULT: the supervisor never parses it (SECURITY.md G222),
 * and to the broker it is as hostile as the jail.
 *
 * What learning changes for the jail is only its filter: the learning
 * filter, whose every notification the supervisor decides by the policy's
 * own program (G220).  A learning jail is never pooled: its learner is
 * started with its jail and lives with it (sess_want, pool_fill_one).
 *
 * The bottom of the session files: it calls none of them (the block's
 * end comes back through the done function it is handed). */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "session.h"
#include "session_int.h"
#include "sv.h"
#include "warden/filter.h"
#include "warden/log.h"
#include "warden/util.h"

/* The proxy's refusals reach a learner from the audit records ("net",
 * allowed false) of its session: the running block's jail's. */
static void tap(void *ctx, const char *event, json_object *rec)
{
	struct sv *sv = ctx;
	json_object *v;
	const char *id;

	if (strcmp(event, "net") || !json_object_object_get_ex(rec, "session", &v) ||
	    !(id = json_object_get_string(v)))
		return;
	for (struct sv_sess *s = sv->sessions; s; s = s->next)
		if (s->learn && s->busy && s->busy->learning && !strcmp(s->audit_id, id)) {
			wlearn_audit_tap(&s->busy->learn, event, rec);
			return;
		}
}

void sl_session_open(struct sv *sv, struct sv_sess *s)
{
	if (!s->learn || sv->tapped)
		return;
	waudit_tap(sv->audit, tap, sv);
	sv->tapped = true;
}

int sl_prepare(struct sv *sv, struct sv_jail *j, const struct sv_sess *tmpl,
               struct jail_spec *spec, struct werr *err)
{
	scmp_filter_ctx ctx = NULL;

	if (!tmpl->learn)
		return 0;
	/* the policy's own program decides every notification (learn.c) */
	if (wlearn_init(&j->learn, tmpl->pol, err) < 0 ||
	    wfilter_build_learn(tmpl->pol, &ctx, err) < 0)
		return -1;
	j->learning = true;
	jr_learn_filter(&j->jr, spec, ctx);
	return 0;
}

int sl_start(struct sv *sv, struct sv_jail *j, const struct sv_sess *tmpl, struct werr *err)
{
	struct wlearn_conf c = {
		.profile = tmpl->base ? tmpl->base->name : tmpl->pol->name,
		.profile_net = (int)(tmpl->base ? tmpl->base : tmpl->pol)->net,
		.net = (int)tmpl->pol->net, .name = "session", .argv0 = j->lang->name,
		.home = sv_caller_home(), .workspace = tmpl->ws, .session = true,
		.uid = j->jr.jl.host_uid, .gid = j->jr.jl.host_gid,
	};

	if (!j->learning)
		return 0;
	return wlearn_start(&j->learn, &sv->loop, &c, err);
}

void sl_arm(struct sv_jail *j)
{
	if (!j->learning || j->notify.fd < 0)
		return;
	j->notify.divert = wlearn_divert;
	j->notify.divert_ctx = &j->learn;
	wlearn_ready(&j->learn, j->jr.jl.pid, j->notify.fd);
}

/* What a block is refused starts when it starts: the learner forgets what
 * came before (a warm jail's earlier blocks), and once more when the
 * block's code begins to run, which the driver's first "A" line says
 * (python, javascript, shell): a jail started for this block has by then
 * made its driver's own calls (an interpreter's start looks for locale
 * files and site modules), which are no refusal of the block's. */
void sl_block_start(struct sv_jail *j)
{
	j->learn_began = false;
	if (j->learning)
		(void)wlearn_reset(&j->learn);   /* a gone learner: said at the block's end */
}

void sl_block_began(struct sv_jail *j)
{
	if (!j->learning || j->learn_began)
		return;
	j->learn_began = true;
	(void)wlearn_reset(&j->learn);
}

/* A notification of a busy learning jail: did its block begin, i.e. is an
 * "A" line already written on the control socket (read or not)?  The
 * driver writes it before the block's first statement, and the call that
 * notifies comes after, from the same thread: the line is in the socket
 * by now even when the loop has not read it yet.  Only peeked: sj_on_ctl
 * reads it as ever.  A driver that lies about it only moves this reset. */
bool sl_block_begun(const struct sv_jail *j)
{
	char buf[256];
	ssize_t n;
	bool at_start = j->ctl_in_len == 0;

	if (j->ctl_in_len >= 1 && j->ctl_in[0] == 'A')
		return true;
	if (j->ctl_src.fd < 0)
		return false;
	n = recv(j->ctl_src.fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
	for (ssize_t i = 0; i < n; i++) {
		if (at_start && buf[i] == 'A')
			return true;
		at_start = buf[i] == '\n';
	}
	return false;
}

/* What the broker gets when there is no report: the supervisor's own
 * JSON, from its own words. */
static void send_incomplete(struct sv *sv, struct sv_jail *j, const char *why)
{
	json_object *o = json_object_new_object();
	struct werr err = { 0 };

	json_object_object_add(o, "profile", json_object_new_string(j->s->pol->name));
	json_object_object_add(o, "complete", json_object_new_boolean(false));
	json_object_object_add(o, "why_incomplete", json_object_new_string(why));
	json_object_object_add(o, "dropped", json_object_new_int(0));
	json_object_object_add(o, "refusals", json_object_new_array());
	wloop_send(&sv->loop, wproto_refusals(&sv->broker.out, j->s->id, j->block,
	                                      json_object_to_json_string_ext(o,
	                                      JSON_C_TO_STRING_PLAIN), &err), &err);
	json_object_put(o);
}

static void on_report(void *ctx, bool ok, uint64_t len)
{
	struct sv_jail *j = ctx;
	struct sv *sv = j->learn.loop ? sv_of(j->learn.loop) : NULL;
	void (*done)(struct sv *, struct sv_jail *) = j->fin_done;

	if (!sv || !j->s || !j->finishing)
		return;
	if (!ok) {
		send_incomplete(sv, j, j->learn.why[0] ? j->learn.why : "the learner was given up");
	} else if (len == 0 || len > WPROTO_TEXT_MAX) {
		/* WPROTO_TEXT_MAX: the frame's bound */
		send_incomplete(sv, j, len ? "the learner's report was larger than a frame"
		                           : "the learner wrote no report");
	} else {
		char *text = xmalloc(WPROTO_TEXT_MAX + 1);
		struct werr err = { 0 };

		if (wlearn_report_text(&j->learn, len, text, WPROTO_TEXT_MAX + 1))
			wloop_send(&sv->loop, wproto_refusals(&sv->broker.out, j->s->id, j->block,
			                                      text, &err), &err);
		else
			send_incomplete(sv, j, "the learner's report could not be read");
		free(text);
	}
	j->fin_done = NULL;
	done(sv, j);   /* may destroy j: nothing after it */
}

bool sl_block_end(struct sv *sv, struct sv_jail *j,
                  void (*done)(struct sv *sv, struct sv_jail *j))
{
	if (!j->learning)
		return false;
	wproxy_drain();   /* the block's refusals by the proxy, already sent */
	j->learn.on_report = on_report;
	j->learn.report_ctx = j;
	j->fin_done = done;
	if (wlearn_report(&j->learn, j->block) == 0)
		return true;
	j->fin_done = NULL;
	send_incomplete(sv, j, j->learn.why[0] ? j->learn.why : "the learner is gone");
	return false;
}

void sl_free(struct sv_jail *j)
{
	if (!j->learning)
		return;
	j->learn.on_report = NULL;
	wlearn_free(&j->learn);
	j->learning = false;
}
