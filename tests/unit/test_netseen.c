/* The network watch's parser and answers (jail/netseen.c): where a packet
 * that left a jailed program was going, and the answer the jail's init
 * sends back.  Packets are built here byte by byte; checksums are checked
 * with this file's own sum, not the product's.  The live path (a real
 * jail, real sockets, the program's errno) is judged by run.bats, net.bats
 * and serve.bats ("tries the network"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../jail/jail_impl.h"

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

/* the ones'-complement sum of a, folded: 0xffff over a whole checksummed
 * header (with its checksum field) means it is right */
static uint32_t sum16(const uint8_t *a, size_t n, uint32_t s)
{
	for (size_t i = 0; i < n; i++)
		s += i & 1 ? a[i] : (uint32_t)a[i] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s;
}

static void v4_header(uint8_t *p, size_t total, uint8_t proto, const char *src, const char *dst)
{
	memset(p, 0, 20);
	p[0] = 0x45;
	p[2] = (uint8_t)(total >> 8);
	p[3] = (uint8_t)total;
	p[8] = 64;
	p[9] = proto;
	inet_pton(AF_INET, src, p + 12);
	inet_pton(AF_INET, dst, p + 16);
}

static void v6_header(uint8_t *p, size_t payload, uint8_t nh, const char *src, const char *dst)
{
	memset(p, 0, 40);
	p[0] = 0x60;
	p[4] = (uint8_t)(payload >> 8);
	p[5] = (uint8_t)payload;
	p[6] = nh;
	p[7] = 64;
	inet_pton(AF_INET6, src, p + 8);
	inet_pton(AF_INET6, dst, p + 24);
}

/* a TCP SYN from port 40000 to port at p + off; its length */
static size_t tcp_syn(uint8_t *p, uint16_t port)
{
	memset(p, 0, 20);
	p[0] = 40000 >> 8;
	p[1] = 40000 & 0xff;
	p[2] = (uint8_t)(port >> 8);
	p[3] = (uint8_t)port;
	p[12] = 5 << 4;
	p[13] = 0x02;
	return 20;
}

/* a UDP datagram from port 5353 to 53 with a DNS query for name (labels
 * as given: "\x04pypi\x03org"), id 0xabcd, RD; its length */
static size_t dns_query(uint8_t *p, const char *labels, size_t llen)
{
	size_t n = 8;
	static const uint8_t hdr[12] = { 0xab, 0xcd, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0 };

	memcpy(p + n, hdr, 12);
	n += 12;
	memcpy(p + n, labels, llen);
	n += llen;
	p[n++] = 0;
	p[n++] = 0;
	p[n++] = 1;    /* type A */
	p[n++] = 0;
	p[n++] = 1;    /* class IN */
	p[0] = 5353 >> 8;
	p[1] = 5353 & 0xff;
	p[2] = 0;
	p[3] = 53;
	p[4] = (uint8_t)(n >> 8);
	p[5] = (uint8_t)n;
	return n;
}

static void test_v4_syn(void **state)
{
	uint8_t p[64], out[1400];
	struct jail_net_try t;
	size_t l4, n, m;

	(void)state;
	v4_header(p, 40, IPPROTO_TCP, "192.0.2.1", "203.0.113.9");
	tcp_syn(p + 20, 443);
	n = 40;
	assert_int_equal(jail_watch_parse(p, n, &t, &l4), 0);
	assert_int_equal(t.family, AF_INET);
	assert_int_equal(t.proto, IPPROTO_TCP);
	assert_int_equal(t.port, 443);
	assert_int_equal(l4, 20);
	assert_memory_equal(t.addr, p + 16, 4);
	assert_string_equal(t.name, "");
	/* the answer: ICMP net administratively prohibited, from the
	 * destination back to the source, with the header and 8 bytes */
	m = jail_watch_answer(p, n, &t, l4, out, sizeof(out));
	assert_int_equal(m, 20 + 8 + 28);
	assert_int_equal(out[0], 0x45);
	assert_int_equal(rd16(out + 2), m);
	assert_int_equal(out[9], IPPROTO_ICMP);
	assert_memory_equal(out + 12, p + 16, 4);
	assert_memory_equal(out + 16, p + 12, 4);
	assert_int_equal(sum16(out, 20, 0), 0xffff);
	assert_int_equal(out[20], 3);
	assert_int_equal(out[21], 9);
	assert_int_equal(sum16(out + 20, m - 20, 0), 0xffff);
	assert_memory_equal(out + 28, p, 28);
	/* too small a buffer: no answer, nothing written past it */
	assert_int_equal(jail_watch_answer(p, n, &t, l4, out, 40), 0);
}

static void test_v4_options_and_fragments(void **state)
{
	uint8_t p[64];
	struct jail_net_try t;
	size_t l4;

	(void)state;
	v4_header(p, 44, IPPROTO_TCP, "192.0.2.1", "198.51.100.7");
	p[0] = 0x46;   /* 4 bytes of options: the ports move */
	memset(p + 20, 1, 4);
	tcp_syn(p + 24, 8080);
	assert_int_equal(jail_watch_parse(p, 44, &t, &l4), 0);
	assert_int_equal(t.port, 8080);
	assert_int_equal(l4, 24);
	/* a later fragment has no ports: not read */
	p[6] = 0x00;
	p[7] = 0x10;
	assert_int_equal(jail_watch_parse(p, 44, &t, &l4), -1);
	/* a header length under 20 */
	p[0] = 0x44;
	p[7] = 0;
	assert_int_equal(jail_watch_parse(p, 44, &t, &l4), -1);
	/* not TCP or UDP */
	p[0] = 0x45;
	p[9] = IPPROTO_ICMP;
	assert_int_equal(jail_watch_parse(p, 44, &t, &l4), -1);
}

static void test_dns_v4(void **state)
{
	uint8_t p[128], out[1400];
	struct jail_net_try t;
	size_t l4, n, m;

	(void)state;
	n = 20 + dns_query(p + 20, "\x04pypi\x03org", 9);
	v4_header(p, n, IPPROTO_UDP, "127.0.0.1", "127.0.0.1");
	assert_int_equal(jail_watch_parse(p, n, &t, &l4), 0);
	assert_int_equal(t.proto, IPPROTO_UDP);
	assert_int_equal(t.port, 53);
	assert_string_equal(t.name, "pypi.org");
	assert_true(jail_net_try_ok(&t));
	/* the answer: the server's REFUSED, to the query's port, its id and
	 * question, no records */
	m = jail_watch_answer(p, n, &t, l4, out, sizeof(out));
	assert_int_equal(m, n);
	assert_int_equal(out[9], IPPROTO_UDP);
	assert_int_equal(sum16(out, 20, 0), 0xffff);
	assert_int_equal(rd16(out + 20), 53);
	assert_int_equal(rd16(out + 22), 5353);
	assert_int_equal(rd16(out + 24), n - 20);
	assert_int_equal(rd16(out + 28), 0xabcd);
	assert_int_equal(out[30] & 0x80, 0x80);          /* QR */
	assert_int_equal(out[30] & 0x01, 0x01);          /* RD copied */
	assert_int_equal(out[31] & 0x0f, 5);             /* REFUSED */
	assert_int_equal(rd16(out + 32), 1);
	assert_int_equal(rd16(out + 34) | rd16(out + 36) | rd16(out + 38), 0);
	assert_memory_equal(out + 40, p + 40, n - 40);
}

static void test_dns_malformed(void **state)
{
	static const struct { const char *labels; size_t len; } bad[] = {
		{ "\xc0\x0c", 2 },                  /* a compression pointer */
		{ "\x05py pi\x03org", 10 },         /* a space */
		{ "\x04py/i\x03org", 9 },           /* a slash */
		{ "\x40" "aaaa", 5 },               /* a label over 63 */
		{ "\x09pypi", 5 },                  /* a label past the end */
	};
	uint8_t p[600];
	struct jail_net_try t;
	size_t l4, n;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n = 20 + dns_query(p + 20, bad[i].labels, bad[i].len);
		v4_header(p, n, IPPROTO_UDP, "127.0.0.1", "127.0.0.1");
		assert_int_equal(jail_watch_parse(p, n, &t, &l4), 0);
		assert_string_equal(t.name, "");   /* an address, no name */
	}
	/* a response (QR set) is no query */
	n = 20 + dns_query(p + 20, "\x04pypi\x03org", 9);
	v4_header(p, n, IPPROTO_UDP, "127.0.0.1", "127.0.0.1");
	p[30] |= 0x80;
	assert_int_equal(jail_watch_parse(p, n, &t, &l4), 0);
	assert_string_equal(t.name, "");
	/* a name longer than 253 */
	{
		char labels[400];
		size_t k = 0;
		for (int j = 0; j < 5; j++) {
			labels[k++] = 63;
			memset(labels + k, 'a', 63);
			k += 63;
		}
		n = 20 + dns_query(p + 20, labels, k);
		v4_header(p, n, IPPROTO_UDP, "127.0.0.1", "127.0.0.1");
		assert_int_equal(jail_watch_parse(p, n, &t, &l4), 0);
		assert_string_equal(t.name, "");
	}
}

static void test_v6(void **state)
{
	uint8_t p[128], out[1400];
	struct jail_net_try t;
	size_t l4, n, m;
	uint32_t ph;

	(void)state;
	/* TCP: ICMPv6 no route, checksum over the pseudo-header */
	v6_header(p, 20, IPPROTO_TCP, "2001:db8::1", "2001:db8::5");
	tcp_syn(p + 40, 443);
	n = 60;
	assert_int_equal(jail_watch_parse(p, n, &t, &l4), 0);
	assert_int_equal(t.family, AF_INET6);
	assert_int_equal(t.port, 443);
	assert_int_equal(l4, 40);
	m = jail_watch_answer(p, n, &t, l4, out, sizeof(out));
	assert_int_equal(m, 40 + 8 + n);
	assert_int_equal(out[6], IPPROTO_ICMPV6);
	assert_memory_equal(out + 8, p + 24, 16);
	assert_memory_equal(out + 24, p + 8, 16);
	assert_int_equal(out[40], 1);
	assert_int_equal(out[41], 0);
	ph = sum16(out + 8, 32, 0) + (uint32_t)(m - 40) + IPPROTO_ICMPV6;
	assert_int_equal(sum16(out + 40, m - 40, ph), 0xffff);
	/* a DNS query: REFUSED, with the UDP checksum IPv6 requires */
	n = 40 + dns_query(p + 40, "\x07" "example\x03" "com", 12);
	v6_header(p, n - 40, IPPROTO_UDP, "2001:db8::1", "2001:db8::53");
	assert_int_equal(jail_watch_parse(p, n, &t, &l4), 0);
	assert_string_equal(t.name, "example.com");
	m = jail_watch_answer(p, n, &t, l4, out, sizeof(out));
	assert_int_equal(m, n);
	assert_int_not_equal(rd16(out + 46), 0);
	ph = sum16(out + 8, 32, 0) + (uint32_t)(m - 40) + IPPROTO_UDP;
	assert_int_equal(sum16(out + 40, m - 40, ph), 0xffff);
}

/* Every cut of every packet above: parsed or refused, never read past
 * its end (ASan's build of this test judges that), and no answer longer
 * than the buffer. */
static void test_truncated(void **state)
{
	uint8_t full[3][128], out[1400];
	size_t len[3];

	(void)state;
	len[0] = 40;
	v4_header(full[0], 40, IPPROTO_TCP, "192.0.2.1", "203.0.113.9");
	tcp_syn(full[0] + 20, 443);
	len[1] = 20 + dns_query(full[1] + 20, "\x04pypi\x03org", 9);
	v4_header(full[1], len[1], IPPROTO_UDP, "127.0.0.1", "127.0.0.1");
	len[2] = 40 + dns_query(full[2] + 40, "\x04pypi\x03org", 9);
	v6_header(full[2], len[2] - 40, IPPROTO_UDP, "2001:db8::1", "2001:db8::53");
	for (int k = 0; k < 3; k++)
		for (size_t n = 0; n <= len[k]; n++) {
			uint8_t *cut = malloc(n ? n : 1);
			struct jail_net_try t;
			size_t l4;

			memcpy(cut, full[k], n);
			if (jail_watch_parse(cut, n, &t, &l4) == 0)
				assert_true(jail_watch_answer(cut, n, &t, l4, out, sizeof(out)) <=
				            sizeof(out));
			free(cut);
		}
}

static void test_try_ok_and_text(void **state)
{
	struct jail_net_try t = { .family = AF_INET, .proto = IPPROTO_TCP, .port = 443 };
	char buf[300];

	(void)state;
	inet_pton(AF_INET, "203.0.113.9", t.addr);
	assert_true(jail_net_try_ok(&t));
	jail_net_try_text(&t, buf, sizeof(buf));
	assert_string_equal(buf, "203.0.113.9 port 443");
	t.proto = IPPROTO_UDP;
	jail_net_try_text(&t, buf, sizeof(buf));
	assert_string_equal(buf, "203.0.113.9 port 443 (UDP)");
	strcpy(t.name, "pypi.org");
	jail_net_try_text(&t, buf, sizeof(buf));
	assert_string_equal(buf, "pypi.org (a name lookup)");
	t.family = AF_INET6;
	t.name[0] = '\0';
	t.proto = IPPROTO_TCP;
	inet_pton(AF_INET6, "2001:db8::5", t.addr);
	jail_net_try_text(&t, buf, sizeof(buf));
	assert_string_equal(buf, "[2001:db8::5] port 443");
	/* what the supervisor refuses from init */
	t.family = AF_UNIX;
	assert_false(jail_net_try_ok(&t));
	t.family = AF_INET;
	t.proto = IPPROTO_ICMP;
	assert_false(jail_net_try_ok(&t));
	t.proto = IPPROTO_UDP;
	strcpy(t.name, "a/b");
	assert_false(jail_net_try_ok(&t));
	strcpy(t.name, "\x1b[31mred");
	assert_false(jail_net_try_ok(&t));
	memset(t.name, 'a', 254);
	t.name[254] = '\0';
	assert_false(jail_net_try_ok(&t));
	t.name[253] = '\0';
	assert_true(jail_net_try_ok(&t));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v4_syn),
		cmocka_unit_test(test_v4_options_and_fragments),
		cmocka_unit_test(test_dns_v4),
		cmocka_unit_test(test_dns_malformed),
		cmocka_unit_test(test_v6),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_try_ok_and_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
