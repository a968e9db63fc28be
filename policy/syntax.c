/* The syntax of single values, as text: profile names and policy paths (an
 * allow entry's is warden/netallow.h's).  Pure checks, no JSON and no
 * positions: parse.c turns their "what; fix" answers into located errors. */
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

