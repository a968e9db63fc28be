/* Defaults, inheritance and the checks that span several keys.
 *
 * A policy file is read into a partial policy plus the set of keys it
 * names (parse.c).  Its base is the policy it `extends` (already resolved)
 * or the defaults below.  Each key named in the file replaces the base's
 * value whole: lists and maps (tmpfs, env.set) are replaced, not merged --
 * unless the file wrote the key as "KEY+": then its entries are added to
 * the base's (a map's key the base has gets the new value; a list entry the
 * base has is an error, so that a file never says something twice).
 *
 * Then the keys are checked against each other.  The rule: a key written in
 * this file wins over an inherited key it contradicts (the inherited entry
 * is dropped); two keys written in the same file that contradict each other
 * are an error, located in the file.  "Written in this file" is decided per
 * entry (struct mctx), since a "KEY+" list holds inherited entries too. */
#include <string.h>

#include "internal.h"
#include "warden/util.h"

/* Host configuration a general-purpose program expects: TLS roots, time
 * zone, the dynamic linker's cache, name service configuration; and what
 * Debian's data stacks read at start (fontconfig's configuration and cache,
 * matplotlib's system matplotlibrc, R's /etc/R, which R_HOME/etc links
 * to).  All public, none holds a secret (SECURITY.md, G150).  All
 * optional: a system without one still runs. */
static const char *const default_etc[] = {
	"/etc/ssl", "/etc/ca-certificates", "/etc/alternatives", "/etc/localtime",
	"/etc/ld.so.cache", "/etc/nsswitch.conf", "/etc/mime.types",
	"/etc/protocols", "/etc/services",
	"/etc/fonts", "/var/cache/fontconfig", "/etc/matplotlibrc", "/etc/R",
};

void wpolicy_defaults(struct wpolicy *p)
{
	size_t i;

	wstrv_push(&p->read_only, "/usr");
	for (i = 0; i < ARRAY_SIZE(default_etc); i++) {
		wstrv_push(&p->read_only, default_etc[i]);
		wstrv_push(&p->optional, default_etc[i]);
	}
	wstrv_push(&p->read_write, "$WORKSPACE");
	p->tmpfs = xcalloc(2, sizeof(*p->tmpfs));
	p->tmpfs[0] = (struct wtmpfs){ .path = xstrdup("/tmp"), .size = 512ULL << 20 };
	p->tmpfs[1] = (struct wtmpfs){ .path = xstrdup("$HOME"), .size = 64ULL << 20 };
	p->n_tmpfs = 2;
	/* secrets commonly kept in a project; a missing one is skipped */
	wstrv_push(&p->hide, "$WORKSPACE/.env");
	wstrv_push(&p->hide, "$WORKSPACE/.ssh");
	wstrv_push(&p->hide, "$WORKSPACE/.aws");
	wstrv_push(&p->hide, "$WORKSPACE/.gnupg");
	wstrv_push(&p->hide, "$WORKSPACE/.netrc");
	wstrv_push(&p->hide, "$WORKSPACE/.git-credentials");

	p->net = WNET_NONE;

	p->limits = (struct wlimits){
		.memory = 1ULL << 30,
		.pids = 256,
		.cpus = 1.0,
		.wall_ms = 5 * 60 * 1000,
		.cpu_ms = 5 * 60 * 1000,
		.file_size = 1ULL << 30,
		.open_files = 1024,
		.output = 8ULL << 20,
	};

	p->deny_action = WDENY_ERRNO;
	p->audit = true;

	wstrv_push(&p->env_pass, "LANG");
	wstrv_push(&p->env_pass, "LC_ALL");
	wstrv_push(&p->env_pass, "TERM");
	wstrv_push(&p->env_pass, "TZ");
	wstrv_push(&p->env_set_keys, "HOME");
	wstrv_push(&p->env_set_vals, "$HOME");
	wstrv_push(&p->env_set_keys, "PATH");
	wstrv_push(&p->env_set_vals, "/usr/local/bin:/usr/bin:/bin");
	wstrv_push(&p->env_set_keys, "TMPDIR");
	wstrv_push(&p->env_set_vals, "/tmp");
	/* node's require() does not look in the global module directories
	 * (npm -g, Debian's node-* packages) without this */
	wstrv_push(&p->env_set_keys, "NODE_PATH");
	wstrv_push(&p->env_set_vals, "/usr/local/lib/node_modules:/usr/lib/node_modules:"
	           "/usr/share/nodejs");
	/* OpenBLAS (numpy) starts a thread per host CPU at import and fails
	 * to import when the pids limit refuses them: one thread, as the
	 * jail's cpus limit is one CPU by default anyway */
	wstrv_push(&p->env_set_keys, "OPENBLAS_NUM_THREADS");
	wstrv_push(&p->env_set_vals, "1");
	wstrv_push(&p->env_set_keys, "OMP_NUM_THREADS");
	wstrv_push(&p->env_set_vals, "1");
	p->workspace_writable = true;
}

static void free_tmpfs(struct wpolicy *p)
{
	size_t i;

	for (i = 0; i < p->n_tmpfs; i++)
		free(p->tmpfs[i].path);
	free(p->tmpfs);
	p->tmpfs = NULL;
	p->n_tmpfs = 0;
}

/* base.f = child.f, moving ownership. */
static void take_field(struct wpolicy *base, struct wpolicy *child, int f)
{
	struct wstrv *v = policy_strv_field(base, f);

	if (v) {
		wstrv_move(v, policy_strv_field(child, f));
		return;
	}
	switch (f) {
	case F_TMPFS:
		free_tmpfs(base);
		base->tmpfs = steal_pointer(&child->tmpfs);
		base->n_tmpfs = child->n_tmpfs;
		child->n_tmpfs = 0;
		break;
	case F_NET_MODE:    base->net = child->net; break;
	case F_MEMORY:      base->limits.memory = child->limits.memory; break;
	case F_PIDS:        base->limits.pids = child->limits.pids; break;
	case F_CPUS:        base->limits.cpus = child->limits.cpus; break;
	case F_WALL_TIME:   base->limits.wall_ms = child->limits.wall_ms; break;
	case F_CPU_TIME:    base->limits.cpu_ms = child->limits.cpu_ms; break;
	case F_FILE_SIZE:   base->limits.file_size = child->limits.file_size; break;
	case F_OPEN_FILES:  base->limits.open_files = child->limits.open_files; break;
	case F_OUTPUT:      base->limits.output = child->limits.output; break;
	case F_BACKGROUND:  base->limits.background = child->limits.background; break;
	case F_DENY_ACTION: base->deny_action = child->deny_action; break;
	case F_AUDIT:       base->audit = child->audit; break;
	case F_ENV_SET:
		wstrv_move(&base->env_set_keys, &child->env_set_keys);
		wstrv_move(&base->env_set_vals, &child->env_set_vals);
		break;
	default:
		/* name, description, extends: handled by the caller */
		break;
	}
}

/* Which entries were written in this file: entry i of field f is when
 * set[f] and i >= own[f].  A replaced list is all this file's (own 0); an
 * appended one from where the inherited entries end.  Removing an entry
 * before own[f] moves own[f] down (gone()). */
struct mctx {
	const struct wsrc *s;
	const bool *set;
	const bool *append;
	size_t own[F__COUNT];
	struct werr *err;
	struct wstrv *errs;   /* `warden policy check`: every error, the checks go on */
	bool failed;
};

/* An error of one check.  Collecting (m->errs), it is noted and the check
 * goes on, keeping the entry in question; else it ends the merge (-1). */
static int merr(struct mctx *m)
{
	if (!m->errs)
		return -1;
	wstrv_push(m->errs, m->err->msg);
	werr_clear(m->err);
	m->failed = true;
	return 0;
}

static bool mine(const struct mctx *m, int f, size_t i)
{
	return m->set[f] && i >= m->own[f];
}

static void gone(struct mctx *m, int f, size_t i)
{
	if (i < m->own[f])
		m->own[f]--;
}

/* Where this file wrote entry i of list f: "filesystem.read_only+[0]". */
static char *entry_path(const struct mctx *m, int f, size_t i)
{
	char path[64];

	return xasprintf("%s%s[%zu]", wpolicy_field_path(f, path, sizeof(path)),
	                 m->append[f] ? "+" : "", i - (m->append[f] ? m->own[f] : 0));
}

/* Where this file wrote the entry `name` of map f: "env.set+.PATH". */
static char *name_path(const struct mctx *m, int f, const char *name)
{
	char path[64];

	return xasprintf("%s%s.%s", wpolicy_field_path(f, path, sizeof(path)),
	                 m->append[f] ? "+" : "", name);
}

/* "read_only" for F_READ_ONLY: the key alone, for messages. */
static const char *field_key(int f, char *buf, size_t len)
{
	const char *dot = strrchr(wpolicy_field_path(f, buf, len), '.');

	return dot ? dot + 1 : buf;
}

static void tmpfs_remove(struct wpolicy *p, size_t i)
{
	free(p->tmpfs[i].path);
	memmove(&p->tmpfs[i], &p->tmpfs[i + 1], (p->n_tmpfs - i - 1) * sizeof(*p->tmpfs));
	p->n_tmpfs--;
}

/* base.f += child.f ("KEY+").  A list entry base already has is an error
 * (the file would say it twice); a map key base has is replaced. */
static int append_field(struct mctx *m, struct wpolicy *base, struct wpolicy *child, int f)
{
	struct wstrv *v = policy_strv_field(base, f);
	size_t i, j;

	if (v) {
		struct wstrv *cv = policy_strv_field(child, f);
		char kb[64];
		const char *key = field_key(f, kb, sizeof(kb));

		m->own[f] = v->n;
		for (i = 0; i < cv->n; i++) {
			if (wstrv_contains(v, cv->v[i])) {
				_cleanup_free_ char *where = entry_path(m, f, m->own[f] + i);

				wsrc_err_val(m->s, where, m->err, "\"%s\" is already in the "
				             "inherited \"%s\"; remove it from \"%s+\"",
				             cv->v[i], key, key);
				if (merr(m) < 0)
					return -1;
				continue;
			}
			wstrv_push(v, cv->v[i]);
		}
		return 0;
	}
	if (f == F_TMPFS) {
		struct wtmpfs *t;

		for (i = 0; i < child->n_tmpfs; i++)
			for (j = 0; j < base->n_tmpfs; j++)
				if (!strcmp(base->tmpfs[j].path, child->tmpfs[i].path)) {
					tmpfs_remove(base, j);
					break;
				}
		m->own[f] = base->n_tmpfs;
		t = xcalloc(base->n_tmpfs + child->n_tmpfs + 1, sizeof(*t));
		if (base->n_tmpfs)
			memcpy(t, base->tmpfs, base->n_tmpfs * sizeof(*t));
		if (child->n_tmpfs)
			memcpy(t + base->n_tmpfs, child->tmpfs, child->n_tmpfs * sizeof(*t));
		free(base->tmpfs);
		base->tmpfs = t;
		base->n_tmpfs += child->n_tmpfs;
		child->n_tmpfs = 0;   /* the paths moved to base */
		return 0;
	}
	if (f == F_ENV_SET) {
		for (i = 0; i < child->env_set_keys.n; i++)
			for (j = 0; j < base->env_set_keys.n; j++)
				if (!strcmp(base->env_set_keys.v[j], child->env_set_keys.v[i])) {
					wstrv_remove_at(&base->env_set_keys, j);
					wstrv_remove_at(&base->env_set_vals, j);
					break;
				}
		m->own[f] = base->env_set_keys.n;
		for (i = 0; i < child->env_set_keys.n; i++) {
			wstrv_push(&base->env_set_keys, child->env_set_keys.v[i]);
			wstrv_push(&base->env_set_vals, child->env_set_vals.v[i]);
		}
		return 0;
	}
	return werr_set(m->err, 0, "internal error: field %d cannot be appended", f);
}

/* ---- the four ways a path can appear in the jail ---------------------- */

enum { C_RO, C_RW, C_TMPFS, C_HIDE, C__N };
static const int cat_field[C__N] = { F_READ_ONLY, F_READ_WRITE, F_TMPFS, F_HIDE };
static const char *const cat_key[C__N] = { "read_only", "read_write", "tmpfs", "hide" };

static size_t cat_n(struct wpolicy *p, int c)
{
	return c == C_TMPFS ? p->n_tmpfs : policy_strv_field(p, cat_field[c])->n;
}

static const char *cat_get(struct wpolicy *p, int c, size_t i)
{
	return c == C_TMPFS ? p->tmpfs[i].path : policy_strv_field(p, cat_field[c])->v[i];
}

static void cat_remove(struct mctx *m, struct wpolicy *p, int c, size_t i)
{
	gone(m, cat_field[c], i);
	if (c != C_TMPFS) {
		wstrv_remove_at(policy_strv_field(p, cat_field[c]), i);
		return;
	}
	tmpfs_remove(p, i);
}

static char *cat_path(const struct mctx *m, struct wpolicy *p, int c, size_t i)
{
	if (c == C_TMPFS)
		return name_path(m, F_TMPFS, p->tmpfs[i].path);
	return entry_path(m, cat_field[c], i);
}

/* Is the entry at i of category a also in category b?  Resolves it or
 * reports it.  Returns 1 when entry i of a was removed. */
static int resolve_pair(struct mctx *m, struct wpolicy *p, int a, size_t i, int b)
{
	const char *path = cat_get(p, a, i);
	size_t j;

	for (j = 0; j < cat_n(p, b); j++) {
		if (strcmp(cat_get(p, b, j), path))
			continue;
		if (mine(m, cat_field[a], i) && mine(m, cat_field[b], j)) {
			_cleanup_free_ char *where = cat_path(m, p, b, j);

			wsrc_err_val(m->s, where, m->err, "\"%s\" is in both \"%s\" and "
			             "\"%s\"; keep it in one", path, cat_key[a], cat_key[b]);
			return merr(m);   /* collecting: both kept, the scan goes on */
		}
		if (mine(m, cat_field[a], i)) {
			cat_remove(m, p, b, j);   /* inherited: the explicit entry wins */
			return 0;
		}
		cat_remove(m, p, a, i);
		return 1;
	}
	return 0;
}

static int check_paths(struct mctx *m, struct wpolicy *p)
{
	int a, b, r;
	size_t i;

	for (a = 0; a < C__N; a++) {
		for (b = a + 1; b < C__N; b++) {
			i = 0;
			while (i < cat_n(p, a)) {
				r = resolve_pair(m, p, a, i, b);
				if (r < 0)
					return -1;
				if (r == 0)
					i++;
			}
		}
	}

	/* optional qualifies read_only entries */
	i = 0;
	while (i < p->optional.n) {
		const char *o = p->optional.v[i];
		if (wstrv_contains(&p->read_only, o)) {
			i++;
			continue;
		}
		if (mine(m, F_OPTIONAL, i)) {
			_cleanup_free_ char *where = entry_path(m, F_OPTIONAL, i);

			wsrc_err_val(m->s, where, m->err, "\"%s\" is in \"optional\" but not "
			             "in \"read_only\"; add it to \"read_only\" too, or remove "
			             "it", o);
			if (merr(m) < 0)
				return -1;
			i++;
			continue;
		}
		gone(m, F_OPTIONAL, i);
		wstrv_remove_at(&p->optional, i);
	}
	return 0;
}

static int check_network(struct mctx *m, struct wpolicy *p)
{
	if (p->net == WNET_PROXY || p->net_allow.n == 0)
		return 0;
	if (m->set[F_NET_ALLOW]) {
		wsrc_err_key(m->s, m->append[F_NET_ALLOW] ? "network.allow+" : "network.allow",
		             m->err, "\"allow\" has no effect when \"mode\" is \"%s\"; "
		             "set \"mode\": \"proxy\" or remove \"allow\"",
		             policy_net_mode_name(p->net));
		return merr(m);
	}
	wstrv_free(&p->net_allow);
	return 0;
}

/* A name in two lists that contradict each other (env pass/set, syscalls
 * allow/deny); b_vals: b is a map's keys, these its values. */
static int check_exclusive(struct mctx *m, struct wstrv *a, int fa, struct wstrv *b, int fb,
                           struct wstrv *b_vals, const char *what)
{
	size_t i = 0, j;

	while (i < a->n) {
		for (j = 0; j < b->n; j++)
			if (!strcmp(a->v[i], b->v[j]))
				break;
		if (j == b->n) {
			i++;
			continue;
		}
		if (mine(m, fa, i) && mine(m, fb, j)) {
			_cleanup_free_ char *where = b_vals ? name_path(m, fb, b->v[j]) :
			                                      entry_path(m, fb, j);
			char ka[64], kb[64];

			wsrc_err_key(m->s, where, m->err, "\"%s\" is in both \"%s\" and "
			             "\"%s\"; %s", a->v[i], field_key(fa, ka, sizeof(ka)),
			             field_key(fb, kb, sizeof(kb)), what);
			if (merr(m) < 0)
				return -1;
			i++;
			continue;
		}
		if (mine(m, fa, i)) {
			gone(m, fb, j);
			wstrv_remove_at(b, j);
			if (b_vals)
				wstrv_remove_at(b_vals, j);
			i++;
		} else {
			gone(m, fa, i);
			wstrv_remove_at(a, i);
		}
	}
	return 0;
}

int wpolicy_merge(const struct wsrc *s, struct wpolicy *base, struct wpolicy *child,
                  const bool set[F__COUNT], const bool append[F__COUNT], struct wstrv *errs,
                  struct werr *err)
{
	struct mctx m = { .s = s, .set = set, .append = append, .err = err, .errs = errs };
	int f;

	for (f = 0; f < F__COUNT; f++) {
		if (!set[f])
			continue;
		if (!append[f])
			take_field(base, child, f);
		else if (append_field(&m, base, child, f) < 0)
			return -1;
	}

	if (check_paths(&m, base) < 0)
		return -1;
	if (check_network(&m, base) < 0)
		return -1;
	if (check_exclusive(&m, &base->env_pass, F_ENV_PASS, &base->env_set_keys, F_ENV_SET,
	                    &base->env_set_vals, "a variable is either passed from the caller "
	                    "or set, not both; remove it from one") < 0)
		return -1;
	if (check_exclusive(&m, &base->allow_extra, F_ALLOW_EXTRA, &base->deny_extra, F_DENY_EXTRA,
	                    NULL, "remove it from one") < 0)
		return -1;
	base->workspace_writable = wstrv_contains(&base->read_write, "$WORKSPACE");
	return m.failed ? -1 : 0;
}
