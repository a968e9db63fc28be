/* The audit log: JSON lines, appended by the supervisor only.  Each record
 * is written with a single write(2) on an O_APPEND fd, so concurrent wardens
 * interleave whole lines. */
#ifndef WARDEN_AUDIT_H
#define WARDEN_AUDIT_H

#include <json-c/json.h>

#include "warden/auditlog.h"
#include "warden/err.h"

struct waudit;

/* path NULL: the default ($XDG_STATE_HOME/warden/audit.jsonl, or
 * ~/.local/state/warden/audit.jsonl; /var/log/warden/audit.jsonl as root). */
int waudit_open(const char *path, struct waudit **out, struct werr *err);
/* Adds "ts" (RFC 3339, UTC, ms) and "event", then appends.  Takes ownership
 * of rec.  Errors are reported once on stderr and never stop a run. */
void waudit_emit(struct waudit *a, const char *event, json_object *rec);
void waudit_close(struct waudit *a);
const char *waudit_path(const struct waudit *a);   /* the file it appends to */
#endif
