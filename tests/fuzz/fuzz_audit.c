/* libFuzzer target: `warden audit`'s reader (waudit_parse_line in
 * cli/cmd_audit.c), which reads a log whose strings hold hostile
 * text, and the writer's escaping (waudit_format in supervisor/audit.c).
 *
 * Checks beyond "does not crash":
 *   - a line the reader accepts is an object with string "ts" and "event";
 *   - whatever code a block holds (the input, NUL-free), the writer makes
 *     one line of it, and the reader gives back exactly one block record
 *     with that code: text in a record can never become a record (the
 *     forgery of finding 6). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *str(json_object *o, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
	       ? json_object_get_string(v) : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_tokener *tok = json_tokener_new();
	json_object *rec, *in;
	char why[160], *line;
	size_t len;

	if (!tok)
		abort();
	rec = waudit_parse_line(tok, (const char *)data, size, why, sizeof(why));
	if (rec && (!json_object_is_type(rec, json_type_object) || !str(rec, "ts") || !str(rec, "event")))
		abort();
	json_object_put(rec);

	if (!memchr(data, '\0', size)) {
		in = json_object_new_object();
		json_object_object_add(in, "session", json_object_new_string("0123456789ab"));
		json_object_object_add(in, "block", json_object_new_int(1));
		json_object_object_add(in, "language", json_object_new_string("python"));
		json_object_object_add(in, "code", json_object_new_string_len((const char *)data, (int)size));
		json_object_object_add(in, "sha256", json_object_new_string("0"));
		line = waudit_format("2026-01-01T00:00:00.000Z", "block", in, &len);
		if (memchr(line, '\n', len - 1) || line[len - 1] != '\n')
			abort();
		rec = waudit_parse_line(tok, line, len - 1, why, sizeof(why));
		if (!rec || strcmp(str(rec, "event"), "block") || !str(rec, "code") ||
		    strlen(str(rec, "code")) != size || memcmp(str(rec, "code"), data, size))
			abort();
		json_object_put(rec);
		free(line);
	}
	json_tokener_free(tok);
	return 0;
}
