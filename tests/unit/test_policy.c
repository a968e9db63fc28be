/* Policy parser tests: one test per malformed input (each asserts the exact
 * FILE:LINE:COL and a key phrase of the message), then the built-in
 * profiles, defaults, inheritance, round trips and policy_expand.
 *
 * In the malformed inputs, '@' marks where the error must be reported; the
 * test removes it and counts the line and column itself. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "warden/policy.h"
#include "warden/util.h"

static char tmpdir[256];

/* ---- helpers -------------------------------------------------------------- */

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static char *profile_path(const char *name)
{
	return xasprintf("%s/warden/profiles/%s.json", tmpdir, name);
}

static void write_profile(const char *name, const char *text)
{
	_cleanup_free_ char *p = profile_path(name);

	write_text(p, text);
}

static void remove_profile(const char *name)
{
	_cleanup_free_ char *p = profile_path(name);

	unlink(p);
}

static struct wpolicy *load_ok(const char *json)
{
	struct wpolicy *p = NULL;
	struct werr err = { 0 };

	if (policy_load_buffer("t.json", json, strlen(json), &p, &err) < 0)
		fail_msg("unexpected error: %s", err.msg);
	assert_non_null(p);
	return p;
}

/* Loads `marked` (with '@' at the expected error position) and checks the
 * message starts with "t.json:LINE:COL: " and contains `phrase`. */
static void expect_error_at(const char *marked, const char *phrase)
{
	_cleanup_free_ char *text = xstrdup(marked);
	char *at = strchr(text, '@');
	unsigned line = 1, col = 1;
	struct wpolicy *p = (struct wpolicy *)0x1;   /* must come back NULL */
	struct werr err = { 0 };
	char want[64];
	const char *q;

	assert_non_null(at);
	for (q = text; q < at; q++) {
		if (*q == '\n') {
			line++;
			col = 1;
		} else if (((unsigned char)*q & 0xC0) != 0x80) {
			col++;
		}
	}
	memmove(at, at + 1, strlen(at));
	assert_int_equal(policy_load_buffer("t.json", text, strlen(text), &p, &err), -1);
	assert_null(p);
	snprintf(want, sizeof(want), "t.json:%u:%u: ", line, col);
	if (strncmp(err.msg, want, strlen(want)))
		fail_msg("want position %s got: %s", want, err.msg);
	if (!strstr(err.msg, phrase))
		fail_msg("want phrase '%s' in: %s", phrase, err.msg);
	/* every message says what to do: "what; fix" */
	if (!strchr(err.msg + strlen(want), ';') && !strstr(err.msg, "e.g."))
		fail_msg("no fix in: %s", err.msg);
}

/* ---- malformed inputs ----------------------------------------------------- */

struct bad {
	const char *name;
	const char *json;
	const char *phrase;
};

static const struct bad bad_cases[] = {
	/* syntax */
	{ "empty_file", "@", "the file is empty" },
	{ "only_whitespace", "@  \n\t\n", "the file is empty" },
	{ "top_level_array", "  @[1, 2]", "top level must be a JSON object" },
	{ "top_level_string", "@\"workspace\"", "top level must be a JSON object" },
	{ "missing_comma", "{\n  \"name\": \"x\"\n  @\"limits\": {}\n}",
	  "is a comma missing at the end of line 2?" },
	{ "trailing_comma_object", "{\n  \"name\": \"x\"@,\n}", "trailing comma before '}'" },
	{ "trailing_comma_array", "{\"filesystem\": {\"hide\": [\"/a\"@,  ]}}",
	  "trailing comma before ']'" },
	{ "unterminated", "{\n  \"name\": \"x\"@\n\n", "ends before the JSON is complete" },
	{ "unterminated_string", "{\"name\": \"x@", "ends before the JSON is complete" },
	{ "single_quotes", "{\"name\": @'x'}", "double quotes" },
	{ "single_quoted_key", "{\"limits\": {@'pids': 5}}", "keys must be in double quotes" },
	{ "comment", "{\"name\": \"x\" @// note\n}", "comments are not allowed" },
	{ "bad_literal", "{\"syscalls\": {\"audit\": @tru}}", "invalid value" },
	{ "unquoted_key", "{@name: \"x\"}", "keys must be in double quotes" },
	{ "missing_colon", "{\"name\" @\"x\"}", "expected ':'" },
	{ "trailing_text", "{\"name\": \"x\"}\n@x", "after the end of the policy" },
	{ "two_objects", "{\"name\": \"x\"}\n@{}", "after the end of the policy" },
	{ "nan", "{\"limits\": {\"cpus\": @NaN}}", "unexpected \"NaN\"" },
	{ "raw_newline_in_string", "{\"description\": \"a@\nb\"}", "control character" },
	{ "number_without_fraction", "{\"limits\": {\"pids\": @1.}}", "malformed number" },
	{ "bad_escape", "{\"description\": \"a@\\q\"}", "invalid escape" },
	{ "duplicate_key", "{\n  \"limits\": {\"pids\": 1,\n    @\"pids\": 2}\n}",
	  "duplicate key \"pids\" (first at line 2)" },
	{ "duplicate_top_key", "{\"name\": \"a\", \"env\": {}, @\"name\": \"b\"}",
	  "duplicate key \"name\"" },
	/* json-c decodes a key before comparing: the same key written two ways */
	{ "duplicate_key_escaped", "{\"name\": \"a\", @\"n\\u0061me\": \"b\"}",
	  "duplicate key \"name\"" },
	/* json-c turns every lone surrogate into U+FFFD, so these two keys are one
	 * to it and the second silently replaced the first */
	{ "duplicate_key_lone_surrogates",
	  "{\"filesystem\": {\"tmpfs\": {\"/tmp/\\ud800\": \"1M\",\n  @\"/tmp/\\udbff\": \"2M\"}}}",
	  "duplicate key \"/tmp/" },
	{ "nul_in_key", "{\"na@\\u0000me\": \"a\"}", "\\u0000 (NUL) is not allowed" },
	{ "number_leading_zero", "{\"limits\": {\"pids\": @-01}}", "malformed number" },
	{ "infinity", "{\"limits\": {\"cpus\": @Infinity}}", "unexpected \"Infinity\"" },
	{ "utf8_column", "{\"description\": \"h\xc3\xa9llo w\xc3\xb6rld\", @\"bogus\": 1}",
	  "unknown key \"bogus\"" },

	/* unknown keys */
	{ "unknown_top_key", "{\n  \"name\": \"x\",\n  @\"colour\": 1\n}",
	  "unknown key \"colour\" at the top level; valid keys are name, description, extends" },
	{ "unknown_top_key_typo", "{\"name\": \"x\", @\"limit\": {}}",
	  "unknown key \"limit\" at the top level; did you mean \"limits\"?" },
	{ "unknown_nested_key",
	  "{\n  \"name\": \"x\",\n  \"description\": \"d\",\n  \"network\": {\"mode\": \"none\"},\n"
	  "  \"env\": {},\n  \"limits\": {\n    @\"memroy\": \"1G\"\n  }\n}",
	  "unknown key \"memroy\" in \"limits\"; did you mean \"memory\"?" },
	{ "key_in_wrong_section", "{@\"memory\": \"1G\"}", "\"memory\" belongs in \"limits\"" },
	{ "unknown_filesystem_key", "{\"filesystem\": {@\"readonly\": []}}",
	  "did you mean \"read_only\"?" },
	{ "unknown_syscalls_key", "{\"syscalls\": {@\"allow\": []}}",
	  "unknown key \"allow\" in \"syscalls\"; did you mean \"allow_extra\"?" },

	/* wrong types per section */
	{ "filesystem_not_object", "{\"filesystem\": @[]}", "\"filesystem\" must be an object" },
	{ "network_not_object", "{\"network\": @\"none\"}", "\"network\" must be an object" },
	{ "limits_not_object", "{\"limits\": @5}", "\"limits\" must be an object" },
	{ "syscalls_not_object", "{\"syscalls\": @true}", "\"syscalls\" must be an object" },
	{ "env_not_object", "{\"env\": @[\"LANG\"]}", "\"env\" must be an object" },
	{ "name_not_string", "{\"name\": @5}", "\"name\" must be a string" },
	{ "name_bad", "{\"name\": @\"../x\"}", "must be a profile name" },
	{ "description_multiline", "{\"description\": @\"a\\nb\"}", "must be one line" },
	{ "read_only_not_list", "{\"filesystem\": {\"read_only\": @\"/usr\"}}",
	  "\"read_only\" must be a list" },
	{ "read_only_element_not_string", "{\"filesystem\": {\"read_only\": [\"/usr\", @1]}}",
	  "entries of \"read_only\" must be strings" },
	{ "tmpfs_not_object", "{\"filesystem\": {\"tmpfs\": @[\"/tmp\"]}}",
	  "\"tmpfs\" must be an object" },
	{ "mode_not_string", "{\"network\": {\"mode\": @false}}",
	  "must be \"none\", \"loopback\" or \"proxy\"" },
	{ "allow_not_list", "{\"network\": {\"mode\": \"proxy\", \"allow\": @\"pypi.org:443\"}}",
	  "\"allow\" must be a list" },
	{ "audit_not_bool", "{\"syscalls\": {\"audit\": @\"yes\"}}", "must be true or false" },
	{ "pass_not_list", "{\"env\": {\"pass\": @\"LANG\"}}", "\"pass\" must be a list" },
	{ "set_value_not_string", "{\"env\": {\"set\": {\"A\": @1}}}",
	  "the value of \"A\" must be a string" },

	/* limits */
	{ "pids_string", "{\"limits\": {\"pids\": @\"many\"}}",
	  "\"pids\" must be a whole number, e.g. 256" },
	{ "pids_fraction", "{\"limits\": {\"pids\": @1.5}}", "\"pids\" must be a whole number" },
	{ "pids_negative", "{\"limits\": {\"pids\": @-5}}", "\"pids\" must not be negative" },
	{ "pids_zero", "{\"limits\": {\"pids\": @0}}", "write \"unlimited\" for no limit" },
	{ "open_files_too_large", "{\"limits\": {\"open_files\": @99999999}}", "too large" },
	{ "memory_negative", "{\"limits\": {\"memory\": @-1}}", "\"memory\" must not be negative" },
	{ "memory_bad_size", "{\"limits\": {\"memory\": @\"12Q\"}}", "\"12Q\" is not a size" },
	{ "memory_zero", "{\"limits\": {\"memory\": @\"0\"}}", "must be more than 0" },
	{ "memory_fraction", "{\"limits\": {\"memory\": @1.5}}", "\"memory\" must be a size" },
	{ "output_bool", "{\"limits\": {\"output\": @true}}", "\"output\" must be a size" },
	{ "wall_time_bad", "{\"limits\": {\"wall_time\": @\"5 minutes\"}}", "is not a duration" },
	{ "cpu_time_number", "{\"limits\": {\"cpu_time\": @30}}",
	  "\"cpu_time\" must be a duration string with a unit" },
	{ "cpus_string", "{\"limits\": {\"cpus\": @\"two\"}}", "number of CPUs" },
	{ "cpus_zero", "{\"limits\": {\"cpus\": @0}}", "must be more than 0" },
	{ "background_not_bool", "{\"limits\": {\"background\": @\"yes\"}}",
	  "\"background\" must be true or false" },

	/* filesystem */
	{ "relative_path", "{\"filesystem\": {\"read_only\": [\"/usr\", @\"usr/lib\"]}}",
	  "a relative path" },
	{ "dotdot_path", "{\"filesystem\": {\"read_write\": [@\"$WORKSPACE/../etc\"]}}",
	  "\"..\" is not allowed" },
	{ "unknown_variable", "{\"filesystem\": {\"read_only\": [@\"$USER/x\"]}}",
	  "only $WORKSPACE and $HOME can start a path" },
	{ "variable_inside_path", "{\"filesystem\": {\"read_only\": [@\"/x/$HOME\"]}}",
	  "'$' may only start a path" },
	{ "root_path", "{\"filesystem\": {\"read_only\": [@\"/\"]}}", "\"/\" cannot be listed" },
	{ "proc_path", "{\"filesystem\": {\"read_only\": [@\"/proc/1\"]}}",
	  "/proc and /dev are built by warden" },
	{ "hide_workspace", "{\"filesystem\": {\"hide\": [\"/etc/x\", @\"${WORKSPACE}/\"]}}",
	  "the workspace itself cannot be hidden" },
	{ "path_listed_twice", "{\"filesystem\": {\"read_only\": [\"/usr\", @\"/usr/\"]}}",
	  "is listed twice in \"read_only\"" },
	{ "path_ro_and_rw", "{\"filesystem\": {\"read_only\": [\"/usr\", \"/opt\"],\n"
	  "  \"read_write\": [\"$WORKSPACE\", @\"/opt\"]}}",
	  "\"/opt\" is in both \"read_only\" and \"read_write\"" },
	{ "optional_not_read_only", "{\"filesystem\": {\"read_only\": [\"/usr\"], "
	  "\"optional\": [@\"/etc/ssl\"]}}", "is in \"optional\" but not in \"read_only\"" },
	{ "tmpfs_size_zero", "{\"filesystem\": {\"tmpfs\": {\"/tmp\": @\"0\"}}}",
	  "must be more than 0" },
	{ "tmpfs_too_large", "{\"filesystem\": {\"tmpfs\": {\"/tmp\": @\"32G\"}}}",
	  "larger than 16G" },
	{ "tmpfs_unlimited", "{\"filesystem\": {\"tmpfs\": {\"/tmp\": @\"unlimited\"}}}",
	  "is not a size" },
	{ "tmpfs_relative", "{\"filesystem\": {\"tmpfs\": {@\"tmp\": \"1M\"}}}", "a relative path" },
	{ "tmpfs_over_workspace", "{\"filesystem\": {\"tmpfs\": {@\"$WORKSPACE\": \"1M\"}}}",
	  "would hide it" },

	/* network */
	{ "mode_typo", "{\"network\": {\"mode\": @\"proxi\"}}", "did you mean \"proxy\"?" },
	{ "mode_bogus", "{\"network\": {\"mode\": @\"full\"}}", "unknown network mode \"full\"" },
	{ "allow_without_proxy", "{\"network\": {@\"allow\": [\"pypi.org:443\"]}}",
	  "\"allow\" has no effect when \"mode\" is \"none\"" },
	{ "allow_without_proxy_loopback", "{\"network\": {\"mode\": \"loopback\", @\"allow\": "
	  "[\"pypi.org\"]}}", "\"allow\" has no effect when \"mode\" is \"loopback\"" },
	{ "allow_empty_port", "{\"network\": {\"mode\": \"proxy\", \"allow\": [\"pypi.org\", @\"pypi.org:\"]}}",
	  "not a number from 1 to 65535; the form is host[:port]" },
	{ "allow_bad_port", "{\"network\": {\"mode\": \"proxy\", \"allow\": [@\"pypi.org:99999\"]}}",
	  "not a number from 1 to 65535" },
	{ "allow_url", "{\"network\": {\"mode\": \"proxy\", \"allow\": [@\"https://pypi.org:443\"]}}",
	  "is a URL, not an allow entry; write the host and port alone" },
	{ "allow_space", "{\"network\": {\"mode\": \"proxy\", \"allow\": [@\"pypi org\"]}}",
	  "the form is host[:port]" },
	{ "allow_twice", "{\"network\": {\"mode\": \"proxy\", \"allow\": [\"pypi.org\", @\"pypi.org\"]}}",
	  "listed twice" },

	/* syscalls */
	{ "deny_action_bogus", "{\"syscalls\": {\"deny_action\": @\"ignore\"}}",
	  "must be \"errno\"" },
	{ "unknown_syscall", "{\"syscalls\": {\"allow_extra\": [@\"opne\"]}}",
	  "unknown system call \"opne\"" },
	{ "forbidden_syscall", "{\"syscalls\": {\"allow_extra\": [\"personality\", @\"ptrace\"]}}",
	  "ptrace can never be allowed: it lets code inspect" },
	{ "forbidden_mount", "{\"syscalls\": {\"allow_extra\": [@\"mount\"]}}",
	  "mount can never be allowed" },
	/* every forbidden call names its own reason (policy/forbidden.c), not a
	 * generic one: these had none before the table was shared */
	{ "forbidden_io_uring", "{\"syscalls\": {\"allow_extra\": [@\"io_uring_setup\"]}}",
	  "io_uring_setup can never be allowed: io_uring runs file and network operations "
	  "the syscall filter never sees" },
	{ "forbidden_openat2", "{\"syscalls\": {\"allow_extra\": [@\"openat2\"]}}",
	  "openat2 can never be allowed: its mode is in memory" },
	{ "allow_and_deny", "{\"syscalls\": {\"allow_extra\": [\"personality\"], "
	  "\"deny_extra\": [@\"personality\"]}}", "is in both \"allow_extra\" and \"deny_extra\"" },

	/* env */
	{ "pass_bad_name", "{\"env\": {\"pass\": [\"LANG\", @\"1ABC\"]}}",
	  "\"1ABC\" is not a valid environment variable name" },
	{ "set_bad_name", "{\"env\": {\"set\": {@\"MY-VAR\": \"x\"}}}",
	  "\"MY-VAR\" is not a valid environment variable name" },
	{ "set_value_newline", "{\"env\": {\"set\": {\"A\": @\"x\\ny\"}}}", "cannot contain newlines" },
	{ "set_value_unknown_var", "{\"env\": {\"set\": {\"A\": @\"$USER\"}}}",
	  "only $WORKSPACE and $HOME can be used" },
	{ "pass_and_set", "{\"env\": {\"pass\": [\"LANG\", \"TZ\"],\n  \"set\": {\"A\": \"1\", "
	  "@\"TZ\": \"UTC\"}}}", "\"TZ\" is in both \"pass\" and \"set\"" },
	{ "pass_twice", "{\"env\": {\"pass\": [\"LANG\", @\"LANG\"]}}", "listed twice in \"pass\"" },

	/* extends */
	{ "extends_unknown", "{\"extends\": @\"nosuch\"}",
	  "unknown profile \"nosuch\"; available profiles: network, strict, workspace" },
	{ "extends_not_string", "{\"extends\": @[\"workspace\"]}", "\"extends\" must be a string" },

	/* "KEY+": add to the inherited list or map */
	{ "append_and_replace", "{\"filesystem\": {\"read_only\": [\"/usr\"], @\"read_only+\": [\"/opt\"]}}",
	  "both \"read_only\" and \"read_only+\" in \"filesystem\"; write the whole list" },
	{ "replace_after_append", "{\"env\": {\"pass+\": [\"X\"], @\"pass\": [\"Y\"]}}",
	  "both \"pass\" and \"pass+\" in \"env\"" },
	{ "append_not_list", "{\"limits\": {@\"memory+\": \"2G\"}}",
	  "\"memory\" is not a list or a map" },
	{ "append_extends", "{@\"extends+\": \"workspace\"}", "\"extends\" is not a list or a map" },
	{ "append_section", "{@\"filesystem+\": {}}", "\"filesystem\" is not a list or a map" },
	{ "append_unknown", "{\"filesystem\": {@\"read_olny+\": []}}",
	  "unknown key \"read_olny+\" in \"filesystem\"; did you mean \"read_only+\"?" },
	{ "append_type", "{\"filesystem\": {\"read_only+\": @\"/opt\"}}", "\"read_only\" must be a list" },
	{ "append_inherited", "{\"filesystem\": {\"read_only+\": [\"/opt\", @\"/usr\"]}}",
	  "\"/usr\" is already in the inherited \"read_only\"; remove it from \"read_only+\"" },
	{ "append_twice", "{\"filesystem\": {\"hide+\": [\"/a\", @\"/a\"]}}", "listed twice in \"hide\"" },
	{ "append_hide_workspace", "{\"filesystem\": {\"hide+\": [@\"$WORKSPACE\"]}}",
	  "the workspace itself cannot be hidden" },
	{ "append_conflict_same_file", "{\"filesystem\": {\"read_only+\": [\"/opt\"], "
	  "\"hide\": [@\"/opt\"]}}", "\"/opt\" is in both \"read_only\" and \"hide\"" },
	{ "append_conflict_both_appended", "{\"filesystem\": {\"read_write+\": [@\"/srv\"], "
	  "\"read_only+\": [\"/opt\", \"/srv\"]}}", "\"/srv\" is in both \"read_only\" and \"read_write\"" },
	{ "append_optional_orphan", "{\"filesystem\": {\"optional+\": [@\"/opt\"]}}",
	  "\"/opt\" is in \"optional\" but not in \"read_only\"" },
	{ "append_env_both", "{\"env\": {\"pass+\": [\"X\"], \"set+\": {@\"X\": \"1\"}}}",
	  "\"X\" is in both \"pass\" and \"set\"" },
	{ "append_allow_mode_none", "{\"network\": {@\"allow+\": [\"a.org:443\"]}}",
	  "\"allow\" has no effect when \"mode\" is \"none\"" },
	{ "append_forbidden_syscall", "{\"syscalls\": {\"allow_extra+\": [@\"ptrace\"]}}",
	  "ptrace can never be allowed" },
	{ "append_tmpfs_workspace", "{\"filesystem\": {\"tmpfs+\": {@\"$WORKSPACE\": \"1M\"}}}",
	  "a tmpfs over the workspace would hide it" },
	{ "append_tmpfs_size", "{\"filesystem\": {\"tmpfs+\": {\"/var/tmp\": @\"0\"}}}", "must be more than 0" },
};

static void test_bad(void **state)
{
	const struct bad *b = *state;

	expect_error_at(b->json, b->phrase);
}

/* The example of the brief, with its exact position. */
static void test_bad_exact_position(void **state)
{
	const char *text = "{\n  \"name\": \"my\",\n  \"description\": \"d\",\n"
	                   "  \"network\": {\"mode\": \"none\"},\n  \"env\": {},\n"
	                   "  \"limits\": {\n    \"memroy\": \"1G\"\n  }\n}\n";
	struct wpolicy *p = NULL;
	struct werr err = { 0 };

	assert_int_equal(policy_load_buffer("my.json", text, strlen(text), &p, &err), -1);
	assert_string_equal(err.msg, "my.json:7:5: unknown key \"memroy\" in \"limits\"; "
	                    "did you mean \"memory\"?");
	assert_int_equal(err.errnum, 0);
}

static void test_extends_cycle(void **state)
{
	struct wpolicy *p = NULL;
	struct werr err = { 0 };
	_cleanup_free_ char *a = profile_path("cyc-a");

	write_profile("cyc-a", "{\n  \"name\": \"cyc-a\",\n  \"extends\": \"cyc-b\"\n}\n");
	write_profile("cyc-b", "{\"name\": \"cyc-b\", \"extends\": \"cyc-a\"}\n");
	assert_int_equal(policy_load_profile("cyc-a", &p, &err), -1);
	assert_null(p);
	/* reported where the chain closes: in cyc-b, at its "extends" value */
	assert_non_null(strstr(err.msg, "cyc-b.json:1:30: \"extends\" makes a cycle "
	                                "(cyc-a -> cyc-b -> cyc-a)"));
	remove_profile("cyc-a");
	remove_profile("cyc-b");
}

static void test_extends_self(void **state)
{
	struct wpolicy *p = NULL;
	struct werr err = { 0 };

	write_profile("selfish", "{\"extends\": \"selfish\"}");
	assert_int_equal(policy_load_profile("selfish", &p, &err), -1);
	assert_non_null(strstr(err.msg, "selfish.json:1:13: \"extends\" makes a cycle "
	                                "(selfish -> selfish)"));
	remove_profile("selfish");
}

static void test_extends_error_in_parent(void **state)
{
	struct wpolicy *p = NULL;
	struct werr err = { 0 };
	const char *child = "{\"extends\": \"broken\"}";

	write_profile("broken", "{\n \"limits\": {\"pids\": \"x\"}\n}");
	assert_int_equal(policy_load_buffer("child.json", child, strlen(child), &p, &err), -1);
	/* located in the parent, where the fix is */
	assert_non_null(strstr(err.msg, "broken.json:2:21: \"pids\" must be a whole number"));
	remove_profile("broken");
}

static void test_profile_name_mismatch(void **state)
{
	struct wpolicy *p = NULL;
	struct werr err = { 0 };

	write_profile("foo", "{\"name\": \"bar\"}");
	assert_int_equal(policy_load_profile("foo", &p, &err), -1);
	assert_non_null(strstr(err.msg, "foo.json:1:10: \"name\" is \"bar\" but the profile is "
	                                "\"foo\""));
	remove_profile("foo");
}

static void test_unknown_profile(void **state)
{
	struct wpolicy *p = NULL;
	struct werr err = { 0 };

	assert_int_equal(policy_load_profile("nosuch", &p, &err), -1);
	assert_null(p);
	assert_string_equal(err.msg, "unknown profile \"nosuch\"; available profiles: "
	                    "network, strict, workspace");
	assert_int_equal(policy_load_profile("../../etc/passwd", &p, &err), -1);
	assert_non_null(strstr(err.msg, "is not a profile name"));
	assert_int_equal(policy_load_profile("workspace.json", &p, &err), -1);
	assert_non_null(strstr(err.msg, "is not a profile name"));
}

static void test_load_file_errors(void **state)
{
	struct wpolicy *p = NULL;
	struct werr err = { 0 };
	_cleanup_free_ char *path = xasprintf("%s/bad.json", tmpdir);

	assert_int_equal(policy_load_file("/nonexistent/x.json", &p, &err), -1);
	assert_null(p);
	assert_non_null(strstr(err.msg, "/nonexistent/x.json"));
	assert_int_equal(err.errnum, ENOENT);
	assert_int_equal(policy_load_file(tmpdir, &p, &err), -1);
	assert_non_null(strstr(err.msg, "is a directory"));

	write_text(path, "{\n\t\"limits\": {\n\t\t\"pids\": -1\n\t}\n}\n");
	assert_int_equal(policy_load_file(path, &p, &err), -1);
	_cleanup_free_ char *want = xasprintf("%s:3:11: \"pids\" must not be negative", path);
	assert_non_null(strstr(err.msg, want));

	/* a NUL byte is reported, not silently cut */
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fwrite("{\"name\": \"a\"}\0junk", 1, 18, f);
	fclose(f);
	assert_int_equal(policy_load_file(path, &p, &err), -1);
	assert_non_null(strstr(err.msg, ":1:14: NUL byte"));
	unlink(path);
}

/* ---- good inputs -------------------------------------------------------- */

static void assert_strv(const struct wstrv *v, const char *const *want, size_t n)
{
	size_t i;

	assert_int_equal(v->n, n);
	for (i = 0; i < n; i++)
		assert_string_equal(v->v[i], want[i]);
}

static const char *const etc[] = {
	"/etc/ssl", "/etc/ca-certificates", "/etc/alternatives", "/etc/localtime",
	"/etc/ld.so.cache", "/etc/nsswitch.conf", "/etc/mime.types",
	"/etc/protocols", "/etc/services",
	"/etc/fonts", "/var/cache/fontconfig", "/etc/matplotlibrc", "/etc/R",
};

static void test_defaults(void **state)
{
	struct wpolicy *p = load_ok("{}");
	static const char *const ro[] = {
		"/usr", "/etc/ssl", "/etc/ca-certificates", "/etc/alternatives", "/etc/localtime",
		"/etc/ld.so.cache", "/etc/nsswitch.conf", "/etc/mime.types",
		"/etc/protocols", "/etc/services",
		"/etc/fonts", "/var/cache/fontconfig", "/etc/matplotlibrc", "/etc/R",
	};
	static const char *const pass[] = { "LANG", "LC_ALL", "TERM", "TZ" };
	static const char *const setk[] = { "HOME", "PATH", "TMPDIR", "NODE_PATH",
		"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS" };
	static const char *const setv[] = { "$HOME", "/usr/local/bin:/usr/bin:/bin", "/tmp",
		"/usr/local/lib/node_modules:/usr/lib/node_modules:/usr/share/nodejs", "1", "1" };
	static const char *const rw[] = { "$WORKSPACE" };

	assert_string_equal(p->name, "t");            /* from the source name */
	assert_string_equal(p->source, "t.json");
	assert_false(p->limits.background);          /* leftovers are killed */
	assert_null(p->description);
	assert_strv(&p->read_only, ro, ARRAY_SIZE(ro));
	assert_strv(&p->optional, etc, ARRAY_SIZE(etc));
	assert_strv(&p->read_write, rw, 1);
	assert_true(p->workspace_writable);
	assert_int_equal(p->n_tmpfs, 2);
	assert_string_equal(p->tmpfs[0].path, "/tmp");
	assert_int_equal(p->tmpfs[0].size, 512ULL << 20);
	assert_string_equal(p->tmpfs[1].path, "$HOME");
	assert_int_equal(p->tmpfs[1].size, 64ULL << 20);
	/* credentials commonly kept in a project are hidden by default */
	assert_int_equal(p->hide.n, 6);
	assert_true(wstrv_contains(&p->hide, "$WORKSPACE/.env"));
	assert_true(wstrv_contains(&p->hide, "$WORKSPACE/.ssh"));
	/* the jail writes its own /etc/hosts; the host's must not cover it */
	assert_false(wstrv_contains(&p->read_only, "/etc/hosts"));
	assert_int_equal(p->net, WNET_NONE);
	assert_int_equal(p->net_allow.n, 0);
	assert_int_equal(p->limits.memory, 1ULL << 30);
	assert_int_equal(p->limits.pids, 256);
	assert_true(p->limits.cpus == 1.0);
	assert_int_equal(p->limits.wall_ms, 300000);
	assert_int_equal(p->limits.cpu_ms, 300000);
	assert_int_equal(p->limits.file_size, 1ULL << 30);
	assert_int_equal(p->limits.open_files, 1024);
	assert_int_equal(p->limits.output, 8ULL << 20);
	assert_int_equal(p->deny_action, WDENY_ERRNO);
	assert_true(p->audit);
	assert_int_equal(p->allow_extra.n, 0);
	assert_int_equal(p->deny_extra.n, 0);
	assert_strv(&p->env_pass, pass, ARRAY_SIZE(pass));
	assert_strv(&p->env_set_keys, setk, ARRAY_SIZE(setk));
	assert_strv(&p->env_set_vals, setv, ARRAY_SIZE(setv));
	policy_free(p);
}

static void test_values(void **state)
{
	struct wpolicy *p = load_ok(
		"{\"name\": \"v\", \"limits\": {\"memory\": 1048576, \"pids\": \"unlimited\", "
		"\"cpus\": 0.5, \"wall_time\": \"90s\", \"cpu_time\": \"250ms\", "
		"\"file_size\": \"1.5G\", \"open_files\": 64, \"output\": \"unlimited\", "
		"\"background\": true},"
		"\"filesystem\": {\"read_only\": [\"//usr/./lib/\", \"${HOME}/.cache\"],"
		" \"tmpfs\": {\"/tmp/\": 4096}},"
		"\"network\": {\"mode\": \"proxy\", \"allow\": [\"10.0.0.1:80\", \"[::1]:8080\"]},"
		"\"syscalls\": {\"deny_action\": \"kill\", \"audit\": false, "
		"\"allow_extra\": [\"personality\"], \"deny_extra\": [\"mincore\"]},"
		"\"env\": {\"set\": {\"PS1\": \"$$ \", \"W\": \"${WORKSPACE}/bin\"}}}");

	assert_string_equal(p->name, "v");
	assert_int_equal(p->limits.memory, 1048576);
	assert_int_equal(p->limits.pids, 0);
	assert_true(p->limits.cpus == 0.5);
	assert_int_equal(p->limits.wall_ms, 90000);
	assert_int_equal(p->limits.cpu_ms, 250);
	assert_int_equal(p->limits.file_size, 3ULL << 29);
	assert_int_equal(p->limits.open_files, 64);
	assert_int_equal(p->limits.output, 0);
	assert_true(p->limits.background);
	assert_string_equal(p->read_only.v[0], "/usr/lib");
	assert_string_equal(p->read_only.v[1], "$HOME/.cache");
	/* inherited optional entries not in read_only are dropped */
	assert_int_equal(p->optional.n, 0);
	assert_int_equal(p->n_tmpfs, 1);
	assert_string_equal(p->tmpfs[0].path, "/tmp");
	assert_int_equal(p->tmpfs[0].size, 4096);
	assert_int_equal(p->net, WNET_PROXY);
	assert_int_equal(p->net_allow.n, 2);
	assert_int_equal(p->deny_action, WDENY_KILL);
	assert_false(p->audit);
	assert_string_equal(p->allow_extra.v[0], "personality");
	assert_string_equal(p->deny_extra.v[0], "mincore");
	assert_int_equal(p->env_set_keys.n, 2);
	assert_string_equal(p->env_set_vals.v[0], "$$ ");
	/* env.pass is inherited from the defaults */
	assert_int_equal(p->env_pass.n, 4);
	policy_free(p);
}

/* A key written in the file wins over an inherited one it contradicts. */
static void test_explicit_wins(void **state)
{
	struct wpolicy *p;

	p = load_ok("{\"filesystem\": {\"read_only\": [\"/usr\", \"$WORKSPACE\"]}}");
	assert_int_equal(p->read_write.n, 0);
	assert_false(p->workspace_writable);
	policy_free(p);

	p = load_ok("{\"filesystem\": {\"read_only\": [\"/usr\", \"/etc/ssl\"]}}");
	assert_int_equal(p->optional.n, 1);
	assert_string_equal(p->optional.v[0], "/etc/ssl");
	policy_free(p);

	p = load_ok("{\"filesystem\": {\"read_write\": [\"$WORKSPACE\", \"$HOME\"]}}");
	assert_int_equal(p->n_tmpfs, 1);     /* the inherited $HOME tmpfs gave way */
	assert_string_equal(p->tmpfs[0].path, "/tmp");
	policy_free(p);

	p = load_ok("{\"env\": {\"pass\": [\"HOME\"]}}");
	assert_false(wstrv_contains(&p->env_set_keys, "HOME"));
	assert_int_equal(p->env_set_keys.n, p->env_set_vals.n);
	assert_string_equal(p->env_set_keys.v[0], "PATH");
	assert_string_equal(p->env_set_vals.v[0], "/usr/local/bin:/usr/bin:/bin");
	policy_free(p);

	p = load_ok("{\"env\": {\"set\": {\"LANG\": \"C.UTF-8\"}}}");
	assert_false(wstrv_contains(&p->env_pass, "LANG"));
	assert_int_equal(p->env_set_keys.n, 1);
	policy_free(p);

	p = load_ok("{\"extends\": \"network\", \"network\": {\"mode\": \"none\"}}");
	assert_int_equal(p->net, WNET_NONE);
	assert_int_equal(p->net_allow.n, 0);
	policy_free(p);
}

static void round_trip(const struct wpolicy *p);

/* "KEY+" adds to the inherited list or map; what it adds counts as
 * written in this file, what it inherited does not. */
static void test_append(void **state)
{
	struct wpolicy *p;
	size_t i;

	p = load_ok("{\"filesystem\": {\"read_only+\": [\"/opt\"]}}");
	assert_int_equal(p->read_only.n, 15);              /* the defaults' 14, then /opt */
	assert_string_equal(p->read_only.v[0], "/usr");
	assert_string_equal(p->read_only.v[14], "/opt");
	assert_int_equal(p->optional.n, 13);               /* inherited, untouched */
	assert_true(p->workspace_writable);
	round_trip(p);
	policy_free(p);

	/* from strict, with an optional entry added to the inherited ones */
	p = load_ok("{\"extends\": \"strict\", \"filesystem\": {\"read_only+\": [\"/opt\"], "
	            "\"optional+\": [\"/opt\"]}}");
	assert_true(wstrv_contains(&p->read_only, "$WORKSPACE"));
	assert_true(wstrv_contains(&p->read_only, "/opt"));
	assert_true(wstrv_contains(&p->optional, "/opt"));
	assert_true(wstrv_contains(&p->optional, "/etc/ssl"));
	assert_false(p->workspace_writable);
	assert_int_equal(p->limits.memory, 256ULL << 20);
	policy_free(p);

	/* an appended entry is explicit: it wins over an inherited one */
	p = load_ok("{\"filesystem\": {\"read_only+\": [\"$WORKSPACE\"]}}");
	assert_int_equal(p->read_write.n, 0);
	assert_false(p->workspace_writable);
	policy_free(p);
	p = load_ok("{\"filesystem\": {\"hide+\": [\"/etc/ssl\"]}}");
	assert_false(wstrv_contains(&p->read_only, "/etc/ssl"));
	assert_false(wstrv_contains(&p->optional, "/etc/ssl"));  /* followed read_only */
	assert_int_equal(p->hide.n, 7);
	policy_free(p);

	/* maps: new keys are added, a key the parent has gets the new value */
	p = load_ok("{\"filesystem\": {\"tmpfs+\": {\"/tmp\": \"1G\", \"/var/tmp\": \"8M\"}}}");
	assert_int_equal(p->n_tmpfs, 3);
	for (i = 0; i < p->n_tmpfs; i++) {
		if (!strcmp(p->tmpfs[i].path, "/tmp"))
			assert_int_equal(p->tmpfs[i].size, 1ULL << 30);
		else if (!strcmp(p->tmpfs[i].path, "$HOME"))
			assert_int_equal(p->tmpfs[i].size, 64ULL << 20);
		else
			assert_string_equal(p->tmpfs[i].path, "/var/tmp");
	}
	round_trip(p);
	policy_free(p);

	p = load_ok("{\"env\": {\"pass+\": [\"MPLBACKEND\"], \"set+\": {\"PATH\": \"/x\", "
	            "\"PYTHONDONTWRITEBYTECODE\": \"1\"}}}");
	assert_int_equal(p->env_pass.n, 5);
	assert_string_equal(p->env_pass.v[4], "MPLBACKEND");
	assert_int_equal(p->env_set_keys.n, 7);
	assert_int_equal(p->env_set_vals.n, 7);
	for (i = 0; i < p->env_set_keys.n; i++)
		if (!strcmp(p->env_set_keys.v[i], "PATH"))
			assert_string_equal(p->env_set_vals.v[i], "/x");
	assert_true(wstrv_contains(&p->env_set_keys, "HOME"));
	round_trip(p);
	policy_free(p);

	/* passing a variable the parent sets drops the inherited value */
	p = load_ok("{\"env\": {\"pass+\": [\"HOME\"]}}");
	assert_false(wstrv_contains(&p->env_set_keys, "HOME"));
	assert_int_equal(p->env_set_keys.n, p->env_set_vals.n);
	assert_true(wstrv_contains(&p->env_pass, "HOME"));
	policy_free(p);

	p = load_ok("{\"syscalls\": {\"deny_extra+\": [\"mincore\"], \"allow_extra+\": "
	            "[\"personality\"]}}");
	assert_int_equal(p->deny_extra.n, 1);
	assert_int_equal(p->allow_extra.n, 1);
	policy_free(p);

	p = load_ok("{\"extends\": \"network\", \"network\": {\"allow+\": [\"example.org:443\"]}}");
	assert_true(wstrv_contains(&p->net_allow, "example.org:443"));
	assert_true(wstrv_contains(&p->net_allow, "pypi.org:443"));
	policy_free(p);
}

/* Two generations of "+": each adds to what it inherits. */
static void test_append_chain(void **state)
{
	struct wpolicy *p;

	write_profile("plus-a", "{\"filesystem\": {\"read_only+\": [\"/opt\"]}}");
	p = load_ok("{\"extends\": \"plus-a\", \"filesystem\": {\"read_only+\": [\"/srv\"]}}");
	assert_true(wstrv_contains(&p->read_only, "/usr"));
	assert_true(wstrv_contains(&p->read_only, "/opt"));
	assert_true(wstrv_contains(&p->read_only, "/srv"));
	policy_free(p);
	/* the grandchild may not add what the parent already added */
	expect_error_at("{\"extends\": \"plus-a\", \"filesystem\": {\"read_only+\": [@\"/opt\"]}}",
	                "already in the inherited \"read_only\"");
	remove_profile("plus-a");
}

static void test_builtin_profiles(void **state)
{
	size_t i;

	assert_int_equal(wbuiltin_profiles_n, 3);
	for (i = 0; i < wbuiltin_profiles_n; i++) {
		struct wpolicy *p = NULL;
		struct werr err = { 0 };
		_cleanup_free_ char *src = xasprintf("built-in:%s.json", wbuiltin_profiles[i].name);

		if (policy_load_profile(wbuiltin_profiles[i].name, &p, &err) < 0)
			fail_msg("%s: %s", wbuiltin_profiles[i].name, err.msg);
		assert_string_equal(p->name, wbuiltin_profiles[i].name);
		assert_string_equal(p->source, src);
		assert_non_null(p->description);
		policy_free(p);
	}
}

static void test_profile_workspace(void **state)
{
	struct wpolicy *p = NULL, *d = load_ok("{}");
	struct werr err = { 0 };
	_cleanup_free_ char *a = NULL, *b = NULL;

	assert_int_equal(policy_load_profile("workspace", &p, &err), 0);
	assert_true(p->workspace_writable);
	assert_int_equal(p->net, WNET_NONE);
	/* the default profile is the defaults, spelled out */
	free(d->name);
	d->name = xstrdup("workspace");
	free(d->description);
	d->description = xstrdup(p->description);
	a = policy_to_json(p);
	b = policy_to_json(d);
	assert_string_equal(a, b);
	policy_free(p);
	policy_free(d);
}

static void test_profile_strict(void **state)
{
	struct wpolicy *p = NULL;
	struct werr err = { 0 };

	assert_int_equal(policy_load_profile("strict", &p, &err), 0);
	assert_false(p->workspace_writable);
	assert_true(wstrv_contains(&p->read_only, "$WORKSPACE"));
	assert_int_equal(p->read_write.n, 0);
	assert_int_equal(p->limits.memory, 256ULL << 20);
	assert_int_equal(p->limits.pids, 64);
	assert_int_equal(p->limits.wall_ms, 60000);
	assert_int_equal(p->limits.cpu_ms, 60000);
	assert_int_equal(p->limits.output, 1ULL << 20);
	assert_int_equal(p->limits.file_size, 64ULL << 20);
	assert_string_equal(p->tmpfs[0].path, "/tmp");
	assert_int_equal(p->tmpfs[0].size, 64ULL << 20);
	assert_int_equal(p->net, WNET_NONE);
	assert_int_equal(p->optional.n, ARRAY_SIZE(etc));
	policy_free(p);
}

static void test_profile_network(void **state)
{
	struct wpolicy *p = NULL;
	struct werr err = { 0 };

	assert_int_equal(policy_load_profile("network", &p, &err), 0);
	assert_int_equal(p->net, WNET_PROXY);
	assert_true(wstrv_contains(&p->net_allow, "pypi.org:443"));
	assert_true(wstrv_contains(&p->net_allow, "registry.npmjs.org:443"));
	assert_true(p->workspace_writable);
	assert_int_equal(p->limits.memory, 1ULL << 30);    /* from workspace */
	policy_free(p);
}

static void test_extends_user_profile(void **state)
{
	struct wpolicy *p = NULL;
	const char *child = "{\"name\": \"mine\", \"extends\": \"tight\", "
	                    "\"limits\": {\"pids\": 8}}";

	write_profile("tight", "{\"extends\": \"strict\", \"limits\": {\"memory\": \"512M\"},"
	              "\"description\": \"tight\"}");
	p = load_ok(child);
	assert_string_equal(p->name, "mine");
	assert_null(p->description);                      /* not inherited */
	assert_int_equal(p->limits.pids, 8);              /* own */
	assert_int_equal(p->limits.memory, 512ULL << 20); /* from tight */
	assert_int_equal(p->limits.wall_ms, 60000);       /* from strict */
	assert_false(p->workspace_writable);              /* from strict */
	policy_free(p);
	remove_profile("tight");
}

/* A user profile may take a built-in's name and extend the built-in. */
static void test_user_overrides_builtin(void **state)
{
	struct wpolicy *p = NULL;
	struct werr err = { 0 };
	struct wstrv names = { 0 }, sources = { 0 };
	_cleanup_free_ char *path = profile_path("workspace");

	write_profile("workspace", "{\"name\": \"workspace\", \"extends\": \"workspace\", "
	              "\"description\": \"mine\", \"limits\": {\"pids\": 10}}");
	assert_int_equal(policy_load_profile("workspace", &p, &err), 0);
	assert_string_equal(p->source, path);
	assert_string_equal(p->description, "mine");
	assert_int_equal(p->limits.pids, 10);
	assert_int_equal(p->limits.memory, 1ULL << 30);
	policy_free(p);

	write_profile("extra", "{}");
	assert_int_equal(policy_list(&names, &sources, &err), 0);
	assert_int_equal(names.n, 4);
	assert_string_equal(names.v[0], "extra");
	assert_string_equal(names.v[1], "network");
	assert_string_equal(names.v[3], "workspace");
	assert_string_equal(sources.v[1], "built-in");
	assert_string_equal(sources.v[3], path);
	wstrv_free(&names);
	wstrv_free(&sources);
	remove_profile("workspace");
	remove_profile("extra");
}

static void test_xdg_config_home(void **state)
{
	struct wpolicy *p = NULL;
	struct werr err = { 0 };
	_cleanup_free_ char *other = xasprintf("%s/other", tmpdir);
	_cleanup_free_ char *dir = xasprintf("%s/other/warden/profiles", tmpdir);
	_cleanup_free_ char *file = xasprintf("%s/only-here.json", dir);
	_cleanup_free_ char *saved = xstrdup(getenv("XDG_CONFIG_HOME"));

	assert_int_equal(mkdir_p(dir, 0700, &err), 0);
	write_text(file, "{\"description\": \"found\"}");
	assert_int_equal(policy_load_profile("only-here", &p, &err), -1);
	setenv("XDG_CONFIG_HOME", other, 1);
	assert_int_equal(policy_load_profile("only-here", &p, &err), 0);
	assert_string_equal(p->description, "found");
	assert_string_equal(p->source, file);
	policy_free(p);
	setenv("XDG_CONFIG_HOME", saved, 1);
	unlink(file);
}

/* ---- round trips ---------------------------------------------------------- */

static void assert_strv_eq(const struct wstrv *a, const struct wstrv *b)
{
	size_t i;

	assert_int_equal(a->n, b->n);
	for (i = 0; i < a->n; i++)
		assert_string_equal(a->v[i], b->v[i]);
}

static void assert_policy_eq(const struct wpolicy *a, const struct wpolicy *b)
{
	size_t i;

	assert_string_equal(a->name, b->name);
	if (a->description || b->description)
		assert_string_equal(a->description, b->description);
	assert_strv_eq(&a->read_only, &b->read_only);
	assert_strv_eq(&a->read_write, &b->read_write);
	assert_strv_eq(&a->optional, &b->optional);
	assert_int_equal(a->n_tmpfs, b->n_tmpfs);
	for (i = 0; i < a->n_tmpfs; i++) {
		assert_string_equal(a->tmpfs[i].path, b->tmpfs[i].path);
		assert_int_equal(a->tmpfs[i].size, b->tmpfs[i].size);
	}
	assert_strv_eq(&a->hide, &b->hide);
	assert_int_equal(a->workspace_writable, b->workspace_writable);
	assert_int_equal(a->net, b->net);
	assert_strv_eq(&a->net_allow, &b->net_allow);
	assert_int_equal(a->limits.memory, b->limits.memory);
	assert_int_equal(a->limits.pids, b->limits.pids);
	assert_true(a->limits.cpus == b->limits.cpus);
	assert_int_equal(a->limits.wall_ms, b->limits.wall_ms);
	assert_int_equal(a->limits.cpu_ms, b->limits.cpu_ms);
	assert_int_equal(a->limits.file_size, b->limits.file_size);
	assert_int_equal(a->limits.open_files, b->limits.open_files);
	assert_int_equal(a->limits.output, b->limits.output);
	assert_int_equal(a->deny_action, b->deny_action);
	assert_int_equal(a->audit, b->audit);
	assert_strv_eq(&a->allow_extra, &b->allow_extra);
	assert_strv_eq(&a->deny_extra, &b->deny_extra);
	assert_strv_eq(&a->env_pass, &b->env_pass);
	assert_strv_eq(&a->env_set_keys, &b->env_set_keys);
	assert_strv_eq(&a->env_set_vals, &b->env_set_vals);
}

static void round_trip(const struct wpolicy *p)
{
	_cleanup_free_ char *j1 = policy_to_json(p), *j2 = NULL;
	struct wpolicy *q = NULL;
	struct werr err = { 0 };

	assert_non_null(j1);
	if (policy_load_buffer("shown.json", j1, strlen(j1), &q, &err) < 0)
		fail_msg("%s\n%s", err.msg, j1);
	assert_policy_eq(p, q);
	j2 = policy_to_json(q);
	assert_string_equal(j1, j2);
	policy_free(q);
}

static void test_round_trip_builtins(void **state)
{
	size_t i;

	for (i = 0; i < wbuiltin_profiles_n; i++) {
		struct wpolicy *p = NULL;
		struct werr err = { 0 };

		assert_int_equal(policy_load_profile(wbuiltin_profiles[i].name, &p, &err), 0);
		round_trip(p);
		policy_free(p);
	}
}

static void test_round_trip_custom(void **state)
{
	struct wpolicy *p = load_ok(
		"{\"name\": \"odd\", \"description\": \"quotes \\\" and \\\\ and \xc3\xa9\","
		"\"filesystem\": {\"read_only\": [\"/usr\", \"/opt/a b\"], \"read_write\": [],"
		" \"tmpfs\": {\"/tmp\": \"1.5G\", \"/var/tmp\": 12345}, \"hide\": []},"
		"\"network\": {\"mode\": \"proxy\", \"allow\": []},"
		"\"limits\": {\"memory\": \"unlimited\", \"pids\": \"unlimited\", \"cpus\": 0.1,"
		" \"wall_time\": \"1.5s\", \"cpu_time\": \"unlimited\", \"file_size\": 1000,"
		" \"open_files\": \"unlimited\", \"output\": \"3K\"},"
		"\"syscalls\": {\"deny_action\": \"kill\", \"audit\": false,"
		" \"allow_extra\": [\"personality\"], \"deny_extra\": [\"mincore\", \"madvise\"]},"
		"\"env\": {\"pass\": [], \"set\": {\"TAB\": \"a\\tb\", \"D\": \"$$x $HOME\"}}}");

	round_trip(p);
	policy_free(p);
	p = load_ok("{\"limits\": {\"cpus\": 2.75}}");
	round_trip(p);
	policy_free(p);
}

/* ---- policy_expand ---------------------------------------------------------- */

static void expand_ok(const char *raw, const char *want)
{
	char *out = NULL;
	struct werr err = { 0 };

	if (policy_expand(raw, "/w/s", "/home/j", &out, &err) < 0)
		fail_msg("%s: %s", raw, err.msg);
	assert_string_equal(out, want);
	free(out);
}

static void expand_bad(const char *raw, const char *ws, const char *home, const char *phrase)
{
	char *out = (char *)0x1;
	struct werr err = { 0 };

	assert_int_equal(policy_expand(raw, ws, home, &out, &err), -1);
	assert_null(out);
	if (!strstr(err.msg, phrase))
		fail_msg("want '%s' in: %s", phrase, err.msg);
}

static void test_expand(void **state)
{
	expand_ok("$WORKSPACE", "/w/s");
	expand_ok("${WORKSPACE}/src", "/w/s/src");
	expand_ok("$HOME/.cache", "/home/j/.cache");
	expand_ok("${HOME}", "/home/j");
	expand_ok("/usr/lib", "/usr/lib");
	expand_ok("C.UTF-8", "C.UTF-8");                     /* env values */
	expand_ok("$WORKSPACE/bin:$HOME/bin:/usr/bin", "/w/s/bin:/home/j/bin:/usr/bin");
	expand_ok("cost $$5", "cost $5");
	expand_ok("", "");

	expand_bad("$USER/x", "/w", "/h", "unknown variable \"$USER\"");
	expand_bad("${WORKSPACE", "/w", "/h", "unknown variable \"${WORKSPACE\"");
	expand_bad("${PATH}/x", "/w", "/h", "unknown variable \"${PATH}\"");
	expand_bad("$WORKSPACEX", "/w", "/h", "unknown variable \"$WORKSPACEX\"");
	expand_bad("a$", "/w", "/h", "unknown variable \"$\"");
	expand_bad("$1", "/w", "/h", "unknown variable \"$1\"");
	expand_bad("$WORKSPACE/x", NULL, "/h", "not set");
	expand_bad("$HOME/x", "/w", "rel/home", "not an absolute path");
	expand_ok("$$x", "$x");       /* a value starting with a literal '$' */
}

static void test_free_null(void **state)
{
	struct wstrv v = { 0 };

	policy_free(NULL);
	wstrv_free(NULL);
	wstrv_free(&v);
	wstrv_push(&v, "a");
	wstrv_push(&v, "b");
	assert_true(wstrv_contains(&v, "b"));
	assert_false(wstrv_contains(&v, "c"));
	assert_null(v.v[2]);     /* NULL-terminated */
	wstrv_free(&v);
	assert_int_equal(v.n, 0);
}

/* ---- main ----------------------------------------------------------------- */

static int group_setup(void **state)
{
	struct werr err = { 0 };
	_cleanup_free_ char *dir = NULL;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/warden-test-policy.XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	dir = xasprintf("%s/warden/profiles", tmpdir);
	if (mkdir_p(dir, 0700, &err) < 0)
		return -1;
	/* no profile from the real ~/.config may leak in */
	setenv("XDG_CONFIG_HOME", tmpdir, 1);
	return 0;
}

static int group_teardown(void **state)
{
	_cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", tmpdir);

	if (strncmp(tmpdir, "/tmp/warden-test-policy.", 24) == 0)
		(void)!system(cmd);
	return 0;
}

/* Issue 10: the three network modes parse, show and round-trip; allow
 * entries take the netallow forms (no port, wildcards, literals); --allow
 * adds checked entries without duplicates. */
static void test_net_modes(void **state)
{
	static const char *const modes[] = { "none", "loopback", "proxy" };
	static const enum wnet_mode want[] = { WNET_NONE, WNET_LOOPBACK, WNET_PROXY };
	struct werr err = { 0 };

	for (size_t i = 0; i < ARRAY_SIZE(modes); i++) {
		char *text = xasprintf("{\"network\": {\"mode\": \"%s\"}}", modes[i]);
		struct wpolicy *p = NULL, *q = NULL;
		char *json, *mode_line;

		assert_int_equal(policy_load_buffer("t.json", text, strlen(text), &p, &err), 0);
		assert_int_equal(p->net, want[i]);
		assert_string_equal(policy_net_mode_name(p->net), modes[i]);
		json = policy_to_json(p);
		mode_line = xasprintf("\"mode\": \"%s\"", modes[i]);
		assert_non_null(strstr(json, mode_line));
		assert_int_equal(policy_load_buffer("shown.json", json, strlen(json), &q, &err), 0);
		assert_int_equal(q->net, want[i]);
		policy_free(p);
		policy_free(q);
		free(json);
		free(mode_line);
		free(text);
	}
	{
		const char *text = "{\"network\": {\"mode\": \"proxy\", \"allow\": [\"pypi.org\", "
		                   "\"*.example.org:8443\", \"127.0.0.1:8080\", \"[::1]:80\"]}}";
		char *extra[] = { "pypi.org", "files.pythonhosted.org:443" };
		char *bad[] = { "http://x.org" };
		struct wpolicy *p = NULL;

		assert_int_equal(policy_load_buffer("t.json", text, strlen(text), &p, &err), 0);
		assert_int_equal(p->net_allow.n, 4);
		assert_int_equal(policy_add_allow(p, extra, 2, &err), 0);
		assert_int_equal(p->net_allow.n, 5);      /* pypi.org was there already */
		assert_true(wstrv_contains(&p->net_allow, "files.pythonhosted.org:443"));
		assert_int_equal(policy_add_allow(p, bad, 1, &err), -1);
		assert_non_null(strstr(err.msg, "--allow: \"http://x.org\" is a URL"));
		assert_int_equal(p->net_allow.n, 5);
		policy_free(p);
	}
	{
		enum wnet_mode m = WNET_NONE;
		assert_int_equal(policy_net_mode_parse("routed", &m), -1);
		assert_int_equal(policy_net_mode_parse("loopback", &m), 0);
		assert_int_equal(m, WNET_LOOPBACK);
	}
}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_bad_exact_position),
		cmocka_unit_test(test_extends_cycle),
		cmocka_unit_test(test_extends_self),
		cmocka_unit_test(test_extends_error_in_parent),
		cmocka_unit_test(test_profile_name_mismatch),
		cmocka_unit_test(test_unknown_profile),
		cmocka_unit_test(test_load_file_errors),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_explicit_wins),
		cmocka_unit_test(test_append),
		cmocka_unit_test(test_append_chain),
		cmocka_unit_test(test_builtin_profiles),
		cmocka_unit_test(test_profile_workspace),
		cmocka_unit_test(test_profile_strict),
		cmocka_unit_test(test_profile_network),
		cmocka_unit_test(test_extends_user_profile),
		cmocka_unit_test(test_user_overrides_builtin),
		cmocka_unit_test(test_xdg_config_home),
		cmocka_unit_test(test_round_trip_builtins),
		cmocka_unit_test(test_round_trip_custom),
		cmocka_unit_test(test_expand),
		cmocka_unit_test(test_free_null),
		cmocka_unit_test(test_net_modes),
	};
	size_t nb = ARRAY_SIZE(bad_cases), nf = ARRAY_SIZE(fixed), i;
	struct CMUnitTest *tests = xcalloc(nb + nf, sizeof(*tests));
	int r;

	for (i = 0; i < nb; i++) {
		tests[i].name = xasprintf("bad_%s", bad_cases[i].name);
		tests[i].test_func = test_bad;
		tests[i].initial_state = (void *)&bad_cases[i];
	}
	for (i = 0; i < nf; i++)
		tests[nb + i] = fixed[i];
	r = _cmocka_run_group_tests("policy", tests, nb + nf, group_setup, group_teardown);
	for (i = 0; i < nb; i++)
		free((char *)tests[i].name);
	free(tests);
	return r;
}
