/* libFuzzer target: the proxy's allowlist (policy/netallow.c), which parses
 * entries from policy files and --allow, and matches hosts that jailed code
 * sends (a CONNECT or URL authority).
 *
 * Checks beyond "does not crash":
 *   - an entry that parses matches itself (its host, on its port, or 443
 *     when it has none), unless it is a wildcard, which never matches its
 *     own domain;
 *   - whatever the input, as a host it never matches a list of only
 *     invalid entries, and a name never grants a special address nor one
 *     of the host's own. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "warden/netallow.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *invalid[] = { "", "*", "::1", "a b", "x:0" };
	char s[400], self[300];
	struct wnet_entry e;
	struct werr err;
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons(443) };
	struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_port = htons(443) };

	if (size >= sizeof(s))
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (wnet_entry_parse(s, &e, &err) == 0) {
		char *one[] = { s };
		uint16_t port = e.port ? e.port : 443;

		if (!e.host[0] || strlen(e.host) > 253)
			abort();
		snprintf(self, sizeof(self), strchr(e.host, ':') ? "[%s]" : "%s", e.host);
		if (!e.wildcard && wnet_allow_name(one, 1, self, port) != 0)
			abort();
		if (e.wildcard && wnet_allow_name(one, 1, self + 2, port) != -1)
			abort();
	}
	if (wnet_allow_name(invalid, 5, s, 443) != -1)
		abort();
	if (size >= 16) {
		char *names[] = { "*.example.org", "example.org" };

		memcpy(&s6.sin6_addr, data, 16);
		memcpy(&s4.sin_addr, data, 4);
		if (wnet_addr_special((struct sockaddr *)&s6) &&
		    wnet_allow_addr(names, 2, "a.example.org", (struct sockaddr *)&s6, false))
			abort();
		if (wnet_addr_special((struct sockaddr *)&s4) &&
		    wnet_allow_addr(names, 2, "example.org", (struct sockaddr *)&s4, false))
			abort();
		if (wnet_allow_addr(names, 2, "a.example.org", (struct sockaddr *)&s6, true) ||
		    wnet_allow_addr(names, 2, "example.org", (struct sockaddr *)&s4, true))
			abort();
		if (!wnet_addr_is((struct sockaddr *)&s6, AF_INET6, data) ||
		    !wnet_addr_is((struct sockaddr *)&s4, AF_INET, data))
			abort();
	}
	return 0;
}
