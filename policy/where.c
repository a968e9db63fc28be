/* policy_locate_path: which line of a policy's own file names a path.
 *
 * `warden policy check` runs the checks a run makes against this machine
 * (jail_plan: a link below a writable place, a missing bind); those know
 * the expanded path, not where the file wrote it.  This reads the file
 * again (a policy file is trusted input, as when it was loaded), expands
 * each filesystem entry the way the plan does, and locates the one that
 * names the path, so the message reads FILE:LINE:COL like the parser's. */
#include <string.h>

#include "internal.h"
#include "warden/util.h"

/* The text p came from: its file, or the built-in it names. */
static int source_text(const struct wpolicy *p, char **text, size_t *len)
{
	const char *src = p->source;
	struct werr err = { 0 };

	*text = NULL;
	if (!src)
		return -1;
	for (size_t i = 0; i < wbuiltin_profiles_n; i++) {
		_cleanup_free_ char *name = xasprintf("built-in:%s.json", wbuiltin_profiles[i].name);

		if (!strcmp(src, name)) {
			*text = xstrdup(wbuiltin_profiles[i].json);
			*len = strlen(*text);
			return 0;
		}
	}
	return read_file_buf(src, WPOLICY_MAX_FILE, text, len, &err);
}

/* raw, expanded as jail/plan.c does (no trailing '/'), is path. */
static bool names(const char *raw, const char *path, const char *ws, const char *home)
{
	_cleanup_free_ char *x = NULL;
	struct werr ignored = { 0 };
	size_t l;

	if (policy_expand(raw, ws, home, &x, &ignored) < 0)
		return false;
	for (l = strlen(x); l > 1 && x[l - 1] == '/'; l--)
		x[l - 1] = '\0';
	return !strcmp(x, path);
}

char *policy_locate_path(const struct wpolicy *p, const char *path, const char *workspace,
                         const char *home, const char *msg)
{
	struct wsrc s = { .source = p->source };
	_cleanup_free_ char *text = NULL;
	json_object *root = NULL, *fs;
	struct werr err = { 0 };
	char *where = NULL, *out = NULL;

	if (source_text(p, &text, &s.len) < 0)
		return NULL;
	s.text = text;
	if (wsrc_parse(&s, &root, &err) < 0 ||
	    !json_object_object_get_ex(root, "filesystem", &fs) ||
	    !json_object_is_type(fs, json_type_object))
		goto out;
	json_object_object_foreach(fs, key, val) {
		if (json_object_is_type(val, json_type_array)) {
			for (size_t i = 0; !where && i < json_object_array_length(val); i++) {
				json_object *e = json_object_array_get_idx(val, i);

				if (json_object_is_type(e, json_type_string) &&
				    names(json_object_get_string(e), path, workspace, home))
					where = xasprintf("filesystem.%s[%zu]", key, i);
			}
		} else if (json_object_is_type(val, json_type_object)) {   /* tmpfs */
			json_object_object_foreach(val, tkey, tval) {
				(void)tval;
				if (!where && names(tkey, path, workspace, home))
					where = xasprintf("filesystem.%s.%s", key, tkey);
			}
		}
		if (where)
			break;
	}
	if (where) {
		wsrc_err_val(&s, where, &err, "%s", msg);
		out = xstrdup(err.msg);
	}
out:
	free(where);
	json_object_put(root);
	wsrc_free(&s);
	return out;
}
