/* Incremental, bounded server-sent-events parser (sse.h). */
#include <string.h>

#include "sse.h"
#include "warden/util.h"

void sse_init(struct sse_parser *p, size_t max, sse_event_fn fn, void *ctx)
{
	memset(p, 0, sizeof(*p));
	p->max = max ? max : SSE_DEFAULT_MAX;
	p->fn = fn;
	p->ctx = ctx;
}

void sse_free(struct sse_parser *p)
{
	if (!p)
		return;
	free(p->line);
	free(p->data);
	p->line = p->data = NULL;
	p->line_len = p->line_cap = p->data_len = p->data_cap = 0;
}

bool sse_pending(const struct sse_parser *p)
{
	return p->line_len > 0 || p->have_data;
}

/* Grows *buf to hold need + 1 bytes; the caller has checked need <= max. */
static void reserve(char **buf, size_t *cap, size_t need)
{
	size_t c;
	char *n;

	if (need + 1 <= *cap)
		return;
	c = *cap ? *cap : 256;
	while (c < need + 1)
		c *= 2;
	n = realloc(*buf, c);
	if (!n) {
		free(*buf);
		*buf = NULL;
		n = xmalloc(c);   /* exits on failure */
	}
	*buf = n;
	*cap = c;
}

static void reset_event(struct sse_parser *p)
{
	p->data_len = 0;
	p->have_data = false;
	p->event[0] = '\0';
}

static int dispatch(struct sse_parser *p, struct werr *err)
{
	int r = 0;

	if (p->have_data) {
		/* the last data line's '\n' is not part of the data */
		if (p->data_len > 0 && p->data[p->data_len - 1] == '\n')
			p->data_len--;
		reserve(&p->data, &p->data_cap, p->data_len);
		p->data[p->data_len] = '\0';
		if (p->fn)
			r = p->fn(p->ctx, p->event[0] ? p->event : "message", p->data, p->data_len, err);
	}
	reset_event(p);
	return r;
}

static int process_line(struct sse_parser *p, const char *line, size_t len, struct werr *err)
{
	const char *colon, *val;
	size_t flen, vlen;

	if (len == 0)
		return dispatch(p, err);
	if (line[0] == ':')
		return 0;                     /* comment */
	colon = memchr(line, ':', len);
	flen = colon ? (size_t)(colon - line) : len;
	val = colon ? colon + 1 : line + len;
	vlen = colon ? len - flen - 1 : 0;
	if (vlen > 0 && val[0] == ' ') {
		val++;
		vlen--;
	}
	if (flen == 4 && memcmp(line, "data", 4) == 0) {
		if (p->data_len + vlen + 1 > p->max)
			return werr_set(err, 0, "server-sent event larger than %zu bytes", p->max);
		reserve(&p->data, &p->data_cap, p->data_len + vlen + 1);
		memcpy(p->data + p->data_len, val, vlen);
		p->data_len += vlen;
		p->data[p->data_len++] = '\n';
		p->have_data = true;
	} else if (flen == 5 && memcmp(line, "event", 5) == 0) {
		if (vlen > SSE_EVENT_NAME_MAX)
			return werr_set(err, 0, "server-sent event name longer than %d bytes",
			                SSE_EVENT_NAME_MAX);
		memcpy(p->event, val, vlen);
		p->event[vlen] = '\0';
	}
	/* id, retry and unknown fields are ignored */
	return 0;
}

int sse_feed(struct sse_parser *p, const char *buf, size_t n, struct werr *err)
{
	size_t i = 0;

	if (p->failed)
		return werr_set(err, 0, "server-sent events: parser already failed");
	while (i < n) {
		size_t j;

		if (p->cr) {
			p->cr = false;
			if (buf[i] == '\n') {
				i++;
				continue;
			}
		}
		/* find the end of the line in this chunk */
		for (j = i; j < n && buf[j] != '\n' && buf[j] != '\r'; j++)
			;
		if (p->line_len + (j - i) > p->max) {
			p->failed = true;
			return werr_set(err, 0, "server-sent event line longer than %zu bytes", p->max);
		}
		if (j == n) {
			/* no end yet: keep the piece */
			reserve(&p->line, &p->line_cap, p->line_len + (j - i));
			memcpy(p->line + p->line_len, buf + i, j - i);
			p->line_len += j - i;
			break;
		}
		if (buf[j] == '\r')
			p->cr = true;
		int r;
		if (p->line_len == 0) {
			r = process_line(p, buf + i, j - i, err);
		} else {
			reserve(&p->line, &p->line_cap, p->line_len + (j - i));
			memcpy(p->line + p->line_len, buf + i, j - i);
			p->line_len += j - i;
			r = process_line(p, p->line, p->line_len, err);
			p->line_len = 0;
		}
		if (r < 0) {
			p->failed = true;
			return -1;
		}
		i = j + 1;
	}
	return 0;
}
