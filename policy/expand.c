/* $WORKSPACE and $HOME in policy paths and env.set values.
 *
 * Policies keep these unexpanded so `policy check` works without a
 * workspace; the runner expands them when it builds a jail. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "warden/util.h"

static bool name_start(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool name_char(char c)
{
	return name_start(c) || (c >= '0' && c <= '9');
}

int wvar_read(const char *s, size_t *i, enum wvar *var, char **bad)
{
	size_t start = *i, j = *i + 1, nstart, nlen;
	bool brace = false;

	*bad = NULL;
	if (s[j] == '$') {
		*var = WVAR_DOLLAR;
		*i = j + 1;
		return 0;
	}
	if (s[j] == '{') {
		brace = true;
		j++;
	}
	nstart = j;
	if (name_start(s[j]))
		while (name_char(s[j]))
			j++;
	nlen = j - nstart;
	if (brace) {
		if (s[j] != '}' || nlen == 0) {
			const char *close = strchr(s + start, '}');
			size_t l = close ? (size_t)(close - (s + start)) + 1 : strlen(s + start);
			*bad = strndup(s + start, l);
			return -1;
		}
		j++;
	}
	if (nlen == strlen("WORKSPACE") && !strncmp(s + nstart, "WORKSPACE", nlen)) {
		*var = WVAR_WORKSPACE;
	} else if (nlen == strlen("HOME") && !strncmp(s + nstart, "HOME", nlen)) {
		*var = WVAR_HOME;
	} else {
		/* "$FOO" -> "$FOO"; "$1" or "$-" -> that character too */
		*bad = strndup(s + start, nlen ? j - start : (s[j] ? j - start + 1 : j - start));
		return -1;
	}
	*i = j;
	return 0;
}

int policy_expand(const char *raw, const char *workspace, const char *home,
                  char **out, struct werr *err)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, i = 0;
	FILE *f;

	*out = NULL;
	if (!raw)
		return werr_set(err, 0, "expanding a policy value: no value");
	f = open_memstream(&buf, &len);
	if (!f)
		return werr_set(err, errno, "expanding \"%s\"", raw);
	while (raw[i]) {
		enum wvar var;
		const char *val;
		char *bad = NULL;

		if (raw[i] != '$') {
			fputc(raw[i++], f);
			continue;
		}
		if (wvar_read(raw, &i, &var, &bad) < 0) {
			fclose(f);
			werr_set(err, 0, "unknown variable \"%s\" in \"%s\"; only $WORKSPACE and $HOME "
			         "can be used (write $$ for a literal '$')", bad ? bad : "$", raw);
			free(bad);
			return -1;
		}
		if (var == WVAR_DOLLAR) {
			fputc('$', f);
			continue;
		}
		val = var == WVAR_WORKSPACE ? workspace : home;
		if (!val || val[0] != '/') {
			fclose(f);
			return werr_set(err, 0, "\"%s\" uses $%s, which is %s; give an absolute "
			                "directory", raw, var == WVAR_WORKSPACE ? "WORKSPACE" : "HOME",
			                val ? "not an absolute path" : "not set");
		}
		fputs(val, f);
	}
	if (fclose(f) != 0)
		return werr_set(err, errno, "expanding \"%s\"", raw);
	/* A path (starts with '/' or a variable) must stay absolute; other
	 * values (env.set: "C.UTF-8") are returned as they are. */
	if ((raw[0] == '/' || (raw[0] == '$' && raw[1] != '$')) && buf[0] != '/')
		return werr_set(err, 0, "\"%s\" expands to \"%s\", which is not an absolute path; "
		                "use an absolute path", raw, buf);
	*out = steal_pointer(&buf);
	return 0;
}
