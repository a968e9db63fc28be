/* A conversation as a Jupyter notebook, and the list of saved
 * conversations (conv.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "conv.h"
#include "core/lmc.h"
#include "warden/util.h"

/* ---- the notebook ---- */

/* nbformat stores text as a list of lines, each with its newline. */
static json_object *nb_lines(const char *s)
{
	json_object *a = json_object_new_array();

	while (*s) {
		const char *e = strchr(s, '\n');
		size_t n = e ? (size_t)(e - s) + 1 : strlen(s);

		json_object_array_add(a, json_object_new_string_len(s, (int)n));
		s += n;
	}
	return a;
}

static json_object *nb_cell(const char *type, int n, const char *source)
{
	json_object *c = json_object_new_object();
	char id[24];

	snprintf(id, sizeof(id), "warden-%d", n);
	json_object_object_add(c, "cell_type", json_object_new_string(type));
	json_object_object_add(c, "id", json_object_new_string(id));
	json_object_object_add(c, "metadata", json_object_new_object());
	json_object_object_add(c, "source", nb_lines(source));
	if (!strcmp(type, "code")) {
		json_object_object_add(c, "execution_count", NULL);
		json_object_object_add(c, "outputs", json_object_new_array());
	}
	return c;
}

/* The cell magic that runs lang in a Python kernel ("" for python). */
static const char *cell_magic(const char *lang, char *buf, size_t sz)
{
	static const struct { const char *names, *magic; } map[] = {
		{ "|python|py|python3|", "" },
		{ "|shell|sh|bash|zsh|", "%%bash\n" },
		{ "|javascript|js|node|nodejs|", "%%script node\n" },
		{ "|ruby|rb|", "%%script ruby\n" },
		{ "|perl|", "%%script perl\n" },
		{ "|r|", "%%script Rscript\n" },
		{ "|html|", "%%html\n" },
	};
	char key[40];

	snprintf(key, sizeof(key), "|%.32s|", lang);
	for (char *p = key; *p; p++)
		*p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
	for (size_t i = 0; i < ARRAY_SIZE(map); i++)
		if (strstr(map[i].names, key))
			return map[i].magic;
	/* a language name is the model's text: keep only a plain word */
	if (!*lang || strspn(lang, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-_") !=
	                  strlen(lang))
		return "";
	snprintf(buf, sz, "%%%%script %.32s\n", lang);
	return buf;
}

static void add_output(json_object *cell, json_object *m)
{
	json_object *outs = NULL, *o = json_object_new_object();
	const char *type = lmc_str(m, "type"), *fmt = lmc_str(m, "format");
	const char *content = lmc_str(m, "content");
	const char *mime = !strcmp(fmt, "base64.png") ? "image/png"
	                   : !strcmp(fmt, "base64.jpeg") || !strcmp(fmt, "base64.jpg") ? "image/jpeg"
	                   : !strcmp(fmt, "html") ? "text/html" : NULL;

	json_object_object_get_ex(cell, "outputs", &outs);
	if (mime && (!strcmp(type, "image") || !strcmp(fmt, "html"))) {
		json_object *data = json_object_new_object();

		json_object_object_add(o, "output_type", json_object_new_string("display_data"));
		json_object_object_add(data, mime, mime[0] == 'i' ? json_object_new_string(content)
		                                                  : nb_lines(content));
		json_object_object_add(data, "text/plain",
		                       json_object_new_string(mime[0] == 'i' ? "<image>" : "<html>"));
		json_object_object_add(o, "data", data);
		json_object_object_add(o, "metadata", json_object_new_object());
	} else {
		json_object_object_add(o, "output_type", json_object_new_string("stream"));
		json_object_object_add(o, "name", json_object_new_string("stdout"));
		json_object_object_add(o, "text", nb_lines(content));
	}
	json_object_array_add(outs, o);
}

json_object *conv_notebook(json_object *msgs)
{
	json_object *nb = json_object_new_object(), *cells = json_object_new_array();
	json_object *meta = json_object_new_object(), *ks = json_object_new_object();
	json_object *li = json_object_new_object(), *code = NULL;
	size_t n = json_object_is_type(msgs, json_type_array) ? json_object_array_length(msgs) : 0;
	int id = 0;

	for (size_t i = 0; i < n; i++) {
		json_object *m = json_object_array_get_idx(msgs, i);
		const char *role = lmc_str(m, "role"), *type = lmc_str(m, "type");
		const char *content = lmc_str(m, "content");

		if (!strcmp(role, "user") && !strcmp(type, "message")) {
			_cleanup_free_ char *t = xasprintf("**User:** %s", content);

			json_object_array_add(cells, nb_cell("markdown", ++id, t));
			code = NULL;
		} else if (!strcmp(role, "assistant") && !strcmp(type, "message")) {
			if (*content)
				json_object_array_add(cells, nb_cell("markdown", ++id, content));
			code = NULL;
		} else if (!strcmp(role, "assistant") && !strcmp(type, "code")) {
			char buf[64];
			const char *lang = lmc_str(m, "format");
			_cleanup_free_ char *src = xasprintf("%s%s", cell_magic(lang, buf, sizeof(buf)),
			                                     content);
			json_object *wm = json_object_new_object(), *cm;

			code = nb_cell("code", ++id, src);
			json_object_object_get_ex(code, "metadata", &cm);
			json_object_object_add(wm, "language", json_object_new_string(lang));
			json_object_object_add(cm, "warden", wm);
			json_object_array_add(cells, code);
		} else if (!strcmp(role, "computer") && code) {
			add_output(code, m);
		}
	}
	json_object_object_add(nb, "cells", cells);
	json_object_object_add(ks, "name", json_object_new_string("python3"));
	json_object_object_add(ks, "display_name", json_object_new_string("Python 3"));
	json_object_object_add(ks, "language", json_object_new_string("python"));
	json_object_object_add(li, "name", json_object_new_string("python"));
	json_object_object_add(meta, "kernelspec", ks);
	json_object_object_add(meta, "language_info", li);
	json_object_object_add(nb, "metadata", meta);
	json_object_object_add(nb, "nbformat", json_object_new_int(4));
	json_object_object_add(nb, "nbformat_minor", json_object_new_int(5));
	return nb;
}

static bool ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);

	return a >= b && !strcmp(s + a - b, suf);
}

int conv_notebook_path(const char *data, const char *name, const char *conv_path, char **path,
                       struct werr *err)
{
	_cleanup_free_ char *stem = NULL;

	*path = NULL;
	if (name && *name) {
		size_t dl = strlen(data);

		for (const char *s = name; (s = strstr(s, "..")); s += 2)
			if ((s == name || s[-1] == '/') && (s[2] == '\0' || s[2] == '/'))
				return werr_set(err, 0, "%s: '..' is not allowed; give a name, and the "
				                "notebook goes to the data directory's notebooks/", name);
		if (name[0] == '/' && (strncmp(name, data, dl) || name[dl] != '/'))
			return werr_set(err, 0, "%s: not under %s/, the only place warden chat may "
			                "write; give a name (it goes to its notebooks/) and copy the "
			                "file from there", name, data);
		stem = name[0] == '/' ? xstrdup(name) : xasprintf("%s/notebooks/%s", data, name);
	} else if (conv_path) {
		const char *b = strrchr(conv_path, '/');
		size_t l;

		b = b ? b + 1 : conv_path;
		l = strlen(b);
		if (ends_with(b, ".json"))
			l -= 5;
		stem = xasprintf("%s/notebooks/%.*s", data, (int)l, b);
	} else {
		char stamp[32];
		time_t now = time(NULL);
		struct tm tm;

		localtime_r(&now, &tm);
		strftime(stamp, sizeof(stamp), "%Y-%m-%d_%H-%M-%S", &tm);
		stem = xasprintf("%s/notebooks/%s-chat", data, stamp);
	}
	*path = ends_with(stem, ".ipynb") ? xstrdup(stem) : xasprintf("%s.ipynb", stem);
	return 0;
}

/* ---- the list of saved conversations ---- */

static int by_mtime_desc(const void *a, const void *b)
{
	const struct conv_entry *x = a, *y = b;

	if (x->mtime != y->mtime)
		return x->mtime < y->mtime ? 1 : -1;
	return strcmp(y->path, x->path);
}

int conv_list(const char *data, struct conv_entry **out, size_t *n, struct werr *err)
{
	_cleanup_free_ char *dir = conv_dir(data);
	struct conv_entry *v = NULL;
	size_t cnt = 0, cap = 0;
	DIR *dp;
	struct dirent *de;

	*out = NULL;
	*n = 0;
	dp = opendir(dir);
	if (!dp) {
		if (errno == ENOENT)
			return 0;
		return werr_set(err, errno, "reading %s", dir);
	}
	while ((de = readdir(dp))) {
		_cleanup_free_ char *p = NULL;
		struct stat st;
		json_object *msgs = NULL;
		struct werr lerr = { 0 };
		const char *first = NULL;

		if (de->d_name[0] == '.' || !ends_with(de->d_name, ".json"))
			continue;
		p = xasprintf("%s/%s", dir, de->d_name);
		if (stat(p, &st) < 0 || !S_ISREG(st.st_mode) || conv_load(p, &msgs, &lerr) < 0)
			continue;
		for (size_t i = 0; i < json_object_array_length(msgs) && !first; i++) {
			json_object *m = json_object_array_get_idx(msgs, i);

			if (!strcmp(lmc_str(m, "role"), "user"))
				first = lmc_str(m, "content");
		}
		if (cnt == cap) {
			struct conv_entry *nv;

			cap = cap ? cap * 2 : 16;
			nv = xmalloc(cap * sizeof(*v));
			if (cnt)
				memcpy(nv, v, cnt * sizeof(*v));
			free(v);
			v = nv;
		}
		v[cnt].path = steal_pointer(&p);
		v[cnt].mtime = st.st_mtime;
		v[cnt].n_msgs = json_object_array_length(msgs);
		v[cnt].first = first ? xstrdup(first) : NULL;
		cnt++;
		json_object_put(msgs);
	}
	closedir(dp);
	if (cnt)
		qsort(v, cnt, sizeof(*v), by_mtime_desc);
	*out = v;
	*n = cnt;
	return 0;
}

void conv_list_free(struct conv_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(e[i].path);
		free(e[i].first);
	}
	free(e);
}
