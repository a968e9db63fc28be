/* libFuzzer: llm_extract_code, which reads whatever text a model wrote
 * (fences, tool calls written as JSON or as function calls). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../broker/llm/extract.h"
#include "../../broker/core/lmc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;
	json_object *out;

	if (size > (1u << 20))
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	out = llm_extract_code(text);
	/* every message is a well-formed LMC message */
	for (size_t i = 0; i < json_object_array_length(out); i++) {
		json_object *m = json_object_array_get_idx(out, i);
		if (strcmp(lmc_str(m, "role"), "assistant") != 0)
			abort();
	}
	json_object_put(out);
	free(text);
	return 0;
}
