/* The policy schema: reads the keys of one JSON text into a struct wpolicy.
 *
 * Each section is a table of keys; each key has a kind that says how its
 * value is read and checked.  Everything is strict: an unknown key, a wrong
 * type or a bad value is an error located at the offending key or value,
 * with what to write instead.  Checks that involve several keys (and
 * inheritance) are in merge.c. */
#include <math.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "parse_int.h"
#include "warden/catalog.h"
#include "warden/filter.h"
#include "warden/util.h"


static const struct keydef filesystem_keys[] = {
	{ "read_only",  K_PATHS, F_READ_ONLY,  NULL, "[\"/usr\", \"/etc/ssl\"]", 0 },
	{ "read_write", K_PATHS, F_READ_WRITE, NULL, "[\"$WORKSPACE\"]", 0 },
	{ "optional",   K_PATHS, F_OPTIONAL,   NULL, "[\"/etc/ssl\"]", 0 },
	{ "tmpfs",      K_TMPFS, F_TMPFS,      NULL, "{\"/tmp\": \"512M\"}", 0 },
	{ "hide",       K_PATHS, F_HIDE,       NULL, "[\"$WORKSPACE/.env\"]", 0 },
	{ "protect",    K_PATHS, F_PROTECT,    NULL, "[\"$WORKSPACE/deploy.sh\"]", 0 },
	{ "unprotect",  K_CATNAMES, F_UNPROTECT, NULL, "[\".git\", \"~/.gitconfig\"]", 0 },
	{ "unhide",     K_CATNAMES, F_UNHIDE,  NULL, "[\"~/.bash_history\"]", 0 },
	{ NULL, 0, 0, NULL, NULL, 0 }
};

static const struct keydef network_keys[] = {
	{ "mode",  K_NET_MODE,  F_NET_MODE,  NULL, "\"none\"", 0 },
	{ "allow", K_HOSTPORTS, F_NET_ALLOW, NULL, "[\"pypi.org\"]", 0 },
	{ NULL, 0, 0, NULL, NULL, 0 }
};

static const struct keydef limits_keys[] = {
	{ "memory",     K_SIZE,     F_MEMORY,     NULL, "\"1G\"", 0 },
	{ "pids",       K_COUNT,    F_PIDS,       NULL, "256", 4194304 },
	{ "cpus",       K_CPUS,     F_CPUS,       NULL, "1.5", 4096 },
	{ "wall_time",  K_DURATION, F_WALL_TIME,  NULL, "\"5m\"", 0 },
	{ "cpu_time",   K_DURATION, F_CPU_TIME,   NULL, "\"5m\"", 0 },
	{ "file_size",  K_SIZE,     F_FILE_SIZE,  NULL, "\"1G\"", 0 },
	{ "open_files", K_COUNT,    F_OPEN_FILES, NULL, "1024", 1048576 },
	{ "output",     K_SIZE,     F_OUTPUT,     NULL, "\"8M\"", 0 },
	{ "background", K_BOOL,     F_BACKGROUND, NULL, "false", 0 },
	{ NULL, 0, 0, NULL, NULL, 0 }
};

static const struct keydef syscalls_keys[] = {
	{ "deny_action", K_DENY_ACTION, F_DENY_ACTION, NULL, "\"errno\"", 0 },
	{ "audit",       K_BOOL,        F_AUDIT,       NULL, "true", 0 },
	{ "allow_extra", K_SYSCALLS,    F_ALLOW_EXTRA, NULL, "[\"personality\"]", 0 },
	{ "deny_extra",  K_SYSCALLS,    F_DENY_EXTRA,  NULL, "[\"mincore\"]", 0 },
	{ NULL, 0, 0, NULL, NULL, 0 }
};

static const struct keydef env_keys[] = {
	{ "pass", K_ENV_NAMES, F_ENV_PASS, NULL, "[\"LANG\", \"TERM\"]", 0 },
	{ "set",  K_ENV_SET,   F_ENV_SET,  NULL, "{\"PATH\": \"/usr/bin:/bin\"}", 0 },
	{ NULL, 0, 0, NULL, NULL, 0 }
};

static const struct keydef top_keys[] = {
	{ "name",        K_NAME,    F_NAME,        NULL, "\"my-profile\"", 0 },
	{ "description", K_TEXT,    F_DESCRIPTION, NULL, "\"what this profile is for\"", 0 },
	{ "extends",     K_NAME,    F_EXTENDS,     NULL, "\"workspace\"", 0 },
	{ "filesystem",  K_SECTION, -1, filesystem_keys, "{\"read_only\": [\"/usr\"]}", 0 },
	{ "network",     K_SECTION, -1, network_keys,    "{\"mode\": \"none\"}", 0 },
	{ "limits",      K_SECTION, -1, limits_keys,     "{\"memory\": \"1G\"}", 0 },
	{ "syscalls",    K_SECTION, -1, syscalls_keys,   "{\"audit\": true}", 0 },
	{ "env",         K_SECTION, -1, env_keys,        "{\"pass\": [\"LANG\"]}", 0 },
	{ NULL, 0, 0, NULL, NULL, 0 }
};


/* "filesystem.read_only" for F_READ_ONLY: where a field's key is written,
 * from the tables above (merge.c names entries by it).  "" for a field no
 * section holds. */
const char *wpolicy_field_path(int f, char *buf, size_t len)
{
	size_t i, j;

	buf[0] = '\0';
	for (i = 0; top_keys[i].key; i++)
		for (j = 0; top_keys[i].sub && top_keys[i].sub[j].key; j++)
			if (top_keys[i].sub[j].field == f)
				snprintf(buf, len, "%s.%s", top_keys[i].key, top_keys[i].sub[j].key);
	return buf;
}

/* ---- sections ---------------------------------------------------------- */

static const char *section_of(const char *key, const struct keydef *skip)
{
	size_t i, j;

	for (i = 0; top_keys[i].key; i++) {
		if (!top_keys[i].sub || top_keys[i].sub == skip)
			continue;
		for (j = 0; top_keys[i].sub[j].key; j++)
			if (!strcmp(top_keys[i].sub[j].key, key))
				return top_keys[i].key;
	}
	return NULL;
}

/* Lists and maps can be written as "KEY+" to add to what is inherited. */
static bool appendable(enum kkind kind)
{
	return kind == K_PATHS || kind == K_TMPFS || kind == K_HOSTPORTS ||
	       kind == K_SYSCALLS || kind == K_ENV_NAMES || kind == K_ENV_SET ||
	       kind == K_CATNAMES;
}

static int unknown_key(struct pctx *c, const char *where, const char *kpath, const char *key,
                       const struct keydef *defs)
{
	const char *cands[16] = { NULL };
	char plus[16][40];
	char list[256] = "";
	size_t n = 0, i, kl = strlen(key);
	const char *near, *home;

	/* "read_olny+" is compared with the "KEY+" spellings */
	for (i = 0; defs[i].key && n < ARRAY_SIZE(cands); i++) {
		if (kl && key[kl - 1] == '+' && appendable(defs[i].kind)) {
			snprintf(plus[n], sizeof(plus[n]), "%s+", defs[i].key);
			cands[n] = plus[n];
			n++;
		} else {
			cands[n++] = defs[i].key;
		}
	}
	near = pv_closest(key, cands, n);
	/* "allow" for "allow_extra": a valid key that starts with this one */
	for (i = 0; !near && i < n; i++)
		if (strlen(key) >= 3 && !strncmp(cands[i], key, strlen(key)))
			near = cands[i];
	if (near)
		return wsrc_err_key(c->s, kpath, c->err, "unknown key \"%s\" %s; did you mean \"%s\"?",
		                    key, where, near);
	home = section_of(key, defs);
	if (home)
		return wsrc_err_key(c->s, kpath, c->err, "unknown key \"%s\" %s; \"%s\" belongs in "
		                    "\"%s\"", key, where, key, home);
	for (i = 0; i < n; i++) {
		size_t l = strlen(list);
		snprintf(list + l, sizeof(list) - l, "%s%s", i ? ", " : "", cands[i]);
	}
	return wsrc_err_key(c->s, kpath, c->err, "unknown key \"%s\" %s; valid keys are %s",
	                    key, where, list);
}

static int read_key(struct pctx *c, const struct keydef *k, const char *path, json_object *v);

/* A key that failed.  Collecting (c->errs: `warden policy check`), its
 * error is noted and the section goes on with its next key: a key that
 * failed is not set, so what follows reads as if it were absent.  Else the
 * first error ends the parse (-1). */
static int key_failed(struct pctx *c)
{
	if (!c->errs)
		return -1;
	wstrv_push(c->errs, c->err->msg);
	werr_clear(c->err);
	c->failed = true;
	return 0;
}

static int read_section(struct pctx *c, const char *path, const struct keydef *defs,
                        const char *example, json_object *v)
{
	_cleanup_free_ char *where = *path ? xasprintf("in \"%s\"", path) : xstrdup("at the top level");

	if (!json_object_is_type(v, json_type_object)) {
		if (!*path)
			return wsrc_err_val(c->s, path, c->err, "the top level must be a JSON object; "
			                    "write the policy as {...}");
		return wsrc_err_val(c->s, path, c->err, "\"%s\" must be an object, e.g. %s; found %s",
		                    path, example, pv_type_name(v));
	}
	json_object_object_foreach(v, key, val) {
		_cleanup_free_ char *kpath = *path ? xasprintf("%s.%s", path, key) : xstrdup(key);
		const struct keydef *k;
		int r;

		size_t kl = strlen(key);
		bool plus = kl > 1 && key[kl - 1] == '+';

		for (k = defs; k->key; k++)
			if (!strncmp(k->key, key, kl - plus) && !k->key[kl - plus])
				break;
		if (!k->key)
			r = unknown_key(c, where, kpath, key, defs);
		else if (plus && !appendable(k->kind))
			r = wsrc_err_key(c->s, kpath, c->err, "\"%s\" is not a list or a map, so "
			                 "nothing can be added to it with \"%s\"; write \"%s\" to "
			                 "set it", k->key, key, k->key);
		/* both spellings of one key in one section (json-c kept the order) */
		else if (k->field >= 0 && c->set[k->field])
			r = wsrc_err_key(c->s, kpath, c->err, "both \"%s\" and \"%s+\" %s; "
			                 "write the whole list in \"%s\" or add to the inherited "
			                 "one with \"%s+\", not both", k->key, k->key, where,
			                 k->key, k->key);
		else
			r = read_key(c, k, kpath, val);
		if (r < 0) {
			if (key_failed(c) < 0)
				return -1;
			continue;
		}
		if (plus)
			c->append[k->field] = true;
	}
	return 0;
}

static int read_key(struct pctx *c, const struct keydef *k, const char *path, json_object *v)
{
	struct wpolicy *p = c->p;
	int r;

	switch (k->kind) {
	case K_SECTION:
		return read_section(c, path, k->sub, k->example, v);
	case K_NAME:
		r = pv_read_name(c, k, path, v, k->field == F_NAME ? &p->name : c->extends);
		break;
	case K_TEXT:
		r = pv_read_text(c, k, path, v, &p->description);
		break;
	case K_PATHS:
		r = pv_read_paths(c, k, path, v);
		break;
	case K_TMPFS:
		r = pv_read_tmpfs(c, k, path, v);
		break;
	case K_SIZE:
		r = pv_read_size(c, k->key, path, v, true, k->example, pv_u64_field(p, k->field));
		break;
	case K_COUNT:
		r = pv_read_count(c, k, path, v, pv_u64_field(p, k->field));
		break;
	case K_CPUS:
		r = pv_read_cpus(c, k, path, v, &p->limits.cpus);
		break;
	case K_DURATION:
		r = pv_read_duration(c, k, path, v, pv_u64_field(p, k->field));
		break;
	case K_NET_MODE:
		r = pv_read_net_mode(c, path, v);
		break;
	case K_HOSTPORTS:
		r = pv_read_hostports(c, k, path, v);
		break;
	case K_DENY_ACTION:
		r = pv_read_deny_action(c, path, v);
		break;
	case K_BOOL:
		if (!json_object_is_type(v, json_type_boolean))
			return wsrc_err_val(c->s, path, c->err, "\"%s\" must be true or false; found %s",
			                    k->key, pv_type_name(v));
		if (k->field == F_BACKGROUND)
			p->limits.background = json_object_get_boolean(v);
		else
			p->audit = json_object_get_boolean(v);
		r = 0;
		break;
	case K_SYSCALLS:
		r = pv_read_syscalls(c, k, path, v);
		break;
	case K_CATNAMES:
		r = pv_read_catnames(c, k, path, v);
		break;
	case K_ENV_NAMES:
		r = pv_read_env_names(c, k, path, v);
		break;
	case K_ENV_SET:
		r = pv_read_env_set(c, k, path, v);
		break;
	default:
		r = werr_set(c->err, 0, "internal error: key kind %d", (int)k->kind);
	}
	if (r == 0)
		c->set[k->field] = true;
	return r;
}

int wpolicy_parse_fields(const struct wsrc *s, json_object *root, struct wpolicy *p,
                         bool set[F__COUNT], bool append[F__COUNT], char **extends,
                         struct wstrv *errs, struct werr *err)
{
	struct pctx c = { .s = s, .p = p, .set = set, .append = append, .extends = extends,
	                  .err = err, .errs = errs };

	*extends = NULL;
	if (read_section(&c, "", top_keys, "{}", root) < 0)
		return -1;
	return c.failed ? -1 : 0;
}
