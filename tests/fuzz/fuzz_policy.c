/* libFuzzer: policy_load_buffer, which reads policy files a person (or a
 * model writing a profile) wrote: json-c's strict parse, then the position
 * index of policy/locate.c, then the schema.  Every input is either a
 * policy or one "SOURCE:LINE:COL: what; fix" message inside the text. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "warden/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wpolicy *p = NULL;
	struct werr err = { 0 };
	unsigned line, col, lines = 1;
	int n = 0;

	if (size > (1u << 20))
		return 0;
	/* "extends" looks in the user's profile directory: keep it empty */
	setenv("XDG_CONFIG_HOME", "/nonexistent-warden-fuzz", 1);
	if (policy_load_buffer("f.json", (const char *)data, size, &p, &err) == 0) {
		if (!p)
			abort();
		policy_free(p);
		return 0;
	}
	if (p)
		abort();
	/* located inside the text: no line past the last one */
	if (sscanf(err.msg, "f.json:%u:%u: %n", &line, &col, &n) != 2 || n == 0 || line == 0 ||
	    col == 0)
		abort();
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	if (line > lines)
		abort();
	return 0;
}
