/* libFuzzer: llm_extract_code, which reads whatever text a model wrote
 * (fences, tool calls written as JSON or as function calls), and
 * llm_extract_fences, the same text with tools on. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../broker/llm/extract.h"
#include "../../broker/core/lmc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool any_label(void *ctx, const char *label)
{
	(void)ctx;
	return label[0] != 'x';
}

static void check(json_object *out)
{
	/* every message is a well-formed LMC message */
	for (size_t i = 0; i < json_object_array_length(out); i++) {
		json_object *m = json_object_array_get_idx(out, i);
		if (strcmp(lmc_str(m, "role"), "assistant") != 0)
			abort();
	}
	json_object_put(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;

	if (size > (1u << 20))
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	check(llm_extract_code(text));
	check(llm_extract_fences(text, any_label, NULL));
	free(text);
	return 0;
}
