/* The language table (supervisor/lang.c): lookup, argv with the embedded
 * driver, the JSON list of installed languages, and the embedded drivers
 * themselves (exactly drivers/<file>, small enough for one argv element). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "lang.h"
#include "warden/util.h"

static void find_is(const char *name, const char *want)
{
	const struct wlang *l = wlang_find(name);

	if (!want && l)
		fail_msg("wlang_find(\"%s\") = %s, want NULL", name ? name : "(null)", l->name);
	if (want && (!l || strcmp(l->name, want) != 0))
		fail_msg("wlang_find(\"%s\") = %s, want %s", name, l ? l->name : "NULL", want);
}

static void test_find(void **state)
{
	find_is("python", "python");
	find_is("PY", "python");
	find_is("Python3", "python");
	find_is("javascript", "javascript");
	find_is("js", "javascript");
	find_is("node", "javascript");
	find_is("NodeJS", "javascript");
	find_is("shell", "shell");
	find_is("bash", "shell");
	find_is("sh", "shell");
	find_is("perl", "perl");
	find_is("pl", "perl");
	find_is("ruby", "ruby");
	find_is("RB", "ruby");
	find_is("r", "r");
	find_is("R", "r");
	find_is("Rscript", "r");

	find_is(NULL, NULL);
	find_is("", NULL);
	find_is("pyth", NULL);
	find_is("python ", NULL);
	find_is("py,", NULL);
	find_is(",", NULL);
	find_is("py,python3", NULL);
	find_is("zsh", NULL);
	find_is("cobol", NULL);
}

static void test_order(void **state)
{
	assert_true(wlangs_n >= 6);
	assert_string_equal(wlangs[0].name, "python");
	assert_string_equal(wlangs[1].name, "javascript");
	assert_string_equal(wlangs[2].name, "shell");
	for (size_t i = 0; i < wlangs_n; i++) {
		assert_non_null(wlangs[i].argv[0]);
		assert_null(strchr(wlangs[i].argv[0], '/'));  /* looked up on PATH */
		assert_true(wlangs[i].persistent);
	}
}

static const char *embedded(const char *file)
{
	for (size_t i = 0; i < wdriver_srcs_n; i++)
		if (strcmp(wdriver_srcs[i].file, file) == 0)
			return wdriver_srcs[i].text;
	return NULL;
}

static void test_argv(void **state)
{
	const struct wlang *py = wlang_find("python");
	char **argv = wlang_argv(py);

	/* tests/drivers/harness.py builds exactly this from supervisor/lang.c */
	assert_non_null(argv);
	assert_string_equal(argv[0], "python3");
	assert_string_equal(argv[1], "-u");
	assert_string_equal(argv[2], "-c");
	assert_string_equal(argv[3], embedded("python.py"));
	assert_null(argv[4]);
	wlang_argv_free(argv);

	for (size_t i = 0; i < wlangs_n; i++) {
		size_t n = 0, drivers = 0;

		argv = wlang_argv(&wlangs[i]);
		if (!argv)
			fail_msg("%s: no argv (driver %s not embedded)", wlangs[i].name, wlangs[i].driver);
		for (; argv[n]; n++) {
			assert_non_null(wlangs[i].argv[n]);
			if (strcmp(wlangs[i].argv[n], "@DRIVER@") == 0) {
				assert_string_equal(argv[n], embedded(wlangs[i].driver));
				drivers++;
			} else {
				assert_string_equal(argv[n], wlangs[i].argv[n]);
			}
			assert_string_not_equal(argv[n], "@DRIVER@");
		}
		assert_null(wlangs[i].argv[n]);
		assert_int_equal(drivers, 1);
		wlang_argv_free(argv);
	}
	assert_string_equal(wlang_find("bash")->argv[0], "bash");

	/* a driver that is not embedded: NULL, not a half-built argv */
	static const char *const fake_argv[] = { "sh", "@DRIVER@", NULL };
	const struct wlang fake = { "fake", "", "no-such-driver.sh", fake_argv, true, NULL, 0 };
	assert_null(wlang_argv(&fake));
	assert_null(wlang_argv(NULL));
	wlang_argv_free(NULL);
}

/* The embedded text is drivers/<file> byte for byte. */
static void test_sources(void **state)
{
	const char *top = getenv("WARDEN_TOP");

	for (size_t i = 0; i < wlangs_n; i++) {
		const char *text = embedded(wlangs[i].driver);
		_cleanup_free_ char *path = NULL, *file = NULL;
		struct werr err = { 0 };
		size_t len = 0;

		if (!text)
			fail_msg("%s: drivers/%s is not embedded (tools/embed-drivers.sh)",
			         wlangs[i].name, wlangs[i].driver);
		/* one argv element: the kernel's MAX_ARG_STRLEN is 128 KiB */
		assert_true(strlen(text) < 128 * 1024);
		path = xasprintf("%s/drivers/%s", top && *top ? top : ".", wlangs[i].driver);
		if (read_file_buf(path, 1 << 20, &file, &len, &err) < 0)
			fail_msg("%s", err.msg);
		if (len != strlen(text) || memcmp(file, text, len) != 0)
			fail_msg("the embedded %s differs from %s", wlangs[i].driver, path);
	}
}

/* R's front end passes -e text through echo and an unquoted expansion, and
 * R takes at most 10000 bytes of it, blanks counting 3 (~+~, ~n~).  R 4.2
 * (Debian 12) does not encode tabs: one splits the text into arguments R
 * ignores, and the driver dies with "unexpected end of input". */
static void test_r_driver_fits_rscript(void **state)
{
	const char *text = embedded(wlang_find("r")->driver);
	size_t n = 0;

	assert_non_null(text);
	assert_null(strpbrk(text, "\\*?[\t"));
	for (const char *p = text; *p; p++)
		n += strchr(" \n\t", *p) ? 3 : 1;
	assert_true(n < 10000);
}

static bool on_path(const char *prog)
{
	static const char *const dirs[] = { "/usr/local/bin", "/usr/bin", "/bin" };
	char path[256];

	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		snprintf(path, sizeof(path), "%s/%s", dirs[i], prog);
		if (access(path, X_OK) == 0)
			return true;
	}
	return false;
}

static void test_installed(void **state)
{
	static const char *const none_argv[] = { "no-such-interpreter-xyz", "@DRIVER@", NULL };
	static const char *const abs_argv[] = { "/usr/bin/python3", "@DRIVER@", NULL };
	const struct wlang none = { "none", "", "python.py", none_argv, true, NULL, 0 };
	const struct wlang abs = { "abs", "", "python.py", abs_argv, true, NULL, 0 };

	assert_false(wlang_installed(&none));
	assert_false(wlang_installed(&abs));
	assert_false(wlang_installed(NULL));
	for (size_t i = 0; i < wlangs_n; i++)
		assert_int_equal(wlang_installed(&wlangs[i]),
		                 on_path(wlangs[i].program ? wlangs[i].program : wlangs[i].argv[0]));
	/* the tests need these; the jail only sees /usr */
	assert_true(wlang_installed(wlang_find("python")));
	assert_true(wlang_installed(wlang_find("shell")));
}

static void test_json(void **state)
{
	_cleanup_free_ char *s = wlang_json();
	_cleanup_free_ char *names = wlang_names();
	_cleanup_free_ char *want = xstrdup("");
	json_object *arr = json_tokener_parse(s);
	size_t k = 0;

	assert_non_null(arr);
	assert_true(json_object_is_type(arr, json_type_array));
	for (size_t i = 0; i < wlangs_n; i++) {
		json_object *o, *v;

		if (!on_path(wlangs[i].argv[0]))
			continue;   /* only installed languages are listed */
		if (k >= json_object_array_length(arr))
			fail_msg("%s is installed but not listed: %s", wlangs[i].name, s);
		o = json_object_array_get_idx(arr, k++);
		assert_int_equal(json_object_object_length(o), 3);
		assert_true(json_object_object_get_ex(o, "name", &v));
		assert_string_equal(json_object_get_string(v), wlangs[i].name);
		assert_true(json_object_object_get_ex(o, "persistent", &v));
		assert_true(json_object_is_type(v, json_type_boolean));
		assert_int_equal(json_object_get_boolean(v), wlangs[i].persistent);
		assert_true(json_object_object_get_ex(o, "aliases", &v));
		assert_true(json_object_is_type(v, json_type_array));
		for (size_t j = 0; j < json_object_array_length(v); j++) {
			const char *a = json_object_get_string(json_object_array_get_idx(v, j));

			assert_true(*a && !strchr(a, ','));
			assert_ptr_equal(wlang_find(a), &wlangs[i]);
		}
		{
			char *w = xasprintf("%s%s%s", want, *want ? ", " : "", wlangs[i].name);
			free(want);
			want = w;
		}
	}
	assert_int_equal(json_object_array_length(arr), k);
	assert_true(k >= 2);
	assert_string_equal(names, want);
	json_object_put(arr);

	/* the aliases of python, exactly */
	{
		_cleanup_free_ char *js = wlang_json();
		assert_non_null(strstr(js, "{\"name\":\"python\",\"aliases\":[\"py\",\"python3\"],\"persistent\":true}"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_argv),
		cmocka_unit_test(test_sources),
		cmocka_unit_test(test_r_driver_fits_rscript),
		cmocka_unit_test(test_installed),
		cmocka_unit_test(test_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
