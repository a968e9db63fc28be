/* WARDEN_TIMING=1: where a warden process spends its life, from exec to
 * exit (include/warden/util.h).  Every line goes to stderr:
 *
 *   process start   the kernel's start time of the process (/proc/self/stat,
 *                   in clock ticks: 10 ms on most kernels) against main's
 *                   entry, and the CPU the process used before main
 *                   (/proc/self/schedstat, in ns): exec, the dynamic loader,
 *                   relocations and the libraries' constructors;
 *   phases          wtiming(): each step since the previous one;
 *   breakdown       at exit, main -> program exec'd -> program exited ->
 *                   status reported -> exit (the cleanup after the result).
 * What the kernel does after exit (unmapping, closing fds) is outside any
 * process's view: the difference between hyperfine's wall time and
 * "main -> exit" plus "before main" is that, and the parent's fork+wait. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "warden/util.h"

static int on = -1;
static struct timespec last;
static double t_main = -1, t_mark[WT__N];
static double before_main_cpu = -1, before_main_wall = -1, tick_ms;
static pid_t main_pid;

static bool enabled(void)
{
	if (on < 0)
		on = getenv("WARDEN_TIMING") != NULL;
	return on;
}

static double ms_of(const struct timespec *t)
{
	return (double)t->tv_sec * 1e3 + (double)t->tv_nsec / 1e6;
}

static double now_ms(clockid_t c)
{
	struct timespec t;

	clock_gettime(c, &t);
	return ms_of(&t);
}

void wtiming(const char *what)
{
	struct timespec now;

	if (!enabled())
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (what)
		fprintf(stderr, "warden: timing: [%d] %-16s %8.3f ms\n", getpid(), what,
		        ms_of(&now) - ms_of(&last));
	last = now;
}

void wtiming_mark(enum wtiming_mark m)
{
	if (enabled() && m < WT__N && getpid() == main_pid)
		t_mark[m] = now_ms(CLOCK_MONOTONIC);
}

static void span(const char *what, double a, double b)
{
	if (a >= 0 && b >= a)
		fprintf(stderr, "warden: timing:   %-34s %8.3f ms\n", what, b - a);
}

static void at_exit(void)
{
	double end = now_ms(CLOCK_MONOTONIC);
	double m[WT__N];

	if (getpid() != main_pid)
		return; /* a fork that returned instead of exec'ing or _exit'ing */
	/* a milestone not reached takes the next one's place, so the spans
	 * still add up (a run that failed before the exec, say) */
	for (int i = WT__N - 1; i >= 0; i--)
		m[i] = t_mark[i] > 0 ? t_mark[i] : (i == WT__N - 1 ? end : m[i + 1]);
	fprintf(stderr, "warden: timing: [%d] breakdown, exec to exit:\n", main_pid);
	if (before_main_wall >= 0)
		fprintf(stderr, "warden: timing:   %-34s %8.3f ms cpu; wall %.0f ms at %.0f ms "
		        "resolution\n", "process start -> main (exec, ld.so)", before_main_cpu,
		        before_main_wall, tick_ms);
	span("main -> program exec'd (setup)", t_main, m[WT_EXEC]);
	span("program exec'd -> its exit seen", m[WT_EXEC], m[WT_EXITED]);
	span("exit seen -> status reported", m[WT_EXITED], m[WT_REPORTED]);
	span("status reported -> exit (cleanup)", m[WT_REPORTED], end);
	span("main -> exit", t_main, end);
}

void wtiming_main(void)
{
	char buf[1024], *p;
	FILE *f;
	unsigned long long start = 0, cpu_ns = 0;
	long hz = sysconf(_SC_CLK_TCK);

	if (!enabled())
		return;
	t_main = now_ms(CLOCK_MONOTONIC);
	main_pid = getpid();
	/* field 22, starttime, after the comm field (which may hold ") ") */
	if ((f = fopen("/proc/self/stat", "re"))) {
		if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) &&
		    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
		           "%*d %*d %*d %*d %llu", &start) == 1 && hz > 0) {
			tick_ms = 1e3 / (double)hz;
			before_main_wall = now_ms(CLOCK_BOOTTIME) - (double)start * tick_ms;
		}
		fclose(f);
	}
	if ((f = fopen("/proc/self/schedstat", "re"))) {
		if (fscanf(f, "%llu", &cpu_ns) == 1)
			before_main_cpu = (double)cpu_ns / 1e6;
		fclose(f);
	}
	atexit(at_exit);
	/* the first phase starts after the profiler's own reads */
	clock_gettime(CLOCK_MONOTONIC, &last);
}
