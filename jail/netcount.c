/* The jail's network counters, read from the host (warden/jail.h,
 * jail_net_unreachable).
 *
 * A program under network mode none sees "Network is unreachable" or a
 * failed name lookup and says only that; warden should say why (the
 * network is off under this profile) and what allows it.  The kernel
 * already counts what is needed: each connect() or sendto() that finds no
 * route adds one to the namespace's Ip OutNoRoutes (Ip6OutNoRoutes for
 * IPv6), whatever the program (a name lookup is one too: with no
 * /etc/resolv.conf in the jail, glibc asks 127.0.0.1:53).  The supervisor
 * opens the namespace's /proc/PID/net/snmp and snmp6 through init's pid
 * before the child is released, and reads them when the run or block
 * ends.  Nothing here comes from the jail: the files are the kernel's
 * text, in the kernel's fixed layout; only the counts move, and a count
 * can only say "n attempts" (SECURITY.md G4: the jail's memory is never
 * read, so where it tried to go is not known). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "warden/jail.h"
#include "warden/util.h"

#define SNMP_MAX 16384   /* snmp is about 1.5 KiB, snmp6 5 KiB */

void jail_net_open(struct jail *j)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/net/snmp", (int)j->pid);
	j->snmp_fd = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/net/snmp6", (int)j->pid);
	j->snmp6_fd = open(path, O_RDONLY | O_CLOEXEC);   /* none without IPv6 */
}

/* The whole file, from its start, NUL-terminated; -1 when it cannot be. */
static int read_all(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	ssize_t k;

	while (n < cap - 1 && (k = pread(fd, buf + n, cap - 1 - n, (off_t)n)) > 0)
		n += (size_t)k;
	if (n == 0 || n == cap - 1)
		return -1;
	buf[n] = '\0';
	return 0;
}

/* The unsigned number at s, up to a space or the end of the line. */
static int number(const char *s, uint64_t *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	*v = strtoull(s, &end, 10);
	return *end == ' ' || *end == '\n' || *end == '\t' || !*end ? 0 : -1;
}

/* snmp: a line "Ip: Forwarding DefaultTTL ... OutNoRoutes ..." of names,
 * then "Ip: 1 64 ... N ..." of values in the same order. */
static int ip_out_no_routes(const char *text, uint64_t *v)
{
	const char *names = strncmp(text, "Ip: ", 4) ? NULL : text;
	const char *vals = names ? strchr(names, '\n') : NULL;
	int col = -1, i = 0;

	if (!vals || strncmp(++vals, "Ip: ", 4))
		return -1;
	for (const char *p = names + 4; *p && *p != '\n'; i++) {
		size_t l = strcspn(p, " \n");

		if (l == 11 && !strncmp(p, "OutNoRoutes", 11))
			col = i;
		p += l;
		if (*p == ' ')
			p++;
	}
	if (col < 0)
		return -1;
	for (const char *p = vals + 4; *p && *p != '\n'; p++)
		if (!col--)
			return number(p, v);
		else if (!(p = strchr(p, ' ')))
			return -1;
	return -1;
}

/* snmp6: one "Name   value" a line. */
static int ip6_out_no_routes(const char *text, uint64_t *v)
{
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, "Ip6OutNoRoutes", 14) && (p[14] == ' ' || p[14] == '\t'))
			return number(p + 14 + strspn(p + 14, " \t"), v);
	return -1;
}

int jail_net_unreachable(const struct jail *j, uint64_t *n)
{
	_cleanup_free_ char *buf = xcalloc(1, SNMP_MAX);
	uint64_t v4 = 0, v6 = 0;

	*n = 0;
	if (j->snmp_fd < 0 || read_all(j->snmp_fd, buf, SNMP_MAX) < 0 ||
	    ip_out_no_routes(buf, &v4) < 0)
		return -1;
	/* no IPv6 in the kernel: nothing to count there */
	if (j->snmp6_fd >= 0 &&
	    (read_all(j->snmp6_fd, buf, SNMP_MAX) < 0 || ip6_out_no_routes(buf, &v6) < 0))
		return -1;
	*n = v4 + v6;
	return 0;
}
