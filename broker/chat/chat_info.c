/* warden chat: %info, what this chat runs with (Open Interpreter's %info,
 * with the jail's side), and %jupyter, the conversation as a notebook.
 *
 * %info reads only what the broker was told: the model settings, OPENED's
 * policy, limits report (which mechanism enforces each limit here) and jail
 * report (where the policy came from, the Landlock ABI), the conversation
 * file and the session's ids. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "chat_int.h"
#include "core/sanitize.h"
#include "conv.h"
#include "warden/util.h"

static json_object *jparse(const char *s)
{
	json_object *o = s ? json_tokener_parse(s) : NULL;

	if (o && !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		o = NULL;
	}
	return o;
}

/* What a limit's mechanism means for the person. */
static const char *mech_note(const char *k, const char *m)
{
	if (!strcmp(m, "unavailable"))
		return "NOT ENFORCED here";
	if (!strcmp(m, "rlimit") && strcmp(k, "file_size") && strcmp(k, "open_files"))
		return "weaker: per process";
	return NULL;
}

static void info_limits(struct chat *c, json_object *pol, struct sbuf *weak)
{
	json_object *lim = NULL, *mech = jparse(c->sess.limits_json);
	struct sbuf l = { 0 };

	if (pol)
		json_object_object_get_ex(pol, "limits", &lim);
	if (lim && json_object_is_type(lim, json_type_object)) {
		json_object_object_foreach(lim, k, v) {
			json_object *mv = NULL;
			const char *m = mech && json_object_object_get_ex(mech, k, &mv)
			                ? json_object_get_string(mv) : NULL;
			const char *note = m ? mech_note(k, m) : NULL;

			if (l.len)
				sbuf_adds(&l, ", ");
			sbuf_addf(&l, "%s %s", k, json_object_get_string(v));
			if (m && strcmp(m, "none"))
				sbuf_addf(&l, " (%s%s%s)", m, note ? ": " : "", note ? note : "");
			if (note)
				sbuf_addf(weak, "%s%s %s", weak->len ? ", " : "", k,
				          !strcmp(m, "unavailable") ? "not enforced" : "by rlimit only");
		}
	}
	ui_note(&c->ui, "  limits:       %s", l.len ? l.d : "(the policy gave none)");
	sbuf_free(&l);
	json_object_put(mech);
}

void chat_info(struct chat *c)
{
	_cleanup_free_ char *sys = chat_system_message(c);
	const char *base = c->llm.api_base ? c->llm.api_base : llm_default_base(c->llm.provider);
	json_object *pol, *v;
	struct sbuf weak = { 0 }, allowed = { 0 };
	int abi;

	ui_bold(&c->ui, "warden chat: what this chat runs with");
	ui_note(&c->ui, "  model:        %s%s%s, API base %s; code as %s", c->llm.provider,
	        !strcmp(c->llm.provider, "replay") ? ":" : "/", c->llm.model,
	        base && *base ? base : "(none)",
	        !c->llm.tools ? "fenced blocks (--no-tools)"
	        : c->code_path == CODE_FENCES ? "fenced blocks (the model made no tool call; "
	                                        "tools are offered)"
	        : "tool calls (a reply without one: its fenced blocks)");
	ui_note(&c->ui, "  chat profile: %s",
	        c->chat_profile ? c->chat_profile : "(none: config.json's top level)");
	ui_note(&c->ui, "  system:       %s%s (~%zu tokens; the jail's facts are always in it)",
	        c->system_base && *c->system_base ? "your system message replaces warden's "
	                                            "instructions"
	                                          : "warden's instructions",
	        c->system_extra && *c->system_extra ? ", with your addition" : "",
	        conv_tokens_str(sys));
	ui_note(&c->ui, "  approval:     %s%s", c->auto_run ? "auto-run (code runs unasked)"
	                                                    : "each block asks first",
	        c->oneshot ? "; a fresh jail for every block (--oneshot)" : "");

	/* the jail: OPENED says what the policy is and what enforces it */
	if (!c->sess_open && !c->fatal)
		(void)chat_open_session(c);
	for (uint32_t i = 0; i < c->bc.n_profiles; i++)
		sbuf_addf(&allowed, "%s%s", i ? ", " : "", c->bc.profiles[i]);
	pol = c->sess_open ? jparse(c->sess.policy_json) : NULL;
	{
		const char *desc = pol && json_object_object_get_ex(pol, "description", &v)
		                   ? json_object_get_string(v) : NULL;

		ui_note(&c->ui, "  sandbox:      profile %s%s%s%s (allowed: %s)", chat_profile_name(c),
		        desc ? " (" : "", desc ? desc : "", desc ? ")" : "",
		        allowed.len ? allowed.d : chat_profile_name(c));
	}
	ui_note(&c->ui, "  workspace:    %s",
	        c->bc.default_workspace ? c->bc.default_workspace : "(the current directory)");
	/* what this session was widened by (docs/learn.md "In a session") */
	ui_note(&c->ui, "  learning:     %s", c->learn ? "on: after a block that failed, warden "
	        "asks whether to allow what it was refused (--no-learn: off)" : "off (--no-learn)");
	if (json_object_array_length(c->widened)) {
		struct sbuf l = { 0 };

		for (size_t i = 0; i < json_object_array_length(c->widened); i++) {
			const char *e = json_object_get_string(json_object_array_get_idx(c->widened, i));
			_cleanup_free_ char *shown = wsan_str(e, strlen(e));

			sbuf_addf(&l, "%s%s", i ? ", " : "", shown);
		}
		ui_note(&c->ui, "  widened:      %s (this session only; %%revoke drops them, "
		        "%%profile save NAME keeps them)", l.d);
		sbuf_free(&l);
	} else {
		ui_note(&c->ui, "  widened:      nothing (the profile as it is)");
	}
	if (pol) {
		v = NULL;
		if (json_object_object_get_ex(pol, "network", &v))
			json_object_object_get_ex(v, "mode", &v);
		ui_note(&c->ui, "  network:      %s", v ? json_object_get_string(v) : "none");
		info_limits(c, pol, &weak);
	} else {
		ui_note(&c->ui, "  limits:       unknown: the jail could not be opened");
	}

	/* what is degraded on this machine, as the supervisor reported it */
	{
		json_object *jail = c->sess_open ? jparse(c->sess.jail_json) : NULL;
		char ll[200];

		abi = -1;
		if (jail && json_object_object_get_ex(jail, "policy_source", &v))
			ui_note(&c->ui, "  policy from:  %s", json_object_get_string(v));
		if (jail && json_object_object_get_ex(jail, "landlock_abi", &v))
			abi = json_object_get_int(v);
		json_object_put(jail);
		if (abi > 0)
			snprintf(ll, sizeof(ll), "ABI %d%s", abi,
			         abi < 4 ? " (no TCP port rules for the broker; no signal or "
			                   "abstract-socket scoping)"
			         : abi < 6 ? " (no signal or abstract-socket scoping)" : "");
		else
			snprintf(ll, sizeof(ll), "%s", abi == 0 ? "NOT AVAILABLE: the mount namespace "
			         "is the only file boundary (see warden doctor)" : "unknown");
		ui_note(&c->ui, "  landlock:     %s", ll);
	}
	ui_note(&c->ui, "  degraded:     %s%s%s", weak.len ? "limits " : "", weak.len ? weak.d : "",
	        abi == 0 ? (weak.len ? "; Landlock" : "Landlock") : weak.len ? "" : "nothing");

	/* where this chat is kept */
	{
		_cleanup_free_ char *shown = c->conv_path ? bdirs_shown(c->d, c->conv_path) : NULL;

		ui_note(&c->ui, "  conversation: %s (%zu messages)",
		        shown ? shown : "not saved yet (saved once the model answers)",
		        json_object_array_length(c->msgs));
	}
	if (c->sess_open)
		ui_note(&c->ui, "  session:      %u, audit id %s (warden audit --session %s)",
		        c->sess.id, c->sess.audit_id, c->sess.audit_id);
	else
		ui_note(&c->ui, "  session:      none open");
	json_object_put(pol);
	sbuf_free(&weak);
	sbuf_free(&allowed);
}

/* ---- %jupyter ---- */

/* The broker may write only under its data directory (Landlock, SECURITY.md
 * G18/G19): not the workspace, which the jail's code can change anyway and
 * which is the person's, not warden's.  So the notebook goes to
 * <data>/notebooks/, named after the conversation file, and its path is
 * printed for the person to open or copy. */
int chat_jupyter(struct chat *c, const char *arg)
{
	struct werr err = { 0 };
	_cleanup_free_ char *path = NULL, *shown = NULL, *in_data = NULL;
	json_object *nb;
	size_t cells;
	int r = 0;

	if (!json_object_array_length(c->msgs)) {
		ui_note(&c->ui, "nothing to export yet");
		return 0;
	}
	/* an absolute path as the person knows the data directory */
	if (arg && *arg)
		arg = in_data = bdirs_real(c->d, arg);
	if (conv_notebook_path(c->d->data, arg, c->conv_path, &path, &err) < 0) {
		_cleanup_free_ char *m = bdirs_shown(c->d, err.msg);

		ui_error(&c->ui, "%%jupyter: %s", m);
		return -1;
	}
	nb = conv_notebook(c->msgs);
	cells = json_object_array_length(json_object_object_get(nb, "cells"));
	if (conv_write_json(path, nb, "writing the notebook", &err) < 0) {
		_cleanup_free_ char *m = bdirs_shown(c->d, err.msg);

		ui_error(&c->ui, "%%jupyter: %s", m);
		r = -1;
	} else {
		shown = bdirs_shown(c->d, path);
		ui_note(&c->ui, "notebook written: %s (%zu cells; open it with jupyter notebook, or "
		        "copy it where you like)", shown, cells);
	}
	json_object_put(nb);
	return r;
}
