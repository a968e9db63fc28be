/* One jail from the supervisor's side, the same for `warden run` (run.c)
 * and for a session's jail (session.c):
 *
 *   prepare  its cgroup (or the rlimit fallback where none is writable),
 *            its seccomp filter (compiled at build time, or built now), and
 *            for `warden run` a watchdog that removes the cgroup if warden
 *            dies (the server has one for all its jails, server.c);
 *   start    jail_start with the prepared limits and filter;
 *   watch    the caller's: its sources on the loop (loop.h); in network
 *            mode proxy, the proxy on the jail's listener (jr_serve_proxy);
 *            kill here;
 *   judge    reap, the cgroup's counters, and the one rule (reason.h);
 *   end      every fd and the cgroup released, once the jail is reaped.
 * Private to supervisor/. */
#ifndef WARDEN_SV_JAILRUN_H
#define WARDEN_SV_JAILRUN_H

#include <seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>

#include "warden/cgroup.h"
#include "warden/err.h"
#include "warden/filter.h"
#include "warden/jail.h"
#include "warden/policy.h"
#include "warden/reaper.h"
#include "warden/reason.h"
#include "audit.h"
#include "warden/loop.h"
#include "proxy.h"

struct jailrun {
	const struct wpolicy *pol;
	struct wcg *cg;
	struct wreaper reaper;          /* `warden run`'s watchdog (when watchdog) */
	bool watchdog;
	scmp_filter_ctx filter;         /* built now, released once started */
	const struct wfilter_prog *prog; /* or compiled at build time */
	struct jail jl;                 /* pid, pidfd, notify_fd, proxy_fd, sync_fd,
	                                 * slot_fd, landlock: filled by jr_start */
	struct wproxy *proxy;           /* network mode proxy: serving jl.proxy_fd */
	struct wproxy_conf proxy_conf;  /* what it points to */
	enum wblock_reason killed_for;  /* the first reason the supervisor killed
	                                 * it for; WB__N when it did not */
};

/* A jailrun that holds nothing yet (every fd -1): jr_end is safe on it. */
void jr_init(struct jailrun *r, const struct wpolicy *pol);
/* Its cgroup named cgname (with a watchdog when `watchdog`), its filter;
 * fills spec's pol, cg, filter, prog and rlimit fallbacks. */
int jr_prepare(struct jailrun *r, const char *cgname, bool watchdog, struct jail_spec *spec,
               struct werr *err);
int jr_start(struct jailrun *r, const struct jail_spec *spec, struct werr *err);
/* Network mode proxy: serve the jail's listener on loop l (supervisor/
 * proxy.c); connections are audited to audit under session (NULL: warden
 * run).  A no-op for the other modes.  audit and session must outlive the
 * proxy, which ends in jr_proxy_end (before l is freed) or jr_end. */
int jr_serve_proxy(struct jailrun *r, struct wloop *l, struct waudit *audit,
                   const char *session, struct werr *err);
void jr_proxy_end(struct jailrun *r);
/* jr_start's first half for a caller with a loop (session.c): jail_begin;
 * the caller finishes with jail_finish on jl.sync_fd's events. */
int jr_begin(struct jailrun *r, const struct jail_spec *spec, struct werr *err);
/* The learning filter ctx (owned from now on) instead of the policy's, for
 * r and the jail spec about to start (learn.c keeps the policy's program to
 * decide each notification). */
void jr_learn_filter(struct jailrun *r, struct jail_spec *spec, scmp_filter_ctx ctx);
/* SIGKILL to init (its namespace goes with it) and to the cgroup; why is
 * kept only when it is the first. */
void jr_kill(struct jailrun *r, enum wblock_reason why);
/* The jail's cpu: its cgroup's, else its process tree's from /proc. */
uint64_t jr_cpu_ns(const struct jailrun *r, const struct wcg_stats *st);
/* Wait for init (its pidfd reported the exit) and put the program's status,
 * as init reported it, in si; ru may be NULL. */
void jr_reap(struct jailrun *r, siginfo_t *si, struct rusage *ru);
/* Why the program (by_driver false: si) or the block (by_driver: the
 * driver's status) ended, with the cgroup's counters in st. */
void jr_judge(const struct jailrun *r, const struct wcg_stats *st, bool by_driver,
              const siginfo_t *si, int status, bool interrupted, struct wend *e);
/* Release everything still held; the jail must be reaped (or never started). */
void jr_end(struct jailrun *r);

#endif
