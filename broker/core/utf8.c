/* Chunked UTF-8 repair for warden serve (see utf8.h).
 *
 * The decoder follows the Unicode table of well-formed byte sequences
 * (Unicode 15, table 3-7): the second byte's range depends on the first
 * (E0: A0..BF, ED: 80..9F, F0: 90..BF, F4: 80..8F), which is what excludes
 * overlongs, surrogates and values over U+10FFFF.  When a byte does not fit,
 * the bytes taken so far are one maximal subpart: one U+FFFD, and that byte
 * is looked at again as the start of a new sequence. */
#include <string.h>

#include "utf8.h"

static const char repl[3] = { (char)0xEF, (char)0xBF, (char)0xBD };

/* How many bytes a sequence starting with c has, 0 when c cannot start one. */
static unsigned seq_len(uint8_t c)
{
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		return 2;
	if (c >= 0xE0 && c <= 0xEF)
		return 3;
	if (c >= 0xF0 && c <= 0xF4)
		return 4;
	return 0;
}

/* Is c acceptable at position pos (1..3) of a sequence that began with lead? */
static int cont_ok(uint8_t lead, unsigned pos, uint8_t c)
{
	uint8_t lo = 0x80, hi = 0xBF;

	if (pos == 1) {
		switch (lead) {
		case 0xE0: lo = 0xA0; break;
		case 0xED: hi = 0x9F; break;
		case 0xF0: lo = 0x90; break;
		case 0xF4: hi = 0x8F; break;
		default: break;
		}
	}
	return c >= lo && c <= hi;
}

/* The decoder's state is the sequence being collected: seq[0..have) of
 * want bytes.  Feeding one byte either completes it (copied out), extends
 * it, or breaks it (U+FFFD for the part, then the byte starts afresh). */
struct dec {
	uint8_t seq[4];
	unsigned have, want;
	char *out;
	size_t n;
};

static void put(struct dec *d, const void *p, size_t len)
{
	memcpy(d->out + d->n, p, len);
	d->n += len;
}

static void feed(struct dec *d, uint8_t c)
{
	if (d->have > 0) {
		if (cont_ok(d->seq[0], d->have, c)) {
			d->seq[d->have++] = c;
			if (d->have == d->want) {
				put(d, d->seq, d->want);
				d->have = 0;
			}
			return;
		}
		put(d, repl, sizeof(repl));
		d->have = 0;
	}
	switch (seq_len(c)) {
	case 0:
		put(d, repl, sizeof(repl));
		break;
	case 1:
		d->out[d->n++] = (char)c;
		break;
	default:
		d->seq[0] = c;
		d->have = 1;
		d->want = seq_len(c);
		break;
	}
}

size_t utf8_sanitize(struct utf8_tail *t, const uint8_t *in, size_t len, char *out)
{
	struct dec d = { .out = out };
	size_t i;

	/* Replay the held bytes: they were a valid prefix, so this only
	 * restores the state. */
	for (i = 0; i < t->n && i < sizeof(t->b); i++)
		feed(&d, t->b[i]);
	for (i = 0; i < len; i++) {
		uint8_t c = in[i];
		/* fast path for ASCII between sequences */
		if (d.have == 0 && c < 0x80) {
			out[d.n++] = (char)c;
			continue;
		}
		feed(&d, c);
	}
	t->n = (uint8_t)d.have;
	memcpy(t->b, d.seq, d.have);
	out[d.n] = '\0';
	return d.n;
}

size_t utf8_finish(struct utf8_tail *t, char *out)
{
	if (t->n == 0)
		return 0;
	t->n = 0;
	memcpy(out, repl, sizeof(repl));
	out[3] = '\0';
	return sizeof(repl);
}

int utf8_valid(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		uint8_t c = (uint8_t)s[i];
		unsigned n = seq_len(c), k;

		if (n == 0 || i + n > len)
			return 0;
		for (k = 1; k < n; k++)
			if (!cont_ok(c, k, (uint8_t)s[i + k]))
				return 0;
		i += n;
	}
	return 1;
}
