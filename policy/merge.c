/* Defaults, inheritance and the checks that span several keys.
 *
 * A policy file is read into a partial policy plus the set of keys it
 * names (parse.c).  Its base is the policy it `extends` (already resolved)
 * or the defaults below.  Each key named in the file replaces the base's
 * value whole: lists and maps (tmpfs, env.set) are replaced, not merged.
 *
 * Then the keys are checked against each other.  The rule: a key written in
 * this file wins over an inherited key it contradicts (the inherited entry
 * is dropped); two keys written in the same file that contradict each other
 * are an error, located in the file. */
#include <string.h>

#include "internal.h"
#include "warden/util.h"

/* /etc entries a general-purpose program expects: TLS roots, time zone,
 * the dynamic linker's cache, name service configuration.  All optional:
 * a system without one still runs. */
static const char *const default_etc[] = {
	"/etc/ssl", "/etc/ca-certificates", "/etc/alternatives", "/etc/localtime",
	"/etc/ld.so.cache", "/etc/nsswitch.conf", "/etc/mime.types",
	"/etc/protocols", "/etc/services",
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

static void cat_remove(struct wpolicy *p, int c, size_t i)
{
	if (c != C_TMPFS) {
		wstrv_remove_at(policy_strv_field(p, cat_field[c]), i);
		return;
	}
	free(p->tmpfs[i].path);
	memmove(&p->tmpfs[i], &p->tmpfs[i + 1], (p->n_tmpfs - i - 1) * sizeof(*p->tmpfs));
	p->n_tmpfs--;
}

static char *cat_path(struct wpolicy *p, int c, size_t i)
{
	if (c == C_TMPFS)
		return xasprintf("filesystem.tmpfs.%s", p->tmpfs[i].path);
	return xasprintf("filesystem.%s[%zu]", cat_key[c], i);
}

/* Is the entry at i of category a also in category b?  Resolves it or
 * reports it.  Returns 1 when entry i of a was removed. */
static int resolve_pair(const struct wsrc *s, struct wpolicy *p, const bool *set,
                        int a, size_t i, int b, struct werr *err)
{
	const char *path = cat_get(p, a, i);
	size_t j;

	for (j = 0; j < cat_n(p, b); j++) {
		if (strcmp(cat_get(p, b, j), path))
			continue;
		if (set[cat_field[a]] && set[cat_field[b]]) {
			_cleanup_free_ char *where = cat_path(p, b, j);
			return wsrc_err_val(s, where, err, "\"%s\" is in both \"%s\" and \"%s\"; "
			                    "keep it in one", path, cat_key[a], cat_key[b]);
		}
		if (set[cat_field[a]]) {
			cat_remove(p, b, j);   /* inherited: the explicit entry wins */
			return 0;
		}
		cat_remove(p, a, i);
		return 1;
	}
	return 0;
}

static int check_paths(const struct wsrc *s, struct wpolicy *p, const bool *set, struct werr *err)
{
	int a, b, r;
	size_t i;

	for (a = 0; a < C__N; a++) {
		for (b = a + 1; b < C__N; b++) {
			i = 0;
			while (i < cat_n(p, a)) {
				r = resolve_pair(s, p, set, a, i, b, err);
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
		if (set[F_OPTIONAL]) {
			_cleanup_free_ char *where = xasprintf("filesystem.optional[%zu]", i);
			return wsrc_err_val(s, where, err, "\"%s\" is in \"optional\" but not in "
			                    "\"read_only\"; add it to \"read_only\" too, or remove it", o);
		}
		wstrv_remove_at(&p->optional, i);
	}
	return 0;
}

static int check_network(const struct wsrc *s, struct wpolicy *p, const bool *set, struct werr *err)
{
	if (p->net == WNET_PROXY || p->net_allow.n == 0)
		return 0;
	if (set[F_NET_ALLOW])
		return wsrc_err_key(s, "network.allow", err, "\"allow\" has no effect when \"mode\" "
		                    "is \"%s\"; set \"mode\": \"proxy\" or remove \"allow\"",
		                    policy_net_mode_name(p->net));
	wstrv_free(&p->net_allow);
	return 0;
}

/* A name in two lists that contradict each other (env pass/set, syscalls
 * allow/deny). */
static int check_exclusive(const struct wsrc *s, const bool *set, struct werr *err,
                           struct wstrv *a, int fa, const char *pa,
                           struct wstrv *b, int fb, const char *pb,
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
		if (set[fa] && set[fb]) {
			_cleanup_free_ char *where = b_vals ? xasprintf("%s.%s", pb, b->v[j]) :
			                                      xasprintf("%s[%zu]", pb, j);
			return wsrc_err_key(s, where, err, "\"%s\" is in both \"%s\" and \"%s\"; %s",
			                    a->v[i], strrchr(pa, '.') + 1, strrchr(pb, '.') + 1, what);
		}
		if (set[fa]) {
			wstrv_remove_at(b, j);
			if (b_vals)
				wstrv_remove_at(b_vals, j);
			i++;
		} else {
			wstrv_remove_at(a, i);
		}
	}
	return 0;
}

int wpolicy_merge(const struct wsrc *s, struct wpolicy *base, struct wpolicy *child,
                  const bool set[F__COUNT], struct werr *err)
{
	int f;

	for (f = 0; f < F__COUNT; f++)
		if (set[f])
			take_field(base, child, f);

	if (check_paths(s, base, set, err) < 0)
		return -1;
	if (check_network(s, base, set, err) < 0)
		return -1;
	if (check_exclusive(s, set, err, &base->env_pass, F_ENV_PASS, "env.pass",
	                    &base->env_set_keys, F_ENV_SET, "env.set", &base->env_set_vals,
	                    "a variable is either passed from the caller or set, not both; "
	                    "remove it from one") < 0)
		return -1;
	if (check_exclusive(s, set, err, &base->allow_extra, F_ALLOW_EXTRA, "syscalls.allow_extra",
	                    &base->deny_extra, F_DENY_EXTRA, "syscalls.deny_extra", NULL,
	                    "remove it from one") < 0)
		return -1;
	base->workspace_writable = wstrv_contains(&base->read_write, "$WORKSPACE");
	return 0;
}
