/* The audit log.  Only the supervisor writes it.  One record = one line =
 * one write(2) on an O_APPEND descriptor, so records from concurrent
 * wardens never interleave inside a line. */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <stdint.h>
#include <time.h>

#include "audit.h"
#include "warden/log.h"
#include "warden/util.h"

struct waudit {
	int fd;
	char *path;
	int warned;
	void (*tap)(void *ctx, const char *event, json_object *rec);
	void *tap_ctx;
};

void waudit_tap(struct waudit *a, void (*fn)(void *ctx, const char *event, json_object *rec),
                void *ctx)
{
	if (a) {
		a->tap = fn;
		a->tap_ctx = ctx;
	}
}

const char *waudit_path(const struct waudit *a)
{
	return a ? a->path : NULL;
}

char *waudit_default_path(void)
{
	const char *st = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");

	if (getenv("WARDEN_AUDIT_LOG") && *getenv("WARDEN_AUDIT_LOG"))
		return xstrdup(getenv("WARDEN_AUDIT_LOG"));
	if (geteuid() == 0)
		return xstrdup("/var/log/warden/audit.jsonl");
	if (st && st[0] == '/')
		return xasprintf("%s/warden/audit.jsonl", st);
	if (!home || home[0] != '/') {
		struct passwd *pw = getpwuid(getuid());
		home = pw ? pw->pw_dir : "/tmp";
	}
	return xasprintf("%s/.local/state/warden/audit.jsonl", home);
}

int waudit_open(const char *path, struct waudit **out, struct werr *err)
{
	struct waudit *a;
	char *p = path ? xstrdup(path) : waudit_default_path();
	char *slash;

	*out = NULL;
	slash = strrchr(p, '/');
	if (slash && slash != p) {
		*slash = '\0';
		if (mkdir_p(p, 0700, err) < 0) {
			werr_wrap(err, "audit log directory");
			free(p);
			return -1;
		}
		*slash = '/';
	}
	a = xcalloc(1, sizeof(*a));
	a->path = p;
	/* 0600: the log holds the code that ran and its arguments */
	a->fd = open(p, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (a->fd < 0) {
		werr_set(err, errno, "opening the audit log %s (choose another with --audit-log FILE)", p);
		free(p);
		free(a);
		return -1;
	}
	*out = a;
	return 0;
}

/* UTC civil date from a Unix time, without gmtime_r(): glibc's gmtime_r
 * calls tzset, which reads /etc/localtime on every run (measurable in
 * `make bench`).  Howard Hinnant's days-to-civil algorithm (public domain
 * arithmetic, written out here). */
static void utc_civil(int64_t t, int *y, int *mo, int *d, int *h, int *mi, int *s)
{
	int64_t days = t / 86400, rem = t % 86400, era, doe, yoe, doy, mp;

	if (rem < 0) {
		rem += 86400;
		days--;
	}
	*h = (int)(rem / 3600);
	*mi = (int)(rem % 3600 / 60);
	*s = (int)(rem % 60);
	days += 719468;
	era = (days >= 0 ? days : days - 146096) / 146097;
	doe = days - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*mo = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = (int)(yoe + era * 400 + (*mo <= 2));
}

char *waudit_format(const char *ts, const char *event, json_object *rec, size_t *len)
{
	const char *line;
	json_object *full;
	char *buf;

	/* ts and event first, so the log reads well with grep */
	full = json_object_new_object();
	json_object_object_add(full, "ts", json_object_new_string(ts));
	json_object_object_add(full, "event", json_object_new_string(event));
	json_object_object_foreach(rec, k, v)
		json_object_object_add(full, k, json_object_get(v));
	json_object_put(rec);
	/* json-c escapes every control character, so a record is one line
	 * whatever its strings hold */
	line = json_object_to_json_string_ext(full, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	*len = strlen(line) + 1;
	buf = xmalloc(*len + 1);
	memcpy(buf, line, *len - 1);
	buf[*len - 1] = '\n';
	buf[*len] = '\0';
	json_object_put(full);
	return buf;
}

void waudit_emit(struct waudit *a, const char *event, json_object *rec)
{
	struct timespec ts;
	int y, mo, d, h, mi, s;
	char when[80], *buf;
	size_t len;

	if (!a) {
		json_object_put(rec);
		return;
	}
	if (a->tap)
		a->tap(a->tap_ctx, event, rec);
	clock_gettime(CLOCK_REALTIME, &ts);
	utc_civil((int64_t)ts.tv_sec, &y, &mo, &d, &h, &mi, &s);
	snprintf(when, sizeof(when), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ",
	         y, mo, d, h, mi, s, (ts.tv_nsec / 1000000) % 1000);
	buf = waudit_format(when, event, rec, &len);
	if (write_all(a->fd, buf, len) < 0 && !a->warned) {
		wlog_warn("writing the audit log %s: %s", a->path, strerror(errno));
		a->warned = 1;
	}
	free(buf);
}

void waudit_close(struct waudit *a)
{
	if (!a)
		return;
	close(a->fd);
	free(a->path);
	free(a);
}
