/* libFuzzer: the SSE parser and the OpenAI / Anthropic stream-event
 * handlers, the path every byte from an LLM server takes.
 *
 * Input: byte 0 chooses the provider (bit 0) and the chunk size the bytes
 * are fed in (bits 1-7, 1..128), so split lines and split \r\n are covered;
 * the rest is the response body. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../broker/llm/llm_provider.h"
#include "../../broker/llm/sse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void on_text(void *ctx, const char *s, size_t n)
{
	/* touch every byte, so that a bad length is caught */
	volatile size_t *sum = ctx;
	for (size_t i = 0; i < n; i++)
		*sum += (unsigned char)s[i];
}

static void on_code(void *ctx, const char *language)
{
	volatile size_t *sum = ctx;
	*sum += strlen(language);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct llm_events ev = { on_text, on_code, NULL };
	volatile size_t sum = 0;
	struct llm_stream s;
	struct sse_parser p;
	struct werr err = { 0 };
	json_object *out;
	bool anthropic;
	size_t chunk;

	if (size < 1)
		return 0;
	anthropic = data[0] & 1;
	chunk = (size_t)(data[0] >> 1) + 1;
	data++;
	size--;
	llm_stream_init(&s, anthropic ? "anthropic" : "openai", &ev, (void *)&sum);
	/* a small bound, so that the limits are reached too */
	sse_init(&p, 4096, anthropic ? anthropic_on_event : openai_on_event, &s);
	for (size_t i = 0; i < size; i += chunk) {
		size_t n = size - i < chunk ? size - i : chunk;
		if (sse_feed(&p, (const char *)data + i, n, &err) < 0)
			break;
	}
	llm_stream_flush_calls(&s, !s.done, &err);
	out = turn_finish(&s.turn);
	json_object_put(out);
	sse_free(&p);
	llm_stream_free(&s);
	return 0;
}
