/* `warden audit`: read the audit log back, as a table or as JSON lines.
 * Like journalctl it shows the end: the last DEFAULT_LAST runs or sessions
 * unless --last, --since, --session or --all say otherwise, through a
 * pager on a terminal (cli/pager.c). */
#include <ctype.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit_sel.h"
#include "warden/auditlog.h"
#include "cmd.h"
#include "warden/log.h"
#include "warden/policy.h"
#include "warden/util.h"

#define BAD_REPORTED 20   /* malformed lines listed one by one */
#define DEFAULT_LAST 10   /* runs or sessions shown when nothing says which */

static void audit_usage(FILE *f)
{
	fputs("usage: warden audit [--last N | --since TIME | --all | --session ID]\n"
	      "                    [--denied] [--json] [--no-pager] [--audit-log FILE]\n"
	      "\n"
	      "  (default)         the last 10 runs or sessions\n"
	      "  --last N          the last N runs or sessions\n"
	      "  --since TIME      the records from TIME on: 2024-05-01, \"2024-05-01 14:00\",\n"
	      "                    today, yesterday, \"1h ago\" (-1h, 30m, 2d)\n"
	      "  --all             the whole log\n"
	      "  --session ID      one run or session (a unique prefix of its id will do)\n"
	      "  --denied          only denied syscalls (of the last runs that had any)\n"
	      "  --json            the records as JSON lines (unchanged), same choice\n"
	      "  --no-pager        on a terminal too ($PAGER, else less -FRX)\n"
	      "  --audit-log FILE  read FILE instead of the default log\n"
	      "\n"
	      "A line that is not a well-formed record is reported as FILE:LINE on\n"
	      "stderr and not shown; the exit status is then 1.\n"
	      "More: man warden-audit\n", f);
}

struct afilter {
	const char *session;   /* one id, or NULL */
	bool denied;
	const char *since;     /* UTC "YYYY-MM-DDTHH:MM:SS", or NULL */
};

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

enum ftype { F_STR, F_INT, F_BOOL, F_ARR_STR, F_ARR_DENIED, F_NET_TRIED };

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
	{ "denied", "call", F_STR, false },        /* since issue 13 */
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
	{ "net", "method", F_STR, true },          /* since issue 10: the egress proxy */
	{ "net", "host", F_STR, true },
	{ "net", "port", F_INT, true },
	{ "net", "address", F_STR, false },
	{ "net", "allowed", F_BOOL, true },
	{ "net", "rule", F_STR, false },
	{ "net", "status", F_INT, true },
	{ "net", "reason", F_STR, false },
	{ "net", "bytes_up", F_INT, true },
	{ "net", "bytes_down", F_INT, true },
	{ "net", "duration_ms", F_INT, true },
	{ "net_dropped", "dropped", F_INT, true },
	{ "net_dropped", "limit", F_INT, true },
	{ "session_open", "learn", F_BOOL, false },   /* since issue 23 */
	{ "widen", "session", F_STR, true },          /* issue 23: supervisor/widen.c */
	{ "widen", "kind", F_STR, true },
	{ "widen", "value", F_STR, true },
	{ "widen", "granted", F_BOOL, true },
	{ "widen", "by", F_STR, true },
	{ "widen", "by_source", F_STR, true },
	{ "widen", "in_bound", F_BOOL, true },
	{ "widen", "dangerous", F_STR, false },
	{ "widen", "why", F_STR, false },
	{ "revoke", "session", F_STR, true },
	{ "revoke", "widenings", F_ARR_STR, true },
	{ "profile_save", "session", F_STR, true },
	{ "profile_save", "name", F_STR, true },
	{ "profile_save", "path", F_STR, true },
	{ "profile_save", "replaced", F_BOOL, true },
	{ "egress_start", "pid", F_INT, true },    /* since issue 21: warden-egress */
	{ "egress_start", "restart", F_BOOL, true },
	{ "egress_start", "down_ms", F_INT, false },
	{ "egress_start", "refused", F_INT, false },
	{ "egress_end", "pid", F_INT, true },
	{ "egress_end", "reason", F_STR, true },
	{ "run_end", "network_tried", F_NET_TRIED, false },    /* issue 20: jail/netseen.c */
	{ "block_end", "network_tried", F_NET_TRIED, false },
};

/* {"count": N, "first": [{"name"?, "address", "port", "protocol"}...]} */
static bool net_tried_ok(json_object *v)
{
	json_object *c, *a;

	if (!json_object_is_type(v, json_type_object) ||
	    !json_object_object_get_ex(v, "count", &c) || !json_object_is_type(c, json_type_int) ||
	    !json_object_object_get_ex(v, "first", &a) || !json_object_is_type(a, json_type_array))
		return false;
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		json_object *e = json_object_array_get_idx(a, i), *f;

		if (!json_object_is_type(e, json_type_object) ||
		    !json_object_object_get_ex(e, "address", &f) ||
		    !json_object_is_type(f, json_type_string) ||
		    !json_object_object_get_ex(e, "port", &f) || !json_object_is_type(f, json_type_int) ||
		    !json_object_object_get_ex(e, "protocol", &f) ||
		    !json_object_is_type(f, json_type_string) ||
		    (json_object_object_get_ex(e, "name", &f) && !json_object_is_type(f, json_type_string)))
			return false;
	}
	return true;
}

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
	case F_BOOL: return json_object_is_type(v, json_type_boolean);
	case F_ARR_STR: return arr_of(v, false);
	case F_ARR_DENIED: return arr_of(v, true);
	case F_NET_TRIED: return net_tried_ok(v);
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

/* " tried=pypi.org,203.0.113.9:443,+2": where the jail tried to go */
static void net_tried_detail(json_object *v, char *buf, size_t len)
{
	json_object *a, *f;
	int64_t n = json_object_object_get_ex(v, "count", &f) ? json_object_get_int64(f) : 0;
	size_t off = 0, shown;

	if (n <= 0 || !json_object_object_get_ex(v, "first", &a))
		return;
	shown = json_object_array_length(a);
	for (size_t i = 0; i < shown && off < len; i++) {
		json_object *e = json_object_array_get_idx(a, i);
		const char *name = jstr(e, "name"), *addr = jstr(e, "address");

		off += (size_t)snprintf(buf + off, len - off, i ? "," : " tried=");
		if (off < len)
			off += (size_t)snprintf(buf + off, len - off, *name ? "%s" :
			                        strchr(addr, ':') ? "[%s]:%s" : "%s:%s",
			                        *name ? name : addr, jstr(e, "port"));
	}
	if (off < len && (size_t)n > shown)
		snprintf(buf + off, len - off, ",+%zu", (size_t)n - shown);
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
	} else if (!strcmp(event, "denied") && *jstr(rec, "call")) {
		/* decoded when it was written (supervisor/decode.h); shown
		 * through the same control-character escaping as every field */
		snprintf(buf, len, "%s -> EPERM  #%s", jstr(rec, "call"), jstr(rec, "count"));
	} else if (!strcmp(event, "denied")) {
		/* a record written before "call" existed: the raw numbers */
		size_t off = (size_t)snprintf(buf, len, "%s(", jstr(rec, "syscall"));
		if (json_object_object_get_ex(rec, "args", &v) && json_object_is_type(v, json_type_array))
			for (size_t i = 0; i < 3 && i < json_object_array_length(v) && off < len; i++)
				off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "",
				                        json_object_get_string(json_object_array_get_idx(v, i)));
		snprintf(buf + off, off < len ? len - off : 0, ", ...) -> EPERM  #%s", jstr(rec, "count"));
	} else if (!strcmp(event, "run_end") || !strcmp(event, "block_end")) {
		size_t off = 0;
		if (!strcmp(event, "block_end"))
			off = (size_t)snprintf(buf, len, "#%s ", jstr(rec, "block"));
		if (*jstr(rec, "error")) {
			snprintf(buf + off, len - off, "error: %s", jstr(rec, "error"));
			return;
		}
		off += (size_t)snprintf(buf + off, len - off, "reason=%s ", jstr(rec, "reason"));
		/* run_end has the status warden exited with; block_end the
		 * program's code or signal (a null reads as "") */
		if (off < len && (*jstr(rec, "exit_status") || !*jstr(rec, "signal")))
			off += (size_t)snprintf(buf + off, len - off, "exit=%s",
			                        *jstr(rec, "exit_status") ? jstr(rec, "exit_status")
			                                                  : jstr(rec, "exit_code"));
		else if (off < len)
			off += (size_t)snprintf(buf + off, len - off, "signal=%s", jstr(rec, "signal"));
		if (off < len)
			off += (size_t)snprintf(buf + off, len - off, " wall=%sms cpu=%sms peak=%s denied=%s",
			         jstr(rec, "wall_ms"), jstr(rec, "cpu_ms"),
			         *jstr(rec, "peak_memory_bytes") ? jstr(rec, "peak_memory_bytes") : "unknown",
			         json_object_object_get_ex(rec, "denied_syscalls", &v)
			             ? json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN) : "[]");
		if (off < len && json_object_object_get_ex(rec, "network_tried", &v))
			net_tried_detail(v, buf + off, len - off);
	} else if (!strcmp(event, "session_open")) {
		snprintf(buf, len, "profile=%s workspace=%s%s", jstr(rec, "profile"),
		         jstr(rec, "workspace"),
		         json_object_object_get_ex(rec, "oneshot", &v) && json_object_get_boolean(v)
		             ? " oneshot" : "");
	} else if (!strcmp(event, "block")) {
		/* the first line of the code, and how many more there are */
		const char *code = jstr(rec, "code"), *nl = strchr(code, '\n');
		size_t more = 0;
		for (const char *q = nl; q && q[1]; q = strchr(q + 1, '\n'))
			more++;
		snprintf(buf, len, "#%s %s: %.*s", jstr(rec, "block"), jstr(rec, "language"),
		         nl ? (int)(nl - code) : (int)strlen(code), code);
		if (more) {
			size_t off = strlen(buf);
			snprintf(buf + off, len - off, " (+%zu line%s)", more, more == 1 ? "" : "s");
		}
	} else if (!strcmp(event, "denied_dropped")) {
		snprintf(buf, len, "%s denied records left out (limit %s)", jstr(rec, "dropped"),
		         jstr(rec, "limit"));
	} else if (!strcmp(event, "net")) {
		/* host, reason and rule came from the jail or the policy: shown
		 * through the same escaping as every field */
		bool ok = json_object_object_get_ex(rec, "allowed", &v) && json_object_get_boolean(v);
		size_t off = (size_t)snprintf(buf, len, "%s %s %s:%s%s%s -> %s up=%s down=%s %sms",
		                              ok ? "allowed" : "REFUSED", jstr(rec, "method"),
		                              jstr(rec, "host"), jstr(rec, "port"),
		                              *jstr(rec, "address") ? " @" : "", jstr(rec, "address"),
		                              jstr(rec, "status"), jstr(rec, "bytes_up"),
		                              jstr(rec, "bytes_down"), jstr(rec, "duration_ms"));
		if (off < len && *jstr(rec, "rule"))
			off += (size_t)snprintf(buf + off, len - off, " rule=%s", jstr(rec, "rule"));
		if (off < len && *jstr(rec, "reason"))
			snprintf(buf + off, len - off, " (%s)", jstr(rec, "reason"));
	} else if (!strcmp(event, "net_dropped")) {
		snprintf(buf, len, "%s net records left out (limit %s)", jstr(rec, "dropped"),
		         jstr(rec, "limit"));
	} else if (!strcmp(event, "egress_start")) {
		/* the egress proxy's process, of no session: which one, and
		 * after a death how long it was down */
		if (json_object_object_get_ex(rec, "restart", &v) && json_object_get_boolean(v))
			snprintf(buf, len, "egress proxy pid %s ready again after %sms down (%s "
			         "requests answered 502 meanwhile)", jstr(rec, "pid"),
			         jstr(rec, "down_ms"), jstr(rec, "refused"));
		else
			snprintf(buf, len, "egress proxy pid %s ready", jstr(rec, "pid"));
	} else if (!strcmp(event, "egress_end")) {
		bool sig = *jstr(rec, "signal");
		snprintf(buf, len, "egress proxy pid %s ended, %s=%s: %s", jstr(rec, "pid"),
		         sig ? "signal" : "exit", sig ? jstr(rec, "signal") : jstr(rec, "exit_code"),
		         jstr(rec, "reason"));
	} else if (!strcmp(event, "session_close")) {
		snprintf(buf, len, "blocks=%s why=%s", jstr(rec, "blocks"), jstr(rec, "why"));
	} else if (!strcmp(event, "widen")) {
		/* the value came from the jail (through the learner and the
		 * broker): shown through the same escaping as every field */
		bool ok = json_object_object_get_ex(rec, "granted", &v) && json_object_get_boolean(v);
		bool in = json_object_object_get_ex(rec, "in_bound", &v) && json_object_get_boolean(v);
		size_t off = (size_t)snprintf(buf, len, "%s %s %s by %s (%s)%s",
		                              ok ? "WIDENED" : "not widened", jstr(rec, "kind"),
		                              jstr(rec, "value"), jstr(rec, "by"), jstr(rec, "by_source"),
		                              in ? "" : " beyond the start's bound");
		if (off < len && *jstr(rec, "dangerous"))
			off += (size_t)snprintf(buf + off, len - off, " DANGEROUS: %s",
			                        jstr(rec, "dangerous"));
		if (off < len && *jstr(rec, "why"))
			snprintf(buf + off, len - off, " (%s)", jstr(rec, "why"));
	} else if (!strcmp(event, "revoke")) {
		/* paths as written (no "\/") */
		snprintf(buf, len, "dropped %s",
		         json_object_object_get_ex(rec, "widenings", &v)
		             ? json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
		                                              JSON_C_TO_STRING_NOSLASHESCAPE)
		             : "[]");
	} else if (!strcmp(event, "profile_save")) {
		snprintf(buf, len, "%s %s to %s", json_object_object_get_ex(rec, "replaced", &v) &&
		         json_object_get_boolean(v) ? "replaced" : "wrote", jstr(rec, "name"),
		         jstr(rec, "path"));
	} else {
		/* an event this version does not know: its fields as key=value */
		size_t off = 0;
		buf[0] = '\0';
		json_object_object_foreach(rec, key, val) {
			if (!strcmp(key, "ts") || !strcmp(key, "event") || !strcmp(key, "session"))
				continue;
			if (off < len)
				off += (size_t)snprintf(buf + off, len - off, "%s%s=%s", off ? " " : "", key,
				                        json_object_is_type(val, json_type_string)
				                            ? json_object_get_string(val)
				                            : json_object_to_json_string_ext(val, JSON_C_TO_STRING_PLAIN));
		}
	}
}

/* --session takes a unique prefix of a session id (the README shows one).
 * An exact id wins; several matches are an error that lists them.  Reads
 * the log once; malformed lines are skipped here and reported by the
 * main pass.  Returns the id to filter on (malloc'd), or NULL after the
 * error. */
static char *resolve_session(FILE *f, json_tokener *tok, const char *prefix)
{
	char *line = NULL, **ids = NULL, *out = NULL, why[160];
	size_t cap = 0, n = 0, plen = strlen(prefix);
	ssize_t got;

	while ((got = getline(&line, &cap, f)) >= 0) {
		size_t len = (size_t)got;
		json_object *rec;
		const char *sess;
		bool seen = false;

		if (len && line[len - 1] == '\n')
			len--;
		rec = waudit_parse_line(tok, line, len, why, sizeof(why));
		if (!rec)
			continue;
		sess = jstr(rec, "session");
		if (*sess && !strncmp(sess, prefix, plen)) {
			for (size_t i = 0; i < n && !seen; i++)
				seen = !strcmp(ids[i], sess);
			if (!seen) {
				char **bigger = xcalloc(n + 1, sizeof(char *));
				if (n)
					memcpy(bigger, ids, n * sizeof(char *));
				free(ids);
				ids = bigger;
				ids[n++] = xstrdup(sess);
			}
		}
		json_object_put(rec);
	}
	free(line);
	rewind(f);
	for (size_t i = 0; i < n && !out; i++)
		if (!strcmp(ids[i], prefix))
			out = xstrdup(prefix);
	if (!out && n <= 1)
		out = xstrdup(n ? ids[0] : prefix);
	if (!out) {
		fprintf(stderr, "warden: audit: --session %s matches %zu sessions:", prefix, n);
		for (size_t i = 0; i < n && i < 20; i++) {
			fputc(' ', stderr);
			for (const char *c = ids[i]; *c; c++)   /* the log's text: printable only */
				fputc((unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c, stderr);
		}
		fprintf(stderr, "%s; give more of the id\n", n > 20 ? " ..." : "");
	}
	for (size_t i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
	return out;
}

/* A column of the table: the text escaped, never cut, padded to width. */
static void put_col(const char *s, int width)
{
	int n = 0;

	for (; *s; s++, n++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c == 0x7f) {
			printf("\\x%02x", c);
			n += 3;
		} else {
			putchar(c);
		}
	}
	printf("%*s ", n < width ? width - n : 0, "");
}

static bool passes(json_object *rec, const struct afilter *af)
{
	if (af->session && strcmp(af->session, jstr(rec, "session")))
		return false;
	if (af->denied && strcmp(jstr(rec, "event"), "denied"))
		return false;
	return !af->since || audit_ts_since(jstr(rec, "ts"), af->since);
}

/* The first pass for --last N (and the default): the runs and sessions
 * with records that pass the filters, in order.  Malformed lines are
 * skipped here and reported by the main pass. */
static void find_runs(FILE *f, json_tokener *tok, const struct afilter *af, struct ids *runs)
{
	char *line = NULL, why[160];
	size_t cap = 0;
	ssize_t got;
	unsigned long lineno = 0;

	while ((got = getline(&line, &cap, f)) >= 0) {
		size_t len = (size_t)got;
		json_object *rec;

		lineno++;
		if (len && line[len - 1] == '\n')
			len--;
		rec = waudit_parse_line(tok, line, len, why, sizeof(why));
		if (!rec)
			continue;
		if (*jstr(rec, "session") && passes(rec, af))
			ids_add(runs, jstr(rec, "session"), lineno);
		json_object_put(rec);
	}
	free(line);
	rewind(f);
}

int cmd_audit(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "session", required_argument, NULL, 's' },
		{ "denied", no_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "audit-log", required_argument, NULL, 'f' },
		{ "last", required_argument, NULL, 'n' },
		{ "since", required_argument, NULL, 'S' },
		{ "all", no_argument, NULL, 'a' },
		{ "no-pager", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *session = NULL, *file = NULL;
	char *session_id = NULL, since[20];
	bool as_json = false, all = false, use_pager = true;
	struct afilter af = { 0 };
	struct ids runs = { 0 };
	struct wstrv bad_lines = { 0 };
	size_t last = 0, keep_from = 0;
	unsigned long first_kept = 0;
	char *path, *line = NULL, det[1024], *end;
	size_t cap = 0;
	ssize_t got;
	unsigned long bad = 0, shown = 0, lineno = 0;
	json_tokener *tok;
	pid_t pager;
	FILE *f;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's': session = optarg; break;
		case 'd': af.denied = true; break;
		case 'j': as_json = true; break;
		case 'f': file = optarg; break;
		case 'a': all = true; break;
		case 'P': use_pager = false; break;
		case 'n':
			last = strtoul(optarg, &end, 10);
			if (*end || !last || optarg[0] == '-') {
				wlog_error("audit: --last '%s': give how many runs or sessions, e.g. "
				           "--last 5 (--all for every one)", optarg);
				return 2;
			}
			break;
		case 'S':
			if (audit_parse_since(optarg, since) < 0) {
				wlog_error("audit: --since '%s': not a time; e.g. 2024-05-01, "
				           "\"2024-05-01 14:00\", today, yesterday, \"1h ago\", -30m",
				           optarg);
				return 2;
			}
			af.since = since;
			break;
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
	if (all && (last || af.since || session)) {
		wlog_error("audit: --all is the whole log; leave out --last, --since and --session");
		return 2;
	}
	/* nothing says which records: the end of the log, as journalctl */
	if (!all && !last && !af.since && !session)
		last = DEFAULT_LAST;
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
	if (session) {
		session_id = resolve_session(f, tok, session);
		if (!session_id) {
			json_tokener_free(tok);
			fclose(f);
			free(path);
			return 2;
		}
		session = session_id;
		af.session = session;
	}
	if (last) {
		find_runs(f, tok, &af, &runs);
		keep_from = runs.n > last ? runs.n - last : 0;
		first_kept = keep_from < runs.n ? runs.line[keep_from] : ULONG_MAX;
	}
	pager = use_pager ? wpager_start() : 0;
	if (!as_json)
		printf("%-24s %-12s %-14s %s\n", "TIME", "SESSION", "EVENT", "DETAIL");
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
			/* said once the pager is gone, not over its screen */
			if (++bad <= BAD_REPORTED) {
				_cleanup_free_ char *m = xasprintf("%s:%lu: malformed audit record; %s (the "
				                                   "line is not shown: the log was damaged or "
				                                   "written by something other than warden)",
				                                   path, lineno, why);
				wstrv_push(&bad_lines, m);
			}
			continue;
		}
		ev = jstr(rec, "event");
		sess = jstr(rec, "session");
		/* --last: records of the runs kept; one of no run, from where
		 * the first of them starts */
		if (!passes(rec, &af) ||
		    (last && (*sess ? ids_find(&runs, sess) < (long)keep_from : lineno < first_kept))) {
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
			put_col(jstr(rec, "ts"), 24);
			put_col(sess, 12);
			put_col(ev, 14);   /* denied_dropped, the longest name */
			put_safe(det, 200);
			putchar('\n');
		}
		json_object_put(rec);
	}
	wpager_end(pager);
	free(line);
	json_tokener_free(tok);
	fclose(f);
	for (size_t i = 0; i < bad_lines.n; i++)
		wlog_error("%s", bad_lines.v[i]);
	if (bad > BAD_REPORTED)
		wlog_error("%s: %lu malformed audit records in all (the first %d are listed above)",
		           path, bad, BAD_REPORTED);
	if (!shown && session)
		wlog_warn("no records for session %s in %s", session, path);
	else if (keep_from)
		fprintf(stderr, "warden audit: the last %zu of %zu runs and sessions%s in %s; "
		        "--last N, --since TIME or --all for others\n", runs.n - keep_from, runs.n,
		        af.denied ? " with denied calls" : "", path);
	ids_free(&runs);
	wstrv_free(&bad_lines);
	free(session_id);
	free(path);
	return bad ? 1 : 0;
}
