/* The jail's init reads the network watch (jail/netwatch.c): each packet
 * that left a jailed program for an address off the jail arrives on the
 * watch's packet socket.  init reads where it was going, answers it at once
 * the way a router with no way on would, so the program fails as fast as
 * before and with the same errno, and reports each new destination to the
 * supervisor (SYNC_NET):
 *
 *   TCP SYN, UDP      ICMP "destination unreachable": IPv4 code 9 (network
 *                     administratively prohibited: ENETUNREACH, and fatal to
 *                     a connect, where code 0 would have TCP retry for two
 *                     minutes), IPv6 code 0 (no route: ENETUNREACH)
 *   a DNS query       (UDP to port 53, a well-formed question) the name is
 *                     kept, and the answer is the server's REFUSED, so the
 *                     resolver gives up at once instead of after its timeouts
 *
 * The packet is the jail's own words: it is parsed here, in the jail's
 * init (as confined as the program: a hostile packet gains nothing it did
 * not have), and what init reports is checked again by the supervisor
 * (jail_net_try_ok).  Reports are bounded: each destination once until
 * the next block (JAIL_SEEN_MAX of them), sent without blocking (a full
 * socket drops it; init never waits on the supervisor). */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "jail_impl.h"
#include "warden/dnsq.h"

#define JAIL_SEEN_MAX 64

static struct jail_net_try seen[JAIL_SEEN_MAX];
static unsigned n_seen;

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

int jail_watch_parse(const uint8_t *p, size_t n, struct jail_net_try *t, size_t *l4)
{
	size_t off;

	memset(t, 0, sizeof(*t));
	if (n >= 20 && p[0] >> 4 == 4) {
		off = (size_t)(p[0] & 0xf) * 4;
		if (off < 20 || (get16(p + 6) & 0x1fff))
			return -1;
		t->family = AF_INET;
		t->proto = p[9];
		memcpy(t->addr, p + 16, 4);
	} else if (n >= 40 && p[0] >> 4 == 6) {
		off = 40;
		t->family = AF_INET6;
		t->proto = p[6];
		memcpy(t->addr, p + 24, 16);
	} else {
		return -1;
	}
	if ((t->proto != IPPROTO_TCP && t->proto != IPPROTO_UDP) || n < off + 8)
		return -1;
	t->port = get16(p + off + 2);
	if (t->proto == IPPROTO_UDP && t->port == 53 &&
	    wdns_query_name(p + off + 8, n - off - 8, t->name, sizeof(t->name)) < 0)
		t->name[0] = '\0';
	*l4 = off;
	return 0;
}

/* The Internet checksum of a (n bytes), from sum. */
static uint16_t csum(const uint8_t *a, size_t n, uint32_t sum)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		sum += get16(a + i);
	if (n & 1)
		sum += (uint32_t)a[n - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* The IPv6 pseudo-header's sum for a packet from src to dst. */
static uint32_t pseudo6(const uint8_t *src, const uint8_t *dst, size_t len, uint8_t nh)
{
	uint32_t s = 0;

	for (int i = 0; i < 16; i += 2)
		s += get16(src + i) + get16(dst + i);
	return s + (uint32_t)len + nh;
}

/* An IP header from the packet's destination back to its source, around a
 * payload of len bytes of protocol proto, at out; its length. */
static size_t reply_header(const uint8_t *p, const struct jail_net_try *t, uint8_t *out,
                           size_t len, uint8_t proto)
{
	if (t->family == AF_INET) {
		memset(out, 0, 20);
		out[0] = 0x45;
		put16(out + 2, (uint16_t)(20 + len));
		out[8] = 64;
		out[9] = proto;
		memcpy(out + 12, p + 16, 4);
		memcpy(out + 16, p + 12, 4);
		put16(out + 10, csum(out, 20, 0));
		return 20;
	}
	memset(out, 0, 40);
	out[0] = 0x60;
	put16(out + 4, (uint16_t)len);
	out[6] = proto;
	out[7] = 64;
	memcpy(out + 8, p + 24, 16);
	memcpy(out + 24, p + 8, 16);
	return 40;
}

size_t jail_watch_answer(const uint8_t *p, size_t n, const struct jail_net_try *t, size_t l4,
                         uint8_t *out, size_t cap)
{
	uint8_t *pl;
	size_t h = t->family == AF_INET ? 20 : 40, len;

	if (t->name[0]) {
		/* REFUSED: the query's header and question, flags QR RD RA */
		const uint8_t *q = p + l4 + 8;
		char name[256];
		int qend = wdns_query_name(q, n - l4 - 8, name, sizeof(name));

		if (qend < 0 || h + 8 + (size_t)qend > cap)
			return 0;
		pl = out + h;
		len = 8 + (size_t)qend;
		put16(pl, 53);
		memcpy(pl + 2, p + l4, 2);          /* to the query's source port */
		put16(pl + 4, (uint16_t)len);
		put16(pl + 6, 0);
		memcpy(pl + 8, q, (size_t)qend);
		pl[8 + 2] = (uint8_t)(0x80 | (q[2] & 0x01));
		pl[8 + 3] = 0x80 | 5;
		put16(pl + 8 + 4, 1);
		memset(pl + 8 + 6, 0, 6);
		reply_header(p, t, out, len, IPPROTO_UDP);
		if (t->family == AF_INET6)
			put16(pl + 6, csum(pl, len, pseudo6(out + 8, out + 24, len, IPPROTO_UDP)));
		return h + len;
	}
	/* ICMP: 8 bytes of header, then as much of the packet as the rules
	 * of each family say (IPv4: its header and 8 bytes; IPv6: what fits
	 * in 1280 bytes) */
	len = t->family == AF_INET ? l4 + 8 : n < 1280 - 48 ? n : 1280 - 48;
	if (len > n || h + 8 + len > cap)
		return 0;
	pl = out + h;
	memset(pl, 0, 8);
	pl[0] = t->family == AF_INET ? 3 : 1;
	pl[1] = t->family == AF_INET ? 9 : 0;
	memcpy(pl + 8, p, len);
	len += 8;
	reply_header(p, t, out, len, t->family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6);
	put16(pl + 2, csum(pl, len, t->family == AF_INET ? 0 :
	                   pseudo6(out + 8, out + 24, len, IPPROTO_ICMPV6)));
	return h + len;
}

static bool same(const struct jail_net_try *a, const struct jail_net_try *b)
{
	return a->family == b->family && a->proto == b->proto && a->port == b->port &&
	       !memcmp(a->addr, b->addr, 16) && !strcmp(a->name, b->name);
}

/* Report t to the supervisor, once per destination until the next block. */
static void report_new(int sync, const struct jail_net_try *t)
{
	struct sync_frame f = { .type = SYNC_NET };

	for (unsigned i = 0; i < n_seen; i++)
		if (same(&seen[i], t))
			return;
	if (n_seen == JAIL_SEEN_MAX)
		return;
	seen[n_seen++] = *t;
	f.net = *t;
	(void)!send(sync, &f, sizeof(f), MSG_NOSIGNAL | MSG_DONTWAIT);
}

void jail_watch_read(int watch, int sync)
{
	/* at most 256 packets a wake: the signals (the program's end, the
	 * supervisor's freeze) are never starved by a flood */
	for (int k = 0; k < 256; k++) {
		uint8_t pkt[JAIL_WATCH_SNAP], out[1400];
		struct sockaddr_ll from;
		socklen_t fl = sizeof(from);
		struct jail_net_try t;
		size_t l4, m;
		ssize_t n = recvfrom(watch, pkt, sizeof(pkt), MSG_DONTWAIT | MSG_TRUNC,
		                     (struct sockaddr *)&from, &fl);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return;
		if ((size_t)n > sizeof(pkt))
			n = sizeof(pkt);     /* the filter's snap: the head is enough */
		if (fl < sizeof(from) || jail_watch_parse(pkt, (size_t)n, &t, &l4) < 0)
			continue;
		/* the report first: it is queued before the program can learn
		 * that it failed, so a block's end finds it */
		report_new(sync, &t);
		if ((m = jail_watch_answer(pkt, (size_t)n, &t, l4, out, sizeof(out))) > 0) {
			/* back to wd0, at the address the packet came from */
			from.sll_protocol = htons(t.family == AF_INET ? ETH_P_IP : ETH_P_IPV6);
			(void)sendto(watch, out, m, MSG_DONTWAIT, (struct sockaddr *)&from, fl);
		}
	}
}

void jail_watch_forget(void)
{
	n_seen = 0;
}

bool jail_net_try_ok(const struct jail_net_try *t)
{
	size_t l = strnlen(t->name, sizeof(t->name));

	if ((t->family != AF_INET && t->family != AF_INET6) ||
	    (t->proto != IPPROTO_TCP && t->proto != IPPROTO_UDP) || l > 253)
		return false;
	for (size_t i = 0; i < l; i++)
		if (!wdns_host_char(t->name[i]) && t->name[i] != '.')
			return false;
	return true;
}

void jail_net_try_text(const struct jail_net_try *t, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (t->name[0]) {
		snprintf(buf, len, "%s (a name lookup)", t->name);
		return;
	}
	inet_ntop(t->family, t->addr, a, sizeof(a));
	snprintf(buf, len, t->family == AF_INET6 ? "[%s] port %u%s" : "%s port %u%s", a,
	         (unsigned)t->port, t->proto == IPPROTO_UDP ? " (UDP)" : "");
}
