/* Why a jail's program -- a `warden run` or a session's block -- ended: one
 * enum, one name table (common/proto.c), one rule (supervisor/reason.c).
 * The numbers are the wire's (RESULT frames) and the names those of the
 * audit log, `warden run --json` and the stdio API: never renumber. */
#ifndef WARDEN_REASON_H
#define WARDEN_REASON_H

#include <stdbool.h>
#include <stdint.h>

enum wblock_reason {
	WB_EXITED = 0, WB_SIGNALED, WB_TIMEOUT, WB_OOM, WB_PIDS, WB_CPU_TIME,
	WB_OUTPUT, WB_ERROR, WB_INTERRUPTED, WB__N
};
const char *wblock_reason_name(unsigned r);   /* "exited", ... "interrupted" */

/* What the supervisor knows when the program ended. */
struct wend_facts {
	enum wblock_reason killed_for;  /* why the supervisor killed the jail first:
	                                 * WB_TIMEOUT, WB_CPU_TIME, WB_OUTPUT, WB_ERROR,
	                                 * WB_INTERRUPTED; WB_SIGNALED for a signal to
	                                 * warden itself; WB__N when it killed nothing */
	bool by_driver;                 /* a session's driver reported the block's
	                                 * end ("D <status>"): status is that, the
	                                 * jail lives on */
	int code;                       /* else the wait status: CLD_EXITED, CLD_KILLED, CLD_DUMPED */
	int status;                     /* the exit status or the signal */
	bool interrupted;               /* the supervisor interrupted the block (sessions) */
	bool cpu_limited;               /* the policy limits cpu time (RLIMIT_CPU: SIGXCPU) */
	uint64_t oom_kills;             /* the cgroup's counters; 0 where none counts */
	uint64_t pids_max_hits;
};

struct wend {
	enum wblock_reason reason;
	int exit_code;                  /* the program's, -1 when signalled */
	int signal;                     /* 0 when it exited */
	int exit_status;                /* a shell's: exit_code, 128 + signal; 124 on timeout */
};

/* The rule, the same for `warden run` and sessions (docs/design.md "Why a
 * program ended"):
 *   1. what the supervisor did first (a limit it enforced, an interrupt it
 *      escalated, a broken protocol) -- but not a signal to warden itself;
 *   2. a driver's report: "interrupted" when it answers 130 to an interrupt,
 *      else "exited" (the jail's counters span blocks: not this block's);
 *   3. the kernel's counters: an OOM kill; the process limit, only when the
 *      program did not succeed (one that exits 0 coped with a failed fork);
 *   4. SIGXCPU when the policy limits cpu time (the RLIMIT_CPU fallback);
 *   5. else how it ended: "exited" or "signaled". */
void wend_judge(const struct wend_facts *f, struct wend *out);

#endif
