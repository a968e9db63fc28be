/* The helpers every parser relies on (parse_size, parse_duration_ms,
 * parse_u64, format_*) and the error contract of struct werr. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "warden/chat_args.h"
#include "warden/err.h"
#include "warden/util.h"

static void size_ok(const char *s, uint64_t want)
{
	struct werr err = { 0 };
	uint64_t v = 12345;

	if (parse_size(s, &v, &err) < 0)
		fail_msg("parse_size(\"%s\"): %s", s, err.msg);
	if (v != want)
		fail_msg("parse_size(\"%s\") = %llu, want %llu", s, (unsigned long long)v,
		         (unsigned long long)want);
}

static void size_bad(const char *s, const char *phrase)
{
	struct werr err = { 0 };
	uint64_t v = 12345;

	assert_int_equal(parse_size(s, &v, &err), -1);
	assert_int_equal(v, 0);      /* output cleared */
	if (!strstr(err.msg, phrase))
		fail_msg("parse_size(\"%s\"): want '%s' in: %s", s, phrase, err.msg);
}

static void test_parse_size(void **state)
{
	size_ok("0", 0);
	size_ok("512", 512);
	size_ok("64K", 64ULL << 10);
	size_ok("64k", 64ULL << 10);
	size_ok("1M", 1ULL << 20);
	size_ok("1G", 1ULL << 30);
	size_ok("2T", 2ULL << 40);
	size_ok("1.5G", 3ULL << 29);
	size_ok("0.5K", 512);
	size_ok("16777215T", 16777215ULL << 40);

	size_bad("", "is not a size");
	size_bad("-1", "is not a size");
	size_bad("-1M", "is not a size");
	size_bad("12Q", "'12Q' is not a size");
	size_bad("M", "is not a size");
	size_bad(" 1M", "is not a size");
	size_bad("1M ", "is not a size");
	size_bad("1.M", "is not a size");
	size_bad("99999999999T", "too large");
	size_bad("99999999999999999999", "is not a size");
}

static void dur_ok(const char *s, uint64_t want)
{
	struct werr err = { 0 };
	uint64_t v = 12345;

	if (parse_duration_ms(s, &v, &err) < 0)
		fail_msg("parse_duration_ms(\"%s\"): %s", s, err.msg);
	if (v != want)
		fail_msg("parse_duration_ms(\"%s\") = %llu, want %llu", s, (unsigned long long)v,
		         (unsigned long long)want);
}

static void dur_bad(const char *s)
{
	struct werr err = { 0 };
	uint64_t v = 12345;

	assert_int_equal(parse_duration_ms(s, &v, &err), -1);
	assert_int_equal(v, 0);
	if (!strstr(err.msg, "is not a duration") && !strstr(err.msg, "too large"))
		fail_msg("parse_duration_ms(\"%s\"): %s", s, err.msg);
}

static void test_parse_duration(void **state)
{
	dur_ok("250ms", 250);
	dur_ok("5s", 5000);
	dur_ok("30", 30000);           /* bare number: seconds */
	dur_ok("5m", 300000);
	dur_ok("2h", 7200000);
	dur_ok("1.5s", 1500);
	dur_ok("0", 0);

	dur_bad("");
	dur_bad("5 m");
	dur_bad("-1s");
	dur_bad("5d");
	dur_bad("m");
	dur_bad("5mss");
	dur_bad("9999999999999999h");
}

static void test_parse_u64(void **state)
{
	struct werr err = { 0 };
	uint64_t v = 7;

	assert_int_equal(parse_u64("18446744073709551615", &v, &err), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(parse_u64("18446744073709551616", &v, &err), -1);
	assert_int_equal(v, 0);
	assert_int_equal(parse_u64("+1", &v, &err), -1);
	assert_int_equal(parse_u64("", &v, &err), -1);
	assert_int_equal(parse_u64("12a", &v, &err), -1);
}

static void test_format(void **state)
{
	char buf[32];

	format_size(512ULL << 20, buf, sizeof(buf));
	assert_string_equal(buf, "512M");
	format_size(1ULL << 30, buf, sizeof(buf));
	assert_string_equal(buf, "1G");
	format_size(4097, buf, sizeof(buf));
	assert_string_equal(buf, "4097");
	format_duration_ms(300000, buf, sizeof(buf));
	assert_string_equal(buf, "5m");
	format_duration_ms(1500, buf, sizeof(buf));
	assert_string_equal(buf, "1500ms");
	format_duration_ms(7200000, buf, sizeof(buf));
	assert_string_equal(buf, "2h");
}

/* What format_* writes, parse_* reads back to the same value. */
static void test_format_round_trip(void **state)
{
	static const uint64_t sizes[] = { 1, 1023, 1024, 1536, 3ULL << 29, 5ULL << 40, 123456789 };
	static const uint64_t durs[] = { 1, 999, 1000, 1500, 60000, 90000, 3600000, 86400000 };
	char buf[32];
	uint64_t v;
	struct werr err = { 0 };
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(*sizes); i++) {
		format_size(sizes[i], buf, sizeof(buf));
		assert_int_equal(parse_size(buf, &v, &err), 0);
		assert_true(v == sizes[i]);
	}
	for (i = 0; i < sizeof(durs) / sizeof(*durs); i++) {
		format_duration_ms(durs[i], buf, sizeof(buf));
		assert_int_equal(parse_duration_ms(buf, &v, &err), 0);
		assert_true(v == durs[i]);
	}
}

/* ---- struct werr ---------------------------------------------------------- */

static void test_werr_set(void **state)
{
	struct werr err = { 0 };

	errno = EINTR;
	assert_int_equal(werr_set(&err, 0, "mounting %s", "/usr"), -1);
	assert_string_equal(err.msg, "mounting /usr");
	assert_int_equal(err.errnum, 0);
	assert_int_equal(errno, EINTR);        /* errno preserved */

	errno = EAGAIN;
	assert_int_equal(werr_set(&err, ENOENT, "opening %s", "x.json"), -1);
	char want[128];
	snprintf(want, sizeof(want), "opening x.json: %s", strerror(ENOENT));
	assert_string_equal(err.msg, want);
	assert_int_equal(err.errnum, ENOENT);
	assert_int_equal(errno, EAGAIN);

	/* NULL err: still -1, no crash */
	assert_int_equal(werr_set(NULL, EPERM, "x"), -1);
}

static void test_werr_wrap(void **state)
{
	struct werr err = { 0 };

	werr_set(&err, EACCES, "mount");
	errno = ENOSPC;
	assert_int_equal(werr_wrap(&err, "building the jail for %s", "strict"), -1);
	char want[256];
	snprintf(want, sizeof(want), "building the jail for strict: mount: %s", strerror(EACCES));
	assert_string_equal(err.msg, want);
	assert_int_equal(err.errnum, EACCES);  /* the cause is kept */
	assert_int_equal(errno, ENOSPC);
	assert_int_equal(werr_wrap(NULL, "x"), -1);
}

static void test_werr_exit_code(void **state)
{
	struct werr err = { 0 };

	assert_int_equal(werr_exit_code(&err), 125);
	assert_int_equal(werr_exit_code(NULL), 125);
	werr_set(&err, 0, "not found");
	err.exit_code = 127;
	assert_int_equal(werr_exit_code(&err), 127);
	/* a new error resets the exit code */
	werr_set(&err, 0, "other");
	assert_int_equal(werr_exit_code(&err), 125);
	werr_clear(&err);
	assert_int_equal(err.errnum, 0);
	assert_int_equal(err.msg[0], '\0');
	werr_clear(NULL);
}

static void test_werr_truncates(void **state)
{
	struct werr err = { 0 };
	char big[2 * WERR_MSG_MAX];

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	werr_set(&err, ENOENT, "%s", big);
	assert_int_equal(strlen(err.msg), WERR_MSG_MAX - 1);
	werr_wrap(&err, "%s", big);
	assert_int_equal(strlen(err.msg), WERR_MSG_MAX - 1);
}

/* Flat struct: it crosses the sync socket as bytes. */
static void test_werr_is_flat(void **state)
{
	struct werr a = { 0 }, b;

	werr_set(&a, EPERM, "dropping capabilities");
	a.exit_code = 126;
	memcpy(&b, &a, sizeof(a));
	assert_string_equal(b.msg, a.msg);
	assert_int_equal(b.errnum, EPERM);
	assert_int_equal(werr_exit_code(&b), 126);
}

/* FIPS 180-2 appendix B's vectors, plus every padding boundary (55, 56,
 * 63, 64 bytes) against values from sha256sum(1). */
static void test_sha256(void **state)
{
	static const struct { const char *in; size_t reps; const char *hex; } v[] = {
		{ "", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ "abc", 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1,
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
		{ "a", 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0" },
		{ "a", 55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318" },
		{ "a", 56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a" },
		{ "a", 63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34" },
		{ "a", 64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb" },
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		size_t n = strlen(v[i].in) * (v[i].reps ? v[i].reps : 1);
		char *buf = malloc(n + 1), hex[65];
		for (size_t k = 0; k < (v[i].reps ? v[i].reps : 1); k++)
			memcpy(buf + k * strlen(v[i].in), v[i].in, strlen(v[i].in));
		sha256_hex(buf, v[i].reps ? n : 0, hex);
		assert_string_equal(hex, v[i].hex);
		free(buf);
	}
}

/* The broker's options as getopt_long reads them: the supervisor passes
 * each on with its value, never reading a value as an option. */
static void test_chat_arg_span(void **state)
{
	char *v[] = { "chat", "--system-message", "--workspace=/", "--model=x", "-m", "--net",
	              "-ym", "y", "-mfoo", "--mod", "z", "--system-mess", "m", "--resume",
	              "--workspace", "--session-idle", "5", "-q", "hi", "--max-output" };
	int n = (int)ARRAY_SIZE(v);
	const struct wchat_arg *w = NULL;

	assert_int_equal(wchat_arg_span(n, v, 1, WCA_CHAT, &w), 2);    /* its value */
	assert_int_equal(w->id, WCA_SYSMSG);
	assert_int_equal(wchat_arg_span(n, v, 3, WCA_CHAT, &w), 1);    /* --name=value */
	assert_int_equal(wchat_arg_span(n, v, 4, WCA_CHAT, &w), 2);    /* -m VALUE */
	assert_int_equal(w->id, WCA_MODEL);
	assert_int_equal(wchat_arg_span(n, v, 6, WCA_CHAT, &w), 2);    /* -ym VALUE */
	assert_int_equal(wchat_arg_span(n, v, 8, WCA_CHAT, &w), 1);    /* -mVALUE */
	assert_int_equal(wchat_arg_span(n, v, 9, WCA_CHAT, &w), 2);    /* a unique prefix */
	assert_int_equal(w->id, WCA_MODEL);
	assert_int_equal(wchat_arg_span(n, v, 11, WCA_CHAT, &w), 0);   /* ambiguous */
	assert_int_equal(wchat_arg_span(n, v, 13, WCA_CHAT, &w), 1);   /* optional: never the next */
	assert_int_equal(wchat_arg_span(n, v, 14, WCA_CHAT, &w), 0);   /* the supervisor's */
	assert_int_equal(wchat_arg_span(n, v, 15, WCA_CHAT, &w), 0);   /* serve's only */
	assert_int_equal(wchat_arg_span(n, v, 15, WCA_SERVE, &w), 2);
	assert_int_equal(wchat_arg_span(n, v, 13, WCA_SERVE, &w), 0);  /* chat's only */
	assert_int_equal(wchat_arg_span(n, v, 17, WCA_CHAT, &w), 0);   /* no such letter */
	assert_int_equal(wchat_arg_span(n, v, 18, WCA_CHAT, &w), 0);   /* a word */
	assert_int_equal(wchat_arg_span(n, v, n - 1, WCA_CHAT, &w), 1); /* its value missing */
	/* getopt_long's table holds exactly the mode's entries */
	for (const struct option *o = wchat_longopts(WCA_SERVE); o->name; o++)
		assert_string_not_equal(o->name, "resume");
	assert_string_equal(wchat_longopts(WCA_CHAT)[0].name, "model");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_size),
		cmocka_unit_test(test_parse_duration),
		cmocka_unit_test(test_parse_u64),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_format_round_trip),
		cmocka_unit_test(test_werr_set),
		cmocka_unit_test(test_werr_wrap),
		cmocka_unit_test(test_werr_exit_code),
		cmocka_unit_test(test_werr_truncates),
		cmocka_unit_test(test_werr_is_flat),
		cmocka_unit_test(test_sha256),
		cmocka_unit_test(test_chat_arg_span),
	};

	return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
