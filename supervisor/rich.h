/* Rich output from a session's driver (supervisor/lang.h): images, HTML
 * and the running line, read from the control socket next to "D <n>".
 *
 *   "A <line>\n"               the block runs line <line> now (1..2^32-1)
 *   "M <format> <len>\n<data>" <len> bytes of <format> (png, jpeg, html)
 *
 * Both are the block's own word (the code shares the driver's process and
 * can write them itself): they are bounded and forwarded to the broker as
 * DISPLAY and LINE frames of the running block, nothing more.  An image
 * larger than the policy's output limit (or WPROTO_DISPLAY_MAX), or past
 * what the block may still produce, is read and thrown away with a note on
 * the block's stderr; a malformed line breaks the driver. */
#ifndef WARDEN_SV_RICH_H
#define WARDEN_SV_RICH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RICH_LINES_MAX 100000u      /* LINE frames per block; later ones dropped */
#define RICH_LEN_MAX (1u << 30)     /* an announced length past this is malformed */

struct sv_rich {
	uint64_t left;              /* payload bytes still to read; 0: none */
	uint8_t *buf;               /* the payload, or NULL while dropping it */
	size_t len, have;
	char format[8];
	uint64_t block_bytes;       /* rich bytes this block sent */
	uint32_t lines, last_line;  /* LINE frames this block, the last one */
};

struct sv;
struct sv_jail;

/* One control line without its '\n': 1 it was "A"/"M" and is handled, 0 it
 * is neither (the caller parses "D"), -1 malformed. */
int rich_line(struct sv *sv, struct sv_jail *j, const char *line);
/* Read the pending payload from fd: 1 progress, 0 would block, -1 EOF or
 * error (the caller treats it as the driver ending). */
int rich_read(struct sv *sv, struct sv_jail *j, int fd);
/* A block starts: the per-block counts restart. */
void rich_block_start(struct sv_rich *r);
void rich_free(struct sv_rich *r);

#endif
