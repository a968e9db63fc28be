/* `warden audit`: read the audit log back, as a table or as JSON lines. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "cmd.h"
#include "warden/log.h"
#include "warden/util.h"

#define BAD_REPORTED 20   /* malformed lines listed one by one */

static void audit_usage(FILE *f)
{
	fputs("usage: warden audit [--session ID] [--denied] [--json] [--audit-log FILE]\n"
	      "\n"
	      "  --session ID      only the records of one run\n"
	      "  --denied          only denied syscalls\n"
	      "  --json            the records as JSON lines (unchanged)\n"
	      "  --audit-log FILE  read FILE instead of the default log\n"
	      "\n"
	      "A line that is not a well-formed record is reported as FILE:LINE on\n"
	      "stderr and not shown; the exit status is then 1.\n", f);
}

/* Printable, one line: the log holds argv and code, which may carry
 * terminal escape sequences. */
static void put_safe(const char *s, size_t max)
{
	size_t n = 0;

	for (; *s && n < max; s++, n++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c == 0x7f)
			printf("\\x%02x", c);
		else
			putchar(c);
	}
	if (*s)
		fputs("...", stdout);
}

/* --- one record, strictly ---------------------------------------------------
 * The log holds hostile text (the jail's argv, the model's code), escaped
 * by json-c when it was written.  Reading it back must not give that text
 * a second chance: each line is parsed whole and strictly (no single
 * quotes, no trailing bytes, no NUL), must be an object, and
 * must have the fields its event is written with, of the right types.  A
 * line that fails is reported by its number and none of it is shown. */

enum ftype { F_STR, F_INT, F_ARR_STR, F_ARR_DENIED };

static const struct field_rule {
	const char *event;             /* NULL: every event */
	const char *key;
	enum ftype type;
	bool required;
} field_rules[] = {
	{ NULL, "ts", F_STR, true },
	{ NULL, "event", F_STR, true },
	{ NULL, "session", F_STR, false },
	{ "run_start", "session", F_STR, true },
	{ "run_start", "profile", F_STR, true },
	{ "run_start", "argv", F_ARR_STR, true },
	{ "run_end", "session", F_STR, true },
	{ "run_end", "reason", F_STR, true },
	{ "run_end", "denied_syscalls", F_ARR_DENIED, false },
	{ "run_end", "error", F_STR, false },
	{ "denied", "session", F_STR, true },
	{ "denied", "syscall", F_STR, true },
	{ "denied", "nr", F_INT, true },
	{ "denied", "args", F_ARR_STR, true },
	{ "denied", "host_pid", F_INT, true },
	{ "denied", "count", F_INT, true },
	{ "denied_dropped", "session", F_STR, true },
	{ "denied_dropped", "dropped", F_INT, true },
	{ "denied_dropped", "limit", F_INT, true },
	{ "session_open", "session", F_STR, true },
	{ "session_open", "profile", F_STR, true },
	{ "session_open", "workspace", F_STR, true },
	{ "block", "session", F_STR, true },
	{ "block", "block", F_INT, true },
	{ "block", "language", F_STR, true },
	{ "block", "code", F_STR, true },
	{ "block", "sha256", F_STR, true },
	{ "block_end", "session", F_STR, true },
	{ "block_end", "block", F_INT, true },
	{ "block_end", "reason", F_STR, true },
	{ "block_end", "denied_syscalls", F_ARR_DENIED, false },
	{ "session_close", "session", F_STR, true },
};

static bool arr_of(json_object *v, bool denied)
{
	if (!json_object_is_type(v, json_type_array))
		return false;
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		json_object *e = json_object_array_get_idx(v, i), *n, *c;
		if (!denied) {
			if (!json_object_is_type(e, json_type_string))
				return false;
		} else if (!json_object_is_type(e, json_type_object) ||
		           !json_object_object_get_ex(e, "name", &n) ||
		           !json_object_is_type(n, json_type_string) ||
		           !json_object_object_get_ex(e, "count", &c) ||
		           !json_object_is_type(c, json_type_int)) {
			return false;
		}
	}
	return true;
}

static bool type_ok(json_object *v, enum ftype t)
{
	switch (t) {
	case F_STR: return json_object_is_type(v, json_type_string);
	case F_INT: return json_object_is_type(v, json_type_int);
	case F_ARR_STR: return arr_of(v, false);
	case F_ARR_DENIED: return arr_of(v, true);
	}
	return false;
}

json_object *waudit_parse_line(json_tokener *tok, const char *line, size_t len,
                               char *why, size_t whylen)
{
	json_object *rec, *ev, *v;
	const char *event;

	if (memchr(line, '\0', len)) {
		snprintf(why, whylen, "it holds a NUL byte");
		return NULL;
	}
	if (len > INT_MAX) {
		snprintf(why, whylen, "it is longer than %d bytes", INT_MAX);
		return NULL;
	}
	json_tokener_reset(tok);
	/* strict grammar, whole line; not UTF-8 validation: argv and code may
	 * hold any bytes but NUL, and json-c writes them as they are (they
	 * cannot make structure; the table view escapes controls) */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	rec = json_tokener_parse_ex(tok, line, (int)len);
	if (!rec || json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != len) {
		enum json_tokener_error e = json_tokener_get_error(tok);
		snprintf(why, whylen, "not one JSON value (%s at byte %zu)",
		         e == json_tokener_success ? "trailing bytes" :
		         e == json_tokener_continue ? "cut short" : json_tokener_error_desc(e),
		         json_tokener_get_parse_end(tok));
		json_object_put(rec);
		return NULL;
	}
	if (!json_object_is_type(rec, json_type_object)) {
		snprintf(why, whylen, "not a JSON object");
		json_object_put(rec);
		return NULL;
	}
	event = json_object_object_get_ex(rec, "event", &ev) && json_object_is_type(ev, json_type_string)
	        ? json_object_get_string(ev) : NULL;
	for (size_t i = 0; i < ARRAY_SIZE(field_rules); i++) {
		const struct field_rule *r = &field_rules[i];
		if (r->event && (!event || strcmp(r->event, event)))
			continue;
		if (!json_object_object_get_ex(rec, r->key, &v)) {
			if (!r->required)
				continue;
			snprintf(why, whylen, "\"%s\" is missing", r->key);
		} else if (!type_ok(v, r->type)) {
			snprintf(why, whylen, "\"%s\" has the wrong type", r->key);
		} else {
			continue;
		}
		json_object_put(rec);
		return NULL;
	}
	return rec;
}

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) && v ? json_object_get_string(v) : "";
}

static void detail(json_object *rec, const char *event, char *buf, size_t len)
{
	json_object *v;

	if (!strcmp(event, "run_start")) {
		size_t off = (size_t)snprintf(buf, len, "profile=%s ", jstr(rec, "profile"));
		if (json_object_object_get_ex(rec, "argv", &v) && json_object_is_type(v, json_type_array))
			for (size_t i = 0; i < json_object_array_length(v) && off < len; i++)
				off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? " " : "",
				                        json_object_get_string(json_object_array_get_idx(v, i)));
	} else if (!strcmp(event, "denied")) {
		size_t off = (size_t)snprintf(buf, len, "%s(", jstr(rec, "syscall"));
		if (json_object_object_get_ex(rec, "args", &v) && json_object_is_type(v, json_type_array))
			for (size_t i = 0; i < 3 && i < json_object_array_length(v) && off < len; i++)
				off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "",
				                        json_object_get_string(json_object_array_get_idx(v, i)));
		snprintf(buf + off, off < len ? len - off : 0, ", ...) -> EPERM  #%s", jstr(rec, "count"));
	} else if (!strcmp(event, "run_end")) {
		snprintf(buf, len, "reason=%s exit=%s wall=%sms cpu=%sms peak=%s denied=%s",
		         jstr(rec, "reason"), jstr(rec, "exit_status"), jstr(rec, "wall_ms"),
		         jstr(rec, "cpu_ms"), jstr(rec, "peak_memory_bytes"),
		         json_object_object_get_ex(rec, "denied_syscalls", &v)
		             ? json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN) : "[]");
		if (*jstr(rec, "error"))
			snprintf(buf, len, "error: %s", jstr(rec, "error"));
	} else {
		snprintf(buf, len, "%s", json_object_to_json_string_ext(rec, JSON_C_TO_STRING_PLAIN));
	}
}

int cmd_audit(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "session", required_argument, NULL, 's' },
		{ "denied", no_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "audit-log", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *session = NULL, *file = NULL;
	bool denied_only = false, as_json = false;
	char *path, *line = NULL, det[1024];
	size_t cap = 0;
	ssize_t got;
	unsigned long bad = 0, shown = 0, lineno = 0;
	json_tokener *tok;
	FILE *f;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's': session = optarg; break;
		case 'd': denied_only = true; break;
		case 'j': as_json = true; break;
		case 'f': file = optarg; break;
		case 'h': audit_usage(stdout); return 0;
		default:
			wlog_error("audit: unknown option '%s'; see `warden audit --help`", argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		wlog_error("audit: unexpected argument '%s'", argv[optind]);
		return 2;
	}
	path = file ? xstrdup(file) : waudit_default_path();
	f = fopen(path, "re");
	if (!f) {
		wlog_error("cannot read the audit log %s: %m (nothing has run yet, or pass --audit-log FILE)", path);
		free(path);
		return 1;
	}
	tok = json_tokener_new();
	if (!tok)
		abort();
	if (!as_json)
		printf("%-24s %-12s %-10s %s\n", "TIME", "SESSION", "EVENT", "DETAIL");
	/* whole lines, however long: a line cut in pieces would let the text
	 * of one record (code, argv) be read as a record of its own */
	while ((got = getline(&line, &cap, f)) >= 0) {
		size_t len = (size_t)got;
		json_object *rec;
		const char *ev, *sess;
		char why[160];

		lineno++;
		if (len && line[len - 1] == '\n')
			len--;
		rec = waudit_parse_line(tok, line, len, why, sizeof(why));
		if (!rec) {
			if (++bad <= BAD_REPORTED)
				wlog_error("%s:%lu: malformed audit record; %s (the line is not shown: "
				           "the log was damaged or written by something other than warden)",
				           path, lineno, why);
			continue;
		}
		ev = jstr(rec, "event");
		sess = jstr(rec, "session");
		if ((session && strcmp(session, sess)) || (denied_only && strcmp(ev, "denied"))) {
			json_object_put(rec);
			continue;
		}
		shown++;
		if (as_json) {
			fputs(json_object_to_json_string_ext(rec, JSON_C_TO_STRING_PLAIN |
			                                          JSON_C_TO_STRING_NOSLASHESCAPE), stdout);
			putchar('\n');
		} else {
			detail(rec, ev, det, sizeof(det));
			printf("%-24.24s %-12.12s %-10.10s ", jstr(rec, "ts"), sess, ev);
			put_safe(det, 200);
			putchar('\n');
		}
		json_object_put(rec);
	}
	free(line);
	json_tokener_free(tok);
	fclose(f);
	if (bad > BAD_REPORTED)
		wlog_error("%s: %lu malformed audit records in all (the first %d are listed above)",
		           path, bad, BAD_REPORTED);
	if (!shown && session)
		wlog_warn("no records for session %s in %s", session, path);
	free(path);
	return bad ? 1 : 0;
}
