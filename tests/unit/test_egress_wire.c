/* The supervisor <-> egress wire (common/egress_wire.c): every message
 * round-trips, and every malformed frame is refused, one test per way of
 * being malformed, with a message naming the frame and the field.  What
 * the egress process sends is the supervisor's hostile input (it parses
 * jailed code's requests): this decoder is the first thing a compromised
 * egress reaches. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "warden/buf.h"
#include "warden/egress.h"

static void decode_ok(const struct wbuf *b, bool from_egress, struct wegress_msg *m)
{
	struct werr err = { 0 };

	if (wegress_decode(b->d, b->len, from_egress, m, &err) < 0)
		fail_msg("decode: %s", err.msg);
}

static void decode_bad(const uint8_t *p, size_t len, bool from_egress, const char *phrase)
{
	struct werr err = { 0 };
	struct wegress_msg m;

	memset(&m, 0x5a, sizeof(m));
	assert_int_equal(wegress_decode(p, len, from_egress, &m, &err), -1);
	assert_int_equal(m.type, 0);      /* outputs cleared on failure */
	assert_null(m.name);
	assert_null(m.allow);
	assert_null(m.text);
	if (!strstr(err.msg, phrase))
		fail_msg("want '%s' in: %s", phrase, err.msg);
}

static const struct wegress_rec good_rec = {
	.method = "CONNECT", .host = "pypi.org", .port = 443, .address = "151.101.0.223",
	.allowed = true, .rule = 1, .status = 200, .reason = "",
	.bytes_up = 517, .bytes_down = 4096, .duration_ms = 12,
};

/* An AUDIT frame written field by field, so that each field can be made
 * wrong on its own. */
struct raw_audit {
	uint8_t type;
	uint32_t jail;
	const char *method, *host;
	uint32_t port;
	const char *address;
	uint8_t allowed;
	uint32_t rule, status;
	const char *reason;
	size_t reason_len;   /* 0: strlen */
};

static void put_raw_audit(struct wbuf *b, const struct raw_audit *a)
{
	wbuf_reset(b);
	assert_int_equal(wbuf_put_u8(b, a->type), 0);
	assert_int_equal(wbuf_put_u32(b, a->jail), 0);
	assert_int_equal(wbuf_put_str(b, a->method), 0);
	assert_int_equal(wbuf_put_str(b, a->host), 0);
	assert_int_equal(wbuf_put_u32(b, a->port), 0);
	assert_int_equal(wbuf_put_str(b, a->address), 0);
	assert_int_equal(wbuf_put_u8(b, a->allowed), 0);
	assert_int_equal(wbuf_put_u32(b, a->rule), 0);
	assert_int_equal(wbuf_put_u32(b, a->status), 0);
	assert_int_equal(wbuf_put_bytes(b, a->reason,
	                                a->reason_len ? a->reason_len : strlen(a->reason)), 0);
	assert_int_equal(wbuf_put_u64(b, 1), 0);
	assert_int_equal(wbuf_put_u64(b, 2), 0);
	assert_int_equal(wbuf_put_u64(b, 3), 0);
}

static const struct raw_audit raw_ok = {
	.type = WE_AUDIT, .jail = 7, .method = "GET", .host = "example.org", .port = 80,
	.address = "93.184.216.34", .allowed = 1, .rule = 0, .status = 200, .reason = "",
};

static void audit_bad(struct raw_audit a, const char *phrase)
{
	struct wbuf b;

	wbuf_init(&b, WEGRESS_FRAME_MAX);
	put_raw_audit(&b, &a);
	decode_bad(b.d, b.len, true, phrase);
	wbuf_free(&b);
}

static void test_round_trip(void **state)
{
	struct wbuf b;
	struct wegress_msg m;
	struct werr err = { 0 };
	struct wegress_conf c = { .fd_reserve = 64, .audit_max = 3, .head_ms = 100,
	                          .dial_ms = 200, .idle_ms = 300 };
	char *allow[] = { "pypi.org:443", "*.example.org", "[::1]:8080" };

	wbuf_init(&b, WEGRESS_FRAME_MAX);
	assert_int_equal(wegress_config(&b, &c, &err), 0);
	decode_ok(&b, false, &m);
	assert_int_equal(m.type, WE_CONFIG);
	assert_int_equal(m.version, WEGRESS_VERSION);
	assert_memory_equal(&m.conf, &c, sizeof(c));
	wegress_msg_free(&m);

	wbuf_reset(&b);
	assert_int_equal(wegress_add(&b, 9, "network", "built-in:network.json", allow, 3, &err), 0);
	decode_ok(&b, false, &m);
	assert_int_equal(m.type, WE_ADD);
	assert_int_equal(m.jail, 9);
	assert_string_equal(m.name, "network");
	assert_string_equal(m.source, "built-in:network.json");
	assert_int_equal(m.n_allow, 3);
	assert_string_equal(m.allow[2], "[::1]:8080");
	wegress_msg_free(&m);

	wbuf_reset(&b);
	assert_int_equal(wegress_add(&b, 10, "none", "x", NULL, 0, &err), 0);
	decode_ok(&b, false, &m);
	assert_int_equal(m.n_allow, 0);
	wegress_msg_free(&m);

	wbuf_reset(&b);
	assert_int_equal(wegress_remove(&b, 9, &err), 0);
	decode_ok(&b, false, &m);
	assert_int_equal(m.type, WE_REMOVE);
	assert_int_equal(m.jail, 9);
	wegress_msg_free(&m);

	wbuf_reset(&b);
	assert_int_equal(wegress_ready(&b, &err), 0);
	decode_ok(&b, true, &m);
	assert_int_equal(m.type, WE_READY);
	assert_int_equal(m.version, WEGRESS_VERSION);
	wegress_msg_free(&m);

	wbuf_reset(&b);
	assert_int_equal(wegress_audit(&b, 9, &good_rec, &err), 0);
	decode_ok(&b, true, &m);
	assert_int_equal(m.type, WE_AUDIT);
	assert_int_equal(m.jail, 9);
	assert_memory_equal(&m.rec, &good_rec, sizeof(good_rec));
	wegress_msg_free(&m);

	/* the 503 at the cap: no request line, no host, no rule */
	{
		struct wegress_rec r = { .method = "?", .rule = -1, .status = 503,
		                         .reason = "too many connections at once" };
		wbuf_reset(&b);
		assert_int_equal(wegress_audit(&b, 1, &r, &err), 0);
		decode_ok(&b, true, &m);
		assert_int_equal(m.rec.rule, -1);
		assert_string_equal(m.rec.host, "");
		assert_string_equal(m.rec.address, "");
		wegress_msg_free(&m);
	}

	wbuf_reset(&b);
	assert_int_equal(wegress_removed(&b, 9, 4, &err), 0);
	decode_ok(&b, true, &m);
	assert_int_equal(m.type, WE_REMOVED);
	assert_int_equal(m.dropped, 4);
	wegress_msg_free(&m);

	wbuf_reset(&b);
	assert_int_equal(wegress_log(&b, "proxy: accept: Too many open files", &err), 0);
	decode_ok(&b, true, &m);
	assert_string_equal(m.text, "proxy: accept: Too many open files");
	wegress_msg_free(&m);
	wbuf_free(&b);
}

/* The encoders refuse what the decoder would: out stays as it was. */
static void test_encoder_refuses(void **state)
{
	struct wbuf b;
	struct werr err = { 0 };
	struct wegress_rec r = good_rec;
	char long_entry[WEGRESS_ENTRY_MAX + 2];
	char *allow[] = { long_entry };

	memset(long_entry, 'a', sizeof(long_entry) - 1);
	long_entry[sizeof(long_entry) - 1] = '\0';
	wbuf_init(&b, WEGRESS_FRAME_MAX);
	assert_int_equal(wbuf_put_u8(&b, 0xee), 0);
	r.status = 201;
	assert_int_equal(wegress_audit(&b, 1, &r, &err), -1);
	r = good_rec;
	strcpy(r.reason, "an \x1b]0;title\x07 escape");
	assert_int_equal(wegress_audit(&b, 1, &r, &err), -1);
	assert_int_equal(wegress_log(&b, "a\nsecond line", &err), -1);
	assert_int_equal(wegress_add(&b, 1, "p", "s", allow, 1, &err), -1);
	assert_int_equal(b.len, 1);
	assert_non_null(strstr(err.msg, "ADD"));
	wbuf_free(&b);
}

static void test_frame_shape(void **state)
{
	uint8_t big[WEGRESS_FRAME_MAX + 1] = { WE_LOG };
	const uint8_t unknown[] = { 99, 0, 0, 0, 0 };
	const uint8_t ready_trailing[] = { WE_READY, 0, 0, 0, 1, 0 };
	const uint8_t ready_short[] = { WE_READY, 0, 0, 1 };
	struct wbuf b;
	struct werr err = { 0 };

	decode_bad(NULL, 0, true, "an empty egress frame");
	decode_bad(unknown, sizeof(unknown), true, "unknown type 99");
	decode_bad(big, sizeof(big), true, "over the limit");
	decode_bad(ready_trailing, sizeof(ready_trailing), true, "READY frame: trailing bytes");
	decode_bad(ready_short, sizeof(ready_short), true, "READY frame: version");
	/* each direction's frames only from its side */
	wbuf_init(&b, WEGRESS_FRAME_MAX);
	assert_int_equal(wegress_audit(&b, 1, &good_rec, &err), 0);
	decode_bad(b.d, b.len, false, "AUDIT frame sent by the supervisor");
	wbuf_reset(&b);
	assert_int_equal(wegress_remove(&b, 1, &err), 0);
	decode_bad(b.d, b.len, true, "REMOVE frame sent by the egress process");
	wbuf_reset(&b);
	assert_int_equal(wegress_ready(&b, &err), 0);
	decode_bad(b.d, b.len, false, "READY frame sent by the supervisor");
	wbuf_free(&b);
}

/* Every strict prefix of a good AUDIT is refused (a field cut short). */
static void test_audit_truncated(void **state)
{
	struct wbuf b;
	struct werr err = { 0 };

	wbuf_init(&b, WEGRESS_FRAME_MAX);
	assert_int_equal(wegress_audit(&b, 3, &good_rec, &err), 0);
	for (size_t n = 1; n < b.len; n++)
		decode_bad(b.d, n, true, "a malformed egress AUDIT frame");
	wbuf_free(&b);
}

static void test_audit_method(void **state)
{
	struct raw_audit a = raw_ok;

	a.method = "get";
	audit_bad(a, "AUDIT frame: method");
	a.method = "";
	audit_bad(a, "AUDIT frame: method");
	a.method = "GETGETGETGETGETGE";   /* 17 letters */
	audit_bad(a, "AUDIT frame: method");
	a.method = "G T";
	audit_bad(a, "AUDIT frame: method");
}

static void test_audit_host(void **state)
{
	struct raw_audit a = raw_ok;
	char longhost[300];

	a.host = "Example.org";
	audit_bad(a, "AUDIT frame: host");
	a.host = "a b";
	audit_bad(a, "AUDIT frame: host");
	a.host = "evil\x1b[2J";
	audit_bad(a, "AUDIT frame: host");
	memset(longhost, 'a', 254);
	longhost[254] = '\0';
	a.host = longhost;
	audit_bad(a, "AUDIT frame: host");
}

static void test_audit_nul(void **state)
{
	struct raw_audit a = raw_ok;

	a.reason = "cut\0here";
	a.reason_len = 8;
	audit_bad(a, "AUDIT frame: reason");
}

static void test_audit_port(void **state)
{
	struct raw_audit a = raw_ok;

	a.port = 65536;
	audit_bad(a, "AUDIT frame: port");
}

static void test_audit_address(void **state)
{
	struct raw_audit a = raw_ok;

	a.address = "not-an-address";
	audit_bad(a, "AUDIT frame: address");
	a.address = "127.1";
	audit_bad(a, "AUDIT frame: address");
}

static void test_audit_allowed(void **state)
{
	struct raw_audit a = raw_ok;

	a.allowed = 2;
	audit_bad(a, "AUDIT frame: allowed");
}

static void test_audit_rule(void **state)
{
	struct raw_audit a = raw_ok;

	a.rule = WEGRESS_ENTRIES_MAX;
	audit_bad(a, "AUDIT frame: rule");
	a.rule = 0xfffffffe;
	audit_bad(a, "AUDIT frame: rule");
}

static void test_audit_status(void **state)
{
	struct raw_audit a = raw_ok;

	a.status = 201;
	audit_bad(a, "AUDIT frame: status");
	a.status = 0;
	audit_bad(a, "AUDIT frame: status");
	a.status = 100000;
	audit_bad(a, "AUDIT frame: status");
}

static void test_audit_reason(void **state)
{
	struct raw_audit a = raw_ok;
	char longr[WEGRESS_REASON_MAX + 2];

	a.reason = "a \x1b]52;c;Zm9v\x07 clipboard write";
	audit_bad(a, "AUDIT frame: reason");
	a.reason = "two\nlines";
	audit_bad(a, "AUDIT frame: reason");
	a.reason = "caf\xc3\xa9";
	audit_bad(a, "AUDIT frame: reason");
	memset(longr, 'x', sizeof(longr) - 1);
	longr[sizeof(longr) - 1] = '\0';
	a.reason = longr;
	audit_bad(a, "AUDIT frame: reason");
}

static void test_log_text(void **state)
{
	struct wbuf b;
	char longt[WEGRESS_LOG_MAX + 2];

	wbuf_init(&b, WEGRESS_FRAME_MAX);
	assert_int_equal(wbuf_put_u8(&b, WE_LOG), 0);
	assert_int_equal(wbuf_put_str(&b, "\x1b[31mred"), 0);
	decode_bad(b.d, b.len, true, "LOG frame: text");
	memset(longt, 'x', sizeof(longt) - 1);
	longt[sizeof(longt) - 1] = '\0';
	wbuf_reset(&b);
	assert_int_equal(wbuf_put_u8(&b, WE_LOG), 0);
	assert_int_equal(wbuf_put_str(&b, longt), 0);
	decode_bad(b.d, b.len, true, "LOG frame: text");
	wbuf_free(&b);
}

static void test_removed_short(void **state)
{
	const uint8_t f[] = { WE_REMOVED, 0, 0, 0, 1, 0, 0, 0, 0 };

	decode_bad(f, sizeof(f), true, "REMOVED frame: dropped");
}

/* An ADD whose count of entries is more than its bytes can hold: refused
 * before anything is allocated for them. */
static void test_add_count_lies(void **state)
{
	struct wbuf b;

	wbuf_init(&b, WEGRESS_FRAME_MAX);
	assert_int_equal(wbuf_put_u8(&b, WE_ADD), 0);
	assert_int_equal(wbuf_put_u32(&b, 1), 0);
	assert_int_equal(wbuf_put_str(&b, "p"), 0);
	assert_int_equal(wbuf_put_str(&b, "s"), 0);
	assert_int_equal(wbuf_put_u32(&b, 1000), 0);
	assert_int_equal(wbuf_put_str(&b, "a.org"), 0);
	decode_bad(b.d, b.len, false, "ADD frame: number of allow entries");
	wbuf_reset(&b);
	assert_int_equal(wbuf_put_u8(&b, WE_ADD), 0);
	assert_int_equal(wbuf_put_u32(&b, 1), 0);
	assert_int_equal(wbuf_put_str(&b, "p"), 0);
	assert_int_equal(wbuf_put_str(&b, "s"), 0);
	assert_int_equal(wbuf_put_u32(&b, 2), 0);
	assert_int_equal(wbuf_put_str(&b, "a.org"), 0);
	assert_int_equal(wbuf_put_u32(&b, 0xffffffff), 0);   /* the second entry's length */
	decode_bad(b.d, b.len, false, "ADD frame: allow entry");
	wbuf_free(&b);
}

static void test_config_bounds(void **state)
{
	struct wbuf b;
	struct werr err = { 0 };
	struct wegress_conf c = { .idle_ms = 86400001 };

	wbuf_init(&b, WEGRESS_FRAME_MAX);
	assert_int_equal(wegress_config(&b, &c, &err), -1);
	assert_int_equal(wbuf_put_u8(&b, WE_CONFIG), 0);
	assert_int_equal(wbuf_put_u32(&b, WEGRESS_VERSION), 0);
	assert_int_equal(wbuf_put_u32(&b, 64), 0);
	assert_int_equal(wbuf_put_u32(&b, 0), 0);
	assert_int_equal(wbuf_put_u32(&b, 0), 0);
	assert_int_equal(wbuf_put_u32(&b, 0), 0);
	assert_int_equal(wbuf_put_u32(&b, 86400001), 0);
	decode_bad(b.d, b.len, false, "CONFIG frame: deadline");
	wbuf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_encoder_refuses),
		cmocka_unit_test(test_frame_shape),
		cmocka_unit_test(test_audit_truncated),
		cmocka_unit_test(test_audit_method),
		cmocka_unit_test(test_audit_host),
		cmocka_unit_test(test_audit_nul),
		cmocka_unit_test(test_audit_port),
		cmocka_unit_test(test_audit_address),
		cmocka_unit_test(test_audit_allowed),
		cmocka_unit_test(test_audit_rule),
		cmocka_unit_test(test_audit_status),
		cmocka_unit_test(test_audit_reason),
		cmocka_unit_test(test_log_text),
		cmocka_unit_test(test_removed_short),
		cmocka_unit_test(test_add_count_lies),
		cmocka_unit_test(test_config_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
