/* One checked buffer API for all wire data (OpenSSH's sshbuf idea).
 *
 * Writer: struct wbuf grows up to a fixed maximum; every put fails (-1)
 * rather than exceed it.  Integers are big-endian with explicit widths;
 * strings and byte strings are a u32 length then the bytes.
 *
 * Reader: struct wrd walks a const byte range.  Every getter clears its
 * outputs on entry, fails (-1) on truncation, enforces a caller-given
 * maximum length, and wrd_str rejects embedded NUL bytes.  Nothing is ever
 * read past `len`. */
#ifndef WARDEN_BUF_H
#define WARDEN_BUF_H

#include <stddef.h>
#include <stdint.h>

struct wbuf {
	uint8_t *d;
	size_t len, cap, max;
};

void wbuf_init(struct wbuf *b, size_t max);
void wbuf_free(struct wbuf *b);         /* NULL-safe, leaves b empty */
void wbuf_reset(struct wbuf *b);        /* len = 0, keeps the memory */
int wbuf_put_u8(struct wbuf *b, uint8_t v);
int wbuf_put_u32(struct wbuf *b, uint32_t v);
int wbuf_put_u64(struct wbuf *b, uint64_t v);
int wbuf_put_raw(struct wbuf *b, const void *p, size_t n);
int wbuf_put_bytes(struct wbuf *b, const void *p, size_t n);  /* u32 len + bytes */
int wbuf_put_str(struct wbuf *b, const char *s);              /* NULL = "" */
/* Overwrite 4 bytes at off (for a length filled in afterwards). */
void wbuf_poke_u32(struct wbuf *b, size_t off, uint32_t v);
/* Drop the first n bytes (consumed input). */
void wbuf_consume(struct wbuf *b, size_t n);

struct wrd {
	const uint8_t *p;
	size_t len, off;
};

static inline void wrd_init(struct wrd *r, const void *p, size_t len)
{
	r->p = (const uint8_t *)p;
	r->len = len;
	r->off = 0;
}
int wrd_u8(struct wrd *r, uint8_t *v);
int wrd_u32(struct wrd *r, uint32_t *v);
int wrd_u64(struct wrd *r, uint64_t *v);
/* A u32-length byte string, not copied: *p points into the reader's range. */
int wrd_bytes(struct wrd *r, const uint8_t **p, size_t *n, size_t max);
/* A u32-length string without NUL bytes, copied and NUL-terminated
 * (malloc'd).  max bounds the length in bytes. */
int wrd_str(struct wrd *r, char **out, size_t max);
/* -1 unless every byte was consumed. */
int wrd_end(const struct wrd *r);

#endif
