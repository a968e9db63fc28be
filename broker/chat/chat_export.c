/* warden chat's exports of a saved conversation, without a chat:
 * --export-script (the approved code as a shell script, conv_script.c) and
 * --jupyter (the notebook %jupyter writes, conv_nb.c); and --resume's
 * name to its file. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "chat.h"
#include "chat_int.h"
#include "conv.h"
#include "warden/util.h"

/* --resume's FILE: a path to a file, or a name under the conversations
 * directory; none: the latest. */
int chat_resume_path(const struct bdirs *d, const struct chat_opts *o, const char *name,
                     char **path, struct werr *err)
{
	*path = NULL;
	if (!name)
		return conv_latest(d->data, path, err);
	if (o->resume_path && !strcmp(name, o->resume_path)) {
		*path = xstrdup(name);
		return 0;
	}
	if (strchr(name, '/') || access(name, F_OK) == 0) {
		*path = xstrdup(name);
		return 0;
	}
	return conv_resolve(d->data, name, path, err);
}

int chat_resume_load(struct chat_opts *o, const char *path, json_object **msgs,
                     struct werr *err)
{
	if (o->resume_msgs && o->resume_path && !strcmp(path, o->resume_path)) {
		*msgs = steal_pointer(&o->resume_msgs);
		return 0;
	}
	return conv_load(path, msgs, err);
}

int chat_export_script(const struct bdirs *d, struct chat_opts *o)
{
	struct werr err = { 0 };
	_cleanup_free_ char *path = NULL, *shown = NULL;
	json_object *msgs = NULL;
	int r = 1;

	if (!o->resume_set) {
		chat_bad("--export-script needs the conversation: --resume FILE.json (or --resume for "
		    "the latest)");
		return 2;
	}
	if (chat_resume_path(d, o, o->resume, &path, &err) < 0 ||
	    chat_resume_load(o, path, &msgs, &err) < 0) {
		_cleanup_free_ char *m = bdirs_shown(d, err.msg);

		fprintf(stderr, "warden chat: %s\n", m);
		return 1;
	}
	/* the header names the conversation as the person knows its path */
	shown = bdirs_shown(d, path);
	if (!strcmp(o->export_script, "-")) {
		r = conv_export_script(msgs, shown, "-", &err) < 0 ? 1 : 0;
	} else if (o->export_fd >= 0 && o->export_path &&
	           !strcmp(o->export_path, o->export_script)) {
		_cleanup_free_ char *text = conv_script(msgs, shown);

		if (ftruncate(o->export_fd, 0) < 0 ||
		    write_all(o->export_fd, text, strlen(text)) < 0)
			r = werr_set(&err, errno, "writing %s", o->export_script) < 0 ? 1 : 0;
		else
			r = 0;
	} else {
		r = conv_export_script(msgs, shown, o->export_script, &err) < 0 ? 1 : 0;
	}
	if (r) {
		_cleanup_free_ char *m = bdirs_shown(d, err.msg);

		fprintf(stderr, "warden chat: %s\n", m);
	} else if (strcmp(o->export_script, "-")) {
		fprintf(stderr, "warden chat: wrote %s (run it with: sh %s)\n", o->export_script,
		        o->export_script);
	}
	json_object_put(msgs);
	return r;
}

int chat_export_notebook(const struct bdirs *d, struct chat_opts *o)
{
	struct werr err = { 0 };
	_cleanup_free_ char *path = NULL, *name = NULL, *out = NULL;
	json_object *msgs = NULL, *nb = NULL;
	size_t cells;
	int r = 1;

	if (!o->resume_set) {
		chat_bad("--jupyter needs the conversation: --resume FILE.json (or --resume for the "
		         "latest)");
		return 2;
	}
	if (chat_resume_path(d, o, o->resume, &path, &err) < 0 ||
	    chat_resume_load(o, path, &msgs, &err) < 0)
		goto out;
	nb = conv_notebook(msgs);
	cells = json_object_array_length(json_object_object_get(nb, "cells"));
	if (o->jupyter && !strcmp(o->jupyter, "-")) {
		const char *text = json_object_to_json_string_ext(nb, JSON_C_TO_STRING_PRETTY |
		                                                      JSON_C_TO_STRING_NOSLASHESCAPE);

		if (write_all(STDOUT_FILENO, text, strlen(text)) < 0 ||
		    write_all(STDOUT_FILENO, "\n", 1) < 0)
			werr_set(&err, errno, "writing the notebook to stdout");
		else
			r = 0;
		goto out;
	}
	/* the places %jupyter may write, and no other (SECURITY.md G160) */
	name = bdirs_real(d, o->jupyter ? o->jupyter : "");
	if (conv_notebook_path(d->data, name, path, &out, &err) < 0 ||
	    conv_write_json(out, nb, "writing the notebook", &err) < 0)
		goto out;
	{
		_cleanup_free_ char *shown = bdirs_shown(d, out);

		fprintf(stderr, "warden chat: notebook written: %s (%zu cells; open it with jupyter "
		        "notebook, or copy it where you like)\n", shown, cells);
	}
	r = 0;
out:
	if (r) {
		_cleanup_free_ char *m = bdirs_shown(d, err.msg);

		fprintf(stderr, "warden chat: --jupyter: %s\n", m);
	}
	json_object_put(nb);
	json_object_put(msgs);
	return r;
}
