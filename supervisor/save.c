/* SAVE: chat's `%profile save NAME` (issue 23, part 4): the session's
 * profile and what was allowed in it, as a profile of the caller's,
 * ~/.config/warden/profiles/NAME.json.  A widening never outlives its
 * session otherwise.
 *
 * The file is the supervisor's own text, made from its own state (the
 * profile's name, the widenings it granted), never from the broker's
 * words but the name; policy files are trusted input (SECURITY.md), so:
 *   - only `warden chat` on a terminal saves (a serve broker that asks is
 *     not ours), and replacing a file is asked of the person by the
 *     supervisor itself (ask.c), with the broker stopped;
 *   - a name that would shadow a built-in or an allowed profile is
 *     refused: a saved profile takes effect only where a person names it;
 *   - the text is parsed back as a policy before it is written. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ask.h"
#include "session.h"
#include "sv.h"
#include "warden/util.h"

static void answer(struct sv *sv, const struct wmsg *m, uint8_t status, const char *text)
{
	struct werr err = { 0 };

	wloop_send(&sv->loop, wproto_widened(&sv->broker.out, m->req, m->session, status, 0, text,
	                                     &err), &err);
}

/* A path of the session's workspace as $WORKSPACE..., so the profile keeps
 * meaning the workspace it runs in (as a learned policy does). */
static void add_paths(struct wstrv *out, const struct wstrv *v, const char *ws)
{
	size_t n = strlen(ws);

	for (size_t i = 0; i < v->n; i++) {
		const char *p = v->v[i];

		if (n > 1 && !strncmp(p, ws, n) && (p[n] == '\0' || p[n] == '/')) {
			char *e = xasprintf("$WORKSPACE%s", p + n);

			wstrv_push(out, e);
			free(e);
		} else {
			wstrv_push(out, p);
		}
	}
}

/* The profile's text: extends the session's profile (as loaded by its
 * name), with what --net/--allow gave the session and the widenings. */
static char *profile_text(const struct sv_sess *s, const char *name, const struct wpolicy *file)
{
	struct wstrv ro = { 0 }, rw = { 0 }, allow = { 0 };
	enum wnet_mode mode = s->base->net == WNET_PROXY || s->w_host.n ? WNET_PROXY : s->base->net;
	_cleanup_free_ char *desc = xasprintf("Saved from warden chat session %s: the %s profile, "
	                                      "plus what the person allowed in it.",
	                                      s->audit_id, s->base->name);
	struct wpolicy_ext e = {
		.name = name, .description = desc, .extends = s->base->name,
		.read_only = &ro, .read_write = &rw, .allow = &allow,
		.net_mode = mode != file->net ? policy_net_mode_name(mode) : NULL,
		.allow_plus = file->net == WNET_PROXY,
	};
	char *text;

	add_paths(&ro, &s->w_read, s->ws);
	add_paths(&rw, &s->w_write, s->ws);
	/* the network the session had: --net and --allow at start, then the
	 * hosts allowed in it */
	for (size_t i = 0; i < s->base->net_allow.n; i++)
		if (!wstrv_contains(&file->net_allow, s->base->net_allow.v[i]))
			wstrv_push(&allow, s->base->net_allow.v[i]);
	for (size_t i = 0; i < s->w_host.n; i++)
		wstrv_push(&allow, s->w_host.v[i]);
	text = wpolicy_ext_text(&e);
	wstrv_free(&ro);
	wstrv_free(&rw);
	wstrv_free(&allow);
	return text;
}

/* Written whole or not at all: a new file beside it, then renamed. */
static int write_profile(const char *dir, const char *path, const char *text, bool replace,
                         struct werr *err)
{
	char tmp[PATH_MAX];
	int fd;

	snprintf(tmp, sizeof(tmp), "%s/.%d.tmp", dir, (int)getpid());
	(void)unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || write_all(fd, text, strlen(text)) < 0 || fsync(fd) < 0) {
		werr_set(err, errno, "writing %s", tmp);
		if (fd >= 0)
			close(fd);
		(void)unlink(tmp);
		return -1;
	}
	close(fd);
	/* a new name: never over a file made meanwhile */
	if (!replace ? link(tmp, path) < 0 : rename(tmp, path) < 0) {
		werr_set(err, errno, "writing %s", path);
		(void)unlink(tmp);
		return -1;
	}
	if (!replace)
		(void)unlink(tmp);
	return 0;
}

int sv_save(struct sv *sv, const struct wmsg *m)
{
	struct sv_sess *s;
	struct werr err = { 0 };
	struct wpolicy *file = NULL, *check = NULL;
	_cleanup_free_ char *cfg = NULL, *dir = NULL, *path = NULL, *text = NULL, *shown = NULL;
	bool replace = false;
	char msg[PATH_MAX + 256];
	json_object *rec;

	if (!sv->chat)
		return -1;   /* serve never saves: a broker that asks is not ours */
	if (!(s = sess_find(sv, m->session))) {
		answer(sv, m, WW_REFUSED, "no open session");
		return 0;
	}
	if (!wprofile_name_ok(m->profile)) {
		answer(sv, m, WW_REFUSED, "a profile's name is letters, digits, '-', '_' and '.', at "
		       "most 64, not starting with '.' or '-'");
		return 0;
	}
	for (size_t i = 0; i < wbuiltin_profiles_n; i++)
		if (!strcmp(wbuiltin_profiles[i].name, m->profile)) {
			snprintf(msg, sizeof(msg), "%s is a built-in profile's name: a file of that name "
			         "would change every run that names it; choose another", m->profile);
			answer(sv, m, WW_REFUSED, msg);
			return 0;
		}
	for (size_t i = 0; i < sv->n_pols; i++)
		if (!strcmp(sv->pols[i]->name, m->profile)) {
			snprintf(msg, sizeof(msg), "%s is a profile this warden runs with: choose another "
			         "name", m->profile);
			answer(sv, m, WW_REFUSED, msg);
			return 0;
		}
	/* "extends" names the session's profile: it must be that one */
	if (policy_load_profile(s->base->name, &file, &err) < 0 ||
	    strcmp(file->source ? file->source : "", s->base->source ? s->base->source : "")) {
		snprintf(msg, sizeof(msg), "the session's profile %s came from %s, which is not the "
		         "profile of that name: save that file as ~/.config/warden/profiles/%s.json "
		         "and run with --profile %s first", s->base->name,
		         s->base->source ? s->base->source : "a file", s->base->name, s->base->name);
		policy_free(file);
		answer(sv, m, WW_REFUSED, msg);
		return 0;
	}
	text = profile_text(s, m->profile, file);
	policy_free(file);
	if (!(cfg = sv_xdg_dir("XDG_CONFIG_HOME", ".config", &err))) {
		answer(sv, m, WW_REFUSED, err.msg);
		return 0;
	}
	dir = xasprintf("%s/profiles", cfg);
	path = xasprintf("%s/%s.json", dir, m->profile);
	if (policy_load_buffer(path, text, strlen(text), &check, &err) < 0) {
		answer(sv, m, WW_REFUSED, err.msg);
		return 0;
	}
	policy_free(check);
	if (mkdir_p(dir, 0700, &err) < 0) {
		answer(sv, m, WW_REFUSED, err.msg);
		return 0;
	}
	shown = sv_shown(path);
	if (access(path, F_OK) == 0) {
		enum sv_answer a = SVA_NO;
		_cleanup_free_ char *q = xasprintf("warden: %s exists. Replace it with this "
		                                   "session's profile? [y/N] ", shown);

		if (!sv->edit_ok) {
			snprintf(msg, sizeof(msg), "%s exists: choose another name", shown);
			answer(sv, m, WW_REFUSED, msg);
			return 0;
		}
		if (sv_ask(sv, q, false, false, &a, &err) < 0) {
			answer(sv, m, WW_REFUSED, err.msg);
			return 0;
		}
		if (a != SVA_YES) {
			snprintf(msg, sizeof(msg), "%s was left as it was", shown);
			answer(sv, m, WW_DECLINED, msg);
			return 0;
		}
		replace = true;
	}
	if (write_profile(dir, path, text, replace, &err) < 0) {
		answer(sv, m, WW_REFUSED, err.msg);
		return 0;
	}
	rec = json_object_new_object();
	json_object_object_add(rec, "session", json_object_new_string(s->audit_id));
	json_object_object_add(rec, "name", json_object_new_string(m->profile));
	json_object_object_add(rec, "path", json_object_new_string(path));
	json_object_object_add(rec, "replaced", json_object_new_boolean(replace));
	waudit_emit(sv->audit, "profile_save", rec);
	answer(sv, m, WW_GRANTED, path);
	return 0;
}
