/* `warden audit`'s choice of records (cli/audit_sel.h): --since's times,
 * and the set of runs and sessions --last counts. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit_sel.h"
#include "warden/util.h"

/* --since TIME as the UTC "YYYY-MM-DDTHH:MM:SS" the records' ts (RFC 3339,
 * UTC, fixed width) are compared with.  TIME is local unless it ends in Z:
 * "2024-05-01", "2024-05-01 14:00[:30]" (or with T), now, today,
 * yesterday, or a time ago: "1h ago", "-1h", "1h" (s, m, h, d). */
int audit_parse_since(const char *s, char out[20])
{
	time_t now = time(NULL), t;
	struct tm tm = { 0 };
	int n = 0, y, mo, d, h = 0, mi = 0, sec = 0;
	unsigned long long k;
	char unit, *end;

	localtime_r(&now, &tm);
	if (!strcmp(s, "now")) {
		t = now;
	} else if (!strcmp(s, "today") || !strcmp(s, "yesterday")) {
		tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
		tm.tm_mday -= s[0] == 'y';
		tm.tm_isdst = -1;
		t = mktime(&tm);
	} else if ((isdigit((unsigned char)s[0]) || s[0] == '-') &&
	           (k = strtoull(s + (s[0] == '-'), &end, 10), end != s + (s[0] == '-')) &&
	           strchr("smhd", (unit = *end)) && unit &&
	           (!end[1] || (s[0] != '-' && !strcmp(end + 1, " ago"))) && k < 100000000ULL) {
		t = now - (time_t)(k * (unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : 86400));
	} else if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) == 3 && n == 10) {
		const char *r = s + 10;

		if (*r == ' ' || *r == 'T') {
			if (sscanf(r + 1, "%2d:%2d%n", &h, &mi, &n) != 2 || n != 5)
				return -1;
			r += 6;
			if (*r == ':') {
				if (sscanf(r + 1, "%2d%n", &sec, &n) != 1 || n != 2)
					return -1;
				r += 3;
			}
		}
		if ((*r && strcmp(r, "Z")) || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 ||
		    h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 60)
			return -1;
		tm = (struct tm){ .tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h,
		                  .tm_min = mi, .tm_sec = sec, .tm_isdst = -1 };
		t = *r == 'Z' ? timegm(&tm) : mktime(&tm);
	} else {
		return -1;
	}
	if (t == (time_t)-1 || !gmtime_r(&t, &tm))
		return -1;
	strftime(out, 20, "%Y-%m-%dT%H:%M:%S", &tm);
	return 0;
}

/* A record's ts is at or after since (both UTC, fixed width); a ts that is
 * not a time is not. */
bool audit_ts_since(const char *ts, const char *since)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:dd";

	for (size_t i = 0; shape[i]; i++)
		if (shape[i] == 'd' ? !isdigit((unsigned char)ts[i]) : ts[i] != shape[i])
			return false;
	return strncmp(ts, since, 19) >= 0;
}

static uint64_t id_hash(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

long ids_find(const struct ids *x, const char *id)
{
	if (!x->tcap)
		return -1;
	for (size_t i = id_hash(id) & (x->tcap - 1);; i = (i + 1) & (x->tcap - 1)) {
		if (!x->tab[i])
			return -1;
		if (!strcmp(x->v[x->tab[i] - 1], id))
			return (long)(x->tab[i] - 1);
	}
}

void ids_add(struct ids *x, const char *id, unsigned long line)
{
	if (ids_find(x, id) >= 0)
		return;
	if (x->n == x->cap) {
		x->cap = x->cap ? x->cap * 2 : 64;
		x->v = realloc(x->v, x->cap * sizeof(*x->v));
		x->line = realloc(x->line, x->cap * sizeof(*x->line));
		if (!x->v || !x->line)
			abort();
	}
	x->v[x->n] = xstrdup(id);
	x->line[x->n++] = line;
	if (2 * x->n > x->tcap) {   /* rebuild at half full */
		free(x->tab);
		x->tcap = x->tcap ? x->tcap * 4 : 256;
		x->tab = xcalloc(x->tcap, sizeof(*x->tab));
		for (size_t k = 0; k < x->n; k++) {
			size_t i = id_hash(x->v[k]) & (x->tcap - 1);
			while (x->tab[i])
				i = (i + 1) & (x->tcap - 1);
			x->tab[i] = k + 1;
		}
		return;
	}
	{
		size_t i = id_hash(id) & (x->tcap - 1);
		while (x->tab[i])
			i = (i + 1) & (x->tcap - 1);
		x->tab[i] = x->n;
	}
}

void ids_free(struct ids *x)
{
	for (size_t i = 0; i < x->n; i++)
		free(x->v[i]);
	free(x->v);
	free(x->line);
	free(x->tab);
}

