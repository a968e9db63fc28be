/* Security probes: small static programs run inside a real jail
 * (tests/security/security.bats), each trying one class of escape.
 *
 * Each prints exactly one line, "NAME: BLOCKED|ESCAPED|ERROR: details",
 * and exits with
 *   0  the escape was blocked (good)
 *   1  the escape SUCCEEDED (bad)
 *   2  the probe could not run (error)
 * A probe that the jail kills (limits) prints nothing; the harness then
 * reads the reason from warden's --json summary.
 *
 * Conventions: try every way in, ESCAPED() on the first one that works;
 * note() how each failed; BLOCKED("%s", notes) at the end. */
#ifndef WARDEN_PROBE_H
#define WARDEN_PROBE_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROBE_OK      0
#define PROBE_ESCAPED 1
#define PROBE_ERROR   2

static char probe_notes[2048];

__attribute__((noreturn, format(printf, 3, 4), unused))
static void probe_end(int code, const char *tag, const char *fmt, ...)
{
	char msg[3072];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printf("%s: %s: %s\n", program_invocation_short_name, tag, msg);
	fflush(stdout);
	_exit(code);
}

#define BLOCKED(...)   probe_end(PROBE_OK, "BLOCKED", __VA_ARGS__)
#define ESCAPED(...)   probe_end(PROBE_ESCAPED, "ESCAPED", __VA_ARGS__)
#define PROBE_FAIL(...) probe_end(PROBE_ERROR, "ERROR", __VA_ARGS__)

/* Append "; text" to the notes printed by BLOCKED. Saves errno. */
__attribute__((format(printf, 1, 2), unused))
static void note(const char *fmt, ...)
{
	int saved = errno;
	size_t len = strlen(probe_notes);
	va_list ap;

	if (len && len < sizeof(probe_notes) - 2) {
		memcpy(probe_notes + len, "; ", 3);
		len += 2;
	}
	va_start(ap, fmt);
	vsnprintf(probe_notes + len, sizeof(probe_notes) - len, fmt, ap);
	va_end(ap);
	errno = saved;
}

/* For a call that must fail: ESCAPED if it succeeded, else note its errno. */
__attribute__((unused))
static void must_fail(long rc, const char *what)
{
	if (rc >= 0)
		ESCAPED("%s succeeded (returned %ld)", what, rc);
	note("%s: %s", what, strerrorname_np(errno) ? strerrorname_np(errno) : "?");
}

#endif
