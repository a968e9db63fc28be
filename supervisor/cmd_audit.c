/* `warden audit`: read the audit log back, as a table or as JSON lines. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "warden/audit.h"
#include "warden/cmd.h"
#include "warden/util.h"

static void audit_usage(FILE *f)
{
	fputs("usage: warden audit [--session ID] [--denied] [--json] [--audit-log FILE]\n"
	      "\n"
	      "  --session ID      only the records of one run\n"
	      "  --denied          only denied syscalls\n"
	      "  --json            the records as JSON lines (unchanged)\n"
	      "  --audit-log FILE  read FILE instead of the default log\n", f);
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
	char *path, line[65536], det[1024];
	unsigned long bad = 0, shown = 0;
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
	if (!as_json)
		printf("%-24s %-12s %-10s %s\n", "TIME", "SESSION", "EVENT", "DETAIL");
	while (fgets(line, sizeof(line), f)) {
		json_object *rec = json_tokener_parse(line);
		const char *ev, *sess;

		if (!rec || !json_object_is_type(rec, json_type_object)) {
			bad++;
			json_object_put(rec);
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
	fclose(f);
	if (bad)
		wlog_warn("%lu unreadable lines in %s were skipped", bad, path);
	if (!shown && session)
		wlog_warn("no records for session %s in %s", session, path);
	free(path);
	return 0;
}
