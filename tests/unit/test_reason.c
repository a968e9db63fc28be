/* Why a program ended (include/warden/reason.h): one rule for `warden run`
 * and for sessions' blocks, every reason from both paths, and the names
 * the wire and `warden run --json` carry. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "warden/reason.h"

#define RUN false      /* the jail ended: wait status */
#define DRV true       /* a session's driver answered "D <status>" */
#define NONE WB__N
#define F(k, d, c, s, ...) { .killed_for = k, .by_driver = d, .code = c, .status = s, __VA_ARGS__ }

struct row {
	const char *what;
	struct wend_facts f;
	enum wblock_reason reason;
	int exit_code, signal, exit_status;
};

static const struct row rows[] = {
	/* how it ended, nothing else happened */
	{ "exit 0", F(NONE, RUN, CLD_EXITED, 0), WB_EXITED, 0, 0, 0 },
	{ "exit 3", F(NONE, RUN, CLD_EXITED, 3), WB_EXITED, 3, 0, 3 },
	{ "killed by a signal", F(NONE, RUN, CLD_KILLED, SIGSEGV), WB_SIGNALED, -1, SIGSEGV, 128 + SIGSEGV },
	{ "dumped", F(NONE, RUN, CLD_DUMPED, SIGABRT), WB_SIGNALED, -1, SIGABRT, 128 + SIGABRT },
	/* what the supervisor did comes first */
	{ "wall time", F(WB_TIMEOUT, RUN, CLD_KILLED, SIGKILL), WB_TIMEOUT, -1, SIGKILL, 124 },
	{ "cpu time (counted)", F(WB_CPU_TIME, RUN, CLD_KILLED, SIGKILL), WB_CPU_TIME, -1, SIGKILL, 137 },
	{ "output", F(WB_OUTPUT, RUN, CLD_KILLED, SIGKILL), WB_OUTPUT, -1, SIGKILL, 137 },
	{ "broken protocol", F(WB_ERROR, RUN, CLD_KILLED, SIGKILL), WB_ERROR, -1, SIGKILL, 137 },
	{ "interrupt not honoured", F(WB_INTERRUPTED, RUN, CLD_KILLED, SIGKILL), WB_INTERRUPTED, -1, SIGKILL, 137 },
	{ "limit beats the counters", F(WB_TIMEOUT, RUN, CLD_KILLED, SIGKILL, .oom_kills = 1), WB_TIMEOUT, -1, SIGKILL, 124 },
	/* a signal to warden itself is not a limit: the program's end tells */
	{ "Ctrl-C twice", F(WB_SIGNALED, RUN, CLD_KILLED, SIGKILL), WB_SIGNALED, -1, SIGKILL, 137 },
	{ "Ctrl-C, then oom", F(WB_SIGNALED, RUN, CLD_KILLED, SIGKILL, .oom_kills = 2), WB_OOM, -1, SIGKILL, 137 },
	/* the kernel's counters */
	{ "oom", F(NONE, RUN, CLD_KILLED, SIGKILL, .oom_kills = 1), WB_OOM, -1, SIGKILL, 137 },
	{ "oom, exited", F(NONE, RUN, CLD_EXITED, 1, .oom_kills = 1), WB_OOM, 1, 0, 1 },
	{ "pids, failed", F(NONE, RUN, CLD_EXITED, 1, .pids_max_hits = 4), WB_PIDS, 1, 0, 1 },
	{ "pids, signalled", F(NONE, RUN, CLD_KILLED, SIGTERM, .pids_max_hits = 4), WB_PIDS, -1, SIGTERM, 128 + SIGTERM },
	{ "pids, but coped", F(NONE, RUN, CLD_EXITED, 0, .pids_max_hits = 4), WB_EXITED, 0, 0, 0 },
	/* the RLIMIT_CPU fallback */
	{ "SIGXCPU, cpu limited", F(NONE, RUN, CLD_KILLED, SIGXCPU, .cpu_limited = true), WB_CPU_TIME, -1, SIGXCPU, 128 + SIGXCPU },
	{ "SIGXCPU, no cpu limit", F(NONE, RUN, CLD_KILLED, SIGXCPU), WB_SIGNALED, -1, SIGXCPU, 128 + SIGXCPU },
	/* a session's driver reports the block's end */
	{ "driver: 0", F(NONE, DRV, 0, 0), WB_EXITED, 0, 0, 0 },
	{ "driver: 1", F(NONE, DRV, 0, 1), WB_EXITED, 1, 0, 1 },
	{ "driver: 130, interrupted", F(NONE, DRV, 0, 130, .interrupted = true), WB_INTERRUPTED, 130, 0, 130 },
	{ "driver: 130, not interrupted", F(NONE, DRV, 0, 130), WB_EXITED, 130, 0, 130 },
	{ "driver: 1, interrupted", F(NONE, DRV, 0, 1, .interrupted = true), WB_EXITED, 1, 0, 1 },
	{ "driver: counters span blocks", F(NONE, DRV, 0, 1, .oom_kills = 1, .pids_max_hits = 1), WB_EXITED, 1, 0, 1 },
	{ "driver: after a kill", F(WB_TIMEOUT, DRV, 0, 0), WB_TIMEOUT, 0, 0, 124 },
};

static void test_rule(void **state)
{
	bool seen[WB__N] = { 0 };

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct wend e;

		memset(&e, 0x5a, sizeof(e));
		wend_judge(&r->f, &e);
		if (e.reason != r->reason || e.exit_code != r->exit_code || e.signal != r->signal ||
		    e.exit_status != r->exit_status)
			fail_msg("%s: got %s code %d signal %d status %d, want %s %d %d %d", r->what,
			         wblock_reason_name(e.reason), e.exit_code, e.signal, e.exit_status,
			         wblock_reason_name(r->reason), r->exit_code, r->signal, r->exit_status);
		seen[r->reason] = true;
	}
	for (int k = 0; k < WB__N; k++)
		if (!seen[k])
			fail_msg("no row ends with reason %s", wblock_reason_name((unsigned)k));
}

/* The names are the wire's and the JSON's: a rename breaks clients. */
static void test_names(void **state)
{
	static const char *const want[WB__N] = { "exited", "signaled", "timeout", "oom", "pids",
	                                         "cpu_time", "output", "error", "interrupted" };

	for (int k = 0; k < WB__N; k++)
		assert_string_equal(wblock_reason_name((unsigned)k), want[k]);
	assert_string_equal(wblock_reason_name(WB__N), "error");
	assert_string_equal(wblock_reason_name(1000), "error");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
