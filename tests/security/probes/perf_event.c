/* perf_event_open: kernel attack surface and side channels (cache and
 * branch counters).  It must fail even for a software event on self. */
#include <linux/perf_event.h>
#include <sys/syscall.h>

#include "probe.h"

int main(void)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	must_fail(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0), "perf_event_open(self)");
	attr.type = PERF_TYPE_HARDWARE;
	attr.config = PERF_COUNT_HW_CACHE_MISSES;
	must_fail(syscall(SYS_perf_event_open, &attr, -1, 0, -1, 0), "perf_event_open(cpu 0)");
	BLOCKED("%s", probe_notes);
}
