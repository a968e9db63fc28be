/* The syntax of single values, as text: profile names, policy paths and
 * "host:port".  Pure checks, no JSON and no positions: parse.c turns their
 * "what; fix" answers into located errors. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "warden/util.h"

bool wprofile_name_ok(const char *name)
{
	size_t n = strlen(name), i;

	if (n == 0 || n > 64 || name[0] == '.' || name[0] == '-')
		return false;
	if (n >= 5 && !strcmp(name + n - 5, ".json"))
		return false;
	for (i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_' || c == '.'))
			return false;
	}
	return true;
}

/* ---- paths ------------------------------------------------------------- */

int wpath_normalize(const char *raw, char **out, const char **why)
{
	_cleanup_free_ char *buf = NULL;
	size_t i = 0, n = 0, len = strlen(raw);

	*out = NULL;
	*why = NULL;
	if (len == 0) {
		*why = "an empty path; write an absolute path such as \"/usr\"";
		return -1;
	}
	if (len >= 4096) {
		*why = "the path is too long; paths are at most 4095 bytes";
		return -1;
	}
	buf = xmalloc(len + 2);
	if (raw[0] == '$') {
		enum wvar var;
		char *bad = NULL;
		if (wvar_read(raw, &i, &var, &bad) < 0 || var == WVAR_DOLLAR) {
			free(bad);
			*why = "only $WORKSPACE and $HOME can start a path; write e.g. "
			       "\"$WORKSPACE/data\" or an absolute path";
			return -1;
		}
		n = (size_t)sprintf(buf, "%s", var == WVAR_WORKSPACE ? "$WORKSPACE" : "$HOME");
		if (raw[i] && raw[i] != '/') {
			*why = "a variable must be followed by '/' or end the path; "
			       "write e.g. \"$HOME/.cache\"";
			return -1;
		}
	} else if (raw[0] != '/') {
		*why = "a relative path; paths must be absolute or start with $WORKSPACE or "
		       "$HOME, e.g. \"/usr\" or \"$WORKSPACE/src\"";
		return -1;
	}
	/* components: drop empty ones and ".", refuse ".." */
	while (raw[i]) {
		size_t start, clen;

		while (raw[i] == '/')
			i++;
		start = i;
		while (raw[i] && raw[i] != '/')
			i++;
		clen = i - start;
		if (clen == 0 || (clen == 1 && raw[start] == '.'))
			continue;
		if (clen == 2 && raw[start] == '.' && raw[start + 1] == '.') {
			*why = "\"..\" is not allowed in paths; write the path without it";
			return -1;
		}
		for (size_t k = start; k < i; k++) {
			if (raw[k] == '$') {
				*why = "'$' may only start a path ($WORKSPACE or $HOME); "
				       "write e.g. \"$HOME/x\"";
				return -1;
			}
			if ((unsigned char)raw[k] < 0x20 || raw[k] == 0x7f) {
				*why = "a control character in a path; remove it";
				return -1;
			}
		}
		buf[n++] = '/';
		memcpy(buf + n, raw + start, clen);
		n += clen;
	}
	if (n == 0)
		buf[n++] = '/';
	buf[n] = '\0';
	if (!strcmp(buf, "/")) {
		*why = "\"/\" cannot be listed; name the directories the jail needs, e.g. \"/usr\"";
		return -1;
	}
	if (!strcmp(buf, "/proc") || !strncmp(buf, "/proc/", 6) ||
	    !strcmp(buf, "/dev") || !strncmp(buf, "/dev/", 5)) {
		*why = "/proc and /dev are built by warden itself; remove this entry";
		return -1;
	}
	*out = steal_pointer(&buf);
	return 0;
}

/* ---- network ----------------------------------------------------------- */

static bool host_ok(const char *h, size_t n)
{
	size_t i, label = 0;

	if (n == 0 || n > 253 || h[0] == '.' || h[n - 1] == '.' || h[0] == '-')
		return false;
	for (i = 0; i < n; i++) {
		char ch = h[i];
		if (ch == '.') {
			if (label == 0)
				return false;
			label = 0;
			continue;
		}
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '-' || ch == '_'))
			return false;
		if (++label > 63)
			return false;
	}
	return true;
}

/* "host:port", "1.2.3.4:port" or "[v6]:port". */
const char *whostport_problem(const char *s)
{
	const char *colon, *q;
	unsigned long port = 0;

	if (s[0] == '[') {
		char buf[INET6_ADDRSTRLEN + 1];
		unsigned char a[16];
		const char *close = strchr(s, ']');
		if (!close || (size_t)(close - s - 1) >= sizeof(buf))
			return "an IPv6 address is written in brackets, e.g. \"[2001:db8::1]:443\"";
		memcpy(buf, s + 1, (size_t)(close - s - 1));
		buf[close - s - 1] = '\0';
		if (inet_pton(AF_INET6, buf, a) != 1)
			return "not a valid IPv6 address; write e.g. \"[2001:db8::1]:443\"";
		colon = close + 1;
		if (*colon != ':')
			return "a port is needed after the address, e.g. \"[2001:db8::1]:443\"";
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return "a port is needed, e.g. \"pypi.org:443\"";
		if (!host_ok(s, (size_t)(colon - s)))
			return "not a valid host name; write e.g. \"pypi.org:443\" (no scheme, no path, "
			       "no wildcards)";
	}
	q = colon + 1;
	if (!*q)
		return "a port is needed, e.g. \"pypi.org:443\"";
	for (; *q; q++) {
		if (*q < '0' || *q > '9')
			return "the port must be a number from 1 to 65535, e.g. \"pypi.org:443\"";
		port = port * 10 + (unsigned long)(*q - '0');
		if (port > 65535)
			break;
	}
	if (port == 0 || port > 65535)
		return "the port must be a number from 1 to 65535, e.g. \"pypi.org:443\"";
	return NULL;
}
