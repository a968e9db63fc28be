/* serve --listen's bearer token (SECURITY.md G212): what a token may be.
 * One rule for the supervisor, which reads or makes it, and the broker,
 * which checks requests against it (common/token.c). */
#ifndef WARDEN_TOKEN_H
#define WARDEN_TOKEN_H

#include <stdbool.h>
#include <stddef.h>

#define WTOKEN_MIN 32      /* characters: a generated token has 64 (256 bits, hex) */
#define WTOKEN_MAX 1024

/* RFC 6750's token68 (letters, digits, - . _ ~ + /, then '=' padding),
 * WTOKEN_MIN to WTOKEN_MAX characters: what an Authorization header can
 * carry as it is. */
bool wtoken_ok(const char *s, size_t len);

#endif
