/* One error object for every fallible function (crun's contract).
 *
 *   int f(..., struct werr *err);   returns 0 (or >= 0) on success,
 *                                    -1 on failure with *err filled in.
 *
 * werr_set() records a message and the errno that caused it; werr_wrap()
 * puts context in front ("mounting /usr: permission denied").  The object is
 * a flat struct with no pointers so that the jail child can send it to the
 * parent over the sync socket as bytes. */
#ifndef WARDEN_ERR_H
#define WARDEN_ERR_H

#include <stddef.h>

#define WERR_MSG_MAX 512

struct werr {
	int errnum;              /* errno that caused it, or 0 */
	int exit_code;           /* suggested exit status; 0 means 125 */
	char msg[WERR_MSG_MAX];  /* NUL-terminated, one line, no trailing \n */
};

/* Sets the message; errnum is appended as ": strerror(errnum)" when non-zero.
 * Always returns -1 so callers can write `return werr_set(err, errno, ...)`.
 * Saves errno before formatting (bubblewrap's habit) and restores it. */
int werr_set(struct werr *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prepends "context: " to an existing message.  Returns -1. */
int werr_wrap(struct werr *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

void werr_clear(struct werr *err);

/* Exit status to use for this error (125 unless exit_code was set). */
int werr_exit_code(const struct werr *err);

#endif
