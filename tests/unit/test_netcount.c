/* jail_net_unreachable (jail/netcount.c): the kernel's no-route counters of
 * a jail's network namespace, read from its snmp and snmp6 files.  Files
 * in the kernel's layout stand in for them here; the live counters are
 * judged end to end by run.bats and serve.bats ("tries the network"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "warden/jail.h"

#define IP_NAMES "Ip: Forwarding DefaultTTL InReceives InHdrErrors InAddrErrors ForwDatagrams " \
	"InUnknownProtos InDiscards InDelivers OutRequests OutDiscards OutNoRoutes ReasmTimeout\n"
#define ICMP "Icmp: InMsgs InErrors\nIcmp: 0 0\n"

static int text_fd(const char *text)
{
	char path[] = "/tmp/warden-netcount.XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	return fd;
}

/* n for these two texts (snmp6 NULL: no IPv6), or -1 */
static long count(const char *snmp, const char *snmp6)
{
	struct jail j = { .snmp_fd = snmp ? text_fd(snmp) : -1,
	                  .snmp6_fd = snmp6 ? text_fd(snmp6) : -1 };
	uint64_t n = 99;
	int r = jail_net_unreachable(&j, &n);

	if (j.snmp_fd >= 0)
		close(j.snmp_fd);
	if (j.snmp6_fd >= 0)
		close(j.snmp6_fd);
	if (r < 0)
		assert_int_equal(n, 0);
	return r < 0 ? -1 : (long)n;
}

static void test_counts(void **state)
{
	const char *v4 = IP_NAMES "Ip: 2 64 10 0 0 0 0 0 10 12 0 7 0\n" ICMP;
	const char *v6 = "Ip6InReceives                   \t4\nIp6OutNoRoutes                  \t5\n"
	                 "Ip6InNoRoutes                   \t9\n";

	assert_int_equal(count(v4, v6), 12);
	assert_int_equal(count(v4, NULL), 7);   /* a kernel without IPv6 */
	/* a whole file read from its start, again: the same numbers */
	assert_int_equal(count(IP_NAMES "Ip: 2 64 0 0 0 0 0 0 0 0 0 0 0\n", v6), 5);
}

static void test_refused(void **state)
{
	const char *v6 = "Ip6OutNoRoutes 1\n";

	assert_int_equal(count(NULL, v6), -1);                           /* no snmp */
	assert_int_equal(count("", v6), -1);
	assert_int_equal(count("Ip: Forwarding OutNoRoutes\n", v6), -1);  /* no values */
	assert_int_equal(count("Ip: Forwarding\nIp: 2\n", v6), -1);       /* no column */
	assert_int_equal(count("Ip: Forwarding OutNoRoutes\nIp: 2\n", v6), -1);   /* short */
	assert_int_equal(count("Ip: Forwarding OutNoRoutes\nIp: 2 x\n", v6), -1);
	assert_int_equal(count("Icmp: OutNoRoutes\nIcmp: 3\n", v6), -1);  /* not Ip */
	assert_int_equal(count("Ip: Forwarding OutNoRoutes\nIp: 2 3\n", "Ip6OutNoRoutesX 1\n"), -1);
	assert_int_equal(count("Ip: Forwarding OutNoRoutes\nIp: 2 3\n", "Ip6OutNoRoutes -1\n"), -1);
	assert_int_equal(count("Ip: Forwarding OutNoRoutes\nIp: 2 3\n", v6), 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
