/* The listener's bearer token (listen_auth.h). */
#include <nettle/memops.h>
#include <nettle/sha2.h>
#include <string.h>
#include <strings.h>

#include "listen_auth.h"
#include "warden/token.h"

static void digest(const char *s, size_t len, uint8_t out[32])
{
	struct sha256_ctx c;

	sha256_init(&c);
	sha256_update(&c, len, (const uint8_t *)s);
	sha256_digest(&c, SHA256_DIGEST_SIZE, out);
}

int lauth_init(struct lauth *a, const char *token, size_t len)
{
	memset(a, 0, sizeof(*a));
	if (!wtoken_ok(token, len))
		return -1;
	digest(token, len, a->digest);
	return 0;
}

int lauth_check(const struct lauth *a, const char *hdr, size_t len)
{
	uint8_t got[32];
	size_t i = 0, start, end = len;

	if (len > LAUTH_HEADER_MAX)
		return 0;
	while (i < len && (hdr[i] == ' ' || hdr[i] == '\t'))
		i++;
	if (len - i < 7 || strncasecmp(hdr + i, "bearer", 6) || (hdr[i + 6] != ' ' && hdr[i + 6] != '\t'))
		return 0;
	i += 6;
	while (i < len && (hdr[i] == ' ' || hdr[i] == '\t'))
		i++;
	start = i;
	while (end > start && (hdr[end - 1] == ' ' || hdr[end - 1] == '\t'))
		end--;
	/* whatever was sent is hashed: the comparison takes the same time for
	 * a token of any length or content */
	digest(hdr + start, end - start, got);
	return memeql_sec(got, a->digest, sizeof(got)) ? 1 : 0;
}
