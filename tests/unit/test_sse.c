/* The server-sent-events parser: the same events whatever the chunking,
 * every line ending, comments, multi-line data, and its bounds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/sse.h"
#include "warden/err.h"

struct log {
	char buf[8192];
	size_t len;
	int n;
	int fail_at;      /* callback fails on this event (1-based), 0 never */
};

static int collect(void *ctx, const char *event, const char *data, size_t len, struct werr *err)
{
	struct log *l = ctx;

	l->n++;
	if (l->fail_at && l->n == l->fail_at)
		return werr_set(err, 0, "callback refused event %d", l->n);
	assert_int_equal(strlen(data), len);      /* NUL-terminated, no NUL inside here */
	l->len += (size_t)snprintf(l->buf + l->len, sizeof(l->buf) - l->len, "[%s|%s]", event, data);
	return 0;
}

static const char sample[] =
	": a comment, ignored\r\n"
	"event: message_start\r\n"
	"data: {\"a\":1}\r\n"
	"\r\n"
	"data: line one\n"
	"data: line two\n"
	"data:no-space\n"
	"id: 7\n"
	"retry: 1000\n"
	"\n"
	"event: ping\r"
	"data\r"
	"\r"
	"data:  two spaces keep one\n"
	"unknown: field\n"
	"\n"
	"\n"                       /* a blank line with nothing pending: no event */
	"event: lonely\n"
	"\n"                       /* an event name without data: no event */
	"data: [DONE]\n"
	"\n"
	"data: never finished";    /* discarded at the end of the stream */

static const char want[] =
	"[message_start|{\"a\":1}]"
	"[message|line one\nline two\nno-space]"
	"[ping|]"
	"[message| two spaces keep one]"
	"[message|[DONE]]";

static void run_split(const char *s, size_t n, size_t cut, size_t step, struct log *l)
{
	struct sse_parser p;
	struct werr err = { 0 };

	memset(l, 0, sizeof(*l));
	sse_init(&p, 0, collect, l);
	if (cut > 0 && sse_feed(&p, s, cut, &err) < 0)
		fail_msg("feed: %s", err.msg);
	for (size_t i = cut; i < n; i += step) {
		size_t k = n - i < step ? n - i : step;
		if (sse_feed(&p, s + i, k, &err) < 0)
			fail_msg("feed: %s", err.msg);
	}
	assert_true(sse_pending(&p));     /* "never finished" is still buffered */
	sse_free(&p);
}

static void test_whole(void **state)
{
	struct log l;

	run_split(sample, strlen(sample), 0, strlen(sample), &l);
	assert_string_equal(l.buf, want);
	assert_int_equal(l.n, 5);
}

static void test_every_split_point(void **state)
{
	size_t n = strlen(sample);
	struct log l;

	for (size_t cut = 0; cut <= n; cut++) {
		run_split(sample, n, cut, n, &l);
		if (strcmp(l.buf, want) != 0)
			fail_msg("split at %zu: got %s", cut, l.buf);
	}
	/* and byte by byte, and in odd-sized chunks */
	for (size_t step = 1; step <= 7; step++) {
		run_split(sample, n, 0, step, &l);
		if (strcmp(l.buf, want) != 0)
			fail_msg("chunks of %zu: got %s", step, l.buf);
	}
}

static void test_crlf_split_between_cr_and_lf(void **state)
{
	/* "\r" at the end of one chunk and "\n" at the start of the next is one
	 * line ending, not two (which would dispatch an event early) */
	static const char s[] = "data: a\r\ndata: b\r\n\r\n";
	struct sse_parser p;
	struct werr err = { 0 };
	struct log l = { 0 };

	sse_init(&p, 0, collect, &l);
	assert_int_equal(sse_feed(&p, s, 8, &err), 0);          /* "data: a\r" */
	assert_int_equal(sse_feed(&p, s + 8, strlen(s) - 8, &err), 0);
	assert_string_equal(l.buf, "[message|a\nb]");
	assert_false(sse_pending(&p));
	sse_free(&p);
}

static void test_line_limit(void **state)
{
	struct sse_parser p;
	struct werr err = { 0 };
	struct log l = { 0 };
	char line[200];

	sse_init(&p, 64, collect, &l);
	memset(line, 'x', sizeof(line));
	memcpy(line, "data: ", 6);
	/* no newline yet: growth stops at the limit */
	assert_int_equal(sse_feed(&p, line, 60, &err), 0);
	assert_int_equal(sse_feed(&p, line + 60, 10, &err), -1);
	assert_non_null(strstr(err.msg, "line longer than 64 bytes"));
	/* a failed parser stays failed */
	assert_int_equal(sse_feed(&p, "\n\n", 2, &err), -1);
	assert_int_equal(l.n, 0);
	sse_free(&p);

	/* exactly at the limit is fine */
	sse_init(&p, 64, collect, &l);
	memset(line, 'y', 64);
	memcpy(line, "data: ", 6);
	line[64] = '\n';
	line[65] = '\n';
	assert_int_equal(sse_feed(&p, line, 66, &err), 0);
	assert_int_equal(l.n, 1);
	sse_free(&p);
}

static void test_event_limit(void **state)
{
	/* many short data lines that add up to more than the limit */
	struct sse_parser p;
	struct werr err = { 0 };
	struct log l = { 0 };
	int rc = 0;

	sse_init(&p, 100, collect, &l);
	for (int i = 0; i < 50 && rc == 0; i++)
		rc = sse_feed(&p, "data: 0123456789\n", 17, &err);
	assert_int_equal(rc, -1);
	assert_non_null(strstr(err.msg, "event larger than 100 bytes"));
	assert_int_equal(l.n, 0);
	sse_free(&p);
}

static void test_event_name_limit(void **state)
{
	struct sse_parser p;
	struct werr err = { 0 };
	char line[SSE_EVENT_NAME_MAX + 20];
	int n;

	sse_init(&p, 0, collect, NULL);
	n = snprintf(line, sizeof(line), "event: %0*d\n", SSE_EVENT_NAME_MAX + 1, 0);
	assert_int_equal(sse_feed(&p, line, (size_t)n, &err), -1);
	assert_non_null(strstr(err.msg, "name longer"));
	sse_free(&p);
}

static void test_callback_error_stops(void **state)
{
	static const char s[] = "data: 1\n\ndata: 2\n\ndata: 3\n\n";
	struct sse_parser p;
	struct werr err = { 0 };
	struct log l = { .fail_at = 2 };

	sse_init(&p, 0, collect, &l);
	assert_int_equal(sse_feed(&p, s, strlen(s), &err), -1);
	assert_string_equal(err.msg, "callback refused event 2");
	assert_int_equal(l.n, 2);             /* event 3 never delivered */
	assert_string_equal(l.buf, "[message|1]");
	sse_free(&p);
}

static void test_empty_and_nul(void **state)
{
	/* a NUL byte inside data is passed on with the length */
	static const char s[] = "data: a\0b\n\n";
	struct sse_parser p;
	struct werr err = { 0 };
	int calls = 0;

	sse_init(&p, 0, NULL, NULL);
	assert_int_equal(sse_feed(&p, "", 0, &err), 0);
	assert_int_equal(sse_feed(&p, s, sizeof(s) - 1, &err), 0);
	assert_false(sse_pending(&p));
	sse_free(&p);
	sse_free(&p);     /* twice is harmless */
	(void)calls;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole),
		cmocka_unit_test(test_every_split_point),
		cmocka_unit_test(test_crlf_split_between_cr_and_lf),
		cmocka_unit_test(test_line_limit),
		cmocka_unit_test(test_event_limit),
		cmocka_unit_test(test_event_name_limit),
		cmocka_unit_test(test_callback_error_stops),
		cmocka_unit_test(test_empty_and_nul),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
