/* Each kind of value a policy key takes (policy/parse_int.h): read,
 * checked, and reported at FILE:LINE:COL with what to write instead. */
#include <math.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "parse_int.h"
#include "warden/catalog.h"
#include "warden/filter.h"
#include "warden/util.h"

/* ---- suggestions ------------------------------------------------------- */

static int lower(int c)
{
	return (c >= 'A' && c <= 'Z') ? c + 32 : c;
}

/* Optimal string alignment distance (Levenshtein plus transpositions, so
 * "memroy" is one edit from "memory"), case-insensitive. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, r;
	_cleanup_free_ size_t *d = NULL;

	if (la > 64 || lb > 64)
		return 64;
	d = xcalloc((la + 1) * (lb + 1), sizeof(*d));
#define D(x, y) d[(x) * (lb + 1) + (y)]
	for (i = 0; i <= la; i++)
		D(i, 0) = i;
	for (j = 0; j <= lb; j++)
		D(0, j) = j;
	for (i = 1; i <= la; i++) {
		for (j = 1; j <= lb; j++) {
			size_t cost = lower(a[i - 1]) != lower(b[j - 1]);
			size_t v = D(i - 1, j) + 1;
			if (D(i, j - 1) + 1 < v)
				v = D(i, j - 1) + 1;
			if (D(i - 1, j - 1) + cost < v)
				v = D(i - 1, j - 1) + cost;
			if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
			    lower(a[i - 2]) == lower(b[j - 1]) && D(i - 2, j - 2) + 1 < v)
				v = D(i - 2, j - 2) + 1;
			D(i, j) = v;
		}
	}
	r = D(la, lb);
#undef D
	return r;
}

/* The closest candidate, if close enough to be a plausible typo. */
const char *pv_closest(const char *word, const char *const *cands, size_t n)
{
	const char *best = NULL;
	size_t bd = (size_t)-1, i, limit;

	for (i = 0; i < n; i++) {
		size_t d = edit_distance(word, cands[i]);
		if (d < bd) {
			bd = d;
			best = cands[i];
		}
	}
	limit = strlen(word) / 3;
	if (limit < 1)
		limit = 1;
	if (limit > 3)
		limit = 3;
	return bd <= limit ? best : NULL;
}

/* ---- helpers ----------------------------------------------------------- */

const char *pv_type_name(json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_null:    return "null";
	case json_type_boolean: return "a boolean";
	case json_type_double:  return "a number";
	case json_type_int:     return "a number";
	case json_type_string:  return "a string";
	case json_type_array:   return "a list";
	case json_type_object:  return "an object";
	}
	return "something else";
}

/* The string-vector field that enum wfield f names, or NULL. */
struct wstrv *policy_strv_field(struct wpolicy *p, int f)
{
	switch (f) {
	case F_READ_ONLY:   return &p->read_only;
	case F_READ_WRITE:  return &p->read_write;
	case F_OPTIONAL:    return &p->optional;
	case F_HIDE:        return &p->hide;
	case F_PROTECT:     return &p->protect;
	case F_UNPROTECT:   return &p->unprotect;
	case F_UNHIDE:      return &p->unhide;
	case F_NET_ALLOW:   return &p->net_allow;
	case F_ALLOW_EXTRA: return &p->allow_extra;
	case F_DENY_EXTRA:  return &p->deny_extra;
	case F_ENV_PASS:    return &p->env_pass;
	default:            return NULL;
	}
}

uint64_t *pv_u64_field(struct wpolicy *p, int f)
{
	switch (f) {
	case F_MEMORY:     return &p->limits.memory;
	case F_PIDS:       return &p->limits.pids;
	case F_WALL_TIME:  return &p->limits.wall_ms;
	case F_CPU_TIME:   return &p->limits.cpu_ms;
	case F_FILE_SIZE:  return &p->limits.file_size;
	case F_OPEN_FILES: return &p->limits.open_files;
	case F_OUTPUT:     return &p->limits.output;
	default:           return NULL;
	}
}

bool pv_is_unlimited(json_object *v)
{
	return json_object_is_type(v, json_type_string) &&
	       !strcmp(json_object_get_string(v), "unlimited");
}

/* A string value without embedded NUL bytes (json-c allows \u0000). */
const char *pv_get_str(json_object *v)
{
	const char *s = json_object_get_string(v);

	if ((size_t)json_object_get_string_len(v) != strlen(s))
		return NULL;
	return s;
}

/* ---- values ------------------------------------------------------------ */

int pv_read_name(struct pctx *c, const struct keydef *k, const char *path,
                     json_object *v, char **out)
{
	const char *s;

	if (!json_object_is_type(v, json_type_string))
		return wsrc_err_val(c->s, path, c->err, "\"%s\" must be a string, e.g. %s; found %s",
		                    k->key, k->example, pv_type_name(v));
	s = pv_get_str(v);
	if (!s || !wprofile_name_ok(s))
		return wsrc_err_val(c->s, path, c->err, "\"%s\" must be a profile name: up to 64 "
		                    "letters, digits, '-', '_' or '.', e.g. %s", k->key, k->example);
	*out = xstrdup(s);
	return 0;
}

int pv_read_text(struct pctx *c, const struct keydef *k, const char *path,
                     json_object *v, char **out)
{
	const char *s;
	size_t i;

	if (!json_object_is_type(v, json_type_string))
		return wsrc_err_val(c->s, path, c->err, "\"%s\" must be a string, e.g. %s; found %s",
		                    k->key, k->example, pv_type_name(v));
	s = pv_get_str(v);
	if (!s)
		return wsrc_err_val(c->s, path, c->err, "\"%s\" contains a NUL character; remove it",
		                    k->key);
	for (i = 0; s[i]; i++)
		if ((unsigned char)s[i] < 0x20)
			return wsrc_err_val(c->s, path, c->err, "\"%s\" must be one line of text; "
			                    "remove the newline or control character", k->key);
	if (i > 200)
		return wsrc_err_val(c->s, path, c->err, "\"%s\" is longer than 200 characters; "
		                    "shorten it", k->key);
	*out = xstrdup(s);
	return 0;
}

/* Lists and maps are small; a bound keeps the duplicate checks cheap. */
#define MAX_ENTRIES 1024

static int expect_array(struct pctx *c, const struct keydef *k, const char *path, json_object *v)
{
	if (!json_object_is_type(v, json_type_array))
		return wsrc_err_val(c->s, path, c->err, "\"%s\" must be a list, e.g. %s; found %s",
		                    k->key, k->example, pv_type_name(v));
	if (json_object_array_length(v) > MAX_ENTRIES)
		return wsrc_err_val(c->s, path, c->err, "\"%s\" has more than %d entries; "
		                    "shorten it", k->key, MAX_ENTRIES);
	return 0;
}

static int expect_object(struct pctx *c, const struct keydef *k, const char *path, json_object *v)
{
	if (!json_object_is_type(v, json_type_object))
		return wsrc_err_val(c->s, path, c->err, "\"%s\" must be an object, e.g. %s; found %s",
		                    k->key, k->example, pv_type_name(v));
	if (json_object_object_length(v) > MAX_ENTRIES)
		return wsrc_err_val(c->s, path, c->err, "\"%s\" has more than %d entries; "
		                    "shorten it", k->key, MAX_ENTRIES);
	return 0;
}

/* Element i of an array as a string, or a located error. */
static const char *elem_str(struct pctx *c, const struct keydef *k, const char *epath,
                            json_object *e, const char *what)
{
	const char *s;

	if (!json_object_is_type(e, json_type_string)) {
		wsrc_err_val(c->s, epath, c->err, "entries of \"%s\" must be strings (%s), e.g. %s; "
		             "found %s", k->key, what, k->example, pv_type_name(e));
		return NULL;
	}
	s = pv_get_str(e);
	if (!s)
		wsrc_err_val(c->s, epath, c->err, "an entry of \"%s\" contains a NUL character; "
		             "remove it", k->key);
	return s;
}

int pv_read_paths(struct pctx *c, const struct keydef *k, const char *path, json_object *v)
{
	struct wstrv *out = policy_strv_field(c->p, k->field);
	size_t i, n;

	if (expect_array(c, k, path, v) < 0)
		return -1;
	n = json_object_array_length(v);
	for (i = 0; i < n; i++) {
		_cleanup_free_ char *epath = xasprintf("%s[%zu]", path, i);
		_cleanup_free_ char *norm = NULL;
		const char *why, *s;

		s = elem_str(c, k, epath, json_object_array_get_idx(v, i), "paths");
		if (!s)
			return -1;
		if (wpath_normalize(s, &norm, &why) < 0)
			return wsrc_err_val(c->s, epath, c->err, "\"%s\" in \"%s\": %s", s, k->key, why);
		if (wstrv_contains(out, norm))
			return wsrc_err_val(c->s, epath, c->err, "\"%s\" is listed twice in \"%s\"; "
			                    "remove one", s, k->key);
		if (k->field == F_HIDE && !strcmp(norm, "$WORKSPACE"))
			return wsrc_err_val(c->s, epath, c->err, "the workspace itself cannot be "
			                    "hidden; hide files inside it instead, e.g. "
			                    "\"$WORKSPACE/.env\"");
		wstrv_push(out, norm);
	}
	return 0;
}

/* Names of catalog entries to drop (unprotect, unhide): each exactly as
 * the catalog lists it, and of the catalog the key is about. */
int pv_read_catnames(struct pctx *c, const struct keydef *k, const char *path, json_object *v)
{
	struct wstrv *out = policy_strv_field(c->p, k->field);
	unsigned want = k->field == F_UNPROTECT ? WCAT_PROTECT : WCAT_HIDE;
	size_t i, n;

	if (expect_array(c, k, path, v) < 0)
		return -1;
	n = json_object_array_length(v);
	for (i = 0; i < n; i++) {
		_cleanup_free_ char *epath = xasprintf("%s[%zu]", path, i);
		const struct wcat_entry *e;
		const char *s = elem_str(c, k, epath, json_object_array_get_idx(v, i), "names");

		if (!s)
			return -1;
		e = wcat_find(s);
		if (!e)
			return wsrc_err_val(c->s, epath, c->err, "\"%s\" in \"%s\" is not an entry of "
			                    "warden's catalogs; name one exactly as `warden policy show "
			                    "--catalog` lists it (e.g. \".git\", \"~/.gitconfig\")", s, k->key);
		if (!(e->what & want))
			return wsrc_err_val(c->s, epath, c->err, "\"%s\" is %s, not %s; name it in "
			                    "\"%s\" instead", s, want == WCAT_PROTECT ? "hidden" : "protected",
			                    want == WCAT_PROTECT ? "protected" : "hidden",
			                    want == WCAT_PROTECT ? "unhide" : "unprotect");
		if (wstrv_contains(out, s))
			return wsrc_err_val(c->s, epath, c->err, "\"%s\" is listed twice in \"%s\"; "
			                    "remove one", s, k->key);
		wstrv_push(out, s);
	}
	return 0;
}

/* A size: "512M", a whole number of bytes, or "unlimited" (0) when allowed. */
int pv_read_size(struct pctx *c, const char *key, const char *path, json_object *v,
                     bool unlimited_ok, const char *example, uint64_t *out)
{
	struct werr e2 = { 0 };
	const char *s;

	*out = 0;
	if (unlimited_ok && pv_is_unlimited(v))
		return 0;
	if (json_object_is_type(v, json_type_int)) {
		if (json_object_get_int64(v) < 0)
			return wsrc_err_val(c->s, path, c->err, "\"%s\" must not be negative; write a "
			                    "size such as %s", key, example);
		*out = json_object_get_uint64(v);
	} else if (json_object_is_type(v, json_type_string)) {
		s = pv_get_str(v);
		if (!s || parse_size(s, out, &e2) < 0)
			return wsrc_err_val(c->s, path, c->err, "\"%s\": \"%s\" is not a size; write a "
			                    "number with an optional K, M, G or T suffix, e.g. %s%s", key,
			                    s ? s : "", example, unlimited_ok ? ", or \"unlimited\"" : "");
	} else {
		if (json_object_is_type(v, json_type_double) && json_object_get_double(v) < 0)
			return wsrc_err_val(c->s, path, c->err, "\"%s\" must not be negative; write a "
			                    "size such as %s", key, example);
		return wsrc_err_val(c->s, path, c->err, "\"%s\" must be a size such as %s "
		                    "(a string with K, M, G or T, or a whole number of bytes)%s; "
		                    "found %s", key, example,
		                    unlimited_ok ? " or \"unlimited\"" : "", pv_type_name(v));
	}
	if (*out == 0)
		return wsrc_err_val(c->s, path, c->err, "\"%s\" must be more than 0; %s", key,
		                    unlimited_ok ? "write \"unlimited\" for no limit" :
		                    "write a size such as \"64M\"");
	return 0;
}

int pv_read_count(struct pctx *c, const struct keydef *k, const char *path,
                      json_object *v, uint64_t *out)
{
	int64_t n;

	*out = 0;
	if (pv_is_unlimited(v))
		return 0;
	if (json_object_is_type(v, json_type_double) && json_object_get_double(v) < 0)
		return wsrc_err_val(c->s, path, c->err, "\"%s\" must not be negative; write a whole "
		                    "number, e.g. %s, or \"unlimited\"", k->key, k->example);
	if (!json_object_is_type(v, json_type_int))
		return wsrc_err_val(c->s, path, c->err, "\"%s\" must be a whole number, e.g. %s",
		                    k->key, k->example);
	n = json_object_get_int64(v);
	if (n < 0)
		return wsrc_err_val(c->s, path, c->err, "\"%s\" must not be negative; write a whole "
		                    "number, e.g. %s, or \"unlimited\"", k->key, k->example);
	if (n == 0)
		return wsrc_err_val(c->s, path, c->err, "\"%s\" must be more than 0; write "
		                    "\"unlimited\" for no limit", k->key);
	if (k->max && json_object_get_uint64(v) > k->max)
		return wsrc_err_val(c->s, path, c->err, "\"%s\" is too large; the most is %llu, "
		                    "or write \"unlimited\"", k->key, (unsigned long long)k->max);
	*out = (uint64_t)n;
	return 0;
}

int pv_read_cpus(struct pctx *c, const struct keydef *k, const char *path,
                     json_object *v, double *out)
{
	double d;

	*out = 0;
	if (pv_is_unlimited(v))
		return 0;
	if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
		return wsrc_err_val(c->s, path, c->err, "\"%s\" must be a number of CPUs, e.g. %s, "
		                    "or \"unlimited\"; found %s", k->key, k->example, pv_type_name(v));
	d = json_object_get_double(v);
	if (!isfinite(d) || d < 0)
		return wsrc_err_val(c->s, path, c->err, "\"%s\" must be a positive number of CPUs, "
		                    "e.g. %s", k->key, k->example);
	if (d == 0)
		return wsrc_err_val(c->s, path, c->err, "\"%s\" must be more than 0; write "
		                    "\"unlimited\" for no limit", k->key);
	if (d < 0.01)
		return wsrc_err_val(c->s, path, c->err, "\"%s\" is too small; the least is 0.01",
		                    k->key);
	if (d > (double)k->max)
		return wsrc_err_val(c->s, path, c->err, "\"%s\" is too large; the most is %llu, "
		                    "or write \"unlimited\"", k->key, (unsigned long long)k->max);
	*out = d;
	return 0;
}

int pv_read_duration(struct pctx *c, const struct keydef *k, const char *path,
                         json_object *v, uint64_t *out)
{
	struct werr e2 = { 0 };
	const char *s;

	*out = 0;
	if (pv_is_unlimited(v))
		return 0;
	if (!json_object_is_type(v, json_type_string)) {
		if ((json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)) &&
		    json_object_get_double(v) < 0)
			return wsrc_err_val(c->s, path, c->err, "\"%s\" must not be negative; write a "
			                    "duration such as %s", k->key, k->example);
		return wsrc_err_val(c->s, path, c->err, "\"%s\" must be a duration string with a "
		                    "unit (ms, s, m or h), e.g. %s, or \"unlimited\"; found %s",
		                    k->key, k->example, pv_type_name(v));
	}
	s = pv_get_str(v);
	if (!s || parse_duration_ms(s, out, &e2) < 0)
		return wsrc_err_val(c->s, path, c->err, "\"%s\": \"%s\" is not a duration; write a "
		                    "number with ms, s, m or h, e.g. %s, or \"unlimited\"", k->key,
		                    s ? s : "", k->example);
	if (*out == 0)
		return wsrc_err_val(c->s, path, c->err, "\"%s\" must be more than 0; write "
		                    "\"unlimited\" for no limit", k->key);
	return 0;
}

int pv_read_tmpfs(struct pctx *c, const struct keydef *k, const char *path, json_object *v)
{
	struct wpolicy *p = c->p;

	if (expect_object(c, k, path, v) < 0)
		return -1;
	p->tmpfs = xcalloc((size_t)json_object_object_length(v), sizeof(*p->tmpfs));
	json_object_object_foreach(v, key, val) {
		_cleanup_free_ char *kpath = xasprintf("%s.%s", path, key);
		_cleanup_free_ char *norm = NULL;
		const char *why;
		uint64_t size;
		size_t i;

		if (wpath_normalize(key, &norm, &why) < 0)
			return wsrc_err_key(c->s, kpath, c->err, "tmpfs \"%s\": %s", key, why);
		for (i = 0; i < p->n_tmpfs; i++)
			if (!strcmp(p->tmpfs[i].path, norm))
				return wsrc_err_key(c->s, kpath, c->err, "tmpfs \"%s\" is the same path "
				                    "as \"%s\"; remove one", key, p->tmpfs[i].path);
		if (!strcmp(norm, "$WORKSPACE"))
			return wsrc_err_key(c->s, kpath, c->err, "a tmpfs over the workspace would "
			                    "hide it; mount tmpfs elsewhere, e.g. \"/tmp\"");
		if (pv_read_size(c, key, kpath, val, false, "\"64M\"", &size) < 0)
			return -1;
		if (size > WPOLICY_MAX_TMPFS)
			return wsrc_err_val(c->s, kpath, c->err, "tmpfs \"%s\" is larger than 16G; "
			                    "write a smaller size", key);
		p->tmpfs[p->n_tmpfs].path = steal_pointer(&norm);
		p->tmpfs[p->n_tmpfs].size = size;
		p->n_tmpfs++;
	}
	return 0;
}

int pv_read_net_mode(struct pctx *c, const char *path, json_object *v)
{
	static const char *const modes[] = { "none", "loopback", "proxy" };
	const char *s, *near;

	if (!json_object_is_type(v, json_type_string))
		return wsrc_err_val(c->s, path, c->err, "\"mode\" must be \"none\", \"loopback\" "
		                    "or \"proxy\"; found %s", pv_type_name(v));
	s = json_object_get_string(v);
	if (policy_net_mode_parse(s, &c->p->net) == 0)
		return 0;
	near = pv_closest(s, modes, ARRAY_SIZE(modes));
	if (near)
		return wsrc_err_val(c->s, path, c->err, "unknown network mode \"%s\"; did you "
		                    "mean \"%s\"?", s, near);
	return wsrc_err_val(c->s, path, c->err, "unknown network mode \"%s\"; write \"none\" "
	                    "(no network), \"loopback\" (the jail's own 127.0.0.1) or \"proxy\" "
	                    "(allowlisted hosts through warden's proxy)", s);
}

int pv_read_hostports(struct pctx *c, const struct keydef *k, const char *path, json_object *v)
{
	size_t i, n;

	if (expect_array(c, k, path, v) < 0)
		return -1;
	n = json_object_array_length(v);
	for (i = 0; i < n; i++) {
		_cleanup_free_ char *epath = xasprintf("%s[%zu]", path, i);
		struct werr why = { 0 };
		const char *s;

		s = elem_str(c, k, epath, json_object_array_get_idx(v, i), "\"host[:port]\"");
		if (!s)
			return -1;
		if (policy_allow_check(s, &why) < 0)
			return wsrc_err_val(c->s, epath, c->err, "%s", why.msg);
		if (wstrv_contains(&c->p->net_allow, s))
			return wsrc_err_val(c->s, epath, c->err, "\"%s\" is listed twice in \"allow\"; "
			                    "remove one", s);
		wstrv_push(&c->p->net_allow, s);
	}
	return 0;
}

int pv_read_deny_action(struct pctx *c, const char *path, json_object *v)
{
	const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;

	if (s && !strcmp(s, "errno")) {
		c->p->deny_action = WDENY_ERRNO;
		return 0;
	}
	if (s && !strcmp(s, "kill")) {
		c->p->deny_action = WDENY_KILL;
		return 0;
	}
	return wsrc_err_val(c->s, path, c->err, "\"deny_action\" must be \"errno\" or \"kill\"; "
	                    "with \"errno\" a denied call fails with EPERM, with \"kill\" the "
	                    "process is killed");
}

int pv_read_syscalls(struct pctx *c, const struct keydef *k, const char *path,
                         json_object *v)
{
	struct wstrv *out = policy_strv_field(c->p, k->field);
	size_t i, n;

	if (expect_array(c, k, path, v) < 0)
		return -1;
	n = json_object_array_length(v);
	for (i = 0; i < n; i++) {
		_cleanup_free_ char *epath = xasprintf("%s[%zu]", path, i);
		const char *s, *why;

		s = elem_str(c, k, epath, json_object_array_get_idx(v, i), "syscall names");
		if (!s)
			return -1;
		if (!*s || strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(s) ||
		    seccomp_syscall_resolve_name(s) == __NR_SCMP_ERROR)
			return wsrc_err_val(c->s, epath, c->err, "unknown system call \"%s\" in \"%s\"; "
			                    "use the kernel's name, e.g. \"openat\"", s, k->key);
		if (k->field == F_ALLOW_EXTRA && (why = wfilter_forbidden_why(s)))
			return wsrc_err_val(c->s, epath, c->err, "%s can never be allowed: %s; remove "
			                    "it from \"allow_extra\"", s, why);
		if (wstrv_contains(out, s))
			return wsrc_err_val(c->s, epath, c->err, "\"%s\" is listed twice in \"%s\"; "
			                    "remove one", s, k->key);
		wstrv_push(out, s);
	}
	return 0;
}

bool policy_env_name_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 128 ||
	    !((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
		return false;
	for (i = 1; i < n; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

static bool env_name_ok(const char *s)
{
	return policy_env_name_ok(s, strlen(s));
}

int pv_read_env_names(struct pctx *c, const struct keydef *k, const char *path,
                          json_object *v)
{
	size_t i, n;

	if (expect_array(c, k, path, v) < 0)
		return -1;
	n = json_object_array_length(v);
	for (i = 0; i < n; i++) {
		_cleanup_free_ char *epath = xasprintf("%s[%zu]", path, i);
		const char *s;

		s = elem_str(c, k, epath, json_object_array_get_idx(v, i), "variable names");
		if (!s)
			return -1;
		if (!env_name_ok(s))
			return wsrc_err_val(c->s, epath, c->err, "\"%s\" is not a valid environment "
			                    "variable name; use letters, digits and '_', not starting "
			                    "with a digit, e.g. \"LANG\"", s);
		if (wstrv_contains(&c->p->env_pass, s))
			return wsrc_err_val(c->s, epath, c->err, "\"%s\" is listed twice in \"pass\"; "
			                    "remove one", s);
		wstrv_push(&c->p->env_pass, s);
	}
	return 0;
}

/* env.set values may use $WORKSPACE, $HOME and $$ (a literal '$'). */
static const char *env_value_problem(const char *s)
{
	size_t i = 0;

	while (s[i]) {
		if (s[i] == '\n' || s[i] == '\r')
			return "values cannot contain newlines; put it on one line";
		if (s[i] != '$') {
			i++;
			continue;
		}
		enum wvar var;
		char *bad = NULL;
		if (wvar_read(s, &i, &var, &bad) < 0) {
			free(bad);
			return "only $WORKSPACE and $HOME can be used in values; write $$ for a "
			       "literal '$'";
		}
	}
	return NULL;
}

int pv_read_env_set(struct pctx *c, const struct keydef *k, const char *path, json_object *v)
{
	struct wpolicy *p = c->p;

	if (expect_object(c, k, path, v) < 0)
		return -1;
	json_object_object_foreach(v, key, val) {
		_cleanup_free_ char *kpath = xasprintf("%s.%s", path, key);
		const char *s, *why;

		if (!env_name_ok(key))
			return wsrc_err_key(c->s, kpath, c->err, "\"%s\" is not a valid environment "
			                    "variable name; use letters, digits and '_', not starting "
			                    "with a digit, e.g. \"LANG\"", key);
		if (!json_object_is_type(val, json_type_string))
			return wsrc_err_val(c->s, kpath, c->err, "the value of \"%s\" must be a string, "
			                    "e.g. \"%s\": \"value\"; found %s", key, key, pv_type_name(val));
		s = pv_get_str(val);
		if (!s)
			return wsrc_err_val(c->s, kpath, c->err, "the value of \"%s\" contains a NUL "
			                    "character; remove it", key);
		why = env_value_problem(s);
		if (why)
			return wsrc_err_val(c->s, kpath, c->err, "the value of \"%s\": %s", key, why);
		wstrv_push(&p->env_set_keys, key);
		wstrv_push(&p->env_set_vals, s);
	}
	return 0;
}
