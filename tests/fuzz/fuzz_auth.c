/* libFuzzer target: what serve --listen's broker parses itself of a
 * request before anything else, the Authorization header
 * (broker/api/listen_auth.c; lws parses the rest of HTTP), and the token
 * rule (common/token.c).
 *
 * Checks beyond "does not crash": only "Bearer TOKEN" with the one token
 * passes, whatever the spacing and the case of the scheme; a token that
 * passes wtoken_ok can be checked against itself. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/listen_auth.h"
#include "warden/token.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define TOK "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct lauth a;
	static int ready;
	const char *s = (const char *)data;

	if (!ready) {
		if (lauth_init(&a, TOK, strlen(TOK)) < 0)
			abort();
		ready = 1;
	}
	if (lauth_check(&a, s, size) == 1) {
		/* it must contain the token, after a bearer scheme */
		if (size < strlen(TOK) + 7 || !memmem(data, size, TOK, strlen(TOK)))
			abort();
	}
	if (wtoken_ok(s, size)) {
		struct lauth b;
		char *hdr = malloc(size + 8);

		if (!hdr || lauth_init(&b, s, size) < 0)
			abort();
		memcpy(hdr, "Bearer ", 7);
		memcpy(hdr + 7, data, size);
		if (lauth_check(&b, hdr, size + 7) != 1)
			abort();
		free(hdr);
	}
	return 0;
}
