/* Rich output from a driver (supervisor/rich.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rich.h"
#include "session.h"
#include "warden/util.h"

/* Decimal 1..UINT32_MAX with no sign, no leading zero, nothing after it;
 * *end is where it stopped. */
static int parse_u32(const char *p, const char **end, uint32_t *out)
{
	uint64_t v = 0;
	int digits = 0;

	if (*p < '1' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (++digits > 10)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (v > UINT32_MAX)
		return -1;
	*out = (uint32_t)v;
	*end = p;
	return 0;
}

static void note(struct sv *sv, struct sv_jail *j, const char *text)
{
	struct werr err = { 0 };

	wloop_send(&sv->loop, wproto_output(&sv->broker.out, j->s->id, j->block, WSTREAM_STDERR,
	                                    text, strlen(text), &err), &err);
}

/* The most one image may have, and what the block may still send: the
 * policy's output limit bounds rich output as it bounds stdout. */
static uint64_t budget(const struct sv_jail *j)
{
	uint64_t lim = j->s->pol->limits.output;

	if (!lim)
		return WPROTO_DISPLAY_MAX;
	if (j->rich.block_bytes >= lim)
		return 0;
	lim -= j->rich.block_bytes;
	return lim < WPROTO_DISPLAY_MAX ? lim : WPROTO_DISPLAY_MAX;
}

int rich_line(struct sv *sv, struct sv_jail *j, const char *line)
{
	struct sv_rich *r = &j->rich;
	const char *p, *sp;
	uint32_t v;

	if (line[0] == 'A' && line[1] == ' ') {
		struct werr err = { 0 };
		if (parse_u32(line + 2, &p, &v) < 0 || *p)
			return -1;
		if (v == r->last_line || r->lines >= RICH_LINES_MAX)
			return 1;
		r->last_line = v;
		r->lines++;
		wloop_send(&sv->loop, wproto_line(&sv->broker.out, j->s->id, j->block, v, &err), &err);
		return 1;
	}
	if (line[0] != 'M' || line[1] != ' ')
		return 0;
	sp = strchr(line + 2, ' ');
	if (!sp || (size_t)(sp - (line + 2)) >= sizeof(r->format))
		return -1;
	memcpy(r->format, line + 2, (size_t)(sp - (line + 2)));
	r->format[sp - (line + 2)] = '\0';
	if (!wdisplay_format_ok(r->format) || parse_u32(sp + 1, &p, &v) < 0 || *p ||
	    v > RICH_LEN_MAX)
		return -1;
	r->left = v;
	r->len = v;
	r->have = 0;
	free(r->buf);
	r->buf = NULL;
	if (v <= budget(j)) {
		r->buf = xmalloc(v);   /* at most WPROTO_DISPLAY_MAX */
	} else {
		char msg[256];
		snprintf(msg, sizeof(msg),
		         "[warden: a %s of %" PRIu32 " bytes was dropped: over the policy's output "
		         "limit (%" PRIu64 " bytes left for this block, %u at most per image); "
		         "make it smaller, or save it to a file in the workspace]\n",
		         strcmp(r->format, "html") ? "image" : "HTML output", v, budget(j),
		         WPROTO_DISPLAY_MAX);
		note(sv, j, msg);
	}
	return 1;
}

int rich_read(struct sv *sv, struct sv_jail *j, int fd)
{
	struct sv_rich *r = &j->rich;
	size_t want = r->left < sizeof(sv->buf) ? (size_t)r->left : sizeof(sv->buf);
	ssize_t n = read(fd, r->buf ? r->buf + r->have : sv->buf, want);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0)
		return -1;
	r->left -= (size_t)n;
	if (r->buf)
		r->have += (size_t)n;
	if (r->left)
		return 1;
	if (r->buf) {
		struct werr err = { 0 };
		r->block_bytes += r->len;
		wloop_send(&sv->loop, wproto_display(&sv->broker.out, j->s->id, j->block, r->format,
		                                     r->buf, r->len, &err), &err);
		free(r->buf);
		r->buf = NULL;
	}
	return 1;
}

void rich_block_start(struct sv_rich *r)
{
	r->block_bytes = 0;
	r->lines = 0;
	r->last_line = 0;
}

void rich_free(struct sv_rich *r)
{
	free(r->buf);
	memset(r, 0, sizeof(*r));
}
