/* See include/warden/reason.h. */
#include <signal.h>
#include <sys/wait.h>

#include "warden/reason.h"

void wend_judge(const struct wend_facts *f, struct wend *out)
{
	bool ok;

	if (f->by_driver || f->code == CLD_EXITED) {
		out->exit_code = f->status;
		out->signal = 0;
		out->exit_status = f->status;
		out->reason = WB_EXITED;
	} else {
		out->exit_code = -1;
		out->signal = f->status;
		out->exit_status = 128 + f->status;
		out->reason = WB_SIGNALED;
	}
	ok = out->signal == 0 && out->exit_code == 0;
	if (f->killed_for != WB__N && f->killed_for != WB_SIGNALED)
		out->reason = f->killed_for;
	else if (f->by_driver)
		out->reason = f->interrupted && f->status == 130 ? WB_INTERRUPTED : WB_EXITED;
	else if (f->oom_kills > 0)
		out->reason = WB_OOM;
	else if (f->pids_max_hits > 0 && !ok)
		out->reason = WB_PIDS;
	else if (out->signal == SIGXCPU && f->cpu_limited)
		out->reason = WB_CPU_TIME;
	if (out->reason == WB_TIMEOUT)
		out->exit_status = 124;
}
