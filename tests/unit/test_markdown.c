/* Markdown for the terminal: plain mode passes text through untouched (the
 * most readable form in a log); colour mode styles headings, emphasis,
 * code, lists, and colours fenced code by language.  Lines are rendered as
 * they complete, however the text is chunked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "chat/markdown.h"

static char *render(const char *in, bool color, size_t chunk)
{
	struct md m;
	struct sbuf out = { 0 };
	size_t n = strlen(in);

	md_init(&m, color);
	for (size_t i = 0; i < n; i += chunk)
		md_feed(&m, in + i, i + chunk > n ? n - i : chunk, &out);
	md_end(&m, &out);
	md_free(&m);
	return sbuf_steal(&out);
}

static const char doc[] =
	"# Sales report\n"
	"Here is **the total** and some *emphasis* and `df.head()`.\n"
	"- first item\n"
	"  * nested item\n"
	"1. step one\n"
	"> a quote\n"
	"---\n"
	"```python\n"
	"import csv  # read it\n"
	"total = sum(float(r['amount']) for r in rows)\n"
	"```\n"
	"snake_case_name stays as is\n"
	"[docs](https://example.org)";

static void test_plain_is_identity(void **state)
{
	char *s;

	(void)state;
	s = render(doc, false, 1000);
	/* the text itself, plus the newline that ends the last line */
	assert_int_equal(strncmp(s, doc, strlen(doc)), 0);
	assert_string_equal(s + strlen(doc), "\n");
	assert_null(strchr(s, '\033'));
	free(s);
}

static void test_colour_styles(void **state)
{
	char *s;

	(void)state;
	s = render(doc, true, 1000);
	/* heading: bold, markers gone */
	assert_non_null(strstr(s, MD_BOLD MD_UNDER "Sales report" MD_RESET "\n"));
	assert_null(strstr(s, "# Sales"));
	assert_non_null(strstr(s, MD_BOLD "the total\033[22m"));
	assert_non_null(strstr(s, MD_ITALIC "emphasis\033[23m"));
	assert_non_null(strstr(s, MD_CYAN "df.head()\033[39m"));
	assert_null(strstr(s, "**"));
	assert_non_null(strstr(s, "•" MD_RESET " first item"));
	assert_non_null(strstr(s, "  " MD_CYAN "•" MD_RESET " nested item"));
	assert_non_null(strstr(s, MD_BOLD "1.\033[22m step one"));
	assert_non_null(strstr(s, "│ "));
	assert_non_null(strstr(s, "────"));
	/* the fence lines are dim, the code coloured */
	assert_non_null(strstr(s, MD_GREY "```python" MD_RESET));
	assert_non_null(strstr(s, MD_MAGENTA "import" MD_RESET " csv  " MD_GREY "# read it" MD_RESET));
	assert_non_null(strstr(s, MD_GREEN "'amount'" MD_RESET));
	assert_non_null(strstr(s, MD_MAGENTA "for" MD_RESET));
	/* no emphasis inside words with underscores, and after the fence
	 * closes, text is text again */
	assert_non_null(strstr(s, "snake_case_name stays as is"));
	assert_non_null(strstr(s, MD_UNDER "docs\033[24m" MD_GREY " (https://example.org)"));
	free(s);
}

static void test_chunking_does_not_matter(void **state)
{
	char *whole, *part;

	(void)state;
	whole = render(doc, true, 100000);
	for (size_t chunk = 1; chunk < 12; chunk++) {
		part = render(doc, true, chunk);
		assert_string_equal(part, whole);
		free(part);
	}
	free(whole);
}

static void test_code_colours_by_language(void **state)
{
	struct sbuf o = { 0 };

	(void)state;
	md_code_line("javascript", "const x = \"s\"; // note", strlen("const x = \"s\"; // note"), true, &o);
	assert_string_equal(o.d, MD_MAGENTA "const" MD_RESET " x = " MD_GREEN "\"s\"" MD_RESET
	                          "; " MD_GREY "// note" MD_RESET);
	sbuf_reset(&o);
	md_code_line("bash", "for f in *.csv; do echo \"$f\"; done # list", strlen("for f in *.csv; do echo \"$f\"; done # list"), true, &o);
	assert_non_null(strstr(o.d, MD_MAGENTA "for" MD_RESET));
	assert_non_null(strstr(o.d, MD_MAGENTA "done" MD_RESET));
	assert_non_null(strstr(o.d, MD_GREY "# list" MD_RESET));
	sbuf_reset(&o);
	/* shell: # inside a word is not a comment */
	md_code_line("sh", "echo a#b", strlen("echo a#b"), true, &o);
	assert_null(strstr(o.d, MD_GREY));
	sbuf_reset(&o);
	/* an unknown language, or no colour: the line as is */
	md_code_line("cobol", "MOVE 1 TO X", strlen("MOVE 1 TO X"), true, &o);
	assert_string_equal(o.d, "MOVE 1 TO X");
	sbuf_reset(&o);
	md_code_line("python", "x = 1", strlen("x = 1"), false, &o);
	assert_string_equal(o.d, "x = 1");
	sbuf_free(&o);
}

static void test_unclosed_fence_ends_with_reply(void **state)
{
	struct md m;
	struct sbuf out = { 0 };

	(void)state;
	md_init(&m, true);
	md_feed(&m, "```python\nimport os", 19, &out);
	/* the partial line is held until the reply ends */
	assert_null(strstr(out.d, "os"));
	md_end(&m, &out);
	assert_non_null(strstr(out.d, MD_MAGENTA "import" MD_RESET " os\n"));
	sbuf_reset(&out);
	/* a new reply starts outside any fence */
	md_feed(&m, "**bold**\n", 9, &out);
	assert_string_equal(out.d, MD_BOLD "bold\033[22m\n");
	sbuf_free(&out);
	md_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_is_identity),
		cmocka_unit_test(test_colour_styles),
		cmocka_unit_test(test_chunking_does_not_matter),
		cmocka_unit_test(test_code_colours_by_language),
		cmocka_unit_test(test_unclosed_fence_ends_with_reply),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
