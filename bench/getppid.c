/* make bench: the cost of a seccomp filter on the syscall path.  Times N
 * getppid(2) calls (no vDSO shortcut, nothing cached) and prints ns per
 * call.  "filter" first loads a one-rule libseccomp filter (allow all, but
 * EPERM for one unrelated syscall): the slow syscall-entry path that any
 * filter forces, to compare with warden's full filter. */
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 2000000;
	struct timespec a, b;

	if (argc > 1 && !strcmp(argv[1], "filter")) {
		scmp_filter_ctx c = seccomp_init(SCMP_ACT_ALLOW);
		if (!c || seccomp_rule_add(c, SCMP_ACT_ERRNO(1), SCMP_SYS(acct), 0) < 0 ||
		    seccomp_load(c) < 0) {
			fprintf(stderr, "getppid: loading the one-rule filter failed\n");
			return 1;
		}
		seccomp_release(c);
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.1f\n", ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)n);
	return 0;
}
