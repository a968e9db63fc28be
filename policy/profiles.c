/* Loading policies: files, buffers, profiles by name, and `extends`.
 *
 * A profile NAME is looked up in the user's directory
 * ($XDG_CONFIG_HOME/warden/profiles/NAME.json, ~/.config/... by default),
 * then among the built-ins compiled into the binary.
 *
 * `extends` follows the same lookup, skipping candidates already in the
 * chain being loaded.  So a user profile "workspace" may extend the built-in
 * "workspace" to adjust it, and a real cycle (a -> b -> a) is reported with
 * the whole chain. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "warden/util.h"

/* The profiles being loaded, outermost first, for cycle detection. */
struct chain {
	const char *id[WPOLICY_MAX_DEPTH + 1];    /* "builtin:NAME" or a real path */
	const char *name[WPOLICY_MAX_DEPTH + 1];
	size_t n;
};

/* A place a profile can come from. */
struct cand {
	char *id;        /* identity for cycle detection */
	char *source;    /* name in messages */
	char *path;      /* user file, or NULL */
	const char *builtin_json;
};

static void cand_clear(struct cand *c)
{
	free(c->id);
	free(c->source);
	free(c->path);
	memset(c, 0, sizeof(*c));
}

char *wprofile_user_dir(void)
{
	const char *x = getenv("XDG_CONFIG_HOME"), *h = getenv("HOME");

	if (x && x[0] == '/')
		return xasprintf("%s/warden/profiles", x);
	if (h && h[0] == '/')
		return xasprintf("%s/.config/warden/profiles", h);
	return NULL;
}

static const struct wbuiltin_profile *find_builtin(const char *name)
{
	size_t i;

	for (i = 0; i < wbuiltin_profiles_n; i++)
		if (!strcmp(wbuiltin_profiles[i].name, name))
			return &wbuiltin_profiles[i];
	return NULL;
}

static char *file_id(const char *path)
{
	char *r = realpath(path, NULL);

	return r ? r : xstrdup(path);
}

static bool in_chain(const struct chain *ch, const char *id)
{
	size_t i;

	for (i = 0; i < ch->n; i++)
		if (!strcmp(ch->id[i], id))
			return true;
	return false;
}

/* Candidates for NAME, in lookup order; returns how many (0..2). */
static size_t candidates(const char *name, struct cand out[2])
{
	_cleanup_free_ char *dir = wprofile_user_dir();
	const struct wbuiltin_profile *b = find_builtin(name);
	size_t n = 0;
	struct stat st;

	memset(out, 0, 2 * sizeof(*out));
	if (dir) {
		char *path = xasprintf("%s/%s.json", dir, name);
		if (stat(path, &st) == 0 || errno != ENOENT) {
			out[n].path = path;
			out[n].source = xstrdup(path);
			out[n].id = file_id(path);
			n++;
		} else {
			free(path);
		}
	}
	if (b) {
		out[n].builtin_json = b->json;
		out[n].source = xasprintf("built-in:%s.json", name);
		out[n].id = xasprintf("builtin:%s", name);
		n++;
	}
	return n;
}

/* "a, b, c" */
static char *available_names(void)
{
	struct wstrv names = { 0 }, sources = { 0 };
	struct werr e2 = { 0 };
	char *r;
	size_t i, len = 1;

	if (policy_list(&names, &sources, &e2) < 0 || names.n == 0) {
		wstrv_free(&names);
		wstrv_free(&sources);
		return xstrdup("(none)");
	}
	for (i = 0; i < names.n; i++)
		len += strlen(names.v[i]) + 2;
	r = xcalloc(1, len);
	for (i = 0; i < names.n; i++) {
		if (i)
			strcat(r, ", ");
		strcat(r, names.v[i]);
	}
	wstrv_free(&names);
	wstrv_free(&sources);
	return r;
}

/* The file's name for a profile that has no "name": its basename without
 * ".json". */
static char *default_name(const char *source)
{
	const char *b = strrchr(source, '/');
	size_t n;

	b = b ? b + 1 : source;
	n = strlen(b);
	if (n > 5 && !strcmp(b + n - 5, ".json"))
		n -= 5;
	return strndup(b, n);
}

static int load_cand(const struct cand *c, const char *want_name, struct chain *ch,
                     struct wstrv *errs, struct wpolicy **out, struct werr *err);

/* An error found while loading.  Collecting (errs: policy_check_*), it is
 * noted (once: a nested load that noted its own leaves err clear) and the
 * caller goes on where it can; false.  Else true: the load ends. */
static bool load_failed(struct wstrv *errs, struct werr *err)
{
	if (!errs)
		return true;
	if (err->msg[0])
		wstrv_push(errs, err->msg);
	werr_clear(err);
	return false;
}

static int resolve_extends(const struct wsrc *s, const char *parent, struct chain *ch,
                           struct wstrv *errs, struct wpolicy **out, struct werr *err)
{
	struct cand cands[2];
	size_t n, i, pick;
	int r;

	*out = NULL;
	n = candidates(parent, cands);
	for (pick = 0; pick < n; pick++)
		if (!in_chain(ch, cands[pick].id))
			break;
	if (n == 0) {
		_cleanup_free_ char *avail = available_names();
		r = wsrc_err_val(s, "extends", err, "\"extends\" names an unknown profile \"%s\"; "
		                 "available profiles: %s", parent, avail);
	} else if (pick == n) {
		char cycle[256] = "";
		for (i = 0; i < ch->n; i++) {
			size_t l = strlen(cycle);
			snprintf(cycle + l, sizeof(cycle) - l, "%s -> ", ch->name[i]);
		}
		size_t l = strlen(cycle);
		snprintf(cycle + l, sizeof(cycle) - l, "%s", parent);
		r = wsrc_err_val(s, "extends", err, "\"extends\" makes a cycle (%s); a profile "
		                 "cannot inherit from itself, remove one \"extends\"", cycle);
	} else if (ch->n >= WPOLICY_MAX_DEPTH) {
		r = wsrc_err_val(s, "extends", err, "more than %d profiles extend each other; "
		                 "flatten the chain", WPOLICY_MAX_DEPTH);
	} else {
		r = load_cand(&cands[pick], parent, ch, errs, out, err);
	}
	for (i = 0; i < n; i++)
		cand_clear(&cands[i]);
	return r;
}

/* Parse one text, resolve what it extends, merge.  The chain holds the
 * profiles outside this one; `id` identifies this one.  errs: collect
 * every error (load_failed) and go on where that is safe: past a key that
 * failed (it is then absent), a name that does not match, a check across
 * keys; not past text that is not JSON or a parent that cannot be loaded
 * (nothing to merge with).  -1 when errs got any. */
static int load_text(const char *source, const char *id, const char *text, size_t len,
                     const char *want_name, struct chain *ch, struct wstrv *errs,
                     struct wpolicy **out, struct werr *err)
{
	size_t n0 = errs ? errs->n : 0;
	struct wsrc s = { .source = source, .text = text, .len = len };
	json_object *root = NULL;
	struct wpolicy *child = NULL, *base = NULL;
	_cleanup_free_ char *extends = NULL;
	bool set[F__COUNT] = { false }, append[F__COUNT] = { false };
	int r = -1;

	*out = NULL;
	if (wsrc_parse(&s, &root, err) < 0) {
		load_failed(errs, err);
		goto out;
	}
	child = xcalloc(1, sizeof(*child));
	if (wpolicy_parse_fields(&s, root, child, set, append, &extends, errs, err) < 0 &&
	    load_failed(errs, err))
		goto out;
	if (!child->name) {
		child->name = default_name(source);
	} else if (want_name && strcmp(child->name, want_name)) {
		wsrc_err_val(&s, "name", err, "\"name\" is \"%s\" but the profile is \"%s\"; "
		             "make the name match the file name (%s.json)", child->name,
		             want_name, want_name);
		if (load_failed(errs, err))
			goto out;
	}
	ch->id[ch->n] = id;
	ch->name[ch->n] = child->name;
	ch->n++;
	if (extends) {
		r = resolve_extends(&s, extends, ch, errs, &base, err);
	} else {
		base = xcalloc(1, sizeof(*base));
		wpolicy_defaults(base);
		r = 0;
	}
	ch->n--;
	if (r < 0) {
		load_failed(errs, err);
		goto out;
	}
	r = -1;
	if (wpolicy_merge(&s, base, child, set, append, errs, err) < 0) {
		load_failed(errs, err);
		goto out;
	}
	if (errs && errs->n > n0)
		goto out;
	free(base->name);
	free(base->source);
	free(base->description);
	/* name and description describe one file: they are not inherited */
	base->name = steal_pointer(&child->name);
	base->description = steal_pointer(&child->description);
	base->source = xstrdup(source);
	*out = steal_pointer(&base);
	r = 0;
out:
	policy_free(base);
	policy_free(child);
	json_object_put(root);
	wsrc_free(&s);
	return r;
}

/* read_file_buf keeps the length, so a NUL byte in the file is reported
 * with its position, not silently cut; directories and oversized files get
 * messages that say what a policy is. */
static int read_policy_file(const char *path, char **text, size_t *len, struct werr *err)
{
	*text = NULL;
	if (read_file_buf(path, WPOLICY_MAX_FILE, text, len, err) < 0)
		return err->errnum == EISDIR
		       ? werr_set(err, 0, "%s is a directory; give a policy file", path) : -1;
	if (*len > WPOLICY_MAX_FILE) {
		free(*text);
		*text = NULL;
		*len = 0;
		return werr_set(err, 0, "%s is larger than %d bytes; a policy is a small "
		                "JSON object", path, WPOLICY_MAX_FILE);
	}
	return 0;
}

static int load_cand(const struct cand *c, const char *want_name, struct chain *ch,
                     struct wstrv *errs, struct wpolicy **out, struct werr *err)
{
	_cleanup_free_ char *text = NULL;
	size_t len;

	*out = NULL;
	if (c->builtin_json)
		return load_text(c->source, c->id, c->builtin_json, strlen(c->builtin_json),
		                 want_name, ch, errs, out, err);
	if (read_policy_file(c->path, &text, &len, err) < 0)
		return -1;
	return load_text(c->source, c->id, text, len, want_name, ch, errs, out, err);
}

int policy_load_buffer(const char *source, const char *text, size_t len,
                       struct wpolicy **out, struct werr *err)
{
	struct chain ch = { .n = 0 };

	*out = NULL;
	if (!source)
		source = "<buffer>";
	if (!text)
		return werr_set(err, 0, "%s: no policy text", source);
	return load_text(source, source, text, len, NULL, &ch, NULL, out, err);
}

static int load_file(const char *path, struct wstrv *errs, struct wpolicy **out,
                     struct werr *err)
{
	_cleanup_free_ char *text = NULL, *id = NULL;
	struct chain ch = { .n = 0 };
	size_t len;

	*out = NULL;
	if (read_policy_file(path, &text, &len, err) < 0)
		return load_failed(errs, err), -1;
	id = file_id(path);
	return load_text(path, id, text, len, NULL, &ch, errs, out, err);
}

static int load_profile(const char *name, struct wstrv *errs, struct wpolicy **out,
                        struct werr *err)
{
	struct chain ch = { .n = 0 };
	struct cand cands[2];
	size_t n, i;
	int r;

	*out = NULL;
	if (!name || !wprofile_name_ok(name)) {
		werr_set(err, 0, "\"%s\" is not a profile name; names use letters, digits, "
		         "'-', '_' and '.', e.g. \"workspace\"", name ? name : "");
		return load_failed(errs, err), -1;
	}
	n = candidates(name, cands);
	if (n == 0) {
		_cleanup_free_ char *avail = available_names();
		werr_set(err, 0, "unknown profile \"%s\"; available profiles: %s", name, avail);
		return load_failed(errs, err), -1;
	}
	r = load_cand(&cands[0], name, &ch, errs, out, err);
	if (r < 0)
		load_failed(errs, err);   /* a file that could not be read */
	for (i = 0; i < n; i++)
		cand_clear(&cands[i]);
	return r;
}

int policy_load_file(const char *path, struct wpolicy **out, struct werr *err)
{
	return load_file(path, NULL, out, err);
}

int policy_load_profile(const char *name, struct wpolicy **out, struct werr *err)
{
	return load_profile(name, NULL, out, err);
}

int policy_check_file(const char *path, struct wstrv *errors, struct wpolicy **out)
{
	struct werr err = { 0 };
	size_t n0 = errors->n;

	if (load_file(path, errors, out, &err) == 0 && errors->n == n0)
		return 0;
	policy_free(*out);
	*out = NULL;
	return -1;
}

int policy_check_profile(const char *name, struct wstrv *errors, struct wpolicy **out)
{
	struct werr err = { 0 };
	size_t n0 = errors->n;

	if (load_profile(name, errors, out, &err) == 0 && errors->n == n0)
		return 0;
	policy_free(*out);
	*out = NULL;
	return -1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int policy_list(struct wstrv *names, struct wstrv *sources, struct werr *err)
{
	_cleanup_free_ char *dir = wprofile_user_dir();
	struct wstrv all = { 0 };
	DIR *d;
	size_t i;

	memset(names, 0, sizeof(*names));
	memset(sources, 0, sizeof(*sources));
	for (i = 0; i < wbuiltin_profiles_n; i++)
		wstrv_push(&all, wbuiltin_profiles[i].name);
	d = dir ? opendir(dir) : NULL;
	if (!d && dir && errno != ENOENT && errno != ENOTDIR) {
		wstrv_free(&all);
		return werr_set(err, errno, "reading %s", dir);
	}
	for (struct dirent *de; d && (de = readdir(d));) {
		size_t l = strlen(de->d_name);
		if (l <= 5 || strcmp(de->d_name + l - 5, ".json"))
			continue;
		_cleanup_free_ char *name = strndup(de->d_name, l - 5);
		if (name && wprofile_name_ok(name) && !wstrv_contains(&all, name))
			wstrv_push(&all, name);
	}
	if (d)
		closedir(d);
	if (all.n)
		qsort(all.v, all.n, sizeof(*all.v), cmp_str);
	for (i = 0; i < all.n; i++) {
		_cleanup_free_ char *path = dir ? xasprintf("%s/%s.json", dir, all.v[i]) : NULL;
		struct stat st;

		wstrv_push(names, all.v[i]);
		if (path && stat(path, &st) == 0)
			wstrv_push(sources, path);
		else
			wstrv_push(sources, "built-in");
	}
	wstrv_free(&all);
	return 0;
}
