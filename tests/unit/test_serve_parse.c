/* warden serve --stdio's request parser (broker/api/api_stdio_parse.c) and the
 * UTF-8 repair of output chunks (broker/core/utf8.c): one test per kind of
 * malformed line, and the chunk boundaries a jail's output can have. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_stdio.h"
#include "core/utf8.h"
#include "warden/proto.h"
#include "warden/util.h"

static void parse_ok(const char *line, struct serve_req *req)
{
	char msg[512];
	int r = serve_parse_request(line, strlen(line), req, msg, sizeof(msg));

	if (r != 0)
		fail_msg("serve_parse_request(%s) = %d: %s", line, r, msg);
}

/* Malformed: -1, the message names the problem; the id survives when the
 * line had a usable one. */
static void parse_bad_n(const char *line, size_t len, const char *phrase, bool want_id)
{
	struct serve_req req;
	char msg[512];
	int r = serve_parse_request(line, len, &req, msg, sizeof(msg));

	if (r != -1)
		fail_msg("serve_parse_request(%.80s) = %d, want -1", line, r);
	if (!strstr(msg, phrase))
		fail_msg("serve_parse_request(%.80s): want '%s' in: %s", line, phrase, msg);
	if (want_id != (req.id != NULL))
		fail_msg("serve_parse_request(%.80s): id %s", line, req.id ? "kept" : "lost");
	assert_null(req.code);
	assert_null(req.session);
	serve_req_free(&req);
}

static void parse_bad(const char *line, const char *phrase, bool want_id)
{
	parse_bad_n(line, strlen(line), phrase, want_id);
}

static void test_valid_requests(void **state)
{
	struct serve_req req;

	parse_ok("{\"id\":1,\"op\":\"open\",\"profile\":\"workspace\",\"workspace\":\"/tmp/w\","
	         "\"oneshot\":true}", &req);
	assert_int_equal(req.op, SOP_OPEN);
	assert_int_equal(json_object_get_int(req.id), 1);
	assert_string_equal(req.profile, "workspace");
	assert_string_equal(req.workspace, "/tmp/w");
	assert_true(req.oneshot);
	serve_req_free(&req);

	parse_ok("{\"id\":\"a\",\"op\":\"open\"}", &req);
	assert_string_equal(json_object_get_string(req.id), "a");
	assert_null(req.profile);
	assert_null(req.workspace);
	assert_false(req.oneshot);
	assert_false(req.learn);
	serve_req_free(&req);

	/* issue 23: a session that learns (and so may be widened) */
	parse_ok("{\"id\":3,\"op\":\"open\",\"learn\":true}", &req);
	assert_true(req.learn);
	serve_req_free(&req);

	parse_ok("  {\"op\":\"run\",\"id\":2,\"session\":\"s-1\",\"language\":\"python\","
	         "\"code\":\"print(1)\\n\\u00e9\"}\r", &req);
	assert_int_equal(req.op, SOP_RUN);
	assert_string_equal(req.session, "s-1");
	assert_string_equal(req.language, "python");
	assert_int_equal(req.code_len, strlen("print(1)\n\xc3\xa9"));
	assert_memory_equal(req.code, "print(1)\n\xc3\xa9", req.code_len);
	serve_req_free(&req);

	parse_ok("{\"id\":3,\"op\":\"run\",\"session\":\"s\",\"language\":\"sh\",\"code\":\"\"}",
	         &req);
	assert_int_equal(req.code_len, 0);
	serve_req_free(&req);

	parse_ok("{\"id\":4.5,\"op\":\"interrupt\",\"session\":\"s\"}", &req);
	assert_int_equal(req.op, SOP_INTERRUPT);
	serve_req_free(&req);
	parse_ok("{\"id\":5,\"op\":\"close\",\"session\":\"s\"}", &req);
	assert_int_equal(req.op, SOP_CLOSE);
	serve_req_free(&req);
	parse_ok("{\"id\":6,\"op\":\"languages\"}", &req);
	assert_int_equal(req.op, SOP_LANGUAGES);
	serve_req_free(&req);
}

static void test_blank_lines(void **state)
{
	struct serve_req req;
	char msg[64];

	assert_int_equal(serve_parse_request("", 0, &req, msg, sizeof(msg)), 1);
	assert_int_equal(serve_parse_request(" \t\r", 3, &req, msg, sizeof(msg)), 1);
	assert_null(req.id);
}

static void test_not_json(void **state)
{
	parse_bad("hello", "not JSON", false);
	parse_bad("{\"id\":1,\"op\":", "not JSON", false);
	parse_bad("{\"id\":1,'op':\"open\"}", "not JSON", false);
	parse_bad("{\"id\":1,\"op\":\"open\",}", "not JSON", false);
	parse_bad("{\"id\":1,\"op\":\"open\"} {\"id\":2}", "trailing data", false);
	parse_bad("{\"id\":1,\"op\":\"open\"} x", "trailing data", false);
	/* what json-c accepts even in strict mode */
	parse_bad("{'id':1,\"op\":\"open\"}", "object key that is not a \"string\"", false);
	parse_bad("{\"id\":NaN,\"op\":\"open\"}", "unexpected character", false);
	parse_bad("{\"id\":-Infinity,\"op\":\"open\"}", "bad number", false);
	parse_bad("{\"id\":1.,\"op\":\"open\"}", "a digit must follow", false);
	parse_bad("{\"id\":01,\"op\":\"open\"}", "missing ','", false);
	parse_bad("{\"id\":\"a\tb\",\"op\":\"open\"}", "raw control character", false);
	parse_bad("{\"id\":\"\\x\",\"op\":\"open\"}", "bad escape", false);
	parse_bad("{\"id\":\"\\u12\",\"op\":\"open\"}", "bad \\u escape", false);
	parse_bad("{\"id\":1 \"op\":\"open\"}", "missing ','", false);
	parse_bad("{\"id\" 1}", "missing ':'", false);
	parse_bad("{\"id\":1,\"op\":\"open\"", "ends inside", false);
	/* invalid UTF-8 inside a string */
	parse_bad("{\"id\":1,\"op\":\"run\",\"session\":\"s\",\"language\":\"py\",\"code\":\"\xff\"}",
	          "not JSON", false);
	/* nesting deeper than the parser allows */
	{
		char deep[200];
		memset(deep, '[', sizeof(deep) - 1);
		deep[sizeof(deep) - 1] = '\0';
		parse_bad(deep, "not JSON", false);
	}
}

static void test_not_an_object(void **state)
{
	parse_bad("[1,2]", "must be a JSON object, not an array", false);
	parse_bad("42", "must be a JSON object", false);
	parse_bad("\"open\"", "must be a JSON object", false);
	parse_bad("null", "must be a JSON object", false);
}

static void test_id(void **state)
{
	parse_bad("{\"op\":\"languages\"}", "no \"id\"", false);
	parse_bad("{\"id\":true,\"op\":\"languages\"}", "\"id\" must be a number or a string", false);
	parse_bad("{\"id\":null,\"op\":\"languages\"}", "\"id\" must be", false);
	parse_bad("{\"id\":{},\"op\":\"languages\"}", "\"id\" must be", false);
	parse_bad("{\"id\":\"a\\u0000b\",\"op\":\"languages\"}", "\"id\" contains a NUL", false);
	{
		char line[SERVE_ID_MAX + 64];
		snprintf(line, sizeof(line), "{\"id\":\"%0*d\",\"op\":\"languages\"}",
		         SERVE_ID_MAX + 1, 0);
		parse_bad(line, "\"id\" is 257 bytes", false);
	}
}

static void test_op(void **state)
{
	parse_bad("{\"id\":1}", "no \"op\"", true);
	parse_bad("{\"id\":1,\"op\":7}", "\"op\" must be a string", true);
	parse_bad("{\"id\":1,\"op\":\"execute\"}", "unknown op \"execute\"", true);
	parse_bad("{\"id\":1,\"op\":\"open\\u0000x\"}", "unknown op", true);
	parse_bad("{\"id\":1,\"op\":\"open\",\"profiel\":\"x\"}", "unknown field \"profiel\"", true);
	parse_bad("{\"id\":1,\"op\":\"languages\",\"session\":\"x\"}", "unknown field \"session\"",
	          true);
	/* regression (found by fuzz_stdio): a newline in a quoted name made the
	 * message two lines */
	parse_bad("{\"id\":1,\"op\":\"ru\\n\"}", "unknown op \"ru?\"", true);
	/* regression (found by fuzz_stdio): an empty key looped forever */
	parse_bad("{\"id\":1,\"op\":\"open\",\"\":1}", "unknown field \"\"", true);
	/* regression (issue 13): the list read "id, op, profile workspace oneshot" */
	parse_bad("{\"id\":1,\"op\":\"open\",\"profiel\":\"x\"}",
	          "(it takes: id, op, profile, workspace, oneshot, learn)", true);
	parse_bad("{\"id\":1,\"op\":\"languages\",\"x\":1}", "(it takes: id, op)", true);
}

static void test_fields(void **state)
{
	parse_bad("{\"id\":1,\"op\":\"run\",\"language\":\"py\",\"code\":\"\"}",
	          "needs the field \"session\"", true);
	parse_bad("{\"id\":1,\"op\":\"run\",\"session\":\"s\",\"code\":\"\"}",
	          "needs the field \"language\"", true);
	parse_bad("{\"id\":1,\"op\":\"run\",\"session\":\"s\",\"language\":\"py\"}",
	          "needs the field \"code\"", true);
	parse_bad("{\"id\":1,\"op\":\"run\",\"session\":5,\"language\":\"py\",\"code\":\"\"}",
	          "field \"session\" must be a string, not int", true);
	parse_bad("{\"id\":1,\"op\":\"run\",\"session\":\"s\",\"language\":\"py\",\"code\":[]}",
	          "field \"code\" must be a string, not array", true);
	parse_bad("{\"id\":1,\"op\":\"run\",\"session\":\"\",\"language\":\"py\",\"code\":\"\"}",
	          "field \"session\" is empty", true);
	parse_bad("{\"id\":1,\"op\":\"run\",\"session\":\"s\",\"language\":\"py\",\"code\":\"a\\u0000\"}",
	          "field \"code\" contains a NUL byte", true);
	parse_bad("{\"id\":1,\"op\":\"open\",\"oneshot\":\"yes\"}",
	          "field \"oneshot\" must be true or false", true);
	parse_bad("{\"id\":1,\"op\":\"open\",\"learn\":1}",
	          "field \"learn\" must be true or false", true);
	parse_bad("{\"id\":1,\"op\":\"open\",\"workspace\":\"rel/dir\"}", "absolute path", true);
	parse_bad("{\"id\":1,\"op\":\"open\",\"profile\":null}", "must be a string, not null", true);
	parse_bad("{\"id\":1,\"op\":\"interrupt\"}", "needs the field \"session\"", true);
	parse_bad("{\"id\":1,\"op\":\"close\",\"session\":\"a\\u0000\"}", "NUL byte", true);
	{
		char line[300];
		snprintf(line, sizeof(line), "{\"id\":1,\"op\":\"open\",\"profile\":\"%0*d\"}",
		         WPROTO_NAME_MAX + 1, 0);
		parse_bad(line, "field \"profile\" is 65 bytes; the limit is 64", true);
	}
}

/* The chat ops: chat carries a message; approve a yes or a no, and with
 * yes perhaps the edited code. */
static void test_chat_ops(void **state)
{
	struct serve_req req;

	parse_ok("{\"id\":3,\"op\":\"chat\",\"session\":\"s\",\"message\":\"hi\"}", &req);
	assert_int_equal(req.op, SOP_CHAT);
	assert_string_equal(req.message, "hi");
	serve_req_free(&req);
	parse_ok("{\"id\":4,\"op\":\"approve\",\"session\":\"s\",\"answer\":\"yes\"}", &req);
	assert_int_equal(req.op, SOP_APPROVE);
	assert_true(req.yes);
	assert_null(req.code);
	serve_req_free(&req);
	parse_ok("{\"id\":4,\"op\":\"approve\",\"session\":\"s\",\"answer\":\"yes\","
	         "\"code\":\"print(2)\"}", &req);
	assert_true(req.yes);
	assert_string_equal(req.code, "print(2)");
	assert_int_equal(req.code_len, 8);
	serve_req_free(&req);
	parse_ok("{\"id\":4,\"op\":\"approve\",\"session\":\"s\",\"answer\":\"no\"}", &req);
	assert_false(req.yes);
	serve_req_free(&req);

	parse_bad("{\"id\":1,\"op\":\"chat\",\"session\":\"s\"}", "needs the field \"message\"",
	          true);
	parse_bad("{\"id\":1,\"op\":\"chat\",\"session\":\"s\",\"message\":\"a\",\"model\":\"x\"}",
	          "unknown field \"model\" in \"chat\"", true);
	parse_bad("{\"id\":1,\"op\":\"approve\",\"session\":\"s\",\"answer\":\"maybe\"}",
	          "\"yes\" or \"no\"", true);
	parse_bad("{\"id\":1,\"op\":\"approve\",\"session\":\"s\",\"answer\":\"no\","
	          "\"code\":\"x\"}", "goes with \"answer\":\"yes\" only", true);
	parse_bad("{\"id\":1,\"op\":\"approve\",\"session\":\"s\"}", "needs the field \"answer\"",
	          true);
	/* the key, the endpoint and the model are fixed at start: no field names them */
	parse_bad("{\"id\":1,\"op\":\"chat\",\"session\":\"s\",\"message\":\"a\","
	          "\"api_key\":\"k\"}", "unknown field \"api_key\"", true);
	parse_bad("{\"id\":1,\"op\":\"chat\",\"session\":\"s\",\"message\":\"a\","
	          "\"api_base\":\"http://x\"}", "unknown field \"api_base\"", true);
}

static void test_code_too_large(void **state)
{
	size_t n = WPROTO_CODE_MAX + 1;
	const char *head = "{\"id\":9,\"op\":\"run\",\"session\":\"s\",\"language\":\"py\",\"code\":\"";
	size_t hl = strlen(head);
	char *line = xmalloc(hl + n + 3);
	struct serve_req req;

	memcpy(line, head, hl);
	memset(line + hl, 'x', n);
	memcpy(line + hl + n, "\"}", 3);
	parse_bad(line, "field \"code\" is 1048577 bytes; the limit is 1048576", true);

	/* exactly at the limit is fine */
	memcpy(line + hl + n - 1, "\"}", 3);
	parse_ok(line, &req);
	assert_int_equal(req.code_len, WPROTO_CODE_MAX);
	serve_req_free(&req);
	free(line);
}

static void test_line_too_long(void **state)
{
	size_t n = SERVE_LINE_MAX + 1;
	char *line = xmalloc(n);

	memset(line, ' ', n);
	line[0] = '{';
	parse_bad_n(line, n, "the limit is 2097152", false);
	free(line);
}

/* ---- UTF-8 ---- */

static size_t san(struct utf8_tail *t, const char *in, size_t len, char *out)
{
	return utf8_sanitize(t, (const uint8_t *)in, len, out);
}

#define FFFD "\xef\xbf\xbd"

static void expect_clean(const char *in, size_t len, const char *want)
{
	struct utf8_tail t = { 0 };
	char *out = xmalloc(UTF8_OUT_MAX(len) + 4);
	size_t n = san(&t, in, len, out);

	n += utf8_finish(&t, out + n);
	if (n != strlen(want) || memcmp(out, want, n))
		fail_msg("sanitize: got '%.*s' (%zu bytes), want '%s'", (int)n, out, n, want);
	assert_true(utf8_valid(out, n));
	free(out);
}

static void test_utf8_valid_passes(void **state)
{
	expect_clean("plain", 5, "plain");
	expect_clean("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	expect_clean("\xef\xbf\xbf\xf4\x8f\xbf\xbf", 7, "\xef\xbf\xbf\xf4\x8f\xbf\xbf");
	{
		struct utf8_tail t = { 0 };
		char out[32];
		assert_int_equal(san(&t, "a\0b", 3, out), 3);
		assert_memory_equal(out, "a\0b", 3);
	}
}

static void test_utf8_invalid_replaced(void **state)
{
	expect_clean("\xff", 1, FFFD);
	expect_clean("a\x80z", 3, "a" FFFD "z");
	expect_clean("\xc0\xaf", 2, FFFD FFFD);               /* overlong '/' */
	expect_clean("\xe0\x80\xaf", 3, FFFD FFFD FFFD);      /* overlong, 3 bytes */
	expect_clean("\xed\xa0\x80", 3, FFFD FFFD FFFD);      /* surrogate D800 */
	expect_clean("\xf4\x90\x80\x80", 4, FFFD FFFD FFFD FFFD); /* over U+10FFFF */
	expect_clean("\xf5\x80", 2, FFFD FFFD);
	expect_clean("\xe2\x82x", 3, FFFD "x");               /* truncated: one U+FFFD */
	expect_clean("\xf0\x9f\x98", 3, FFFD);                /* cut at the end */
	expect_clean("\xe2\x82\xe2\x82\xac", 5, FFFD "\xe2\x82\xac");
}

/* Every split of a valid text gives the text back; every split of an
 * invalid one gives the same output as one piece. */
static void test_utf8_chunk_boundaries(void **state)
{
	static const char *texts[] = {
		"a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z",
		"\xe2\x82x\xf0\x9f\x98\xff\xc3",
		"\xed\xa0\x80\xf4\x8f\xbf\xbf\xe0\xa0\x80",
	};
	for (size_t k = 0; k < ARRAY_SIZE(texts); k++) {
		const char *s = texts[k];
		size_t len = strlen(s);
		char whole[128], split[128];
		struct utf8_tail t = { 0 };
		size_t wn = san(&t, s, len, whole);

		wn += utf8_finish(&t, whole + wn);
		for (size_t a = 0; a <= len; a++)
			for (size_t b = a; b <= len; b++) {
				struct utf8_tail u = { 0 };
				size_t n = san(&u, s, a, split);
				n += san(&u, s + a, b - a, split + n);
				n += san(&u, s + b, len - b, split + n);
				n += utf8_finish(&u, split + n);
				if (n != wn || memcmp(split, whole, n))
					fail_msg("text %zu split at %zu,%zu: %zu bytes, want %zu", k, a, b, n,
					         wn);
			}
	}
	/* a valid text survives every split unchanged */
	{
		const char *s = texts[0];
		struct utf8_tail u = { 0 };
		char out[64];
		size_t n = 0;
		for (size_t i = 0; i < strlen(s); i++)
			n += san(&u, s + i, 1, out + n);
		assert_int_equal(u.n, 0);
		assert_int_equal(n, strlen(s));
		assert_memory_equal(out, s, n);
	}
}

static void test_utf8_valid_fn(void **state)
{
	assert_true(utf8_valid("", 0));
	assert_true(utf8_valid("\xc3\xa9", 2));
	assert_false(utf8_valid("\xc3", 1));
	assert_false(utf8_valid("\xed\xa0\x80", 3));
	assert_false(utf8_valid("\xc1\xbf", 2));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_requests),
		cmocka_unit_test(test_blank_lines),
		cmocka_unit_test(test_not_json),
		cmocka_unit_test(test_not_an_object),
		cmocka_unit_test(test_id),
		cmocka_unit_test(test_op),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_chat_ops),
		cmocka_unit_test(test_code_too_large),
		cmocka_unit_test(test_line_too_long),
		cmocka_unit_test(test_utf8_valid_passes),
		cmocka_unit_test(test_utf8_invalid_replaced),
		cmocka_unit_test(test_utf8_chunk_boundaries),
		cmocka_unit_test(test_utf8_valid_fn),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
