/* The proxy's allowlist entries (include/warden/netallow.h): parsing one
 * "host[:port]", matching a requested host:port by name, and the one list
 * of addresses a name may never grant.  Everything here sees strings that
 * come from the jail (the host of a CONNECT or of a URL): every length is
 * checked, nothing is allocated, the kernel is never asked (the host's own
 * addresses are read by the caller: egress/hostaddr.c). */
#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <string.h>

#include "warden/netallow.h"

#define FORM "the form is host[:port], e.g. pypi.org, *.example.org:443, " \
             "127.0.0.1:8080 or [::1]:8080"

static int parse_port(const char *s, uint16_t *port)
{
	unsigned long v = 0;
	size_t i;

	if (!*s || strlen(s) > 5)
		return -1;
	for (i = 0; s[i]; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v < 1 || v > 65535)
		return -1;
	*port = (uint16_t)v;
	return 0;
}

/* A DNS name: labels of [a-z0-9_-], 1..63 bytes, not starting or ending
 * with '-', 253 bytes at most.  Lower-cased in place.  The last label must
 * not be all digits: "127.1" or "2130706433" would be read as IPv4 by the
 * resolver, and an entry must say plainly whether it is an address. */
static const char *check_name(char *h)
{
	size_t len = strlen(h), lab = 0, i;
	bool digits = true;

	if (len == 0)
		return "the host is empty";
	if (len > 253)
		return "the host is longer than 253 bytes";
	for (i = 0; i <= len; i++) {
		char c = h[i];

		if (c == '.' || c == '\0') {
			if (lab == 0)
				return "the host has an empty label";
			if (h[i - 1] == '-' || h[i - lab] == '-')
				return "a label of the host starts or ends with '-'";
			if (c == '\0' && digits)
				return "the host looks like a number or an incomplete IPv4 "
				       "address (write an address as a dotted quad)";
			lab = 0;
			digits = true;
			continue;
		}
		h[i] = (char)tolower((unsigned char)c);
		if (!isalnum((unsigned char)c) && c != '-' && c != '_')
			return "the host has a character other than letters, digits, "
			       "'-', '_' and '.'";
		if (!isdigit((unsigned char)c))
			digits = false;
		if (++lab > 63)
			return "a label of the host is longer than 63 bytes";
	}
	return NULL;
}

/* Copy host into out (size 256), without one trailing dot and without the
 * brackets of an IPv6 literal; false when it cannot be a host. */
static bool host_norm(const char *host, char out[256])
{
	size_t len = strnlen(host, 300), i;

	if (len >= 2 && host[0] == '[' && host[len - 1] == ']') {
		host++;
		len -= 2;
	}
	if (len > 0 && host[len - 1] == '.')
		len--;
	if (len == 0 || len > 253)
		return false;
	for (i = 0; i < len; i++) {
		if (host[i] == '\0')
			return false;
		out[i] = (char)tolower((unsigned char)host[i]);
	}
	out[len] = '\0';
	return true;
}

int wnet_entry_parse(const char *s, struct wnet_entry *e, struct werr *err)
{
	char buf[300], *host, *port = NULL;
	const char *why;
	size_t len;

	memset(e, 0, sizeof(*e));
	if (!s)
		return werr_set(err, 0, "network allow entry is missing; " FORM);
	len = strnlen(s, sizeof(buf));
	if (len >= sizeof(buf))
		return werr_set(err, 0, "network allow entry is longer than %zu bytes; " FORM,
		                sizeof(buf) - 1);
	memcpy(buf, s, len + 1);
	host = buf;
	if (host[0] == '[') {
		char *close = strchr(host, ']');
		struct in6_addr a6;

		if (!close)
			return werr_set(err, 0, "network allow entry \"%s\": '[' without ']'; " FORM, s);
		*close = '\0';
		host++;
		if (close[1] == ':')
			port = close + 2;
		else if (close[1] != '\0')
			return werr_set(err, 0, "network allow entry \"%s\": unexpected text after "
			                "']'; " FORM, s);
		if (inet_pton(AF_INET6, host, &a6) != 1)
			return werr_set(err, 0, "network allow entry \"%s\": \"%s\" is not an IPv6 "
			                "address; " FORM, s, host);
		/* canonical form, so that "[::1]" and "[0:0::1]" read the same */
		if (!inet_ntop(AF_INET6, &a6, e->host, sizeof(e->host)))
			return werr_set(err, 0, "network allow entry \"%s\": bad IPv6 address", s);
		e->literal = true;
	} else {
		char *colon = strchr(host, ':');
		struct in_addr a4;

		if (colon && strchr(colon + 1, ':'))
			return werr_set(err, 0, "network allow entry \"%s\": an IPv6 address must be "
			                "in brackets; " FORM, s);
		if (colon) {
			*colon = '\0';
			port = colon + 1;
		}
		len = strlen(host);
		if (len > 0 && host[len - 1] == '.')
			host[--len] = '\0';
		if (inet_pton(AF_INET, host, &a4) == 1) {
			e->literal = true;
		} else if (host[0] == '*') {
			if (host[1] != '.')
				return werr_set(err, 0, "network allow entry \"%s\": a wildcard is \"*.\" "
				                "followed by a domain; " FORM, s);
			if ((why = check_name(host + 2)))
				return werr_set(err, 0, "network allow entry \"%s\": %s; " FORM, s, why);
			if (strlen(host + 2) > 251)
				return werr_set(err, 0, "network allow entry \"%s\": the wildcard's domain "
				                "is longer than 251 bytes, so no name under it fits in 253; "
				                FORM, s);
			if (!strchr(host + 2, '.'))
				return werr_set(err, 0, "network allow entry \"%s\": a wildcard must name "
				                "a domain of two labels or more (\"*.example.org\", not "
				                "\"*.org\"); " FORM, s);
			e->wildcard = true;
		} else if ((why = check_name(host))) {
			return werr_set(err, 0, "network allow entry \"%s\": %s; " FORM, s, why);
		}
		if (strlen(host) >= sizeof(e->host))
			return werr_set(err, 0, "network allow entry \"%s\": host too long", s);
		strcpy(e->host, host);
	}
	if (port && parse_port(port, &e->port) < 0)
		return werr_set(err, 0, "network allow entry \"%s\": the port \"%s\" is not a number "
		                "from 1 to 65535; " FORM, s, port);
	return 0;
}

static bool port_ok(const struct wnet_entry *e, uint16_t port)
{
	return e->port ? e->port == port : (port == 443 || port == 80);
}

/* Does entry e name host (already normalised by host_norm)? */
static bool host_match(const struct wnet_entry *e, const char *h)
{
	if (e->literal) {
		unsigned char a[16], b[16];
		int fam = strchr(e->host, ':') ? AF_INET6 : AF_INET;

		return inet_pton(fam, e->host, a) == 1 && inet_pton(fam, h, b) == 1 &&
		       !memcmp(a, b, fam == AF_INET6 ? 16 : 4);
	}
	if (e->wildcard) {
		size_t hl = strlen(h), sl = strlen(e->host + 1);   /* ".example.org" */

		return hl > sl && !strcmp(h + hl - sl, e->host + 1);
	}
	return !strcmp(h, e->host);
}

int wnet_allow_name(char *const *entries, size_t n, const char *host, uint16_t port)
{
	char h[256];
	size_t i;

	if (!host || !host_norm(host, h))
		return -1;
	for (i = 0; i < n; i++) {
		struct wnet_entry e;
		struct werr err;

		if (wnet_entry_parse(entries[i], &e, &err) < 0)
			continue;   /* the loader refused it already; never let it match */
		if (port_ok(&e, port) && host_match(&e, h))
			return (int)i;
	}
	return -1;
}

static bool v4_special(uint32_t a)   /* host byte order */
{
	static const struct { uint32_t net, mask; } nets[] = {
		{ 0x00000000, 0xff000000 },   /* 0/8 "this network" */
		{ 0x0a000000, 0xff000000 },   /* 10/8 private */
		{ 0x64400000, 0xffc00000 },   /* 100.64/10 shared (CGNAT) */
		{ 0x7f000000, 0xff000000 },   /* 127/8 loopback */
		{ 0xa9fe0000, 0xffff0000 },   /* 169.254/16 link-local */
		{ 0xac100000, 0xfff00000 },   /* 172.16/12 private */
		{ 0xc0000000, 0xffffff00 },   /* 192.0.0/24 protocol assignments */
		{ 0xc0000200, 0xffffff00 },   /* 192.0.2/24 documentation */
		{ 0xc0a80000, 0xffff0000 },   /* 192.168/16 private */
		{ 0xc6120000, 0xfffe0000 },   /* 198.18/15 benchmarking */
		{ 0xc6336400, 0xffffff00 },   /* 198.51.100/24 documentation */
		{ 0xcb007100, 0xffffff00 },   /* 203.0.113/24 documentation */
		{ 0xe0000000, 0xf0000000 },   /* 224/4 multicast */
		{ 0xf0000000, 0xf0000000 },   /* 240/4 reserved, and broadcast */
	};
	size_t i;

	for (i = 0; i < sizeof(nets) / sizeof(nets[0]); i++)
		if ((a & nets[i].mask) == nets[i].net)
			return true;
	return false;
}

static uint32_t be32_at(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static bool v6_special(const unsigned char *a)
{
	static const unsigned char zero[12];
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const unsigned char nat64[12] = { 0, 0x64, 0xff, 0x9b };

	if (!memcmp(a, zero, 12))
		return true;                  /* ::/96: ::, ::1, deprecated IPv4-compatible */
	if (!memcmp(a, mapped, 12))
		return v4_special(be32_at(a + 12));   /* ::ffff:a.b.c.d */
	if (!memcmp(a, nat64, 12))
		return v4_special(be32_at(a + 12));   /* 64:ff9b::a.b.c.d */
	if (a[0] == 0x00 && a[1] == 0x64 && a[2] == 0xff && a[3] == 0x9b && a[4] == 0 && a[5] == 1)
		return true;                  /* 64:ff9b:1::/48 local-use NAT64 */
	if (a[0] == 0x01 && a[1] == 0x00 && !memcmp(a + 2, zero, 6))
		return true;                  /* 100::/64 discard-only */
	if (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0 && a[3] == 0)
		return true;                  /* 2001::/32 Teredo: tunnels to an embedded v4 */
	if (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x0d && a[3] == 0xb8)
		return true;                  /* 2001:db8::/32 documentation */
	if (a[0] == 0x20 && a[1] == 0x02)
		return v4_special(be32_at(a + 2));    /* 2002:a.b.c.d::/48 6to4 */
	if ((a[0] & 0xfe) == 0xfc)
		return true;                  /* fc00::/7 unique local */
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
		return true;                  /* fe80::/10 link-local */
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0xc0)
		return true;                  /* fec0::/10 deprecated site-local */
	if (a[0] == 0xff)
		return true;                  /* ff00::/8 multicast */
	return false;
}

bool wnet_addr_special(const struct sockaddr *sa)
{
	if (!sa)
		return true;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;

		return v4_special(ntohl(s4->sin_addr.s_addr));
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;

		return v6_special(s6->sin6_addr.s6_addr);
	}
	return true;   /* any other family is never reached by name */
}

bool wnet_addr_is(const struct sockaddr *sa, int family, const void *addr)
{
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	const unsigned char *a6;

	if (!sa || !addr)
		return false;
	if (sa->sa_family == AF_INET)
		return family == AF_INET &&
		       !memcmp(&((const struct sockaddr_in *)sa)->sin_addr, addr, 4);
	if (sa->sa_family != AF_INET6)
		return false;
	a6 = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
	if (family == AF_INET6)
		return !memcmp(a6, addr, 16);
	return family == AF_INET && !memcmp(a6, mapped, 12) && !memcmp(a6 + 12, addr, 4);
}

/* Does literal entry e name exactly the address of sa? */
static bool literal_is(const struct wnet_entry *e, const struct sockaddr *sa)
{
	unsigned char a[16];

	if (sa->sa_family == AF_INET && !strchr(e->host, ':'))
		return inet_pton(AF_INET, e->host, a) == 1 &&
		       !memcmp(a, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	if (sa->sa_family == AF_INET6 && strchr(e->host, ':'))
		return inet_pton(AF_INET6, e->host, a) == 1 &&
		       !memcmp(a, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	return false;
}

bool wnet_allow_addr(char *const *entries, size_t n, const char *host,
                     const struct sockaddr *sa, bool host_own)
{
	char h[256];
	bool have_host = host && host_norm(host, h);
	uint16_t port;
	size_t i;

	if (!sa)
		return false;
	if (sa->sa_family == AF_INET)
		port = ntohs(((const struct sockaddr_in *)sa)->sin_port);
	else if (sa->sa_family == AF_INET6)
		port = ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	else
		return false;
	for (i = 0; i < n; i++) {
		struct wnet_entry e;
		struct werr err;

		if (wnet_entry_parse(entries[i], &e, &err) < 0 || !port_ok(&e, port))
			continue;
		if (e.literal) {
			if (literal_is(&e, sa))
				return true;
		} else if (have_host && !host_own && !wnet_addr_special(sa) && host_match(&e, h)) {
			return true;
		}
	}
	return false;
}
