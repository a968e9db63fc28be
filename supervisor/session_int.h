/* Private to supervisor/'s session files, in layers, each calling only
 * those below it: sjail.c (a jail torn down; its output relayed),
 * sjail_io.c (a jail started and at work: its events, the freeze, its
 * RESULT), pool.c (the warm pool and the attacher), session.c (sessions
 * and their blocks: what dispatch.c calls).  Nothing else includes this. */
#ifndef WARDEN_SESSION_INT_H
#define WARDEN_SESSION_INT_H

#include <json-c/json.h>
#include <signal.h>

#include "session.h"

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

/* sess_learn.c: below everything else here (calls none of it) */
int sl_prepare(struct sv *sv, struct sv_jail *j, const struct sv_sess *tmpl,
               struct jail_spec *spec, struct werr *err);
int sl_start(struct sv *sv, struct sv_jail *j, const struct sv_sess *tmpl, struct werr *err);
void sl_arm(struct sv_jail *j);
void sl_block_start(struct sv_jail *j);
/* the block's code began to run (its driver's first "A" line): once */
void sl_block_began(struct sv_jail *j);
bool sl_block_begun(const struct sv_jail *j);
/* The block's end: true when its RESULT waits for the learner's report
 * (done is called once it came, or the learner was given up: REFUSALS has
 * gone out first); false: call done now. */
bool sl_block_end(struct sv *sv, struct sv_jail *j,
                  void (*done)(struct sv *sv, struct sv_jail *j));
void sl_free(struct sv_jail *j);

/* sjail.c: the bottom layer */
void sj_refill_now(struct sv *sv, struct sv_sess *s);
json_object *sess_audit_rec(const struct sv_sess *s);
void sj_kill(struct sv_jail *j, enum wblock_reason why);
void sj_not_starting(struct sv *sv, struct sv_jail *j);
void sj_detach(struct sv *sv, struct sv_jail *j);
void sj_destroy(struct sv *sv, struct sv_jail *j);
void sj_send_output(struct sv *sv, struct sv_jail *j, uint8_t stream, const uint8_t *p,
                    size_t n);
bool sj_pipe_read(struct sv *sv, struct sv_jail *j, struct wsrc *src, uint8_t stream,
                  size_t max, size_t *got);
void sj_drain(struct sv *sv, struct sv_jail *j);
void sj_flush_tail(struct sv *sv, struct sv_jail *j);

/* sjail_io.c: above it */
struct sv_jail *sj_spawn(struct sv *sv, const struct sv_sess *tmpl, const struct wlang *lang,
                         bool pool, struct werr *err);
int sj_attach(struct sv *sv, struct sv_jail *j, struct sv_sess *s, struct werr *err);
void sj_start_failed(struct sv *sv, struct sv_jail *j, const struct werr *e);
void sj_fail_block(struct sv *sv, struct sv_sess *s, uint32_t block, const char *why);
/* supervisor/sjail_msg.c: what a block's result says of its end (limits,
 * lost state, a memory rlimit, cut output), into msg. */
void sj_block_words(const struct sv_jail *j, const struct wresult *r, bool exited, char *msg,
                    size_t len);
void sj_finish_block(struct sv *sv, struct sv_jail *j, bool exited, const siginfo_t *si,
                     int status);
int sj_freeze(struct sv_jail *j);
int sj_thaw(struct sv_jail *j);

/* pool.c: above both */
bool pool_fill_one(struct sv *sv, const struct sv_sess *s, const struct wlang *lang);
int sess_want(struct sv *sv, struct sv_sess *s, const struct wlang *lang, struct werr *err);

/* session.c, at the top, calls all of them; none calls it */

#endif
