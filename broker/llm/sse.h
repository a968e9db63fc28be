/* Server-sent events (the text/event-stream format), parsed incrementally:
 * bytes arrive in chunks cut anywhere (inside a line, between \r and \n).
 * Lines end in \n, \r\n or \r; "field: value" lines, ':' comments, blank
 * line = dispatch.  Only "event" and "data" matter here ("id" and "retry"
 * are ignored).  Several data lines join with '\n'.
 *
 * Bounded: a line or an event's data longer than `max` bytes is an error,
 * never unbounded growth.  An event still incomplete when the stream ends
 * is discarded (as the SSE specification says); sse_pending() tells the
 * caller whether that happened. */
#ifndef BROKER_SSE_H
#define BROKER_SSE_H

#include <stdbool.h>
#include <stddef.h>

#include "warden/err.h"

#define SSE_DEFAULT_MAX (1u << 20)
#define SSE_EVENT_NAME_MAX 128

/* Called for each complete event.  event is "message" unless the server
 * named it; data is NUL-terminated (len excludes the NUL).  A negative
 * return stops the parser and is passed on by sse_feed (err filled in by
 * the callback). */
typedef int (*sse_event_fn)(void *ctx, const char *event, const char *data, size_t len,
                            struct werr *err);

struct sse_parser {
	size_t max;
	sse_event_fn fn;
	void *ctx;
	char *line; size_t line_len, line_cap;
	char *data; size_t data_len, data_cap;
	bool have_data;          /* a data: field was seen (even an empty one) */
	bool cr;                 /* the last byte was \r: a following \n is part of it */
	bool failed;
	char event[SSE_EVENT_NAME_MAX + 1];
};

void sse_init(struct sse_parser *p, size_t max, sse_event_fn fn, void *ctx);
/* 0, or -1 (limit exceeded, or the callback failed).  After a failure every
 * further call fails too. */
int sse_feed(struct sse_parser *p, const char *buf, size_t n, struct werr *err);
/* True when bytes of an unfinished line or event are buffered. */
bool sse_pending(const struct sse_parser *p);
void sse_free(struct sse_parser *p);

#endif
