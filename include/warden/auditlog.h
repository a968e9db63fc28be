/* The audit log's format: JSON lines, one record each.  The supervisor
 * writes it (supervisor/audit.c, the only writer); `warden audit` reads it
 * (cli/cmd_audit.c).  Both sides of that one fact are here. */
#ifndef WARDEN_AUDITLOG_H
#define WARDEN_AUDITLOG_H

#include <json-c/json.h>
#include <stddef.h>

/* $XDG_STATE_HOME/warden/audit.jsonl, or ~/.local/state/warden/audit.jsonl;
 * /var/log/warden/audit.jsonl as root (malloc'd). */
char *waudit_default_path(void);
/* The line the writer appends (with its newline; *len counts it),
 * malloc'd.  Takes ownership of rec. */
char *waudit_format(const char *ts, const char *event, json_object *rec, size_t *len);
/* The reader: one line, without its newline, parsed strictly and checked
 * against the fields and types of its event.  The record, or NULL with
 * why set.  tok: a json_tokener_new() that the caller reuses and frees. */
json_object *waudit_parse_line(json_tokener *tok, const char *line, size_t len,
                               char *why, size_t whylen);

#endif
