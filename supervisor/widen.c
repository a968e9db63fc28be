/* WIDEN, REVOKE and SAVE (issue 23; docs/learn.md "In a session";
 * SECURITY.md G230-G235): a session's policy widened for one path or host
 * after a refusal, the widenings dropped, or saved as a profile.
 *
 * The broker only asks; everything is decided here, from the supervisor's
 * own facts:
 *   - the value is resolved here (realpath: it must exist on the host) and
 *     never leads into warden's own directories or past the session's
 *     hides;
 *   - the bound: what the profiles and workspace roots allowed at start
 *     already give a broker (G16: it could open a session there), computed
 *     by bound_path and bound_host;
 *   - dangerous entries (learn/danger.c, the catalog of G190-G191, the
 *     host's state and credentials) are never granted to serve or MCP, and
 *     in chat only when the person typed the request (%allow) and then
 *     typed "yes" at the supervisor's own question (ask.c);
 *   - serve and MCP: within the bound only (a client of serve --listen,
 *     or the model behind MCP, never widens past the operator's bound);
 *     chat on a terminal: the supervisor asks the person itself, with the
 *     broker stopped, and the person's answer may go past the bound;
 *     chat without a terminal: nothing is widened.
 * Only a session that learns is widened (chat's %allow, which the
 * person types, excepted).
 * A widening holds for the session only: its policy is a copy of its
 * profile with the additions (the allowed profiles are never changed),
 * its jails are replaced (Landlock cannot widen a running jail), and the
 * copy goes with the session; it is audited ("widen", "revoke"). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ask.h"
#include "session.h"
#include "sv.h"
#include "warden/jail.h"
#include "warden/learn.h"
#include "warden/netallow.h"
#include "warden/util.h"

static bool at_or_below(const char *p, const char *dir)
{
	size_t n = strlen(dir);

	if (!strcmp(dir, "/"))
		return p[0] == '/';
	return !strncmp(p, dir, n) && (p[n] == '\0' || p[n] == '/');
}

static void reply(struct sv *sv, const struct wmsg *m, uint8_t status, uint32_t flags,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void reply(struct sv *sv, const struct wmsg *m, uint8_t status, uint32_t flags,
                  const char *fmt, ...)
{
	char text[2048];
	struct werr err = { 0 };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	wloop_send(&sv->loop, wproto_widened(&sv->broker.out, m->req, m->session, status, flags,
	                                     text, &err), &err);
}

static const char *key_of(unsigned kind)
{
	return kind == WK_READ ? "filesystem.read_only" : kind == WK_WRITE ? "filesystem.read_write"
	                                                                 : "network.allow";
}

/* --- what is never widened ------------------------------------------------ */

/* warden's own files (config: the model's settings; data: the
 * conversations; the audit log): at, below or above them. */
static bool own_dir(const struct sv *sv, const char *path)
{
	struct werr ignored = { 0 };
	char *d[3] = { sv_xdg_dir("XDG_CONFIG_HOME", ".config", &ignored),
	               sv_xdg_dir("XDG_DATA_HOME", ".local/share", &ignored),
	               waudit_path(sv->audit) ? xstrdup(waudit_path(sv->audit)) : NULL };
	bool hit = false;

	for (size_t i = 0; i < ARRAY_SIZE(d); i++) {
		if (d[i] && d[i][0] == '/' && (at_or_below(path, d[i]) || at_or_below(d[i], path)))
			hit = true;
		free(d[i]);
	}
	return hit;
}

/* A hide of pol, evaluated with the workspace at ws, at or above path. */
static bool hidden_at(const struct wpolicy *pol, const char *ws, const char *path)
{
	for (size_t i = 0; i < pol->hide.n; i++) {
		_cleanup_free_ char *h = NULL;
		struct werr err = { 0 };

		if (policy_expand(pol->hide.v[i], ws, sv_caller_home(), &h, &err) == 0 &&
		    at_or_below(path, h))
			return true;
	}
	return false;
}

/* ... with the workspace at root or any directory between it and path:
 * a session may be opened at each of them (dispatch.c's check_hides). */
static bool hidden_below_root(const struct wpolicy *pol, const char *root, const char *path)
{
	char d[PATH_MAX];

	snprintf(d, sizeof(d), "%s", root);
	for (;;) {
		size_t dl = strlen(d);
		const char *next;

		if (hidden_at(pol, d, path))
			return true;
		next = strchr(path + (dl == 1 ? 1 : dl + 1), '/');
		if (!next || dl >= strlen(path))
			return false;
		snprintf(d, sizeof(d), "%.*s", (int)(next - path), path);
	}
}

static bool session_hides(const struct sv_sess *s, const char *path)
{
	if (hidden_at(s->pol, s->ws, path))
		return true;
	for (size_t i = 0; i < s->hide_extra.n; i++)
		if (at_or_below(path, s->hide_extra.v[i]))
			return true;
	for (size_t i = 0; i < s->own.n; i++)
		if (at_or_below(path, s->own.v[i]))
			return true;
	return false;
}

/* --- the bound: what the start already allowed a broker ------------------- */

static bool binds_workspace(const struct wpolicy *p, bool write)
{
	return write ? p->workspace_writable
	             : p->workspace_writable || wstrv_contains(&p->read_only, "$WORKSPACE");
}

/* path is readable (write: writable) in a session some allowed profile
 * would give at some allowed workspace: below a root, under a profile that
 * binds the workspace so and does not hide it there; or at or below a
 * path an allowed profile binds itself ($HOME expanded; a $WORKSPACE path
 * lies below a root, covered above). */
static bool bound_path(const struct sv *sv, bool write, const char *path)
{
	for (size_t i = 0; i < sv->n_pols; i++) {
		const struct wpolicy *p = sv->pols[i];
		const struct wstrv *lists[2] = { &p->read_write, &p->read_only };

		if (binds_workspace(p, write))
			for (size_t r = 0; r < sv->n_roots; r++)
				if (at_or_below(path, sv->roots[r]) &&
				    !hidden_below_root(p, sv->roots[r], path))
					return true;
		for (size_t l = 0; l < (write ? 1u : 2u); l++)
			for (size_t k = 0; k < lists[l]->n; k++) {
				_cleanup_free_ char *e = NULL;
				struct werr err = { 0 };

				if (strstr(lists[l]->v[k], "WORKSPACE") ||
				    policy_expand(lists[l]->v[k], "/", sv_caller_home(), &e, &err) < 0)
					continue;
				if (at_or_below(path, e) && !hidden_at(p, sv->roots[0], path))
					return true;
			}
	}
	return false;
}

/* host[:port] is one an allowed profile in mode proxy lets out (its allow
 * list, --allow included); without a port, both of the defaults. */
static bool bound_host(const struct sv *sv, const char *value)
{
	struct wnet_entry e;
	struct werr err = { 0 };

	if (wnet_entry_parse(value, &e, &err) < 0 || e.wildcard)
		return false;
	for (size_t i = 0; i < sv->n_pols; i++) {
		const struct wpolicy *p = sv->pols[i];

		if (p->net != WNET_PROXY)
			continue;
		if (e.port ? wnet_allow_name(p->net_allow.v, p->net_allow.n, e.host, e.port) >= 0
		           : wnet_allow_name(p->net_allow.v, p->net_allow.n, e.host, 443) >= 0 &&
		             wnet_allow_name(p->net_allow.v, p->net_allow.n, e.host, 80) >= 0)
			return true;
	}
	return false;
}

/* --- the session's policy ------------------------------------------------- */

static json_object *member(json_object *o, const char *k, json_type t)
{
	json_object *v;

	if (!json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, t)) {
		v = t == json_type_array ? json_object_new_array() : json_object_new_object();
		json_object_object_add(o, k, v);
	}
	return v;
}

static void append(json_object *arr, const struct wstrv *v)
{
	for (size_t i = 0; i < v->n; i++)
		json_object_array_add(arr, json_object_new_string(v->v[i]));
}

/* The session's profile plus its widenings, as a policy of its own (the
 * allowed profile is never changed), checked as a jail's start would check
 * it (jail_plan_check): NULL and err when it could not be used. */
static struct wpolicy *compose(const struct sv_sess *s, const struct wstrv *r,
                               const struct wstrv *w, const struct wstrv *h, struct werr *err)
{
	_cleanup_free_ char *base = policy_to_json(s->base);
	json_object *o = base ? json_tokener_parse(base) : NULL, *fs, *net;
	struct wpolicy *p = NULL;
	struct jail_spec spec = JAIL_SPEC_INIT;
	struct wstrv paths = { 0 }, below = { 0 }, msgs = { 0 };
	char source[96];
	const char *text;

	if (!o) {
		werr_set(err, 0, "internal: the session's profile as JSON");
		return NULL;
	}
	fs = member(o, "filesystem", json_type_object);
	append(member(fs, "read_only", json_type_array), r);
	append(member(fs, "read_write", json_type_array), w);
	if (h->n) {
		net = member(o, "network", json_type_object);
		json_object_object_add(net, "mode", json_object_new_string("proxy"));
		append(member(net, "allow", json_type_array), h);
	}
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
	                                      JSON_C_TO_STRING_NOSLASHESCAPE);
	snprintf(source, sizeof(source), "session %s's widened %s profile", s->audit_id,
	         s->base->name);
	if (policy_load_buffer(source, text, strlen(text), &p, err) < 0) {
		json_object_put(o);
		return NULL;
	}
	json_object_put(o);
	spec.pol = p;
	spec.workspace = s->ws;
	spec.home = sv_caller_home();
	spec.hide_extra = s->hide_extra.v;
	spec.protect_extra = s->own.v;
	if (jail_plan_check(&spec, &paths, &below, &msgs) < 0) {
		werr_set(err, 0, "a jail could not start with it: %s", msgs.n ? msgs.v[0] : "?");
		policy_free(p);
		p = NULL;
	}
	wstrv_free(&paths);
	wstrv_free(&below);
	wstrv_free(&msgs);
	return p;
}

/* The session runs under pol from its next block on (NULL: its profile
 * again); every jail it has is replaced. */
static int switch_policy(struct sv *sv, struct sv_sess *s, struct wpolicy *pol,
                         struct werr *err)
{
	char **env = sv_build_env(pol ? pol : s->base, NULL, 0, s->ws, sv_caller_home(), err);

	if (!env) {
		policy_free(pol);
		return -1;
	}
	sess_new_jails(sv, s);   /* they hold the old policy: gone first */
	sv_free_env(s->env);
	s->env = env;
	policy_free(s->wpol);
	s->wpol = pol;
	s->pol = pol ? pol : s->base;
	return 0;
}

static bool jails_used(const struct sv_sess *s)
{
	for (size_t i = 0; i < ARRAY_SIZE(s->jails); i++)
		if (s->jails[i] && s->jails[i]->used)
			return true;
	return false;
}

/* --- WIDEN ------------------------------------------------------------------ */

static void audit_widen(struct sv *sv, const struct sv_sess *s, unsigned kind,
                        const char *value, bool granted, const char *by, bool by_broker,
                        bool in_bound, const char *danger, const char *why)
{
	json_object *rec = json_object_new_object();

	json_object_object_add(rec, "session", json_object_new_string(s->audit_id));
	json_object_object_add(rec, "kind", json_object_new_string(wwiden_kind_name(kind)));
	json_object_object_add(rec, "value", json_object_new_string(value));
	json_object_object_add(rec, "granted", json_object_new_boolean(granted));
	json_object_object_add(rec, "by", json_object_new_string(by));
	/* the broker's word (serve, MCP) or the supervisor's own question */
	json_object_object_add(rec, "by_source", json_object_new_string(by_broker ? "broker"
	                                                                           : "supervisor"));
	json_object_object_add(rec, "in_bound", json_object_new_boolean(in_bound));
	if (danger)
		json_object_object_add(rec, "dangerous", json_object_new_string(danger));
	if (why)
		json_object_object_add(rec, "why", json_object_new_string(why));
	waudit_emit(sv->audit, "widen", rec);
}

/* The person's "always" for a path: the directory it names, or holds it;
 * for a host: the host, any port. */
static char *always_scope(unsigned kind, const char *value)
{
	struct stat st;
	const char *slash;

	if (kind == WK_HOST) {
		const char *c = value[0] == '[' ? strchr(value, ']') : strrchr(value, ':');
		size_t n = c ? (size_t)(c - value) + (value[0] == '[') : strlen(value);
		return xasprintf("host:%.*s", (int)n, value);
	}
	if (stat(value, &st) == 0 && S_ISDIR(st.st_mode))
		return xasprintf("%s:%s", wwiden_kind_name(kind), value);
	slash = strrchr(value, '/');
	return xasprintf("%s:%.*s", wwiden_kind_name(kind),
	                 slash && slash != value ? (int)(slash - value) : 1, value);
}

static bool in_always(const struct sv_sess *s, unsigned kind, const char *value)
{
	_cleanup_free_ char *mine = always_scope(kind, value);
	size_t kn = strlen(wwiden_kind_name(kind)) + 1;

	for (size_t i = 0; i < s->w_always_scope.n; i++) {
		const char *sc = s->w_always_scope.v[i];

		if (kind == WK_HOST ? !strcmp(sc, mine)
		                    : !strncmp(sc, mine, kn) && at_or_below(value, sc + kn))
			return true;
	}
	return false;
}

static bool granted_already(const struct sv_sess *s, unsigned kind, const char *value)
{
	const struct wstrv *v = kind == WK_READ ? &s->w_read : kind == WK_WRITE ? &s->w_write
	                                                                      : &s->w_host;
	return wstrv_contains(v, value) || (kind == WK_READ && wstrv_contains(&s->w_write, value));
}

int sv_widen(struct sv *sv, const struct wmsg *m)
{
	struct sv_sess *s = sess_find(sv, m->session);
	unsigned kind = m->kind, via = m->flags & WWIDEN_VIA_MASK;
	bool explicit = m->flags & WWIDEN_EXPLICIT, in_bound, new_jail;
	char value[PATH_MAX], dbuf[512];
	const char *danger, *by;
	_cleanup_free_ char *shown = NULL, *q = NULL;
	struct werr err = { 0 };
	struct wstrv r = { 0 }, w = { 0 }, h = { 0 };
	struct wpolicy *pol;
	enum sv_answer a = SVA_NO;

	if (m->flags & ~(WWIDEN_VIA_MASK | WWIDEN_EXPLICIT) || via >= WVIA__N) {
		reply(sv, m, WW_REFUSED, 0, "WIDEN: unknown flags");
		return 0;
	}
	if (!s) {
		reply(sv, m, WW_REFUSED, 0, "no open session %u", m->session);
		return 0;
	}
	if (s->busy) {
		reply(sv, m, WW_REFUSED, 0, "a block is running in this session: widen it between "
		      "blocks");
		return 0;
	}
	/* only a session opened to learn is ever offered a widening (G235);
	 * in chat the person may still ask for one by name (%allow), which
	 * the supervisor then puts to them itself */
	if (!s->learn && !(sv->chat && explicit)) {
		audit_widen(sv, s, kind, m->value, false, wwiden_via_name(via), !sv->chat, false,
		            NULL, "the session does not learn");
		reply(sv, m, WW_REFUSED, 0, "session %u does not learn: warden widens only a "
		      "session opened to learn (open's \"learn\", serve --learn, mcp --learn, chat "
		      "without --no-learn)", m->session);
		return 0;
	}
	/* the value, resolved here: the broker's word is only a request */
	if (kind == WK_HOST) {
		if (policy_allow_check(m->value, &err) < 0) {
			reply(sv, m, WW_REFUSED, 0, "%s", err.msg);
			return 0;
		}
		snprintf(value, sizeof(value), "%s", m->value);
	} else {
		_cleanup_free_ char *x = NULL;

		if ((m->value[0] != '/' && strncmp(m->value, "$WORKSPACE", 10)) ||
		    policy_expand(m->value, s->ws, sv_caller_home(), &x, &err) < 0 ||
		    !realpath(x, value)) {
			reply(sv, m, WW_REFUSED, 0, "%s: %s", m->value, err.msg[0] ? err.msg :
			      "not an absolute path that exists on the host (warden binds only what "
			      "exists)");
			return 0;
		}
	}
	shown = sv_shown(value);
	if (granted_already(s, kind, value)) {
		reply(sv, m, WW_GRANTED, 0, "%s of %s is allowed already", wwiden_kind_name(kind),
		      shown);
		return 0;
	}
	if (kind != WK_HOST && (own_dir(sv, value) || session_hides(s, value))) {
		reply(sv, m, WW_REFUSED, 0, "%s is warden's own, or hidden by profile %s: no session "
		      "is widened to it", shown, s->base->name);
		audit_widen(sv, s, kind, value, false, wwiden_via_name(via), via != WVIA_CHAT, false,
		            NULL, "warden's own directory, or hidden by the profile");
		return 0;
	}
	danger = wl_danger(key_of(kind), value, sv_caller_home(), dbuf, sizeof(dbuf));
	in_bound = kind == WK_HOST ? bound_host(sv, value) : bound_path(sv, kind == WK_WRITE, value);

	if (!sv->chat) {
		/* serve and MCP: the client's answer, within the bound only */
		const char *why = danger ? "dangerous" : !in_bound ? "beyond the bound" : NULL;

		if (why) {
			audit_widen(sv, s, kind, value, false, wwiden_via_name(via), true, in_bound,
			            danger, why);
			reply(sv, m, WW_REFUSED, 0, "warden does not widen this session to %s %s: %s. "
			      "Only the person who starts warden can allow it: with a profile that "
			      "grants it (--profile or --allow-profile NAME)%s", wwiden_kind_name(kind),
			      shown, danger ? danger : "it is beyond what the profiles and workspaces "
			      "warden was started with allow",
			      kind == WK_HOST ? ", or --allow HOST" : ", or --allow-workspace DIR");
			return 0;
		}
		by = wwiden_via_name(via);
	} else if (!sv->edit_ok) {
		reply(sv, m, WW_REFUSED, 0, "warden asks about widening on chat's terminal only; "
		      "there is none");
		return 0;
	} else if (danger && !explicit) {
		reply(sv, m, WW_REFUSED, 0, "%s %s is dangerous (%s): warden never offers it as a "
		      "one-key answer", wwiden_kind_name(kind), shown, danger);
		return 0;
	} else if (!danger && !explicit && in_always(s, kind, value)) {
		by = "always";   /* the person's earlier answer */
	} else {
		const char *what = kind == WK_READ ? "read" : kind == WK_WRITE ? "write" : "reach";

		if (danger)
			q = xasprintf("warden: you asked to let this session's code %s %s.\nIt is "
			              "DANGEROUS: %s.\nType yes to allow it for this session: ", what,
			              shown, danger);
		else if (explicit)
			q = xasprintf("warden: allow this session's code to %s %s? [y/N/always] ",
			              what, shown);
		else
			q = xasprintf("warden: the code tried to %s %s (refused by profile %s).\n"
			              "Allow %s for this session? [y/N/always] ", what, shown,
			              s->base->name, what);
		if (sv_ask(sv, q, danger != NULL, !danger, &a, &err) < 0) {
			reply(sv, m, WW_REFUSED, 0, "%s", err.msg);
			return 0;
		}
		if (a == SVA_NO) {
			audit_widen(sv, s, kind, value, false, "person", false, in_bound, danger,
			            "declined");
			reply(sv, m, WW_DECLINED, 0, "not allowed: %s of %s stays refused",
			      wwiden_kind_name(kind), shown);
			return 0;
		}
		by = "person";
	}
	/* granted: the session's own policy, checked, and new jails */
	for (size_t i = 0; i < s->w_read.n; i++)
		wstrv_push(&r, s->w_read.v[i]);
	for (size_t i = 0; i < s->w_write.n; i++)
		wstrv_push(&w, s->w_write.v[i]);
	for (size_t i = 0; i < s->w_host.n; i++)
		wstrv_push(&h, s->w_host.v[i]);
	wstrv_push(kind == WK_READ ? &r : kind == WK_WRITE ? &w : &h, value);
	new_jail = jails_used(s);
	pol = compose(s, &r, &w, &h, &err);
	if (!pol || switch_policy(sv, s, pol, &err) < 0) {
		audit_widen(sv, s, kind, value, false, by, via != WVIA_CHAT && sv->chat == false,
		            in_bound, danger, err.msg);
		reply(sv, m, WW_REFUSED, 0, "%s", err.msg);
		wstrv_free(&r);
		wstrv_free(&w);
		wstrv_free(&h);
		return 0;
	}
	wstrv_free(&s->w_read);
	wstrv_free(&s->w_write);
	wstrv_free(&s->w_host);
	s->w_read = r;
	s->w_write = w;
	s->w_host = h;
	if (a == SVA_ALWAYS) {
		char *sc = always_scope(kind, value);

		wstrv_push(&s->w_always_scope, sc);
		free(sc);
	}
	audit_widen(sv, s, kind, value, true, by, !sv->chat, in_bound, danger, NULL);
	reply(sv, m, WW_GRANTED, (a == SVA_ALWAYS ? WWIDENED_ALWAYS : 0) |
	      (new_jail ? WWIDENED_NEW_JAIL : 0), "%s", value);
	return 0;
}

/* --- REVOKE ----------------------------------------------------------------- */

int sv_revoke(struct sv *sv, const struct wmsg *m)
{
	struct sv_sess *s = sess_find(sv, m->session);
	struct werr err = { 0 };
	json_object *rec, *list;
	bool new_jail;

	if (!s) {
		reply(sv, m, WW_REFUSED, 0, "no open session %u", m->session);
		return 0;
	}
	if (s->busy) {
		reply(sv, m, WW_REFUSED, 0, "a block is running in this session: revoke between blocks");
		return 0;
	}
	if (!s->wpol) {
		reply(sv, m, WW_GRANTED, 0, "nothing to revoke: the session runs under profile %s "
		      "as it is", s->base->name);
		return 0;
	}
	rec = json_object_new_object();
	list = json_object_new_array();
	json_object_object_add(rec, "session", json_object_new_string(s->audit_id));
	{
		const struct wstrv *v[3] = { &s->w_read, &s->w_write, &s->w_host };

		for (unsigned k = 0; k < 3; k++)
			for (size_t i = 0; i < v[k]->n; i++) {
				char *e = xasprintf("%s %s", wwiden_kind_name(k), v[k]->v[i]);

				json_object_array_add(list, json_object_new_string(e));
				free(e);
			}
	}
	json_object_object_add(rec, "widenings", list);
	new_jail = jails_used(s);
	if (switch_policy(sv, s, NULL, &err) < 0) {
		json_object_put(rec);
		reply(sv, m, WW_REFUSED, 0, "%s", err.msg);
		return 0;
	}
	wstrv_free(&s->w_read);
	wstrv_free(&s->w_write);
	wstrv_free(&s->w_host);
	wstrv_free(&s->w_always_scope);
	waudit_emit(sv->audit, "revoke", rec);
	reply(sv, m, WW_GRANTED, new_jail ? WWIDENED_NEW_JAIL : 0, "the session runs under "
	      "profile %s again", s->base->name);
	return 0;
}

void widen_free(struct sv_sess *s)
{
	policy_free(s->wpol);
	s->wpol = NULL;
	s->pol = s->base;
	wstrv_free(&s->w_read);
	wstrv_free(&s->w_write);
	wstrv_free(&s->w_host);
	wstrv_free(&s->w_always_scope);
}
