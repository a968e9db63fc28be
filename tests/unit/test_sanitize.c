/* The terminal sanitizer against hostile bytes from a model or a program:
 * every escape is neutralised, split sequences are handled like whole
 * ones, and the output is valid UTF-8 with no control characters but \n
 * and \t. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "warden/sanitize.h"

/* No byte that a terminal would act on: C0 but \n \t, DEL, ESC, and no
 * C1 (raw, or as U+0080..U+009F); and valid UTF-8. */
static void assert_inert(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 && c != '\n' && c != '\t')
			fail_msg("control byte 0x%02x at %zu in \"%s\"", c, i, s);
		if (c == 0x7f)
			fail_msg("DEL at %zu", i);
		if (c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 &&
		    (unsigned char)s[i + 1] <= 0x9f)
			fail_msg("C1 control U+00%02X at %zu", (unsigned char)s[i + 1], i);
		if (c >= 0x80) {
			size_t need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;

			if (!need || c > 0xf4)
				fail_msg("invalid UTF-8 lead 0x%02x at %zu", c, i);
			for (size_t k = 1; k < need; k++)
				if (i + k >= n || ((unsigned char)s[i + k] & 0xc0) != 0x80)
					fail_msg("truncated UTF-8 at %zu", i);
			i += need - 1;
		}
	}
}

static char *san(const char *in, size_t n)
{
	char *s = wsan_str(in, n);

	assert_inert(s, strlen(s));
	return s;
}

static void expect(const char *in, const char *want)
{
	char *s = san(in, strlen(in));

	if (strcmp(s, want))
		fail_msg("sanitize(%s)\n  got:  \"%s\"\n  want: \"%s\"", in, s, want);
	free(s);
}

/* the same input fed one byte at a time and in every two-piece split must
 * give the same output as fed whole */
static void expect_split_invariant(const char *in, size_t n)
{
	char *whole = san(in, n);

	for (size_t cut = 0; cut <= n; cut++) {
		struct wsan st;
		struct sbuf out = { 0 };

		wsan_init(&st);
		wsan_feed(&st, in, cut, &out);
		wsan_feed(&st, in + cut, n - cut, &out);
		wsan_end(&st, &out);
		assert_inert(out.d, out.len);
		if (strcmp(out.d, whole))
			fail_msg("split at %zu: \"%s\" != \"%s\"", cut, out.d, whole);
		sbuf_free(&out);
	}
	{
		struct wsan st;
		struct sbuf out = { 0 };

		wsan_init(&st);
		for (size_t i = 0; i < n; i++)
			wsan_feed(&st, in + i, 1, &out);
		wsan_end(&st, &out);
		assert_string_equal(out.d ? out.d : "", whole);
		sbuf_free(&out);
	}
	free(whole);
}

static void test_plain_text_unchanged(void **state)
{
	(void)state;
	expect("hello world\n\tindented\n", "hello world\n\tindented\n");
	expect("café ✓ 😀 日本", "café ✓ 😀 日本");
	expect("", "");
}

static void test_colour_is_dropped(void **state)
{
	(void)state;
	expect("\033[1;31mred\033[0m plain", "red plain");
	expect("\033[mreset", "reset");
	expect("\033[38;5;208morange\033[38:2:1:2:3mtc", "orangetc");
}

static void test_osc_clipboard_and_title(void **state)
{
	char *s;

	(void)state;
	/* OSC 52: write to the clipboard; BEL- and ST-terminated */
	s = san("\033]52;c;cm0gLXJmIH4=\007after", strlen("\033]52;c;cm0gLXJmIH4=\007after"));
	assert_non_null(strstr(s, "^[]52;c;"));
	assert_non_null(strstr(s, "^G"));
	assert_non_null(strstr(s, "after"));
	free(s);
	expect("\033]0;pwned title\033\\x", "^[]0;pwned title^[\\x");
	/* OSC 8 hyperlinks are shown, not followed */
	expect("\033]8;;http://evil/\033\\click\033]8;;\033\\", "^[]8;;http://evil/^[\\click^[]8;;^[\\");
}

static void test_cursor_and_private_modes(void **state)
{
	(void)state;
	expect("\033[2J\033[H", "^[[2J^[[H");
	expect("a\033[1Ab", "a^[[1Ab");
	expect("\033[?1049h\033[?25l", "^[[?1049h^[[?25l");
	expect("\033[6n", "^[[6n");                 /* device status report */
	expect("\033P+q544e\033\\", "^[P+q544e^[\\");   /* DCS request */
	expect("\033c", "^[c");                       /* full reset */
	expect("\033(0", "^[(0");                     /* line-drawing charset */
	/* a parameter list too long to be colour is shown, bounded */
	{
		char in[200];
		char *s;

		memset(in, '1', sizeof(in));
		in[0] = '\033';
		in[1] = '[';
		in[sizeof(in) - 2] = 'm';
		in[sizeof(in) - 1] = '\0';
		s = san(in, strlen(in));
		assert_non_null(strstr(s, "^[["));
		free(s);
	}
}

static void test_c0_c1_controls(void **state)
{
	(void)state;
	expect("bell\007 bs\b nul", "bell^G bs^H nul");
	expect("del\177", "del^?");
	expect("a\r\nb", "a\nb");
	expect("progress 10%\rprogress 20%", "progress 10%\nprogress 20%");
	expect("x\r", "x\n");
	/* C1 CSI as UTF-8 (U+009B) and as a raw byte */
	expect("\xc2\x9b" "31m", "^[[31m");
	expect("\x9b" "2J", "\xef\xbf\xbd" "2J");
	expect("\xc2\x9d" "52;c;x\xc2\x9c", "^[]52;c;x^[\\");
}

static void test_invalid_utf8_and_bidi(void **state)
{
	(void)state;
	expect("\xff\xfe", "\xef\xbf\xbd\xef\xbf\xbd");
	expect("\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd");     /* overlong '/' */
	expect("\xe0\x80\xaf", "\xef\xbf\xbd");             /* overlong, 3 bytes */
	expect("\xed\xa0\x80", "\xef\xbf\xbd");             /* surrogate */
	expect("\xf4\x90\x80\x80", "\xef\xbf\xbd");         /* > U+10FFFF */
	expect("\xe2\x82", "\xef\xbf\xbd");                 /* cut off at the end */
	expect("\xe2\x82x", "\xef\xbf\xbdx");
	expect("if \xe2\x80\xae" "x", "if <U+202E>x");       /* RLO */
	expect("\xe2\x81\xa6y", "<U+2066>y");
}

static void test_split_sequences(void **state)
{
	static const char *const samples[] = {
		"\033[1;31mred\033[0m done\r\n",
		"\033]52;c;aGVsbG8=\007\033]0;t\033\\",
		"\033[?1049h\xc2\x9b" "5n 😀 \xe2\x80\xae \xff x\r\ry",
		"ok \xe6\x97\xa5\xe6\x9c\xac \033[2K\033",
		"\033[",
		"\r",
		"\xf0\x9f\x98",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++)
		expect_split_invariant(samples[i], strlen(samples[i]));
}

/* What `warden run` relays to a terminal (supervisor/run.c feeds each read
 * of a jail pipe): the same output whatever three pieces the reads cut
 * the stream into, with OSC 52 and a title neutralised and UTF-8 next to
 * the escapes intact. */
static void test_split_in_three_reads(void **state)
{
	static const char in[] = "caf\xc3\xa9\033]52;c;cHduZWQ=\007\xe2\x82\xac\033]0;t\007\xf0\x9f\x98\x80\033[2J";
	static const char want[] = "caf\xc3\xa9^[]52;c;cHduZWQ=^G\xe2\x82\xac^[]0;t^G\xf0\x9f\x98\x80^[[2J";
	const size_t n = sizeof(in) - 1;

	(void)state;
	for (size_t a = 0; a <= n; a++)
		for (size_t b = a; b <= n; b++) {
			struct wsan st;
			struct sbuf out = { 0 };

			wsan_init(&st);
			wsan_feed(&st, in, a, &out);
			wsan_feed(&st, in + a, b - a, &out);
			wsan_feed(&st, in + b, n - b, &out);
			wsan_end(&st, &out);
			if (strcmp(out.d, want))
				fail_msg("cut at %zu and %zu: \"%s\"", a, b, out.d);
			sbuf_free(&out);
		}
}

static void test_random_bytes_are_inert(void **state)
{
	unsigned seed = 12345;
	char buf[512];

	(void)state;
	for (int round = 0; round < 2000; round++) {
		size_t n = (size_t)(rand_r(&seed) % sizeof(buf));
		struct wsan st;
		struct sbuf out = { 0 };
		size_t off = 0;

		for (size_t i = 0; i < n; i++) {
			int r = rand_r(&seed) % 8;

			/* bias towards the interesting bytes */
			buf[i] = (char)(r == 0 ? 0x1b : r == 1 ? '[' : r == 2 ? (char)(0x80 + rand_r(&seed) % 0x40)
			               : r == 3 ? (char)(rand_r(&seed) % 0x20) : (char)(rand_r(&seed) % 256));
		}
		wsan_init(&st);
		while (off < n) {
			size_t k = 1 + (size_t)(rand_r(&seed) % 7);

			if (k > n - off)
				k = n - off;
			wsan_feed(&st, buf + off, k, &out);
			off += k;
		}
		wsan_end(&st, &out);
		assert_inert(out.d ? out.d : "", out.len);
		sbuf_free(&out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_text_unchanged),
		cmocka_unit_test(test_colour_is_dropped),
		cmocka_unit_test(test_osc_clipboard_and_title),
		cmocka_unit_test(test_cursor_and_private_modes),
		cmocka_unit_test(test_c0_c1_controls),
		cmocka_unit_test(test_invalid_utf8_and_bidi),
		cmocka_unit_test(test_split_sequences),
		cmocka_unit_test(test_split_in_three_reads),
		cmocka_unit_test(test_random_bytes_are_inert),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
