/* llm_extract_code: fenced blocks and each repair of a tool call written
 * as text; llm_repair_call on its own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/llm.h"
#include "llm/extract.h"
#include "core/lmc.h"

/* want: "M:text" for a message, "C:lang:code" for code; NULL-terminated */
static bool fences_only;   /* expect() tests llm_extract_fences with known_label */

static bool known_label(void *ctx, const char *label)
{
	(void)ctx;
	return !strcmp(label, "python") || !strcmp(label, "py") || !strcmp(label, "bash");
}

static void expect(const char *text, const char *const *want)
{
	json_object *a = fences_only ? llm_extract_fences(text, known_label, NULL)
	                             : llm_extract_code(text);
	size_t n = 0;

	assert_non_null(a);
	assert_true(json_object_is_type(a, json_type_array));
	while (want[n])
		n++;
	if (json_object_array_length(a) != n)
		fail_msg("for %s\nwant %zu messages, got %s", text, n,
		         json_object_to_json_string_ext(a, JSON_C_TO_STRING_PRETTY));
	for (size_t i = 0; i < n; i++) {
		json_object *m = json_object_array_get_idx(a, i);
		const char *w = want[i];
		assert_string_equal(lmc_str(m, "role"), "assistant");
		if (w[0] == 'M') {
			assert_string_equal(lmc_str(m, "type"), "message");
			if (strcmp(lmc_str(m, "content"), w + 2) != 0)
				fail_msg("message %zu: want [%s] got [%s]", i, w + 2, lmc_str(m, "content"));
		} else {
			const char *colon = strchr(w + 2, ':');
			char lang[32];
			snprintf(lang, sizeof(lang), "%.*s", (int)(colon - (w + 2)), w + 2);
			assert_string_equal(lmc_str(m, "type"), "code");
			if (strcmp(lmc_str(m, "format"), lang) != 0 || strcmp(lmc_str(m, "content"), colon + 1) != 0)
				fail_msg("code %zu: want %s [%s] got %s [%s]", i, lang, colon + 1,
				         lmc_str(m, "format"), lmc_str(m, "content"));
		}
	}
	json_object_put(a);
}

#define EXPECT(text, ...) do { const char *const w_[] = { __VA_ARGS__, NULL }; expect(text, w_); } while (0)

static void test_fences(void **state)
{
	EXPECT("Let me count.\n```python\nprint(1)\nprint(2)\n```\nDone.",
	       "M:Let me count.", "C:python:print(1)\nprint(2)", "M:Done.");
	/* tildes, an alias kept as written, CRLF */
	EXPECT("~~~py\r\nx = 1\r\n~~~\r\n", "C:py:x = 1");
	/* two blocks, no prose */
	EXPECT("```bash\nls\n```\n```javascript\nconsole.log(1)\n```",
	       "C:bash:ls", "C:javascript:console.log(1)");
	/* indented fence (inside a list) */
	EXPECT("1. run:\n   ```sh\n   echo hi\n   ```\n2. done",
	       "M:1. run:", "C:sh:   echo hi", "M:2. done");
	/* a longer fence holds a shorter one */
	EXPECT("````markdown\n```python\nx\n```\n````", "M:````markdown\n```python\nx\n```\n````");
	EXPECT("````python\ns = '''\n```\n'''\n````", "C:python:s = '''\n```\n'''");
	/* info string with attributes */
	EXPECT("```python {linenos}\npass\n```", "C:python:pass");
	/* empty block */
	EXPECT("```python\n```", "C:python:");
}

static void test_unlabelled_and_data_fences(void **state)
{
	/* unlabelled: shell (documented in extract.c) */
	EXPECT("Try:\n```\nls -la\n```", "M:Try:", "C:shell:ls -la");
	/* output and data blocks are prose, never run */
	EXPECT("It printed:\n```text\n42\n```\nas expected.",
	       "M:It printed:\n```text\n42\n```\nas expected.");
	EXPECT("```json\n{\"a\": 1}\n```", "M:```json\n{\"a\": 1}\n```");
	EXPECT("```output\nrm -rf /\n```", "M:```output\nrm -rf /\n```");
}

static void test_unclosed_and_inline(void **state)
{
	/* the reply was cut off inside a block: the block runs to the end */
	EXPECT("Here:\n```python\nfor i in range(3):\n    print(i)",
	       "M:Here:", "C:python:for i in range(3):\n    print(i)");
	/* ```inline``` on one line is not a fence */
	EXPECT("Use ```ls``` to list.", "M:Use ```ls``` to list.");
	/* two backticks are not a fence */
	EXPECT("``x``\nok", "M:``x``\nok");
}

static void test_json_tool_call_as_text(void **state)
{
	EXPECT("I will run it.\n{\"name\": \"execute\", \"arguments\": {\"language\": \"python\", "
	       "\"code\": \"print(\\\"hi\\\")\"}}\nThen we see.",
	       "M:I will run it.", "C:python:print(\"hi\")", "M:Then we see.");
	/* arguments as a JSON string of the object */
	EXPECT("{\"name\":\"execute\",\"arguments\":\"{\\\"language\\\":\\\"shell\\\",\\\"code\\\":\\\"ls\\\"}\"}",
	       "C:shell:ls");
	/* "parameters" instead of "arguments", and <tool_call> tags */
	EXPECT("<tool_call>\n{\"name\": \"execute\", \"parameters\": {\"language\": \"python\", \"code\": \"1+1\"}}\n</tool_call>",
	       "C:python:1+1");
	/* {"type":"function","function":{...}} */
	EXPECT("{\"type\":\"function\",\"function\":{\"name\":\"execute\",\"arguments\":{\"language\":\"ruby\",\"code\":\"p 1\"}}}",
	       "C:ruby:p 1");
	/* in a json fence */
	EXPECT("```json\n{\"name\": \"execute\", \"arguments\": {\"language\": \"python\", \"code\": \"x=2\"}}\n```",
	       "C:python:x=2");
	/* JSON that is not a call stays prose */
	EXPECT("The config is {\"name\": \"demo\", \"size\": 3}.",
	       "M:The config is {\"name\": \"demo\", \"size\": 3}.");
	/* a call of some other tool stays prose: nothing runs */
	EXPECT("{\"name\": \"web_search\", \"arguments\": {\"q\": \"x\"}}",
	       "M:{\"name\": \"web_search\", \"arguments\": {\"q\": \"x\"}}");
	/* broken JSON stays prose */
	EXPECT("{\"name\": \"execute\", \"arguments\": {\"language\": \"python\", \"code\": \"x",
	       "M:{\"name\": \"execute\", \"arguments\": {\"language\": \"python\", \"code\": \"x");
}

static void test_tool_named_after_language(void **state)
{
	EXPECT("{\"name\": \"python\", \"arguments\": \"print(1)\"}", "C:python:print(1)");
	EXPECT("ok {\"name\": \"bash\", \"arguments\": {\"code\": \"ls /\"}}", "M:ok", "C:bash:ls /");
	/* language missing from execute's arguments: python */
	EXPECT("{\"name\": \"execute\", \"arguments\": {\"code\": \"pass\"}}", "C:python:pass");
}

static void test_call_syntax(void **state)
{
	EXPECT("Running:\nfunctions.execute({\"language\": \"python\", \"code\": \"print(3)\"})\nok",
	       "M:Running:", "C:python:print(3)", "M:ok");
	EXPECT("execute({\"language\":\"shell\",\"code\":\"date\"})", "C:shell:date");
	EXPECT("execute(language=\"python\", code=\"print('a')\\nprint('b')\")",
	       "C:python:print('a')\nprint('b')");
	EXPECT("execute(code='''x = \"1\"\nprint(x)''', language='python')",
	       "C:python:x = \"1\"\nprint(x)");
	/* not a call: another identifier ending in execute, or no code */
	EXPECT("cursor.reexecute(language=\"python\", code=\"1\")",
	       "M:cursor.reexecute(language=\"python\", code=\"1\")");
	EXPECT("execute(language=\"python\")", "M:execute(language=\"python\")");
	EXPECT("execute(code=\"unterminated)", "M:execute(code=\"unterminated)");
}

/* Tools on, no tool call (issue 20): only labelled fences in a language
 * the session runs are code; unlabelled and data fences, other languages
 * and tool calls written as text stay the model's text. */
static void test_fences_only(void **state)
{
	(void)state;
	fences_only = true;
	EXPECT("Run:\n```py\nprint(1)\n```\nthen\n```bash\nls\n```\nDone.",
	       "M:Run:", "C:py:print(1)", "M:then", "C:bash:ls", "M:Done.");
	EXPECT("```\nls\n```", "M:```\nls\n```");
	EXPECT("```text\nprint(1)\n```", "M:```text\nprint(1)\n```");
	EXPECT("```go\nfmt.Println(1)\n```", "M:```go\nfmt.Println(1)\n```");
	EXPECT("```json\n{\"name\":\"execute\",\"arguments\":{\"language\":\"python\",\"code\":\"x\"}}\n```",
	       "M:```json\n{\"name\":\"execute\",\"arguments\":{\"language\":\"python\",\"code\":\"x\"}}\n```");
	EXPECT("{\"name\":\"execute\",\"arguments\":{\"code\":\"x\"}}",
	       "M:{\"name\":\"execute\",\"arguments\":{\"code\":\"x\"}}");
	EXPECT("no code at all", "M:no code at all");
	fences_only = false;
	{
		char label[8];

		assert_int_equal(llm_fence_label("  python3 {.x}", 14, label, sizeof(label)), 7);
		assert_string_equal(label, "python3");
		assert_int_equal(llm_fence_label("javascript", 10, label, sizeof(label)), 10);
		assert_string_equal(label, "javascr");
		assert_int_equal(llm_fence_label("   ", 3, label, sizeof(label)), 0);
		assert_string_equal(label, "");
	}
}

static void test_empty(void **state)
{
	json_object *a = llm_extract_code(NULL);
	assert_int_equal(json_object_array_length(a), 0);
	json_object_put(a);
	a = llm_extract_code("");
	assert_int_equal(json_object_array_length(a), 0);
	json_object_put(a);
	a = llm_extract_code(" \n\t ");
	assert_int_equal(json_object_array_length(a), 0);
	json_object_put(a);
	EXPECT("just words", "M:just words");
}

static void repair_ok(const char *name, const char *args, const char *lang, const char *code)
{
	char *l = (char *)"x", *c = (char *)"x";
	if (llm_repair_call(name, args, &l, &c) < 0)
		fail_msg("repair(%s, %s) failed", name, args);
	assert_string_equal(l, lang);
	assert_string_equal(c, code);
	free(l);
	free(c);
}

static void repair_bad(const char *name, const char *args)
{
	char *l = (char *)"x", *c = (char *)"x";
	assert_int_equal(llm_repair_call(name, args, &l, &c), -1);
	assert_null(l);
	assert_null(c);
}

static void test_repair_call(void **state)
{
	repair_ok("execute", "{\"language\":\"python\",\"code\":\"1\"}", "python", "1");
	repair_ok("functions.execute", "{\"language\":\"js\",\"code\":\"1\"}", "js", "1");
	repair_ok("execute", "\"{\\\"language\\\":\\\"sh\\\",\\\"code\\\":\\\"ls\\\"}\"", "sh", "ls");
	repair_ok("execute", "print(1)", "python", "print(1)");          /* raw code */
	repair_ok("python", "print(2)", "python", "print(2)");
	repair_ok("python", "\"print(3)\"", "python", "print(3)");       /* a JSON string */
	repair_ok("shell", "{\"command\":\"ls\"}", "shell", "ls");
	repair_ok("bash", "{\"code\":\"ls\",\"language\":\"bash\"}", "bash", "ls");
	repair_bad("execute", "{\"language\":\"python\",\"code\":");   /* cut off */
	repair_bad("execute", "");
	repair_bad("execute", "{\"language\":\"python\"}");            /* no code */
	repair_bad("execute", "[1,2]");
	repair_bad("web_search", "{\"code\":\"x\"}");
	repair_bad("", "print(1)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fences),
		cmocka_unit_test(test_unlabelled_and_data_fences),
		cmocka_unit_test(test_unclosed_and_inline),
		cmocka_unit_test(test_json_tool_call_as_text),
		cmocka_unit_test(test_tool_named_after_language),
		cmocka_unit_test(test_call_syntax),
		cmocka_unit_test(test_fences_only),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_repair_call),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
