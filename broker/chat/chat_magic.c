/* warden chat: the %commands of the prompt (%help lists them). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "chat_int.h"
#include "conv.h"
#include "core/lmc.h"
#include "core/sanitize.h"
#include "warden/util.h"

/* ---- magic commands ---- */

static const char magic_help_text[] =
	"  %reset            start a new conversation (and a fresh jail)\n"
	"  %undo             forget your last message and everything after it\n"
	"  %save [FILE]      save the conversation (under the data directory's conversations/)\n"
	"  %load [FILE]      load a saved conversation (the latest without FILE)\n"
	"  %tokens           the estimated size of the conversation\n"
	"  %info             model, policy, limits and what is weaker here, files, ids\n"
	"  %jupyter [FILE]   export the conversation as a Jupyter notebook\n"
	"  %profile [NAME]   show or switch the sandbox profile\n"
	"  %profile save NAME  the sandbox profile plus what you allowed, as a profile\n"
	"  %allow read|write PATH, %allow host HOST[:PORT]   widen this session (asked)\n"
	"  %revoke           drop every widening of this session\n"
	"  %audit            what the jail denied in this conversation\n"
	"  %verbose          show requests, timings and sessions\n"
	"  %help             this list\n"
	"  Ctrl-C interrupts the model or the running code; Ctrl-D (or Ctrl-C twice) exits.\n";

static void magic_help(struct chat *c)
{
	ui_write(&c->ui, magic_help_text, sizeof(magic_help_text) - 1);
}

int chat_magic(struct chat *c, char *line)
{
	char *cmd = line + 1, *arg;
	struct werr err = { 0 };

	for (arg = cmd; *arg && !isspace((unsigned char)*arg); arg++)
		;
	if (*arg)
		*arg++ = '\0';
	while (isspace((unsigned char)*arg))
		arg++;
	for (char *e = arg + strlen(arg); e > arg && isspace((unsigned char)e[-1]);)
		*--e = '\0';

	if (!strcmp(cmd, "help")) {
		magic_help(c);
	} else if (!strcmp(cmd, "reset")) {
		json_object_put(c->msgs);
		c->msgs = json_object_new_array();
		free(c->conv_path);
		c->conv_path = NULL;
		chat_close_session(c);
		ui_note(&c->ui, "a new conversation; the next block runs in a fresh jail");
	} else if (!strcmp(cmd, "undo")) {
		size_t n = json_object_array_length(c->msgs), i = n;

		while (i > 0 && strcmp(mstr(json_object_array_get_idx(c->msgs, i - 1), "role") ?: "",
		                       "user"))
			i--;
		if (i == 0) {
			ui_note(&c->ui, "nothing to undo");
			return 0;
		}
		ui_note(&c->ui, "forgot: \"%.60s\" and %zu message(s) after it",
		        mstr(json_object_array_get_idx(c->msgs, i - 1), "content") ?: "", n - i);
		json_object_array_del_idx(c->msgs, i - 1, n - i + 1);
		chat_save(c);
	} else if (!strcmp(cmd, "save")) {
		char *path = NULL;
		_cleanup_free_ char *name = bdirs_real(c->d, arg);

		if (*name && conv_resolve(c->d->data, name, &path, &err) < 0) {
			ui_error(&c->ui, "%%save: %s", err.msg);
			return 1;
		}
		if (path) {
			free(c->conv_path);
			c->conv_path = path;
		}
		if (!json_object_array_length(c->msgs)) {
			ui_note(&c->ui, "nothing to save yet");
			return 0;
		}
		chat_save(c);
		{
			_cleanup_free_ char *shown = bdirs_shown(c->d, c->conv_path);
			ui_note(&c->ui, "saved to %s", shown);
		}
	} else if (!strcmp(cmd, "load")) {
		char *path = NULL;
		json_object *msgs = NULL;
		_cleanup_free_ char *name = bdirs_real(c->d, arg);

		if ((*name ? conv_resolve(c->d->data, name, &path, &err)
		          : conv_latest(c->d->data, &path, &err)) < 0 ||
		    conv_load(path, &msgs, &err) < 0) {
			ui_error(&c->ui, "%%load: %s", err.msg);
			free(path);
			return 1;
		}
		json_object_put(c->msgs);
		c->msgs = msgs;
		free(c->conv_path);
		c->conv_path = path;
		chat_close_session(c);
		chat_show_conversation(c);
		{
			_cleanup_free_ char *shown = bdirs_shown(c->d, path);
			ui_note(&c->ui, "loaded %zu messages from %s (code state from then is not "
			        "restored)", json_object_array_length(msgs), shown);
		}
	} else if (!strcmp(cmd, "tokens")) {
		_cleanup_free_ char *sys = chat_system_message(c);

		ui_note(&c->ui, "~%zu tokens in %zu messages, + ~%zu for the system message; the "
		        "context window is %ld tokens (about 4 characters each)",
		        conv_tokens(c->msgs), json_object_array_length(c->msgs),
		        conv_tokens_str(sys), c->context_window);
	} else if (!strcmp(cmd, "profile") && !strncmp(arg, "save", 4) &&
	           (arg[4] == '\0' || arg[4] == ' ')) {
		const char *name = arg + 4;

		while (*name == ' ')
			name++;
		return *name && chat_open_session(c) < 0 ? 1 : chat_profile_save(c, name);
	} else if (!strcmp(cmd, "allow")) {
		return chat_open_session(c) < 0 ? 1 : chat_allow(c, arg);
	} else if (!strcmp(cmd, "revoke")) {
		return chat_revoke(c);
	} else if (!strcmp(cmd, "profile")) {
		bool ok = false;
		struct sbuf l = { 0 };

		for (uint32_t i = 0; i < c->bc.n_profiles; i++) {
			sbuf_addf(&l, "%s%s", i ? ", " : "", c->bc.profiles[i]);
			if (*arg && !strcmp(arg, c->bc.profiles[i]))
				ok = true;
		}
		if (!*arg) {
			ui_note(&c->ui, "sandbox profile: %s (allowed: %s)", chat_profile_name(c),
			        l.d ? l.d : chat_profile_name(c));
		} else if (!ok) {
			ui_error(&c->ui, "%%profile: \"%s\" is not one of the profiles allowed when "
			         "warden started: %s; to allow it, start warden chat with "
			         "--allow-profile %s", arg, l.d ? l.d : "(none listed)", arg);
			sbuf_free(&l);
			return 1;
		} else {
			chat_close_session(c);
			free(c->profile);
			c->profile = xstrdup(arg);
			ui_note(&c->ui, "sandbox profile: %s; the next block runs in a new jail under it",
			        arg);
		}
		sbuf_free(&l);
	} else if (!strcmp(cmd, "audit")) {
		struct sbuf l = { 0 };

		json_object_object_foreach(c->denied, k, v)
			sbuf_addf(&l, "%s%s ×%lld", l.len ? ", " : "", k,
			          (long long)json_object_get_int64(v));
		if (!l.len)
			ui_note(&c->ui, "nothing was denied in this conversation");
		else
			ui_bad(&c->ui, "denied in this conversation: %s", l.d);
		for (size_t i = 0; i < json_object_array_length(c->audit_ids); i++)
			ui_note(&c->ui, "  details: warden audit --session %s --denied",
			        json_object_get_string(json_object_array_get_idx(c->audit_ids, i)));
		sbuf_free(&l);
	} else if (!strcmp(cmd, "info")) {
		chat_info(c);
	} else if (!strcmp(cmd, "jupyter")) {
		return chat_jupyter(c, arg) < 0 ? 1 : 0;
	} else if (!strcmp(cmd, "verbose")) {
		c->verbose = !c->verbose;
		ui_note(&c->ui, "verbose %s", c->verbose ? "on" : "off");
	} else {
		ui_error(&c->ui, "unknown command %%%s: %%help lists them", cmd);
		return 2;
	}
	return 0;
}

