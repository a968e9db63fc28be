/* What the learner reads from a network call (include/warden/learn.h): the
 * address a socket was connected or sent to, and the name in a DNS query.
 * Both come from the jailed program's memory: the name is read by the one
 * DNS query parser (common/dnsq.c), the address by its family's size. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>

#include "warden/dnsq.h"
#include "warden/learn.h"

int wl_dns_query_name(const uint8_t *msg, size_t len, char *name, size_t cap)
{
	return wdns_query_name(msg, len, name, cap) < 0 ? -1 : 0;
}

int wl_sockaddr_str(const struct sockaddr *sa, size_t len, char *out, size_t cap, uint16_t *port)
{
	char a[INET6_ADDRSTRLEN];

	*port = 0;
	if (cap)
		out[0] = '\0';
	if (len < sizeof(sa_family_t) || cap < INET6_ADDRSTRLEN + 8)
		return -1;
	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *s = (const struct sockaddr_in *)sa;

		inet_ntop(AF_INET, &s->sin_addr, a, sizeof(a));
		*port = ntohs(s->sin_port);
		snprintf(out, cap, "%s:%u", a, *port);
		return AF_INET;
	}
	if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)sa;

		inet_ntop(AF_INET6, &s->sin6_addr, a, sizeof(a));
		*port = ntohs(s->sin6_port);
		snprintf(out, cap, "[%s]:%u", a, *port);
		return AF_INET6;
	}
	if (sa->sa_family == AF_UNIX && len > sizeof(sa_family_t)) {
		const struct sockaddr_un *s = (const struct sockaddr_un *)sa;
		size_t n = len - sizeof(sa_family_t);

		if (n > sizeof(s->sun_path))
			n = sizeof(s->sun_path);
		if (s->sun_path[0] == '\0')
			return -1;   /* abstract: no path to bind */
		n = strnlen(s->sun_path, n);
		if (n + 1 > cap)
			return -1;
		memcpy(out, s->sun_path, n);
		out[n] = '\0';
		return AF_UNIX;
	}
	return -1;
}
