/* Valid UTF-8 out of arbitrary bytes, chunk by chunk (warden serve's output
 * events: JSON strings must be valid UTF-8, but a jail's output may split a
 * sequence across OUTPUT frames or not be UTF-8 at all).
 *
 * A struct utf8_tail keeps the incomplete sequence at the end of one chunk
 * so that the next chunk completes it.  Every ill-formed part becomes
 * U+FFFD, one per maximal subpart (the Unicode recommendation): overlong
 * forms, surrogates, code points over U+10FFFF, stray continuation bytes
 * and truncated sequences. */
#ifndef BROKER_UTF8_H
#define BROKER_UTF8_H

#include <stddef.h>
#include <stdint.h>

struct utf8_tail {
	uint8_t b[4];
	uint8_t n;   /* bytes held: 0..3 */
};

/* Room utf8_sanitize needs for len input bytes (worst case: every byte,
 * and the held tail, replaced by the 3-byte U+FFFD), plus a NUL. */
#define UTF8_OUT_MAX(len) (((len) + 4) * 3 + 1)

/* Appends the valid UTF-8 of tail + in[0..len) to out (which has
 * UTF8_OUT_MAX(len) bytes), keeps a trailing incomplete sequence in *t and
 * returns the number of bytes written (out is NUL-terminated too; the
 * output may contain NUL bytes from the input, so use the length). */
size_t utf8_sanitize(struct utf8_tail *t, const uint8_t *in, size_t len, char *out);

/* End of the stream: a held incomplete sequence becomes U+FFFD.  out has
 * at least 4 bytes; returns the bytes written (0 or 3). */
size_t utf8_finish(struct utf8_tail *t, char *out);

/* 1 when s[0..len) is valid UTF-8. */
int utf8_valid(const char *s, size_t len);

#endif
