/* The listener's bearer token (SECURITY.md G211, G212): what a request's
 * Authorization header must carry.  Pure, for the fuzzer and the unit
 * tests: no I/O.
 *
 * The token itself is kept only as its SHA-256; a header's token is hashed
 * too and the two digests are compared in constant time (nettle's
 * memeql_sec), so neither the time of a refusal nor the place of the
 * first wrong byte tells anything about the token, its length included. */
#ifndef BROKER_API_LISTEN_AUTH_H
#define BROKER_API_LISTEN_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LAUTH_HEADER_MAX 2048   /* an Authorization header longer than this is refused */

struct lauth {
	uint8_t digest[32];
};

/* The token as the supervisor handed it (wtoken_ok, warden/token.h).  -1
 * when it is not one. */
int lauth_init(struct lauth *a, const char *token, size_t len);
/* 1 when hdr (the Authorization header's value, len bytes, not
 * NUL-terminated) is "Bearer TOKEN" (scheme case-insensitive, spaces
 * around) with this token; 0 otherwise. */
int lauth_check(const struct lauth *a, const char *hdr, size_t len);

#endif
