/* The checked buffer API (include/warden/buf.h). */
#include <stdlib.h>
#include <string.h>

#include "warden/buf.h"
#include "warden/util.h"

void wbuf_init(struct wbuf *b, size_t max)
{
	b->d = NULL;
	b->len = b->cap = 0;
	b->max = max;
}

void wbuf_free(struct wbuf *b)
{
	if (!b)
		return;
	free(b->d);
	b->d = NULL;
	b->len = b->cap = 0;
}

void wbuf_reset(struct wbuf *b)
{
	b->len = 0;
}

/* Room for n more bytes, never past max. */
static int reserve(struct wbuf *b, size_t n)
{
	size_t want, cap;

	if (n > b->max || b->len > b->max - n)
		return -1;
	want = b->len + n;
	if (want <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap < want)
		cap = cap > b->max / 2 ? b->max : cap * 2;
	b->d = realloc(b->d, cap);
	if (!b->d)
		abort();
	b->cap = cap;
	return 0;
}

int wbuf_put_raw(struct wbuf *b, const void *p, size_t n)
{
	if (reserve(b, n) < 0)
		return -1;
	if (n)
		memcpy(b->d + b->len, p, n);
	b->len += n;
	return 0;
}

int wbuf_put_u8(struct wbuf *b, uint8_t v)
{
	return wbuf_put_raw(b, &v, 1);
}

int wbuf_put_u32(struct wbuf *b, uint32_t v)
{
	uint8_t x[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };
	return wbuf_put_raw(b, x, sizeof(x));
}

int wbuf_put_u64(struct wbuf *b, uint64_t v)
{
	if (reserve(b, 8) < 0)
		return -1;
	(void)wbuf_put_u32(b, (uint32_t)(v >> 32));
	(void)wbuf_put_u32(b, (uint32_t)v);
	return 0;
}

int wbuf_put_bytes(struct wbuf *b, const void *p, size_t n)
{
	if (n > UINT32_MAX || reserve(b, 4 + n) < 0)
		return -1;
	(void)wbuf_put_u32(b, (uint32_t)n);
	return wbuf_put_raw(b, p, n);
}

int wbuf_put_str(struct wbuf *b, const char *s)
{
	return wbuf_put_bytes(b, s ? s : "", s ? strlen(s) : 0);
}

void wbuf_poke_u32(struct wbuf *b, size_t off, uint32_t v)
{
	if (off + 4 > b->len)
		return;
	b->d[off] = (uint8_t)(v >> 24);
	b->d[off + 1] = (uint8_t)(v >> 16);
	b->d[off + 2] = (uint8_t)(v >> 8);
	b->d[off + 3] = (uint8_t)v;
}

void wbuf_consume(struct wbuf *b, size_t n)
{
	if (n >= b->len) {
		b->len = 0;
		return;
	}
	memmove(b->d, b->d + n, b->len - n);
	b->len -= n;
}

/* --- reader ------------------------------------------------------------ */

static int need(const struct wrd *r, size_t n)
{
	return r->off <= r->len && n <= r->len - r->off ? 0 : -1;
}

int wrd_u8(struct wrd *r, uint8_t *v)
{
	*v = 0;
	if (need(r, 1) < 0)
		return -1;
	*v = r->p[r->off++];
	return 0;
}

int wrd_u32(struct wrd *r, uint32_t *v)
{
	const uint8_t *p;

	*v = 0;
	if (need(r, 4) < 0)
		return -1;
	p = r->p + r->off;
	*v = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	r->off += 4;
	return 0;
}

int wrd_u64(struct wrd *r, uint64_t *v)
{
	uint32_t hi, lo;

	*v = 0;
	if (need(r, 8) < 0)
		return -1;
	(void)wrd_u32(r, &hi);
	(void)wrd_u32(r, &lo);
	*v = (uint64_t)hi << 32 | lo;
	return 0;
}

int wrd_bytes(struct wrd *r, const uint8_t **p, size_t *n, size_t max)
{
	struct wrd save = *r;
	uint32_t len;

	*p = NULL;
	*n = 0;
	if (wrd_u32(r, &len) < 0 || len > max || need(r, len) < 0) {
		*r = save;
		return -1;
	}
	*p = r->p + r->off;
	*n = len;
	r->off += len;
	return 0;
}

int wrd_str(struct wrd *r, char **out, size_t max)
{
	struct wrd save = *r;
	const uint8_t *p;
	size_t n;
	char *s;

	*out = NULL;
	if (wrd_bytes(r, &p, &n, max) < 0)
		return -1;
	if (n && memchr(p, '\0', n)) {
		*r = save;
		return -1;
	}
	s = xmalloc(n + 1);
	if (n)
		memcpy(s, p, n);
	s[n] = '\0';
	*out = s;
	return 0;
}

int wrd_end(const struct wrd *r)
{
	return r->off == r->len ? 0 : -1;
}
