/* The learner's refusals (include/warden/learn.h): the structured list,
 * its JSON (what chat, serve and MCP will carry), the report for people
 * and the policy file, both rendered from the list. */
#include <stdio.h>
#include <string.h>

#include "warden/learn.h"
#include "warden/policy.h"
#include "warden/util.h"

static const char *const op_names[WL__N] = {
	[WL_READ] = "read", [WL_LIST] = "list", [WL_EXEC] = "exec", [WL_WRITE] = "write",
	[WL_CREATE] = "create", [WL_PROBE] = "probe", [WL_CONNECT] = "connect",
	[WL_DNS] = "dns", [WL_PROXY] = "proxy", [WL_SYSCALL] = "syscall",
};

const char *wl_op_name(enum wl_op op)
{
	return op < WL__N ? op_names[op] : "?";
}

static bool same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

struct wl_refusal *wl_add(struct wl_list *l, enum wl_op op, const char *target,
                          const char *call, const char *why, const char *key,
                          const char *value, uint64_t id)
{
	struct wl_refusal *r;

	for (size_t i = 0; i < l->n; i++) {
		r = &l->v[i];
		if (r->op == op && same(r->target, target) && same(r->key, key) &&
		    same(r->value, value)) {
			r->count++;
			r->id = id;
			return r;
		}
	}
	if (l->n >= WL_MAX) {
		l->dropped++;
		return NULL;
	}
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 32;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (!l->v)
			abort();
	}
	r = &l->v[l->n++];
	memset(r, 0, sizeof(*r));
	r->op = op;
	r->target = xstrdup(target ? target : "");
	r->call = xstrdup(call ? call : "");
	r->why = xstrdup(why ? why : "");
	r->key = key;
	r->value = value ? xstrdup(value) : NULL;
	r->count = 1;
	r->id = id;
	return r;
}

static void ref_free(struct wl_refusal *r)
{
	free(r->target);
	free(r->call);
	free(r->why);
	free(r->value);
	free(r->note);
	free(r->danger);
}

static void remove_at(struct wl_list *l, size_t i)
{
	ref_free(&l->v[i]);
	memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof(*l->v));
	l->n--;
}

void wl_drop(struct wl_list *l, uint64_t id)
{
	for (size_t i = l->n; i-- > 0;) {
		if (l->v[i].id != id)
			continue;
		if (--l->v[i].count == 0)
			remove_at(l, i);
		else
			l->v[i].id = 0;
	}
}

void wl_free(struct wl_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		ref_free(&l->v[i]);
	free(l->v);
	free(l->why_incomplete);
	memset(l, 0, sizeof(*l));
}

/* --- settling: what is proposed, what is dangerous, what is included --- */

static bool below(const char *p, const char *dir)
{
	size_t n = strlen(dir);

	if (!strcmp(dir, "/"))
		return p[0] == '/' && p[1];
	return !strncmp(p, dir, n) && p[n] == '/';
}

static bool is_path_key(const char *key)
{
	return key && !strncmp(key, "filesystem.", 11);
}

static bool named(const struct wl_base *b, const struct wl_refusal *r)
{
	for (size_t i = 0; i < b->n_include; i++)
		if (r->value && !strcmp(b->include[i], r->value))
			return true;
	return false;
}

void wl_settle(struct wl_list *l, const struct wl_base *b)
{
	char buf[512];

	for (size_t i = 0; i < l->n; i++) {
		struct wl_refusal *r = &l->v[i];
		const char *d;

		if (!r->key)
			continue;
		d = wl_danger(r->key, r->value, b->home, buf, sizeof(buf));
		free(r->danger);
		r->danger = d ? xstrdup(d) : NULL;
		/* a probe only looked: proposed only when named, as a danger is */
		r->included = named(b, r) || !r->danger;
	}
	/* the same path read and written: the write is the one proposed; a path
	 * below a proposed directory of the same or a stronger kind needs no
	 * entry of its own */
	for (size_t i = 0; i < l->n; i++) {
		struct wl_refusal *r = &l->v[i];

		if (!r->included || !is_path_key(r->key))
			continue;
		for (size_t j = 0; j < l->n; j++) {
			const struct wl_refusal *o = &l->v[j];
			bool stronger, same_entry;

			if (i == j || !o->included || !is_path_key(o->key))
				continue;
			stronger = !strcmp(o->key, "filesystem.read_write") ||
			           !strcmp(o->key, r->key);
			if (!stronger)
				continue;
			/* the same entry twice (a stat, then an open): one stays,
			 * the first that is not only a look */
			same_entry = !strcmp(r->value, o->value) && !strcmp(r->key, o->key) &&
			             ((r->op == WL_PROBE) > (o->op == WL_PROBE) ||
			              ((r->op == WL_PROBE) == (o->op == WL_PROBE) && j < i));
			if (below(r->value, o->value) || same_entry ||
			    (!strcmp(r->value, o->value) && strcmp(r->key, o->key))) {
				r->included = false;
				r->covered = true;
				free(r->note);
				r->note = xasprintf("covered by %s += %s", o->key, o->value);
				break;
			}
		}
	}
}

/* --- JSON ---------------------------------------------------------------- */

static json_object *jstr(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

json_object *wl_to_json(const struct wl_list *l, const struct wl_base *b)
{
	json_object *o = json_object_new_object(), *arr = json_object_new_array();

	json_object_object_add(o, "profile", jstr(b->profile));
	json_object_object_add(o, "complete", json_object_new_boolean(!l->incomplete));
	json_object_object_add(o, "why_incomplete", jstr(l->why_incomplete));
	json_object_object_add(o, "dropped", json_object_new_int64((int64_t)l->dropped));
	for (size_t i = 0; i < l->n; i++) {
		const struct wl_refusal *r = &l->v[i];
		json_object *e = json_object_new_object(), *p = NULL;

		json_object_object_add(e, "op", json_object_new_string(wl_op_name(r->op)));
		json_object_object_add(e, "target", jstr(r->target));
		json_object_object_add(e, "syscall", jstr(r->call));
		json_object_object_add(e, "count", json_object_new_int64((int64_t)r->count));
		json_object_object_add(e, "refused", jstr(r->why));
		if (r->key) {
			p = json_object_new_object();
			json_object_object_add(p, "key", jstr(r->key));
			json_object_object_add(p, "value", jstr(r->value));
		}
		json_object_object_add(e, "proposal", p);
		json_object_object_add(e, "note", jstr(r->note));
		json_object_object_add(e, "dangerous", json_object_new_boolean(r->danger != NULL));
		json_object_object_add(e, "danger", jstr(r->danger));
		json_object_object_add(e, "included", json_object_new_boolean(r->included));
		json_object_object_add(e, "covered", json_object_new_boolean(r->covered));
		json_object_array_add(arr, e);
	}
	json_object_object_add(o, "refusals", arr);
	return o;
}

/* --- the policy ---------------------------------------------------------- */

/* A path in the workspace is written as $WORKSPACE..., so the policy
 * keeps meaning the workspace it runs in (docs/policy.md "Paths"). */
static char *spelled(const char *key, const char *v, const struct wl_base *b)
{
	size_t n = b->workspace ? strlen(b->workspace) : 0;

	if (!strncmp(key, "filesystem.", 11) && n > 1 && !strncmp(v, b->workspace, n) &&
	    (v[n] == '\0' || v[n] == '/'))
		return xasprintf("$WORKSPACE%s", v + n);
	return xstrdup(v);
}

static void add_values(struct wstrv *out, const struct wl_list *l, const char *key,
                       const struct wl_base *b)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].included && l->v[i].key && !strcmp(l->v[i].key, key)) {
			char *v = spelled(key, l->v[i].value, b);

			if (!wstrv_contains(out, v))
				wstrv_push(out, v);
			free(v);
		}
}

char *wl_policy(const struct wl_list *l, const struct wl_base *b)
{
	struct wstrv ro = { 0 }, rw = { 0 }, allow = { 0 }, sys = { 0 };
	_cleanup_free_ char *desc = xasprintf("Learned from %.120s: the %s profile, plus what it "
	                                      "was refused.", b->argv0 ? b->argv0 : "a program",
	                                      b->profile);
	struct wpolicy_ext e = {
		.name = b->name ? b->name : "", .description = desc, .extends = b->profile,
		.read_only = &ro, .read_write = &rw, .allow = &allow, .allow_extra = &sys,
		.allow_plus = b->profile_net == WNET_PROXY,
	};
	int mode;
	char *out;

	add_values(&ro, l, "filesystem.read_only", b);
	add_values(&rw, l, "filesystem.read_write", b);
	for (size_t i = 0; i < b->n_allow; i++)
		wstrv_push(&allow, b->allow[i]);
	add_values(&allow, l, "network.allow", b);
	add_values(&sys, l, "syscalls.allow_extra", b);
	/* an allow entry needs the proxy: the mode is written with it */
	mode = allow.n ? WNET_PROXY : b->net;
	if (mode != b->profile_net || allow.n)
		e.net_mode = policy_net_mode_name((enum wnet_mode)mode);
	out = wpolicy_ext_text(&e);
	wstrv_free(&ro);
	wstrv_free(&rw);
	wstrv_free(&allow);
	wstrv_free(&sys);
	return out;
}

/* --- for people ------------------------------------------------------------ */

/* What the program named, shown inert: control characters (C0, DEL, and
 * C1 as UTF-8) as \xNN, so a path cannot move the cursor or retitle the
 * terminal the report is read on. */
static void inert(char *out, size_t cap, const char *s)
{
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p && o + 5 < cap; p++) {
		bool c1 = p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f;

		if (*p < 0x20 || *p == 0x7f || c1) {
			o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c1 ? p[1] : *p);
			p += c1;
		} else {
			out[o++] = (char)*p;
		}
	}
	out[o] = '\0';
}

static const char *verb(const struct wl_refusal *r)
{
	switch (r->op) {
	case WL_READ:    return "opened it for reading";
	case WL_LIST:    return "opened or entered the directory";
	case WL_EXEC:    return "executed it";
	case WL_WRITE:   return "opened it for writing";
	case WL_CREATE:  return "created, removed or renamed something in it";
	case WL_PROBE:   return "only looked at it (stat, access, readlink)";
	case WL_CONNECT: return "connected to it directly";
	case WL_DNS:     return "looked the name up itself";
	case WL_PROXY:   return "asked the proxy for it";
	case WL_SYSCALL: return "called it";
	default:         return "used it";
	}
}

void wl_print(const struct wl_list *l, const struct wl_base *b, int fd)
{
	size_t in = 0, out = 0;
	char t[1024], v[1024], w[1024], n[1024];

	dprintf(fd, "warden: learned from this run (profile %s):\n", b->profile);
	for (size_t i = 0; i < l->n; i++) {
		const struct wl_refusal *r = &l->v[i];
		unsigned long long c = (unsigned long long)r->count;

		inert(t, sizeof(t), r->target);
		inert(v, sizeof(v), r->value);
		inert(w, sizeof(w), r->why);
		inert(n, sizeof(n), r->note);
		if (r->key && r->included) {
			in++;
			if (r->danger)
				inert(n, sizeof(n), r->danger);
			dprintf(fd, "  + %s += %s: the program %s (%s, %llu time%s); %s%s%s%s\n", r->key,
			        v, verb(r), r->call, c, c == 1 ? "" : "s", w,
			        r->danger ? "; DANGEROUS, added because --include names it: " : "",
			        n[0] ? (r->danger ? "" : "; ") : "", n);
		} else if (r->key && r->danger) {
			out++;
			inert(n, sizeof(n), r->danger);
			dprintf(fd, "  ! NOT ADDED, DANGEROUS: %s += %s: the program %s (%s); %s; %s; "
			        "add it only on purpose, with --include %s\n", r->key, v, verb(r),
			        r->call, w, n, v);
		} else if (r->key && r->covered) {
			dprintf(fd, "  = %s += %s: the program %s (%s); %s; %s\n", r->key, v, verb(r),
			        r->call, w, n);
		} else if (r->key) {
			out++;
			dprintf(fd, "  - not added: %s += %s: the program %s (%s); %s; %s\n", r->key, v,
			        verb(r), r->call, w, n[0] ? n : "add it with --include if it is needed");
		} else {
			dprintf(fd, "  - %s %s: the program %s (%s); %s%s%s\n", wl_op_name(r->op), t,
			        verb(r), r->call, w, n[0] ? "; " : "", n);
		}
	}
	if (!l->n)
		dprintf(fd, "  nothing was refused\n");
	if (l->dropped)
		dprintf(fd, "  (%llu more refusals were only counted)\n", (unsigned long long)l->dropped);
	if (l->incomplete) {
		inert(w, sizeof(w), l->why_incomplete ? l->why_incomplete : "some calls were not examined");
		dprintf(fd, "warden: learning is INCOMPLETE: %s\n", w);
	}
	dprintf(fd, "warden: %zu addition%s to profile %s, %zu left out\n", in, in == 1 ? "" : "s",
	        b->profile, out);
}
