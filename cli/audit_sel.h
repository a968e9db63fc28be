/* Private to cli/cmd_audit.c and cli/audit_sel.c: which records
 * `warden audit` shows. */
#ifndef WARDEN_CLI_AUDIT_SEL_H
#define WARDEN_CLI_AUDIT_SEL_H

#include <stdbool.h>
#include <stddef.h>

/* --since TIME as the UTC "YYYY-MM-DDTHH:MM:SS" the records' ts (RFC 3339,
 * UTC, fixed width) are compared with.  TIME is local unless it ends in Z:
 * "2024-05-01", "2024-05-01 14:00[:30]" (or with T), now, today,
 * yesterday, or a time ago: "1h ago", "-1h", "1h" (s, m, h, d).  -1 when
 * it is none of these. */
int audit_parse_since(const char *s, char out[20]);
/* A record's ts is at or after since; a ts that is not a time is not. */
bool audit_ts_since(const char *ts, const char *since);

/* The runs and sessions of the log, in the order they first appear (the
 * log is appended to, so the last are the latest), found by id through an
 * open-addressing table. */
struct ids {
	char **v;
	unsigned long *line;   /* the line each first appears on */
	size_t n, cap;
	size_t *tab, tcap;     /* index + 1, 0 empty */
};
long ids_find(const struct ids *x, const char *id);   /* its index, or -1 */
void ids_add(struct ids *x, const char *id, unsigned long line);   /* once */
void ids_free(struct ids *x);

#endif
