/* config.json for warden chat (see config.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "conv.h"
#include "core/sanitize.h"
#include "warden/util.h"

#define CONFIG_MAX (1u << 20)

static const char *const known_keys =
	"model, api_base, auto_run, vision, sandbox_profile, system_message, system_message_append, "
	"max_output, context_window, profiles";

void chat_settings_init(struct chat_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->auto_run = -1;
	s->vision = -1;
}

void chat_settings_free(struct chat_settings *s)
{
	free(s->model);
	free(s->api_base);
	free(s->sandbox_profile);
	free(s->system_message);
	free(s->system_message_append);
	chat_settings_init(s);
}

static void set_str(char **dst, const char *src)
{
	if (src) {
		free(*dst);
		*dst = xstrdup(src);
	}
}

void chat_settings_merge(struct chat_settings *base, const struct chat_settings *over)
{
	set_str(&base->model, over->model);
	set_str(&base->api_base, over->api_base);
	set_str(&base->sandbox_profile, over->sandbox_profile);
	set_str(&base->system_message, over->system_message);
	set_str(&base->system_message_append, over->system_message_append);
	if (over->auto_run >= 0)
		base->auto_run = over->auto_run;
	if (over->vision >= 0)
		base->vision = over->vision;
	if (over->max_output > 0)
		base->max_output = over->max_output;
	if (over->context_window > 0)
		base->context_window = over->context_window;
}

/* Where "key" appears as a key at or after from: the best guess of where
 * an error is, since json-c keeps no positions once parsed. */
static size_t key_offset(const char *text, size_t len, size_t from, const char *key)
{
	size_t kl = strlen(key);

	for (size_t i = from; i + kl + 2 <= len; i++) {
		size_t j;

		if (text[i] != '"' || strncmp(text + i + 1, key, kl) || text[i + kl + 1] != '"')
			continue;
		for (j = i + kl + 2; j < len && isspace((unsigned char)text[j]); j++)
			;
		if (j < len && text[j] == ':')
			return i;
	}
	return from;
}

static int where(const char *path, const char *text, size_t len, size_t from, const char *key,
                 struct werr *err, const char *what)
{
	int line, col;
	_cleanup_free_ char *k = wsan_str(key, strlen(key));

	conv_linecol(text, key_offset(text, len, from, key), &line, &col);
	return werr_set(err, 0, "%s:%d:%d: \"%s\" %s", path, line, col, k, what);
}

static int parse_obj(const char *path, const char *text, size_t len, size_t from,
                     json_object *o, bool top, const char *pname, struct chat_settings *s,
                     struct werr *err)
{
	json_object_object_foreach(o, key, v) {
		char **str = !strcmp(key, "model") ? &s->model
		             : !strcmp(key, "api_base") ? &s->api_base
		             : !strcmp(key, "sandbox_profile") ? &s->sandbox_profile
		             : !strcmp(key, "system_message") ? &s->system_message
		             : !strcmp(key, "system_message_append") ? &s->system_message_append
		             : NULL;
		long *num = !strcmp(key, "max_output") ? &s->max_output
		            : !strcmp(key, "context_window") ? &s->context_window : NULL;

		if (str) {
			if (!json_object_is_type(v, json_type_string))
				return where(path, text, len, from, key, err, "must be a string");
			set_str(str, json_object_get_string(v));
		} else if (num) {
			int64_t n = json_object_get_int64(v);

			if (!json_object_is_type(v, json_type_int) || n <= 0 || n > 100000000)
				return where(path, text, len, from, key, err,
				             "must be a positive whole number");
			*num = (long)n;
		} else if (!strcmp(key, "auto_run") || !strcmp(key, "vision")) {
			if (!json_object_is_type(v, json_type_boolean))
				return where(path, text, len, from, key, err, "must be true or false");
			*(!strcmp(key, "vision") ? &s->vision : &s->auto_run) = json_object_get_boolean(v);
		} else if (top && !strcmp(key, "profiles")) {
			if (!json_object_is_type(v, json_type_object))
				return where(path, text, len, from, key, err,
				             "must be an object: {\"NAME\": {\"model\": ...}}");
			json_object_object_foreach(v, pn, pv) {
				if (!json_object_is_type(pv, json_type_object))
					return where(path, text, len, from, pn, err,
					             "(a chat profile) must be an object of settings");
			}
		} else {
			char what[WERR_MSG_MAX];

			snprintf(what, sizeof(what), "is not a setting%s%s%s; the known keys are: %s%s. "
			         "Fix the name or remove it",
			         pname ? " (in the profile \"" : "", pname ? pname : "", pname ? "\")" : "",
			         known_keys, top ? "" : " (but not profiles)");
			return where(path, text, len, from, key, err, what);
		}
	}
	return 0;
}

int config_parse(const char *path, const char *text, size_t len, const char *profile,
                 struct chat_settings *out, struct werr *err)
{
	json_object *root = NULL, *profs, *p;
	struct chat_settings top, ps;
	int rc = -1;

	chat_settings_init(out);
	chat_settings_init(&top);
	chat_settings_init(&ps);
	if (conv_json_parse(path, text, len, &root, err) < 0)
		return -1;
	if (!json_object_is_type(root, json_type_object)) {
		werr_set(err, 0, "%s:1:1: the configuration must be a JSON object {\"model\": ...}", path);
		goto out;
	}
	if (parse_obj(path, text, len, 0, root, true, NULL, &top, err) < 0)
		goto out;
	/* every profile is checked, not only the one in use */
	if (json_object_object_get_ex(root, "profiles", &profs)) {
		size_t pfrom = key_offset(text, len, 0, "profiles");

		json_object_object_foreach(profs, pn, pv) {
			struct chat_settings tmp;
			size_t from = key_offset(text, len, pfrom, pn);

			chat_settings_init(&tmp);
			rc = parse_obj(path, text, len, from, pv, false, pn, &tmp, err);
			chat_settings_free(&tmp);
			if (rc < 0)
				goto out;
			rc = -1;
		}
	}
	if (profile) {
		if (!json_object_object_get_ex(root, "profiles", &profs) ||
		    !json_object_object_get_ex(profs, profile, &p)) {
			struct sbuf names = { 0 };

			if (json_object_object_get_ex(root, "profiles", &profs)) {
				json_object_object_foreach(profs, pn, pv) {
					(void)pv;
					sbuf_addf(&names, "%s%s", names.len ? ", " : "", pn);
				}
			}
			werr_set(err, 0, "no chat profile \"%s\" in %s (%s%s)", profile, path,
			         names.len ? "it has: " : "it defines none under \"profiles\"",
			         names.len ? names.d : "");
			sbuf_free(&names);
			goto out;
		}
		if (parse_obj(path, text, len, key_offset(text, len, 0, profile), p, false, profile,
		              &ps, err) < 0)
			goto out;
	}
	chat_settings_merge(out, &top);
	chat_settings_merge(out, &ps);
	rc = 0;
out:
	json_object_put(root);
	chat_settings_free(&top);
	chat_settings_free(&ps);
	if (rc < 0)
		chat_settings_free(out);
	return rc;
}

int config_load(const char *config_dir, const char *profile, struct chat_settings *out,
                struct werr *err)
{
	_cleanup_free_ char *path = xasprintf("%s/config.json", config_dir), *text = NULL;
	size_t len;

	chat_settings_init(out);
	if (read_file_buf(path, CONFIG_MAX, &text, &len, err) < 0) {
		if (err->errnum == ENOENT) {
			werr_clear(err);
			if (profile)
				return werr_set(err, 0, "no chat profile \"%s\": %s does not exist",
				                profile, path);
			return 0;
		}
		return -1;
	}
	if (len > CONFIG_MAX)
		return werr_set(err, 0, "%s: larger than 1 MiB", path);
	return config_parse(path, text, len, profile, out, err);
}
