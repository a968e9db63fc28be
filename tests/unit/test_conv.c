/* Conversations on disk (LMC, atomic writes), the script export (run for
 * real with sh), the history trimming, and config.json (precedence,
 * errors with line and column). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chat/config.h"
#include "chat/conv.h"
#include "lang.h"
#include "core/lmc.h"
#include "warden/util.h"

static char tmpdir[64];

static int setup(void **state)
{
	(void)state;
	strcpy(tmpdir, "/tmp/warden-test-conv.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static json_object *sample(void)
{
	json_object *a = json_object_new_array();

	json_object_array_add(a, lmc_msg("user", "message", NULL, "Analyse sales.csv, please!"));
	json_object_array_add(a, lmc_msg("assistant", "message", NULL, "Let me look. ünïcödé"));
	json_object_array_add(a, lmc_msg("assistant", "code", "python", "x = 40\nprint('step', 1)"));
	json_object_array_add(a, lmc_msg("computer", "console", "output", "step 1\n"));
	json_object_array_add(a, lmc_msg("assistant", "code", "python", "print('x+2 =', x + 2)"));
	json_object_array_add(a, lmc_msg("computer", "console", "output", "x+2 = 42\n"));
	json_object_array_add(a, lmc_msg("assistant", "code", "shell", "rm -rf /important"));
	json_object_array_add(a, lmc_msg("computer", "console", "output", CONV_DECLINED));
	json_object_array_add(a, lmc_msg("assistant", "code", "shell",
	                             "echo \"from shell: $((6 * 7))\"\ncat <<'WARDEN_CODE_3'\nheredoc inside\nWARDEN_CODE_3"));
	json_object_array_add(a, lmc_msg("computer", "console", "output", "from shell: 42\n"));
	json_object_array_add(a, lmc_msg("assistant", "code", "python", "print('never ran')"));
	json_object_array_add(a, lmc_msg("computer", "console", "output",
	                             CONV_NOT_RUN "the user interrupted."));
	json_object_array_add(a, lmc_msg("assistant", "code", "python", "print('back in python')"));
	json_object_array_add(a, lmc_msg("computer", "console", "output", "back in python\n"));
	json_object_array_add(a, lmc_msg("assistant", "message", NULL, "Done."));
	return a;
}

static void test_save_load_round_trip(void **state)
{
	struct werr err = { 0 };
	json_object *a = sample(), *b = NULL;
	char *path = conv_new_path(tmpdir, "Analyse sales.csv, please!");
	DIR *d;
	struct dirent *de;
	int files = 0;
	struct stat st;

	(void)state;
	assert_non_null(strstr(path, "/conversations/"));
	assert_non_null(strstr(path, "-analyse-sales-csv-please.json"));
	assert_int_equal(conv_save(path, a, &err), 0);
	/* saved twice: replaced atomically, no temp file left behind */
	json_object_array_add(a, lmc_msg("user", "message", NULL, "and again"));
	assert_int_equal(conv_save(path, a, &err), 0);
	{
		char *dir = conv_dir(tmpdir);

		d = opendir(dir);
		assert_non_null(d);
		while ((de = readdir(d)))
			if (de->d_name[0] != '.') {
				files++;
				assert_non_null(strstr(de->d_name, ".json"));
				assert_null(strstr(de->d_name, ".tmp"));
			}
		closedir(d);
		free(dir);
	}
	assert_int_equal(files, 1);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);

	if (conv_load(path, &b, &err) < 0)
		fail_msg("%s", err.msg);
	assert_true(json_object_equal(a, b));
	/* LMC: role/type/format/content and nothing else */
	{
		json_object *c = json_object_array_get_idx(b, 2);

		assert_int_equal(json_object_object_length(c), 4);
		assert_string_equal(json_object_get_string(json_object_object_get(c, "format")), "python");
	}
	{
		char *latest = NULL;

		assert_int_equal(conv_latest(tmpdir, &latest, &err), 0);
		assert_string_equal(latest, path);
		free(latest);
	}
	json_object_put(a);
	json_object_put(b);
	free(path);
}

static void load_bad(const char *text, const char *phrase)
{
	struct werr err = { 0 };
	char path[128];
	json_object *o = (json_object *)1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/bad.json", tmpdir);
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	assert_int_equal(conv_load(path, &o, &err), -1);
	assert_null(o);
	if (!strstr(err.msg, phrase))
		fail_msg("want '%s' in: %s", phrase, err.msg);
}

static void test_load_rejects_what_is_not_lmc(void **state)
{
	(void)state;
	load_bad("{\"role\": \"user\"}", "must be a JSON array");
	load_bad("[{\"role\": \"root\", \"type\": \"message\", \"content\": \"x\"}]", "message 1: \"role\"");
	load_bad("[{\"role\": \"user\", \"type\": \"message\"}]", "\"content\" must be a string");
	load_bad("[{\"role\": \"assistant\", \"type\": \"code\", \"content\": \"x\"}]", "needs a \"format\"");
	load_bad("[\n  {\"role\": \"user\",\n   \"type\": \"message\" \"content\": 1}]", "bad.json:3:");
	load_bad("[{\"role\": \"user\"", "ends too early");
	load_bad("[] junk", "unexpected text after");
}

static void test_resolve_stays_under_data(void **state)
{
	struct werr err = { 0 };
	char *p = NULL, abs[256];

	(void)state;
	assert_int_equal(conv_resolve(tmpdir, "mine", &p, &err), 0);
	assert_non_null(strstr(p, "/conversations/mine.json"));
	free(p);
	assert_int_equal(conv_resolve(tmpdir, "../../etc/passwd", &p, &err), -1);
	assert_null(p);
	assert_int_equal(conv_resolve(tmpdir, "/etc/passwd", &p, &err), -1);
	assert_non_null(strstr(err.msg, "not under"));
	snprintf(abs, sizeof(abs), "%s/x.json", tmpdir);
	assert_int_equal(conv_resolve(tmpdir, abs, &p, &err), 0);
	assert_string_equal(p, abs);
	free(p);
	snprintf(abs, sizeof(abs), "%s-other/x.json", tmpdir);
	assert_int_equal(conv_resolve(tmpdir, abs, &p, &err), -1);
}

/* %jupyter's file: under <data>/notebooks/, never elsewhere (G160) */
static void test_notebook_path_stays_under_data(void **state)
{
	struct werr err = { 0 };
	char *p = NULL, abs[256];

	(void)state;
	assert_int_equal(conv_notebook_path(tmpdir, "mine", NULL, &p, &err), 0);
	assert_non_null(strstr(p, "/notebooks/mine.ipynb"));
	free(p);
	assert_int_equal(conv_notebook_path(tmpdir, NULL, "/x/conversations/2025-a-b.json", &p,
	                                    &err), 0);
	assert_non_null(strstr(p, "/notebooks/2025-a-b.ipynb"));
	free(p);
	assert_int_equal(conv_notebook_path(tmpdir, "../up", NULL, &p, &err), -1);
	assert_null(p);
	assert_int_equal(conv_notebook_path(tmpdir, "a/../../up", NULL, &p, &err), -1);
	assert_int_equal(conv_notebook_path(tmpdir, "/etc/x", NULL, &p, &err), -1);
	assert_non_null(strstr(err.msg, "not under"));
	snprintf(abs, sizeof(abs), "%s-other/x", tmpdir);
	assert_int_equal(conv_notebook_path(tmpdir, abs, NULL, &p, &err), -1);
	snprintf(abs, sizeof(abs), "%s/nb/x.ipynb", tmpdir);
	assert_int_equal(conv_notebook_path(tmpdir, abs, NULL, &p, &err), 0);
	assert_string_equal(p, abs);
	free(p);
}

/* The notebook's shape: markdown for text, code cells with their outputs;
 * a made-up language name becomes a cell magic only when it is a plain word */
static void test_notebook_cells(void **state)
{
	json_object *msgs = json_tokener_parse(
		"[{\"role\":\"user\",\"type\":\"message\",\"content\":\"hi\"},"
		"{\"role\":\"assistant\",\"type\":\"code\",\"format\":\"shell\",\"content\":\"echo a\\necho b\"},"
		"{\"role\":\"computer\",\"type\":\"console\",\"format\":\"output\",\"content\":\"a\\nb\\n\"},"
		"{\"role\":\"computer\",\"type\":\"image\",\"format\":\"base64.jpeg\",\"content\":\"/9j/\"},"
		"{\"role\":\"assistant\",\"type\":\"code\",\"format\":\"x\\nimport os\",\"content\":\"1\"}]");
	json_object *nb, *cells, *c, *v, *o;

	(void)state;
	assert_non_null(msgs);
	nb = conv_notebook(msgs);
	assert_int_equal(json_object_get_int(json_object_object_get(nb, "nbformat")), 4);
	cells = json_object_object_get(nb, "cells");
	assert_int_equal(json_object_array_length(cells), 3);
	c = json_object_array_get_idx(cells, 0);
	assert_string_equal(json_object_get_string(json_object_object_get(c, "cell_type")), "markdown");
	c = json_object_array_get_idx(cells, 1);
	v = json_object_object_get(c, "source");
	assert_int_equal(json_object_array_length(v), 3);
	assert_string_equal(json_object_get_string(json_object_array_get_idx(v, 0)), "%%bash\n");
	assert_string_equal(json_object_get_string(json_object_array_get_idx(v, 1)), "echo a\n");
	assert_string_equal(json_object_get_string(json_object_array_get_idx(v, 2)), "echo b");
	v = json_object_object_get(c, "outputs");
	assert_int_equal(json_object_array_length(v), 2);
	o = json_object_array_get_idx(v, 1);
	assert_string_equal(json_object_get_string(json_object_object_get(o, "output_type")),
	                    "display_data");
	assert_string_equal(json_object_get_string(json_object_object_get(
		json_object_object_get(o, "data"), "image/jpeg")), "/9j/");
	/* a language with a newline in it is no magic line of its own */
	c = json_object_array_get_idx(cells, 2);
	v = json_object_object_get(c, "source");
	assert_int_equal(json_object_array_length(v), 1);
	assert_string_equal(json_object_get_string(json_object_array_get_idx(v, 0)), "1");
	json_object_put(nb);
	json_object_put(msgs);
}

static void test_export_script_runs(void **state)
{
	struct werr err = { 0 };
	json_object *a = sample();
	char path[128], cmd[512], out[1024] = "";
	FILE *f;
	size_t n;
	char *text;

	(void)state;
	text = conv_script(a, "test conversation");
	assert_non_null(strstr(text, "#!/bin/sh\n"));
	assert_null(strstr(text, "rm -rf /important"));   /* declined */
	assert_null(strstr(text, "never ran"));           /* not run */
	free(text);
	snprintf(path, sizeof(path), "%s/script.sh", tmpdir);
	assert_int_equal(conv_export_script(a, "test conversation", path, &err), 0);
	snprintf(cmd, sizeof(cmd), "cd '%s' && sh '%s' 2>&1", tmpdir, path);
	f = popen(cmd, "r");
	assert_non_null(f);
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	assert_int_equal(pclose(f), 0);
	/* both python blocks share one interpreter, as they shared a session;
	 * a heredoc inside the code does not end the script's heredoc */
	assert_string_equal(out, "step 1\nx+2 = 42\nfrom shell: 42\nheredoc inside\nback in python\n");
	json_object_put(a);
}

/* The export's languages are the session's, with the same aliases
 * (supervisor/lang.c): a block runs in the script under the language it
 * ran under in the session. */
static void test_script_languages_are_the_sessions(void **state)
{
	size_t n;
	const struct conv_interp *in = conv_interp_all(&n);

	(void)state;
	assert_int_equal(n, wlangs_n);
	for (size_t i = 0; i < wlangs_n; i++) {
		char aliases[128], *save = NULL;

		assert_non_null(conv_interp_find(wlangs[i].name));
		assert_string_equal(conv_interp_find(wlangs[i].name)->name, wlangs[i].name);
		snprintf(aliases, sizeof(aliases), "%s", wlangs[i].aliases);
		for (char *a = strtok_r(aliases, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
			assert_non_null(conv_interp_find(a));
			assert_string_equal(conv_interp_find(a)->name, wlangs[i].name);
		}
	}
	for (size_t i = 0; i < n; i++) {
		char names[128], *save = NULL;

		snprintf(names, sizeof(names), "%s", in[i].names);
		for (char *a = strtok_r(names, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
			assert_non_null(wlang_find(a));
			assert_string_equal(wlang_find(a)->name, in[i].name);
		}
	}
	assert_null(conv_interp_find("go"));
	assert_null(conv_interp_find(""));
}

/* Interrupted blocks are left out and named; a new jail of a language
 * restarts its interpreter, and only where an earlier block ran in it. */
static void test_script_reads_the_notes(void **state)
{
	json_object *a = json_object_new_array();
	char *text;

	(void)state;
	json_object_array_add(a, lmc_msg("assistant", "code", "py", "x = 1"));
	json_object_array_add(a, lmc_msg("computer", "console", "output",
	                                 "(no output)\n[warden: this block ran in a new python jail: "
	                                 "...]"));
	json_object_array_add(a, lmc_msg("assistant", "code", "python", "import time; LONG"));
	json_object_array_add(a, lmc_msg("computer", "console", "output",
	                                 "part\n" CONV_INTERRUPTED));
	json_object_array_add(a, lmc_msg("assistant", "code", "python", "print(x)"));
	json_object_array_add(a, lmc_msg("computer", "console", "output",
	                                 "1\n" CONV_NEW_JAIL "python jail: what earlier python "
	                                 "blocks defined is gone]"));
	json_object_array_add(a, lmc_msg("assistant", "code", "go", "fmt.Println(1)"));
	json_object_array_add(a, lmc_msg("computer", "console", "output", "1"));
	text = conv_script(a, "c.json");
	assert_null(strstr(text, "LONG"));
	assert_non_null(strstr(text, "#   block 2 (python): left out: the user interrupted it"));
	assert_non_null(strstr(text, "#   block 4 (go): left out: no interpreter is known"));
	/* one restart: before block 3, not before block 1 (nothing ran before) */
	assert_non_null(strstr(text, "warden_restart python\n\n# block 3 (python)"));
	assert_null(strstr(strstr(text, "warden_restart python\n") + 1, "\nwarden_restart python\n"));
	assert_null(strstr(text, "\nwarden_block go"));
	free(text);
	json_object_put(a);
}

static void test_trim_keeps_latest_and_pairs(void **state)
{
	json_object *a = sample(), *t;
	char big[4000];

	(void)state;
	t = conv_trim(a, 1000000);
	assert_int_equal(json_object_array_length(t), json_object_array_length(a));
	json_object_put(t);
	/* a tiny budget keeps the last message only, never a lone tool result */
	t = conv_trim(a, 1);
	assert_int_equal(json_object_array_length(t), 1);
	json_object_put(t);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	json_object_array_add(a, lmc_msg("user", "message", NULL, big));
	json_object_array_add(a, lmc_msg("assistant", "code", "python", "print(1)"));
	json_object_array_add(a, lmc_msg("computer", "console", "output", "1"));
	t = conv_trim(a, 1100);
	assert_string_equal(json_object_get_string(json_object_object_get(
		json_object_array_get_idx(t, 0), "role")), "user");
	assert_int_equal(json_object_array_length(t), 3);
	assert_true(conv_tokens(a) > 1000);
	json_object_put(t);
	json_object_put(a);
}

/* ---- config.json ---- */

static const char cfg_text[] =
	"{\n"
	"  \"model\": \"openai/gpt-4o\",\n"
	"  \"auto_run\": false,\n"
	"  \"max_output\": 1000,\n"
	"  \"profiles\": {\n"
	"    \"local\": {\"model\": \"ollama/llama3\", \"api_base\": \"http://127.0.0.1:11434/v1\",\n"
	"              \"auto_run\": true}\n"
	"  }\n"
	"}\n";

static void test_config_precedence(void **state)
{
	struct werr err = { 0 };
	struct chat_settings s, cmd;

	(void)state;
	assert_int_equal(config_parse("config.json", cfg_text, strlen(cfg_text), NULL, &s, &err), 0);
	assert_string_equal(s.model, "openai/gpt-4o");
	assert_int_equal(s.auto_run, 0);
	assert_int_equal(s.max_output, 1000);
	assert_null(s.api_base);
	chat_settings_free(&s);

	assert_int_equal(config_parse("config.json", cfg_text, strlen(cfg_text), "local", &s, &err), 0);
	assert_string_equal(s.model, "ollama/llama3");            /* profile over top level */
	assert_string_equal(s.api_base, "http://127.0.0.1:11434/v1");
	assert_int_equal(s.auto_run, 1);
	assert_int_equal(s.max_output, 1000);                     /* top level kept */
	chat_settings_init(&cmd);
	cmd.model = xstrdup("anthropic/claude-x");                /* command line over both */
	chat_settings_merge(&s, &cmd);
	assert_string_equal(s.model, "anthropic/claude-x");
	assert_string_equal(s.api_base, "http://127.0.0.1:11434/v1");
	chat_settings_free(&cmd);
	chat_settings_free(&s);

	assert_int_equal(config_parse("config.json", cfg_text, strlen(cfg_text), "nope", &s, &err), -1);
	assert_non_null(strstr(err.msg, "no chat profile \"nope\""));
	assert_non_null(strstr(err.msg, "local"));
}

static void cfg_bad(const char *text, const char *phrase)
{
	struct werr err = { 0 };
	struct chat_settings s;

	assert_int_equal(config_parse("/home/u/.config/warden/config.json", text, strlen(text), NULL,
	                              &s, &err), -1);
	if (!strstr(err.msg, phrase))
		fail_msg("want '%s' in: %s", phrase, err.msg);
	assert_null(s.model);
}

static void test_config_errors_name_the_line(void **state)
{
	(void)state;
	cfg_bad("{\n  \"model\": \"x\",\n  \"modle\": \"y\"\n}",
	        "config.json:3:3: \"modle\" is not a setting");
	cfg_bad("{\n  \"modle\": \"y\"\n}", "known keys are: model, api_base");
	cfg_bad("{\"profiles\": {\"p\": {\n\"auto_runn\": true}}}",
	        "config.json:2:1: \"auto_runn\" is not a setting (in the profile \"p\")");
	cfg_bad("{\n\n  \"auto_run\": \"yes\"}", "config.json:3:3: \"auto_run\" must be true or false");
	cfg_bad("{\"max_output\": -5}", "must be a positive whole number");
	cfg_bad("{\n  \"model\": \"x\"\n  \"api_base\": \"y\"\n}", "config.json:3:");
	cfg_bad("[1]", "must be a JSON object");
}

static void test_config_missing_file_is_empty(void **state)
{
	struct werr err = { 0 };
	struct chat_settings s;

	(void)state;
	assert_int_equal(config_load(tmpdir, NULL, &s, &err), 0);
	assert_null(s.model);
	assert_int_equal(s.auto_run, -1);
	assert_int_equal(config_load(tmpdir, "x", &s, &err), -1);
	assert_non_null(strstr(err.msg, "does not exist"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_save_load_round_trip),
		cmocka_unit_test(test_load_rejects_what_is_not_lmc),
		cmocka_unit_test(test_resolve_stays_under_data),
		cmocka_unit_test(test_notebook_path_stays_under_data),
		cmocka_unit_test(test_notebook_cells),
		cmocka_unit_test(test_export_script_runs),
		cmocka_unit_test(test_script_languages_are_the_sessions),
		cmocka_unit_test(test_script_reads_the_notes),
		cmocka_unit_test(test_trim_keeps_latest_and_pairs),
		cmocka_unit_test(test_config_precedence),
		cmocka_unit_test(test_config_errors_name_the_line),
		cmocka_unit_test(test_config_missing_file_is_empty),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
