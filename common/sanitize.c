/* Terminal sanitizer: see sanitize.h for what happens to what. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "warden/sanitize.h"
#include "warden/util.h"

void sbuf_add(struct sbuf *b, const void *p, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		char *d;

		while (cap < b->len + n + 1)
			cap *= 2;
		d = xmalloc(cap);
		if (b->len)
			memcpy(d, b->d, b->len);
		free(b->d);
		b->d = d;
		b->cap = cap;
	}
	if (n)
		memcpy(b->d + b->len, p, n);
	b->len += n;
	b->d[b->len] = '\0';
}

void sbuf_adds(struct sbuf *b, const char *s)
{
	sbuf_add(b, s, strlen(s));
}

void sbuf_addc(struct sbuf *b, char c)
{
	sbuf_add(b, &c, 1);
}

void sbuf_addf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	char *p;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&p, fmt, ap);
	va_end(ap);
	if (r < 0)
		return;
	sbuf_add(b, p, (size_t)r);
	free(p);
}

void sbuf_reset(struct sbuf *b)
{
	b->len = 0;
	if (b->d)
		b->d[0] = '\0';
}

void sbuf_free(struct sbuf *b)
{
	free(b->d);
	b->d = NULL;
	b->len = b->cap = 0;
}

char *sbuf_steal(struct sbuf *b)
{
	char *p = b->d ? b->d : xstrdup("");

	b->d = NULL;
	b->len = b->cap = 0;
	return p;
}

enum { S_NORMAL, S_CR, S_ESC, S_CSI };

static const char fffd[] = "\xef\xbf\xbd";

void wsan_init(struct wsan *s)
{
	memset(s, 0, sizeof(*s));
}

static void emit_cp(struct sbuf *out, uint32_t cp, const uint8_t *u, size_t n)
{
	if (cp >= 0x80 && cp <= 0x9f) {
		/* C1 control: its 7-bit form, made visible */
		sbuf_adds(out, "^[");
		sbuf_addc(out, (char)(cp - 0x40));
	} else if ((cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069)) {
		/* bidi overrides reorder what is shown ("Trojan source") */
		sbuf_addf(out, "<U+%04X>", (unsigned)cp);
	} else {
		sbuf_add(out, u, n);
	}
}

static void utf8_done(struct wsan *s, struct sbuf *out)
{
	uint32_t cp, min;

	switch (s->uneed) {
	case 2:
		cp = (uint32_t)(s->u[0] & 0x1f) << 6 | (s->u[1] & 0x3f);
		min = 0x80;
		break;
	case 3:
		cp = (uint32_t)(s->u[0] & 0x0f) << 12 | (uint32_t)(s->u[1] & 0x3f) << 6 |
		     (s->u[2] & 0x3f);
		min = 0x800;
		break;
	default:
		cp = (uint32_t)(s->u[0] & 0x07) << 18 | (uint32_t)(s->u[1] & 0x3f) << 12 |
		     (uint32_t)(s->u[2] & 0x3f) << 6 | (s->u[3] & 0x3f);
		min = 0x10000;
		break;
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		sbuf_adds(out, fffd);
	else
		emit_cp(out, cp, s->u, s->uneed);
	s->uneed = s->un = 0;
}

static void csi_visible(struct wsan *s, struct sbuf *out)
{
	sbuf_adds(out, "^[[");
	sbuf_add(out, s->csi, s->csin);
	s->csin = 0;
}

static bool csi_is_sgr(const struct wsan *s)
{
	for (size_t i = 0; i < s->csin; i++)
		if (!strchr("0123456789;:", s->csi[i]))
			return false;
	return true;
}

static void one(struct wsan *s, uint8_t b, struct sbuf *out)
{
again:
	switch (s->st) {
	case S_CR:
		s->st = S_NORMAL;
		sbuf_addc(out, '\n');
		if (b == '\n')
			return;
		goto again;
	case S_ESC:
		if (b == '[') {
			s->st = S_CSI;
			s->csin = 0;
			return;
		}
		sbuf_adds(out, "^[");
		s->st = S_NORMAL;
		goto again;
	case S_CSI:
		if (b >= 0x20 && b <= 0x3f) {
			if (s->csin < WSAN_CSI_MAX) {
				s->csi[s->csin++] = (char)b;
				return;
			}
			csi_visible(s, out);
			s->st = S_NORMAL;
			goto again;
		}
		if (b >= 0x40 && b <= 0x7e) {
			if (b != 'm' || !csi_is_sgr(s)) {
				csi_visible(s, out);
				sbuf_addc(out, (char)b);
			}
			s->csin = 0;
			s->st = S_NORMAL;
			return;
		}
		csi_visible(s, out);
		s->st = S_NORMAL;
		goto again;
	default:
		break;
	}

	if (s->uneed) {
		if ((b & 0xc0) == 0x80) {
			s->u[s->un++] = b;
			if (s->un == s->uneed)
				utf8_done(s, out);
			return;
		}
		sbuf_adds(out, fffd);
		s->uneed = s->un = 0;
		goto again;
	}
	if (b < 0x80) {
		if (b == '\n' || b == '\t' || (b >= 0x20 && b < 0x7f))
			sbuf_addc(out, (char)b);
		else if (b == '\r')
			s->st = S_CR;
		else if (b == 0x1b)
			s->st = S_ESC;
		else if (b == 0x7f)
			sbuf_adds(out, "^?");
		else {
			sbuf_addc(out, '^');
			sbuf_addc(out, (char)(b + 0x40));
		}
		return;
	}
	if (b >= 0xc2 && b <= 0xdf)
		s->uneed = 2;
	else if (b >= 0xe0 && b <= 0xef)
		s->uneed = 3;
	else if (b >= 0xf0 && b <= 0xf4)
		s->uneed = 4;
	else {
		sbuf_adds(out, fffd);   /* stray continuation, raw C1, 0xf5.. */
		return;
	}
	s->u[0] = b;
	s->un = 1;
}

void wsan_feed(struct wsan *s, const void *in, size_t n, struct sbuf *out)
{
	const uint8_t *p = in;

	if (!out->d)
		sbuf_add(out, "", 0);
	for (size_t i = 0; i < n; i++)
		one(s, p[i], out);
}

void wsan_end(struct wsan *s, struct sbuf *out)
{
	if (!out->d)
		sbuf_add(out, "", 0);
	switch (s->st) {
	case S_CR:
		sbuf_addc(out, '\n');
		break;
	case S_ESC:
		sbuf_adds(out, "^[");
		break;
	case S_CSI:
		csi_visible(s, out);
		break;
	default:
		break;
	}
	if (s->uneed)
		sbuf_adds(out, fffd);
	wsan_init(s);
}

char *wsan_str(const void *s, size_t n)
{
	struct wsan st;
	struct sbuf out = { 0 };

	wsan_init(&st);
	wsan_feed(&st, s, n, &out);
	wsan_end(&st, &out);
	return sbuf_steal(&out);
}
