/* The words a block's result says of its end, beside its status: a limit
 * that stopped it, lost state, a failure under a memory rlimit, cut
 * output (the network's note follows them: sjail_io.c).  Split from
 * sjail_io.c, which the privileged process's size limit bounds. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "limrep.h"
#include "session.h"
#include "session_int.h"
#include "sv.h"
#include "warden/util.h"

void sj_block_words(const struct sv_jail *j, const struct wresult *r, bool exited, char *msg,
                    size_t len)
{
	const struct sv_sess *s = j->s;

	msg[0] = '\0';
	switch (r->reason) {
	case WB_TIMEOUT: {
		char d[32];
		format_duration_ms(s->pol->limits.wall_ms, d, sizeof(d));
		snprintf(msg, len, "stopped: the %s wall-time limit was reached", d);
		break;
	}
	case WB_CPU_TIME:
		snprintf(msg, len, "stopped: the cpu-time limit was reached");
		break;
	case WB_OOM:
		snprintf(msg, len, "stopped: out of memory (the policy's memory limit)");
		break;
	case WB_PIDS:
		snprintf(msg, len, "the process limit (%" PRIu64 ") was reached", s->pol->limits.pids);
		break;
	case WB_INTERRUPTED:
		snprintf(msg, len, "interrupted");
		break;
	case WB_ERROR:
		if (j->sweep_late)
			snprintf(msg, len, "the jail's init did not confirm within %d s that the "
			         "block's processes were gone, so the jail was ended (is the machine "
			         "overloaded?)", SWEEP_MAX_MS / 1000);
		else
			snprintf(msg, len, "the %s driver broke the control protocol",
			         j->lang->name);
		break;
	default:
		if (exited)
			snprintf(msg, len, "the %s interpreter ended", j->lang->name);
		break;
	}
	if (exited && !s->oneshot)
		snprintf(msg + strlen(msg), len - strlen(msg),
		         "%sthe session's %s state was lost; the next block starts a fresh jail",
		         msg[0] ? "; " : "", j->lang->name);
	/* issue 20 (7): a block that failed under a memory rlimit is told */
	{
		char note[1024];

		sv_memory_note(s->pol, j->jr.cg, (enum wblock_reason)r->reason, r->exit_code,
		               "the block", "", NULL,
		               "a profile with a larger limits.memory raises it, and `warden doctor` "
		               "shows how to get a cgroup", note, sizeof(note));
		if (note[0])
			snprintf(msg + strlen(msg), len - strlen(msg), "%s%s", msg[0] ? "; " : "",
			         note);
	}
	if (j->tail)
		snprintf(msg + strlen(msg), len - strlen(msg),
		         "%soutput cut to the policy's limit: %" PRIu64 " bytes in all", msg[0] ? "; " : "",
		         j->out_total);
}
