/* The proxy's allowlist (policy "network": {"mode":"proxy","allow":[...]}
 * and `--allow`): one entry is
 *
 *   host[:port]   host: a DNS name ("pypi.org"), a wildcard of one or more
 *                 leading labels ("*.example.org": any name that ends in
 *                 ".example.org", not example.org itself), an IPv4 literal
 *                 ("127.0.0.1") or a bracketed IPv6 literal ("[::1]").
 *                 port: 1..65535; none means 443 and 80.
 *
 * Names are compared case-insensitively, without a trailing dot.  A name
 * (or wildcard) never grants an address that is loopback, link-local,
 * private, shared (100.64/10), multicast, reserved or unspecified, nor one
 * of the host's own interfaces, whatever it resolves to: only an entry that
 * is such an address literally does (wnet_addr_special, wnet_allow_addr).  Owned by policy/netallow.c;
 * parsing here is used both by the policy loader (validation, with the
 * loader's FILE:LINE) and by the egress proxy (egress/engine.c). */
#ifndef WARDEN_NETALLOW_H
#define WARDEN_NETALLOW_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "warden/err.h"

struct wnet_entry {
	char host[256];      /* lower case, no trailing dot; "*.x.y" kept as is;
	                        an IPv6 literal without its brackets */
	bool wildcard;       /* host starts with "*." */
	bool literal;        /* host is an IPv4/IPv6 address */
	uint16_t port;       /* 0: 443 and 80 */
};

/* Parse one entry.  -1 and err ("what is wrong; the form it must have")
 * when it is not of the form above. */
int wnet_entry_parse(const char *s, struct wnet_entry *e, struct werr *err);

/* Does any of the n entries (strings of the form above, as in
 * wpolicy.net_allow) allow host:port by name?  host as the client sent it;
 * returns the index of the first matching entry, or -1. */
int wnet_allow_name(char *const *entries, size_t n, const char *host, uint16_t port);

/* Is this address one a name may never grant (see above)? */
bool wnet_addr_special(const struct sockaddr *sa);

/* Is sa the address family/addr (4 or 16 bytes, network order)?  An
 * IPv4-mapped IPv6 sa (::ffff:a.b.c.d) is its IPv4 address: a socket
 * connected to it reaches that address. */
bool wnet_addr_is(const struct sockaddr *sa, int family, const void *addr);

/* May the proxy connect to sa (the resolved or literal address of host,
 * port in sa) for a request that named host?  host_own: sa is an address
 * of one of the host's own interfaces (the caller read them).  True when
 * sa is neither special nor the host's own and a name entry matched, or
 * when an entry names this address literally (and the port). */
bool wnet_allow_addr(char *const *entries, size_t n, const char *host,
                     const struct sockaddr *sa, bool host_own);

#endif
