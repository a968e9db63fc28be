/* The proxy's allowlist (include/warden/netallow.h): entry parsing with
 * errors that name the form, matching by name (wildcards, case, trailing
 * dot, default ports), the special addresses no name may grant, the
 * comparison with the host's own addresses, and the address check that
 * stops DNS rebinding. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "warden/netallow.h"

static void parse_ok(const char *s, const char *host, bool wild, bool lit, uint16_t port)
{
	struct wnet_entry e;
	struct werr err = { 0 };

	if (wnet_entry_parse(s, &e, &err) < 0)
		fail_msg("\"%s\" refused: %s", s, err.msg);
	assert_string_equal(e.host, host);
	assert_int_equal(e.wildcard, wild);
	assert_int_equal(e.literal, lit);
	assert_int_equal(e.port, port);
}

static void parse_bad(const char *s, const char *want)
{
	struct wnet_entry e;
	struct werr err = { 0 };

	if (wnet_entry_parse(s, &e, &err) == 0)
		fail_msg("\"%s\" accepted", s);
	if (!strstr(err.msg, want))
		fail_msg("\"%s\": message \"%s\" lacks \"%s\"", s, err.msg, want);
	if (!strstr(err.msg, "host[:port]"))
		fail_msg("\"%s\": message \"%s\" does not name the form", s, err.msg);
}

static void test_parse(void **state)
{
	parse_ok("pypi.org", "pypi.org", false, false, 0);
	parse_ok("PyPI.Org.", "pypi.org", false, false, 0);
	parse_ok("files.pythonhosted.org:443", "files.pythonhosted.org", false, false, 443);
	parse_ok("*.Example.org:8080", "*.example.org", true, false, 8080);
	parse_ok("localhost", "localhost", false, false, 0);
	parse_ok("127.0.0.1:8080", "127.0.0.1", false, true, 8080);
	parse_ok("10.1.2.3", "10.1.2.3", false, true, 0);
	parse_ok("[::1]:8080", "::1", false, true, 8080);
	parse_ok("[0:0::1]", "::1", false, true, 0);
	parse_ok("[2001:DB8::5]:1", "2001:db8::5", false, true, 1);
	parse_ok("a_b.example:65535", "a_b.example", false, false, 65535);
}

static void test_parse_bad(void **state)
{
	parse_bad("", "empty");
	parse_bad(":443", "empty");
	parse_bad("pypi.org:", "port");
	parse_bad("pypi.org:0", "port");
	parse_bad("pypi.org:65536", "port");
	parse_bad("pypi.org:+443", "port");
	parse_bad("pypi.org:44x", "port");
	parse_bad("pypi.org:0443443", "port");
	parse_bad("::1", "brackets");
	parse_bad("[::1", "']'");
	parse_bad("[::1]x", "after");
	parse_bad("[127.0.0.1]", "IPv6");
	parse_bad("[zz::1]:80", "IPv6");
	parse_bad("*", "wildcard");
	parse_bad("*example.org", "wildcard");
	parse_bad("*.org", "two labels");
	parse_bad("a.*.org", "character");
	parse_bad("exa mple.org", "character");
	parse_bad("exa/mple.org", "character");
	parse_bad("a..b", "empty label");
	parse_bad(".a.b", "empty label");
	parse_bad("-a.b", "'-'");
	parse_bad("a-.b", "'-'");
	parse_bad("127.1", "number");
	parse_bad("2130706433", "number");
	parse_bad("0x7f.1", "number");
	char lab[80], longs[400];
	memset(lab, 'a', 64);
	strcpy(lab + 64, ".org");
	parse_bad(lab, "63");
	memset(longs, 'a', 299);
	longs[299] = 0;
	parse_bad(longs, "longer");
	memset(longs, 'a', 260);
	for (int i = 10; i < 260; i += 10)
		longs[i] = '.';
	longs[260] = 0;
	parse_bad(longs, "253");
	/* a wildcard whose domain leaves no room for a name under it */
	longs[0] = '*';
	longs[1] = '.';
	longs[2 + 252] = 0;
	parse_bad(longs, "251");
}

static void test_parse_null_error(void **state)
{
	struct wnet_entry e;
	struct werr err = { 0 };

	assert_int_equal(wnet_entry_parse(NULL, &e, &err), -1);
	assert_non_null(strstr(err.msg, "host[:port]"));
}

static char *list[] = {
	"pypi.org",              /* 0 */
	"*.example.org:8443",    /* 1 */
	"127.0.0.1:8080",        /* 2 */
	"[::1]:9090",            /* 3 */
	"localhost:7000",        /* 4 */
	"bad entry",             /* 5: never matches */
	"files.example:81",      /* 6 */
	"192.0.1.7:8082",        /* 7 */
	"[3fff::7]:8083",        /* 8 */
};
#define NL (sizeof(list) / sizeof(list[0]))

static void test_allow_name(void **state)
{
	assert_int_equal(wnet_allow_name(list, NL, "pypi.org", 443), 0);
	assert_int_equal(wnet_allow_name(list, NL, "pypi.org", 80), 0);
	assert_int_equal(wnet_allow_name(list, NL, "PYPI.ORG.", 443), 0);
	assert_int_equal(wnet_allow_name(list, NL, "pypi.org", 8080), -1);
	assert_int_equal(wnet_allow_name(list, NL, "www.pypi.org", 443), -1);
	assert_int_equal(wnet_allow_name(list, NL, "evilpypi.org", 443), -1);
	assert_int_equal(wnet_allow_name(list, NL, "pypi.org.evil", 443), -1);
	assert_int_equal(wnet_allow_name(list, NL, "a.example.org", 8443), 1);
	assert_int_equal(wnet_allow_name(list, NL, "x.Y.example.org", 8443), 1);
	assert_int_equal(wnet_allow_name(list, NL, "example.org", 8443), -1);
	assert_int_equal(wnet_allow_name(list, NL, "badexample.org", 8443), -1);
	assert_int_equal(wnet_allow_name(list, NL, "a.example.org", 443), -1);
	assert_int_equal(wnet_allow_name(list, NL, "127.0.0.1", 8080), 2);
	assert_int_equal(wnet_allow_name(list, NL, "127.0.0.1", 8081), -1);
	assert_int_equal(wnet_allow_name(list, NL, "127.0.0.2", 8080), -1);
	assert_int_equal(wnet_allow_name(list, NL, "[::1]", 9090), 3);
	assert_int_equal(wnet_allow_name(list, NL, "::1", 9090), 3);
	assert_int_equal(wnet_allow_name(list, NL, "[0::1]", 9090), 3);
	assert_int_equal(wnet_allow_name(list, NL, "localhost", 7000), 4);
	assert_int_equal(wnet_allow_name(list, NL, "bad entry", 443), -1);
	assert_int_equal(wnet_allow_name(list, NL, "files.example", 81), 6);
	assert_int_equal(wnet_allow_name(list, NL, "", 443), -1);
	assert_int_equal(wnet_allow_name(list, NL, ".", 443), -1);
	assert_int_equal(wnet_allow_name(list, NL, NULL, 443), -1);
	assert_int_equal(wnet_allow_name(list, 0, "pypi.org", 443), -1);
}

static struct sockaddr_storage ss;

static const struct sockaddr *sa(const char *addr, uint16_t port)
{
	memset(&ss, 0, sizeof(ss));
	if (strchr(addr, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		assert_int_equal(inet_pton(AF_INET6, addr, &s6->sin6_addr), 1);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		assert_int_equal(inet_pton(AF_INET, addr, &s4->sin_addr), 1);
	}
	return (const struct sockaddr *)&ss;
}

static void test_special(void **state)
{
	static const char *special[] = {
		"0.0.0.0", "0.1.2.3", "10.0.0.1", "10.255.255.255", "100.64.0.1", "100.127.255.254",
		"127.0.0.1", "127.8.9.10", "169.254.169.254", "172.16.0.1", "172.31.255.255",
		"192.168.1.1", "192.0.0.8", "192.0.2.1", "198.18.0.1", "198.19.255.255",
		"198.51.100.7", "203.0.113.9", "224.0.0.1", "239.255.255.250", "240.0.0.1",
		"255.255.255.255",
		"::", "::1", "::127.0.0.1", "::8.8.8.8", "::ffff:127.0.0.1", "::ffff:10.0.0.1",
		"::ffff:169.254.169.254", "64:ff9b::127.0.0.1", "64:ff9b::a00:1", "64:ff9b:1::1",
		"fe80::1", "febf::1", "fec0::1", "fc00::1", "fd12:3456::1", "ff02::1", "ff0e::1",
		"2002:7f00:1::1", "2002:a00:1::", "2001::1", "2001:0:4136:e378::1", "2001:db8::1",
		"100::1",
	};
	static const char *public[] = {
		"1.1.1.1", "8.8.8.8", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0",
		"126.255.255.255", "128.0.0.0", "169.253.0.1", "172.15.255.255", "172.32.0.0",
		"192.167.0.1", "192.169.0.1", "198.17.0.1", "198.20.0.1", "223.255.255.255",
		"151.101.0.223",
		"2a04:4e42::223", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808",
		"2002:808:808::1", "2001:4860:4860::8888", "fbff::1", "fe7f::1",
	};
	size_t i;

	for (i = 0; i < sizeof(special) / sizeof(special[0]); i++)
		if (!wnet_addr_special(sa(special[i], 443)))
			fail_msg("%s not special", special[i]);
	for (i = 0; i < sizeof(public) / sizeof(public[0]); i++)
		if (wnet_addr_special(sa(public[i], 443)))
			fail_msg("%s special", public[i]);
	struct sockaddr un = { .sa_family = AF_UNIX };
	assert_true(wnet_addr_special(&un));
	assert_true(wnet_addr_special(NULL));
}

static void test_allow_addr(void **state)
{
	/* a name grants a public address on its ports */
	assert_true(wnet_allow_addr(list, NL, "pypi.org", sa("151.101.0.223", 443), false));
	assert_true(wnet_allow_addr(list, NL, "pypi.org", sa("2a04:4e42::223", 80), false));
	assert_false(wnet_allow_addr(list, NL, "pypi.org", sa("151.101.0.223", 22), false));
	assert_false(wnet_allow_addr(list, NL, "other.org", sa("151.101.0.223", 443), false));
	/* DNS rebinding: a name never grants a special address, even an allowed name */
	assert_false(wnet_allow_addr(list, NL, "pypi.org", sa("127.0.0.1", 443), false));
	assert_false(wnet_allow_addr(list, NL, "pypi.org", sa("::ffff:127.0.0.1", 443), false));
	assert_false(wnet_allow_addr(list, NL, "pypi.org", sa("169.254.169.254", 80), false));
	assert_false(wnet_allow_addr(list, NL, "a.example.org", sa("10.0.0.1", 8443), false));
	assert_false(wnet_allow_addr(list, NL, "localhost", sa("127.0.0.1", 7000), false));
	assert_false(wnet_allow_addr(list, NL, "localhost", sa("::1", 7000), false));
	/* only a literal entry grants a special address, on its port */
	assert_true(wnet_allow_addr(list, NL, "127.0.0.1", sa("127.0.0.1", 8080), false));
	assert_false(wnet_allow_addr(list, NL, "127.0.0.1", sa("127.0.0.1", 8081), false));
	assert_false(wnet_allow_addr(list, NL, "127.0.0.2", sa("127.0.0.2", 8080), false));
	assert_true(wnet_allow_addr(list, NL, "[::1]", sa("::1", 9090), false));
	assert_false(wnet_allow_addr(list, NL, "[::1]", sa("::1", 9091), false));
	/* an IPv4 entry is not an IPv4-mapped IPv6 address and back */
	assert_false(wnet_allow_addr(list, NL, "x", sa("::ffff:127.0.0.1", 8080), false));
	assert_false(wnet_allow_addr(list, NL, NULL, NULL, false));
	assert_false(wnet_allow_addr(list, NL, NULL, NULL, true));
}

/* An address of one of the host's own interfaces (host_own: the proxy read
 * them when the name resolved) is granted like a special one: never by a
 * name, only by an entry that is the address itself. */
static void test_allow_addr_host_own(void **state)
{
	/* an ordinary public address... */
	assert_true(wnet_allow_addr(list, NL, "pypi.org", sa("192.0.1.7", 443), false));
	assert_true(wnet_allow_addr(list, NL, "x.example.org", sa("3fff::7", 8443), false));
	/* ...that is the host's own: no name grants it, nor a wildcard */
	assert_false(wnet_allow_addr(list, NL, "pypi.org", sa("192.0.1.7", 443), true));
	assert_false(wnet_allow_addr(list, NL, "x.example.org", sa("3fff::7", 8443), true));
	assert_false(wnet_allow_addr(list, NL, "pypi.org", sa("::ffff:192.0.1.7", 80), true));
	/* the literal entry does, on its port */
	assert_true(wnet_allow_addr(list, NL, "192.0.1.7", sa("192.0.1.7", 8082), true));
	assert_false(wnet_allow_addr(list, NL, "192.0.1.7", sa("192.0.1.7", 8083), true));
	assert_true(wnet_allow_addr(list, NL, "[3fff::7]", sa("3fff::7", 8083), true));
}

static void test_addr_is(void **state)
{
	unsigned char v4[4], v4b[4], v6[16], v6b[16];

	assert_int_equal(inet_pton(AF_INET, "192.0.1.7", v4), 1);
	assert_int_equal(inet_pton(AF_INET, "192.0.1.8", v4b), 1);
	assert_int_equal(inet_pton(AF_INET6, "3fff::7", v6), 1);
	assert_int_equal(inet_pton(AF_INET6, "3fff::8", v6b), 1);
	assert_true(wnet_addr_is(sa("192.0.1.7", 1), AF_INET, v4));
	assert_false(wnet_addr_is(sa("192.0.1.7", 1), AF_INET, v4b));
	assert_false(wnet_addr_is(sa("192.0.1.7", 1), AF_INET6, v6));
	assert_true(wnet_addr_is(sa("3fff::7", 1), AF_INET6, v6));
	assert_false(wnet_addr_is(sa("3fff::7", 1), AF_INET6, v6b));
	assert_false(wnet_addr_is(sa("3fff::7", 1), AF_INET, v4));
	/* an IPv4-mapped IPv6 address reaches its IPv4 address: it is that */
	assert_true(wnet_addr_is(sa("::ffff:192.0.1.7", 1), AF_INET, v4));
	assert_false(wnet_addr_is(sa("::ffff:192.0.1.8", 1), AF_INET, v4));
	assert_false(wnet_addr_is(sa("::192.0.1.7", 1), AF_INET, v4));
	assert_false(wnet_addr_is(sa("64:ff9b::192.0.1.7", 1), AF_INET, v4));
	assert_false(wnet_addr_is(NULL, AF_INET, v4));
	assert_false(wnet_addr_is(sa("192.0.1.7", 1), AF_INET, NULL));
	struct sockaddr un = { .sa_family = AF_UNIX };
	assert_false(wnet_addr_is(&un, AF_INET, v4));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_parse_null_error),
		cmocka_unit_test(test_allow_name),
		cmocka_unit_test(test_special),
		cmocka_unit_test(test_allow_addr),
		cmocka_unit_test(test_allow_addr_host_own),
		cmocka_unit_test(test_addr_is),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
