/* Everything that reaches the terminal from the model or from a jailed
 * program goes through here first: the broker's chat and `warden run`
 * when its stdout or stderr is a terminal (one implementation, in
 * common/ so the supervisor never links broker code).
 *
 * The sanitizer is a small state machine fed in chunks, so a sequence split
 * across two reads is handled like a whole one:
 *   - SGR colour sequences (ESC [ params m) are dropped;
 *   - every other escape sequence is neutralised: ESC is shown as "^[" and
 *     what follows it is ordinary text (OSC 52 clipboard writes, title
 *     setting, cursor movement, DEC private modes, DCS ... all become
 *     visible, inert text);
 *   - C0 controls other than \n and \t are shown in caret notation ("^G"),
 *     DEL as "^?", C1 controls (U+0080..U+009F) as "^[" plus their 7-bit
 *     equivalent ("^[[" for CSI), bidi overrides as "<U+202E>";
 *   - CR LF becomes LF and a lone CR becomes LF (no overwriting of what is
 *     already on the screen);
 *   - invalid UTF-8 (including raw C1 bytes, overlongs and surrogates)
 *     becomes U+FFFD.
 * The output is valid UTF-8 with no control characters but \n and \t. */
#ifndef WARDEN_SANITIZE_H
#define WARDEN_SANITIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A growing string, always NUL-terminated once anything was added. */
struct sbuf {
	char *d;
	size_t len, cap;
};
void sbuf_add(struct sbuf *b, const void *p, size_t n);
void sbuf_adds(struct sbuf *b, const char *s);
void sbuf_addc(struct sbuf *b, char c);
void sbuf_addf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sbuf_reset(struct sbuf *b);
void sbuf_free(struct sbuf *b);
/* The string (malloc'd, "" when empty); b is left empty. */
char *sbuf_steal(struct sbuf *b);

#define WSAN_CSI_MAX 32   /* parameter bytes kept while deciding on a CSI */

struct wsan {
	uint8_t st;                    /* internal state */
	uint8_t u[4]; uint8_t un, uneed;   /* a UTF-8 sequence in progress */
	char csi[WSAN_CSI_MAX]; uint8_t csin;
};
void wsan_init(struct wsan *s);
/* Append the sanitized form of in[0..n) to out. */
void wsan_feed(struct wsan *s, const void *in, size_t n, struct sbuf *out);
/* End of stream: flush what is pending (a cut-off sequence is shown). */
void wsan_end(struct wsan *s, struct sbuf *out);
/* One-shot: the sanitized copy of s[0..n) (malloc'd). */
char *wsan_str(const void *s, size_t n);

#endif
