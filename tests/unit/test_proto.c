/* The broker <-> supervisor codec: every message round-trips, and every
 * malformed frame is refused with a message that names what is wrong.
 * The decoder is the first thing a compromised broker reaches. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "warden/buf.h"
#include "warden/proto.h"

static void decode_ok(const struct wbuf *b, struct wmsg *m)
{
	struct werr err = { 0 };
	long n = wproto_frame_len(b->d, b->len, &err);

	assert_int_equal(n, (long)b->len);
	if (wproto_decode(b->d, b->len, m, &err) < 0)
		fail_msg("decode: %s", err.msg);
}

static void decode_bad(const uint8_t *p, size_t len, const char *phrase)
{
	struct werr err = { 0 };
	struct wmsg m;

	memset(&m, 0x5a, sizeof(m));
	assert_int_equal(wproto_decode(p, len, &m, &err), -1);
	assert_null(m.profile);          /* outputs cleared on failure */
	assert_int_equal(m.type, 0);
	if (!strstr(err.msg, phrase))
		fail_msg("want '%s' in: %s", phrase, err.msg);
}

static void test_round_trip(void **state)
{
	struct wbuf b;
	struct wmsg m;
	struct werr err = { 0 };
	char *profiles[] = { "workspace", "strict" };

	wbuf_init(&b, WPROTO_FRAME_MAX);
	assert_int_equal(wproto_hello(&b, WPROTO_VERSION, &err), 0);
	decode_ok(&b, &m);
	assert_int_equal(m.type, WM_HELLO);
	assert_int_equal(m.version, WPROTO_VERSION);
	wmsg_free(&m);

	wbuf_reset(&b);
	assert_int_equal(wproto_open(&b, 7, "strict", "/work/x", WOPEN_ONESHOT, &err), 0);
	decode_ok(&b, &m);
	assert_int_equal(m.req, 7);
	assert_string_equal(m.profile, "strict");
	assert_string_equal(m.workspace, "/work/x");
	assert_int_equal(m.flags, WOPEN_ONESHOT);
	wmsg_free(&m);

	wbuf_reset(&b);
	assert_int_equal(wproto_run_approved(&b, 3, 9, "python", "print(1)\n", 9, WAPPROVE_EDITED, &err), 0);
	decode_ok(&b, &m);
	assert_int_equal(m.type, WM_RUN);
	assert_int_equal(m.session, 3);
	assert_int_equal(m.block, 9);
	assert_string_equal(m.language, "python");
	assert_int_equal(m.data_len, 9);
	assert_memory_equal(m.data, "print(1)\n", 9);
	assert_int_equal(m.flags, WAPPROVE_EDITED);
	wmsg_free(&m);

	wbuf_reset(&b);
	assert_int_equal(wproto_welcome(&b, 1, "workspace", "/w", profiles, 2, &err), 0);
	decode_ok(&b, &m);
	assert_int_equal(m.n_list, 2);
	assert_string_equal(m.list[1], "strict");
	assert_string_equal(m.workspace, "/w");
	wmsg_free(&m);

	wbuf_reset(&b);
	assert_int_equal(wproto_opened(&b, 4, 5, "abc123", "{\"p\":1}", "[]", "{\"cpus\":\"none\"}",
	                                 "{\"landlock_abi\":7}", &err), 0);
	decode_ok(&b, &m);
	assert_string_equal(m.audit_id, "abc123");
	assert_string_equal(m.json, "{\"p\":1}");
	assert_string_equal(m.langs, "[]");
	assert_string_equal(m.limits, "{\"cpus\":\"none\"}");
	assert_string_equal(m.jail, "{\"landlock_abi\":7}");
	wmsg_free(&m);

	/* output may hold any byte, NUL included */
	wbuf_reset(&b);
	assert_int_equal(wproto_output(&b, 1, 2, WSTREAM_STDERR, "a\0b", 3, &err), 0);
	decode_ok(&b, &m);
	assert_int_equal(m.stream, WSTREAM_STDERR);
	assert_int_equal(m.data_len, 3);
	assert_memory_equal(m.data, "a\0b", 3);
	wmsg_free(&m);

	wbuf_reset(&b);
	assert_int_equal(wproto_audit(&b, 1, 2, "mount", 16, &err), 0);
	decode_ok(&b, &m);
	assert_string_equal(m.syscall, "mount");
	assert_int_equal(m.count, 16);
	wmsg_free(&m);

	wbuf_reset(&b);
	assert_int_equal(wproto_error(&b, 8, 1, 2, "no open session 1", &err), 0);
	decode_ok(&b, &m);
	assert_string_equal(m.text, "no open session 1");
	wmsg_free(&m);

	/* rich output: an image is bytes, NUL included */
	wbuf_reset(&b);
	assert_int_equal(wproto_display(&b, 1, 2, "png", "\x89PNG\0", 5, &err), 0);
	decode_ok(&b, &m);
	assert_int_equal(m.type, WM_DISPLAY);
	assert_int_equal(m.block, 2);
	assert_string_equal(m.format, "png");
	assert_int_equal(m.data_len, 5);
	assert_memory_equal(m.data, "\x89PNG\0", 5);
	wmsg_free(&m);

	wbuf_reset(&b);
	assert_int_equal(wproto_line(&b, 1, 2, 3, &err), 0);
	decode_ok(&b, &m);
	assert_int_equal(m.type, WM_LINE);
	assert_int_equal(m.line, 3);
	wmsg_free(&m);
	wbuf_free(&b);
}

/* DISPLAY's format is a closed set on both sides; its data has its own bound. */
static void test_display_bounds(void **state)
{
	static const uint8_t bad_fmt[] = { 0, 0, 0, 23, WM_DISPLAY, 0, 0, 0, 1, 0, 0, 0, 2,
	                                   0, 0, 0, 3, 's', 'v', 'g', 0, 0, 0, 3, '<', 'a', '>' };
	struct wbuf b;
	struct werr err = { 0 };
	uint8_t *big = calloc(1, WPROTO_DISPLAY_MAX + 1);

	(void)state;
	wbuf_init(&b, WPROTO_FRAME_MAX);
	assert_int_equal(wproto_display(&b, 1, 2, "svg", "<a>", 3, &err), -1);
	assert_int_equal(wproto_display(&b, 1, 2, NULL, "<a>", 3, &err), -1);
	assert_int_equal(b.len, 0);
	assert_int_equal(wproto_display(&b, 1, 2, "png", big, WPROTO_DISPLAY_MAX + 1, &err), -1);
	assert_int_equal(b.len, 0);
	assert_int_equal(wproto_display(&b, 1, 2, "png", big, WPROTO_DISPLAY_MAX, &err), 0);
	assert_true(wdisplay_format_ok("jpeg") && wdisplay_format_ok("html"));
	assert_false(wdisplay_format_ok("PNG") || wdisplay_format_ok(""));
	decode_bad(bad_fmt, sizeof(bad_fmt), "field 'F'");
	wbuf_free(&b);
	free(big);
}

/* Issue 23's frames: WIDEN and its answer, REVOKE, SAVE, REFUSALS; a kind
 * byte out of its range is malformed on both sides. */
static void test_widen_frames(void **state)
{
	static const uint8_t bad_kind[] = { 0, 0, 0, 22, WM_WIDEN, 0, 0, 0, 1, 0, 0, 0, 2, 3,
	                                    0, 0, 0, 4, '/', 's', 'r', 'v', 0, 0, 0, 0 };
	struct wbuf b;
	struct werr err = { 0 };
	struct wmsg m;

	(void)state;
	wbuf_init(&b, WPROTO_FRAME_MAX);
	assert_int_equal(wproto_widen(&b, 1, 2, WK_WRITE, "/srv/out", WWIDEN_EXPLICIT | WVIA_CHAT,
	                              &err), 0);
	decode_ok(&b, &m);
	assert_int_equal(m.type, WM_WIDEN);
	assert_int_equal(m.req, 1);
	assert_int_equal(m.session, 2);
	assert_int_equal(m.kind, WK_WRITE);
	assert_string_equal(m.value, "/srv/out");
	assert_int_equal(m.flags, WWIDEN_EXPLICIT);
	wmsg_free(&m);

	wbuf_reset(&b);
	assert_int_equal(wproto_widened(&b, 1, 2, WW_DECLINED, WWIDENED_ALWAYS, "no", &err), 0);
	decode_ok(&b, &m);
	assert_int_equal(m.kind, WW_DECLINED);
	assert_int_equal(m.flags, WWIDENED_ALWAYS);
	assert_string_equal(m.text, "no");
	wmsg_free(&m);

	wbuf_reset(&b);
	assert_int_equal(wproto_revoke(&b, 3, 2, &err), 0);
	decode_ok(&b, &m);
	assert_int_equal(m.type, WM_REVOKE);
	wmsg_free(&m);

	wbuf_reset(&b);
	assert_int_equal(wproto_save(&b, 4, 2, "analysis", &err), 0);
	decode_ok(&b, &m);
	assert_string_equal(m.profile, "analysis");
	wmsg_free(&m);

	wbuf_reset(&b);
	assert_int_equal(wproto_refusals(&b, 2, 9, "{\"refusals\":[]}", &err), 0);
	decode_ok(&b, &m);
	assert_int_equal(m.type, WM_REFUSALS);
	assert_int_equal(m.block, 9);
	assert_string_equal(m.text, "{\"refusals\":[]}");
	wmsg_free(&m);

	/* kinds beyond their enum: refused by the encoder, malformed to the decoder */
	wbuf_reset(&b);
	assert_int_equal(wproto_widen(&b, 1, 2, WK__N, "/srv", 0, &err), -1);
	assert_int_equal(wproto_widened(&b, 1, 2, WW__N, 0, "", &err), -1);
	assert_int_equal(b.len, 0);
	decode_bad(bad_kind, sizeof(bad_kind), "field 'k'");
	assert_string_equal(wwiden_kind_name(WK_HOST), "host");
	assert_string_equal(wwiden_via_name(WVIA_MCP), "mcp elicitation");
	wbuf_free(&b);
}

static void test_result_round_trip(void **state)
{
	struct wdenied_count d[2] = { { "mount", 3 }, { "ptrace", 1 } };
	struct wresult r = { .session = 1, .block = 2, .exit_code = -1, .signal = 9,
	                     .reason = WB_TIMEOUT, .flags = WRES_STATE_LOST | WRES_TRUNCATED,
	                     .wall_ms = 5000, .cpu_ms = 4999, .peak_memory = 1ull << 33,
	                     .output_bytes = 123456789, .denied = d, .n_denied = 2,
	                     .message = "stopped" };
	struct werr err = { 0 };
	struct wbuf b;
	struct wmsg m;

	wbuf_init(&b, WPROTO_FRAME_MAX);
	assert_int_equal(wproto_result(&b, &r, &err), 0);
	decode_ok(&b, &m);
	assert_int_equal(m.res.exit_code, -1);
	assert_int_equal(m.res.signal, 9);
	assert_int_equal(m.res.reason, WB_TIMEOUT);
	assert_int_equal(m.res.flags, WRES_STATE_LOST | WRES_TRUNCATED);
	assert_int_equal(m.res.peak_memory, 1ull << 33);
	assert_int_equal(m.res.output_bytes, 123456789);
	assert_int_equal(m.res.n_denied, 2);
	assert_string_equal(m.res.denied[1].name, "ptrace");
	assert_int_equal(m.res.denied[0].count, 3);
	assert_string_equal(m.res.message, "stopped");
	assert_string_equal(wblock_reason_name(m.res.reason), "timeout");
	wmsg_free(&m);
	wbuf_free(&b);
}

/* An encoder that refuses leaves the buffer as it was. */
static void test_encoder_bounds(void **state)
{
	struct werr err = { 0 };
	struct wbuf b;
	char name[WPROTO_NAME_MAX + 2];
	char *big = calloc(1, WPROTO_CODE_MAX + 2);

	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	wbuf_init(&b, WPROTO_FRAME_MAX);
	assert_int_equal(wproto_hello(&b, 1, &err), 0);
	assert_int_equal(b.len, 9);
	assert_int_equal(wproto_open(&b, 1, name, "/w", 0, &err), -1);
	assert_non_null(strstr(err.msg, "OPEN"));
	assert_int_equal(b.len, 9);
	memset(big, 'x', WPROTO_CODE_MAX + 1);
	assert_int_equal(wproto_run(&b, 1, 1, "python", big, WPROTO_CODE_MAX + 1, &err), -1);
	assert_int_equal(b.len, 9);
	assert_int_equal(wproto_output(&b, 1, 1, 1, big, WPROTO_OUTPUT_CHUNK + 1, &err), -1);
	assert_int_equal(b.len, 9);
	free(big);
	wbuf_free(&b);
}

static void test_frame_len(void **state)
{
	struct werr err = { 0 };
	const uint8_t short3[3] = { 0, 0, 0 };
	const uint8_t zero[5] = { 0, 0, 0, 0, 1 };
	const uint8_t huge[5] = { 0xff, 0xff, 0xff, 0xff, 1 };
	const uint8_t over[5] = { 0x00, 0x40, 0x00, 0x00, 1 };   /* 4 MiB + 4 total */

	assert_int_equal(wproto_frame_len(short3, 3, &err), 0);
	assert_int_equal(wproto_frame_len(zero, 5, &err), -1);
	assert_non_null(strstr(err.msg, "out of range"));
	assert_int_equal(wproto_frame_len(huge, 5, &err), -1);
	assert_int_equal(wproto_frame_len(over, 5, &err), -1);
}

/* One malformed frame per way a frame can be malformed. */
static void test_malformed(void **state)
{
	struct werr err = { 0 };
	struct wbuf b;
	uint8_t f[64];

	/* unknown type */
	const uint8_t unknown[] = { 0, 0, 0, 1, 200 };
	decode_bad(unknown, sizeof(unknown), "unknown message type 200");
	/* header length disagrees with the buffer */
	const uint8_t liar[] = { 0, 0, 0, 9, WM_HELLO, 0, 0, 0, 1 };
	decode_bad(liar, sizeof(liar), "header");
	/* truncated field: HELLO with 2 of 4 bytes */
	const uint8_t trunc[] = { 0, 0, 0, 3, WM_HELLO, 0, 1 };
	decode_bad(trunc, sizeof(trunc), "truncated");
	/* trailing bytes */
	const uint8_t trail[] = { 0, 0, 0, 6, WM_HELLO, 0, 0, 0, 1, 7 };
	decode_bad(trail, sizeof(trail), "trailing");
	/* a NUL inside a string (OPEN's profile) */
	wbuf_init(&b, 1024);
	assert_int_equal(wproto_open(&b, 1, "work", "/w", 0, &err), 0);
	memcpy(f, b.d, b.len);
	f[4 + 1 + 4 + 4 + 1] = '\0';    /* len | type | req | strlen | "w\0rk" */
	decode_bad(f, b.len, "NUL");
	/* a string length that points past the frame */
	memcpy(f, b.d, b.len);
	f[4 + 1 + 4 + 3] = 200;
	decode_bad(f, b.len, "field");
	/* a name over its bound, written by hand: profile of 65 bytes */
	wbuf_reset(&b);
	wbuf_put_u32(&b, 0);
	wbuf_put_u8(&b, WM_OPEN);
	wbuf_put_u32(&b, 1);
	{
		char n[WPROTO_NAME_MAX + 1];
		memset(n, 'p', sizeof(n));
		wbuf_put_bytes(&b, n, sizeof(n));
	}
	wbuf_put_str(&b, "/w");
	wbuf_put_u32(&b, 0);
	wbuf_poke_u32(&b, 0, (uint32_t)b.len - 4);
	decode_bad(b.d, b.len, "OPEN frame");
	/* a WELCOME list longer than allowed */
	wbuf_reset(&b);
	wbuf_put_u32(&b, 0);
	wbuf_put_u8(&b, WM_WELCOME);
	wbuf_put_u32(&b, 1);
	wbuf_put_str(&b, "p");
	wbuf_put_str(&b, "/w");
	wbuf_put_u32(&b, 1000000);
	wbuf_poke_u32(&b, 0, (uint32_t)b.len - 4);
	decode_bad(b.d, b.len, "WELCOME");
	/* a RESULT whose reason is out of range */
	{
		struct wresult r = { .session = 1, .block = 1, .reason = WB_EXITED, .message = "" };
		wbuf_reset(&b);
		assert_int_equal(wproto_result(&b, &r, &err), 0);
		b.d[4 + 1 + 16] = 99;   /* len | type | session block exit signal | reason */
		decode_bad(b.d, b.len, "RESULT");
	}
	wbuf_free(&b);
}

/* Regression (found by make fuzz): a RESULT cut off after a denied
 * syscall's name leaked the name.  Under make asan, LeakSanitizer fails
 * this test when the name is not freed. */
static void test_result_cut_after_name(void **state)
{
	struct wbuf b;

	wbuf_init(&b, 1024);
	wbuf_put_u32(&b, 0);
	wbuf_put_u8(&b, WM_RESULT);
	for (int i = 0; i < 4; i++)
		wbuf_put_u32(&b, 0);          /* session block exit signal */
	wbuf_put_u8(&b, 0);               /* reason */
	wbuf_put_u8(&b, 0);               /* flags */
	for (int i = 0; i < 4; i++)
		wbuf_put_u64(&b, 0);          /* wall cpu peak output */
	wbuf_put_u32(&b, 1);              /* one denied entry */
	wbuf_put_str(&b, "mount");        /* its name, then nothing */
	wbuf_poke_u32(&b, 0, (uint32_t)b.len - 4);
	decode_bad(b.d, b.len, "RESULT");
	wbuf_free(&b);
}

/* Frames that arrive a byte at a time are put together; two frames in one
 * read are both delivered; the data pointer stays valid until the next. */
static void test_conn_split(void **state)
{
	struct werr err = { 0 };
	struct wbuf b;
	struct wconn c;
	struct wmsg m;
	int sp[2];
	int got = 0;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	wbuf_init(&b, 1024);
	assert_int_equal(wproto_run(&b, 1, 1, "shell", "echo hi", 7, &err), 0);
	assert_int_equal(wproto_interrupt(&b, 1, &err), 0);
	fcntl(sp[0], F_SETFL, O_NONBLOCK);
	wconn_init(&c, sp[0]);
	for (size_t i = 0; i < b.len; i++) {
		int rc;
		assert_int_equal(write(sp[1], b.d + i, 1), 1);
		assert_int_equal(wconn_fill(&c, &err), 0);
		while ((rc = wconn_next(&c, &m, &err)) == 1) {
			if (got == 0) {
				assert_int_equal(m.type, WM_RUN);
				assert_memory_equal(m.data, "echo hi", 7);
			} else {
				assert_int_equal(m.type, WM_INTERRUPT);
			}
			got++;
			wmsg_free(&m);
		}
		assert_int_equal(rc, 0);
	}
	assert_int_equal(got, 2);
	close(sp[1]);
	assert_int_equal(wconn_fill(&c, &err), -1);
	assert_true(c.eof);
	wconn_free(&c);
	wbuf_free(&b);
}

/* A peer that announces a frame over the maximum is refused before any of
 * it is buffered. */
static void test_conn_oversize(void **state)
{
	struct werr err = { 0 };
	struct wconn c;
	struct wmsg m;
	const uint8_t hdr[5] = { 0x7f, 0, 0, 0, WM_RUN };
	int sp[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	wconn_init(&c, sp[0]);
	assert_int_equal(write(sp[1], hdr, sizeof(hdr)), 5);
	assert_int_equal(wconn_fill(&c, &err), 0);
	assert_int_equal(wconn_next(&c, &m, &err), -1);
	assert_non_null(strstr(err.msg, "out of range"));
	close(sp[1]);
	wconn_free(&c);
}

static void test_reader_clears(void **state)
{
	const uint8_t two[2] = { 1, 2 };
	struct wrd r;
	uint32_t v = 77;
	char *s = (char *)1;

	wrd_init(&r, two, 2);
	assert_int_equal(wrd_u32(&r, &v), -1);
	assert_int_equal(v, 0);
	assert_int_equal(r.off, 0);
	assert_int_equal(wrd_str(&r, &s, 10), -1);
	assert_null(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_display_bounds),
		cmocka_unit_test(test_result_round_trip),
		cmocka_unit_test(test_encoder_bounds),
		cmocka_unit_test(test_frame_len),
		cmocka_unit_test(test_widen_frames),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_result_cut_after_name),
		cmocka_unit_test(test_conn_split),
		cmocka_unit_test(test_conn_oversize),
		cmocka_unit_test(test_reader_clears),
	};

	return cmocka_run_group_tests_name("proto", tests, NULL, NULL);
}
