/* libFuzzer target: warden serve --stdio's request parser
 * (broker/api/api_stdio_parse.c), which reads hostile lines from stdin, and the
 * UTF-8 repair of output chunks (broker/core/utf8.c).
 *
 * Checks beyond "does not crash": a parsed request's fields respect their
 * bounds and hold no NUL byte; a failure leaves nothing but the id; the
 * repaired output is always valid UTF-8, however the input is split. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_stdio.h"
#include "core/utf8.h"
#include "warden/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_str(const char *s, size_t max)
{
	if (s && strlen(s) > max)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct serve_req req;
	char msg[512];
	int r = serve_parse_request((const char *)data, size, &req, msg, sizeof(msg));

	if (r == 0) {
		if (!req.id || req.op == SOP_NONE)
			abort();
		check_str(req.profile, WPROTO_NAME_MAX);
		check_str(req.language, WPROTO_NAME_MAX);
		check_str(req.session, SERVE_SESSION_MAX);
		check_str(req.workspace, WPROTO_PATH_MAX);
		if (req.workspace && req.workspace[0] != '/')
			abort();
		if (req.op == SOP_RUN && (!req.code || strlen(req.code) != req.code_len ||
		                          req.code_len > WPROTO_CODE_MAX))
			abort();
	} else {
		if (req.code || req.session || req.profile || req.workspace || req.language)
			abort();
		if (r < 0 && (!msg[0] || memchr(msg, '\n', strlen(msg))))
			abort();
	}
	serve_req_free(&req);

	/* the same bytes as output: whole, and split in two at a point the
	 * input chooses */
	{
		struct utf8_tail t = { 0 };
		size_t cut = size ? data[0] % (size + 1) : 0, n;
		char *out = malloc(UTF8_OUT_MAX(size) * 2 + 8);

		if (!out)
			return 0;
		n = utf8_sanitize(&t, data, cut, out);
		n += utf8_sanitize(&t, data + cut, size - cut, out + n);
		n += utf8_finish(&t, out + n);
		if (!utf8_valid(out, n))
			abort();
		free(out);
	}
	return 0;
}
