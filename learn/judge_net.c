/* The learner's judgement of the network: direct connections and sends,
 * DNS queries, the proxy's refusals, and denied syscalls
 * (learn/learner.h, docs/learn.md "The network").
 *
 * Nothing but HTTP and HTTPS through warden's proxy ever leaves a jail
 * (network mode proxy, the host in `allow`).  So what is proposed for a
 * destination is always an `allow` entry, and mode proxy when the profile
 * has another: a program that honours HTTP_PROXY (which warden sets in
 * that mode) then reaches it; one that connects by itself never will, and
 * the report says so.  Names come from the proxy's refusals (the client
 * asked the proxy for host:port) and from DNS queries the program sent
 * itself; glibc connects its UDP socket to the server first, and in mode
 * none that connect fails (no network at all), so there only the attempt
 * is seen: the report says to learn again with --net proxy. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "learner.h"
#include "warden/filter.h"
#include "warden/policy.h"
#include "warden/util.h"

static const char *const K_ALLOW = "network.allow";

static bool loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
	return false;
}

static bool dns_socket(const struct lctx *c, int fd)
{
	for (size_t i = 0; i < c->dns_n; i++)
		if (c->dns[i].tid == c->tid && c->dns[i].fd == fd)
			return true;
	return false;
}

static void dns_remember(struct lctx *c, int fd)
{
	if (dns_socket(c, fd))
		return;
	if (c->dns_n == LJ_DNS_MAX)
		memmove(&c->dns[0], &c->dns[1], --c->dns_n * sizeof(c->dns[0]));
	c->dns[c->dns_n].tid = c->tid;
	c->dns[c->dns_n].fd = fd;
	c->dns_n++;
}

/* A DNS query the program sent itself: the name it wanted. */
static void dns_query(struct lctx *c, const char *call, uint64_t buf, uint64_t len)
{
	uint8_t msg[512];
	char name[256];
	size_t n = len < sizeof(msg) ? (size_t)len : sizeof(msg);

	if (lj_read(c, buf, msg, n) < 0) {
		c->unread++;
		return;
	}
	/* over TCP a query has its length first */
	if (wl_dns_query_name(msg, n, name, sizeof(name)) < 0 &&
	    (n < 2 || wl_dns_query_name(msg + 2, n - 2, name, sizeof(name)) < 0))
		return;
	if (c->b->net == WNET_PROXY) {
		struct wl_refusal *r = lj_add(c, WL_DNS, name, call, "the jail has no DNS server",
		                              NULL, NULL);
		if (r && !r->note)
			r->note = xstrdup("the program looked the name up itself instead of asking "
			                  "the proxy: only a client that uses HTTP_PROXY reaches a host "
			                  "from a jail");
		return;
	}
	lj_add(c, WL_DNS, name, call, c->b->net == WNET_NONE ? "network mode none: the jail has "
	       "no network at all" : "network mode loopback: nothing outside the jail is "
	       "reachable", K_ALLOW, name);
}

/* A destination the program connected or sent to by itself. */
static void destination(struct lctx *c, const char *call, int fd, const struct sockaddr *sa,
                        size_t len)
{
	char a[300];
	uint16_t port;
	int fam = wl_sockaddr_str(sa, len, a, sizeof(a), &port);
	struct wl_refusal *r;

	if (fam < 0)
		return;
	if (fam == AF_UNIX) {
		/* a socket on the host: a path like any other */
		lj_socket_path(c, call, a);
		return;
	}
	if (port == 53) {
		dns_remember(c, fd);
		r = lj_add(c, WL_DNS, a, call, "it asked a DNS server, which the jail cannot reach",
		           NULL, NULL);
		if (r && !r->note)
			r->note = xstrdup(c->b->net == WNET_PROXY ?
				"programs that go through the proxy (HTTP_PROXY) need no DNS of their own" :
				"the names in the queries it sent are the network.allow entries (the "
				"jail's network watch lets glibc send them in mode none; without it, "
				"warden doctor says, they are not sent: learn with --net proxy then)");
		return;
	}
	if (c->b->net != WNET_NONE && loopback(sa))
		return;   /* the jail's own lo, and in mode proxy the proxy itself */
	r = lj_add(c, WL_CONNECT, a, call, c->b->net == WNET_NONE ?
	           "network mode none: the jail has no network at all" :
	           "a direct connection: nothing but the proxy leads out of a jail", K_ALLOW, a);
	if (r && !r->note)
		r->note = xstrdup("reached only if the program goes through the proxy "
		                  "(HTTP_PROXY, which warden sets in mode proxy)");
}

void lj_net(struct lctx *c, const char *call, int nr, const uint64_t a[6])
{
	struct sockaddr_storage ss;
	struct msghdr mh;
	struct iovec iov;
	uint64_t name = 0, namelen = 0, buf = 0, len = 0;
	int fd = (int)a[0];

	if (!strcmp(call, "connect")) {
		name = a[1];
		namelen = a[2];
	} else if (!strcmp(call, "sendto")) {
		buf = a[1];
		len = a[2];
		name = a[4];
		namelen = a[5];
	} else {
		/* sendmsg(fd, msg, flags); sendmmsg(fd, vec, n, flags): the first */
		if (lj_read(c, a[1], &mh, sizeof(mh)) < 0) {
			c->unread++;
			return;
		}
		name = (uint64_t)(uintptr_t)mh.msg_name;
		namelen = mh.msg_namelen;
		if (mh.msg_iovlen > 0 && lj_read(c, (uint64_t)(uintptr_t)mh.msg_iov, &iov,
		                                  sizeof(iov)) == 0) {
			buf = (uint64_t)(uintptr_t)iov.iov_base;
			len = iov.iov_len;
		}
	}
	if (name && namelen) {
		size_t n = namelen < sizeof(ss) ? (size_t)namelen : sizeof(ss);

		memset(&ss, 0, sizeof(ss));
		if (lj_read(c, name, &ss, n) < 0) {
			c->unread++;
			return;
		}
		if (strcmp(call, "connect") && (ss.ss_family == AF_INET || ss.ss_family == AF_INET6) &&
		    ntohs(((struct sockaddr_in *)&ss)->sin_port) == 53) {
			if (buf && len)
				dns_query(c, call, buf, len);
			return;
		}
		destination(c, call, fd, (struct sockaddr *)&ss, n);
		return;
	}
	if (buf && len && dns_socket(c, fd))
		dns_query(c, call, buf, len);
	(void)nr;
}

void lj_proxy(struct lctx *c, const char *method, const char *host, uint32_t port,
              uint32_t status, const char *reason, const char *address)
{
	char ent[320], lit[320];
	struct wl_refusal *r;

	if (status != 403 || !host[0] || port == 0 || port > 65535)
		return;   /* a malformed request or an upstream failure: no policy's doing */
	snprintf(ent, sizeof(ent), strchr(host, ':') ? "[%s]:%u" : "%s:%u", host, port);
	if (address[0] && strstr(reason, "no name can allow")) {
		/* the name resolved to a loopback or private address, which only
		 * that address written literally can allow */
		snprintf(lit, sizeof(lit), strchr(address, ':') ? "[%s]:%u" : "%s:%u", address, port);
		r = lj_add(c, WL_PROXY, ent, "proxy", reason, K_ALLOW, lit);
		if (r && !r->note)
			r->note = xasprintf("no name can allow that address: the program would have to "
			                    "connect to %s itself", lit);
		return;
	}
	lj_add(c, WL_PROXY, ent, "proxy", "the proxy refused it: not in the profile's allow list",
	       K_ALLOW, ent);
	(void)method;
}

static bool allowlisted(const char *name)
{
	for (size_t i = 0; i < wfilter_allowlist_n; i++)
		if (!strcmp(wfilter_allowlist[i], name))
			return true;
	return false;
}

void lj_denied(struct lctx *c, const char *name, uint64_t count, const char *first)
{
	const char *why = wfilter_forbidden_why(name);
	bool listed = allowlisted(name);
	char *w = xasprintf("the policy denies it (EPERM)%s%s", first[0] ? "; first: " : "", first);
	struct wl_refusal *r;

	r = lj_add(c, WL_SYSCALL, name, name, w, why || listed ? NULL : "syscalls.allow_extra",
	           why || listed ? NULL : name);
	free(w);
	if (!r)
		return;
	r->count = count ? count : 1;
	if (why && !r->note)
		r->note = xasprintf("no policy can allow it: %s", why);
	else if (listed && !r->note)
		r->note = xstrdup("the filter allows it, but not with these arguments (a set-id mode, "
		                  "namespace flags, a terminal ioctl...): no policy changes that");
}
