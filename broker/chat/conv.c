/* Conversations on disk and the token estimate. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "core/broker.h"
#include "conv.h"
#include "core/sanitize.h"
#include "warden/util.h"

#define CONV_FILE_MAX (64u * 1024 * 1024)

char *conv_dir(const char *data)
{
	return xasprintf("%s/conversations", data);
}

char *conv_new_path(const char *data, const char *first)
{
	_cleanup_free_ char *dir = conv_dir(data);
	char slug[48], stamp[32];
	size_t n = 0;
	bool dash = false;
	time_t now = time(NULL);
	struct tm tm;

	for (const char *p = first ? first : ""; *p && n < 40; p++) {
		if (isalnum((unsigned char)*p)) {
			if (dash && n)
				slug[n++] = '-';
			slug[n++] = (char)tolower((unsigned char)*p);
			dash = false;
		} else {
			dash = true;
		}
	}
	slug[n] = '\0';
	if (!n)
		strcpy(slug, "chat");
	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%d_%H-%M-%S", &tm);
	for (int i = 1; i < 1000; i++) {
		char *p = i == 1 ? xasprintf("%s/%s-%s.json", dir, stamp, slug)
		                 : xasprintf("%s/%s-%s-%d.json", dir, stamp, slug, i);
		if (access(p, F_OK) < 0)
			return p;
		free(p);
	}
	return xasprintf("%s/%s-%s-%ld.json", dir, stamp, slug, (long)getpid());
}

static bool has_suffix(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);

	return a >= b && !strcmp(s + a - b, suf);
}

int conv_latest(const char *data, char **path, struct werr *err)
{
	_cleanup_free_ char *dir = conv_dir(data);
	char *best = NULL;
	struct timespec best_t = { 0 };
	DIR *dp;
	struct dirent *de;

	*path = NULL;
	dp = opendir(dir);
	if (!dp)
		return werr_set(err, errno == ENOENT ? 0 : errno, "no saved conversation in %s%s", dir,
		                errno == ENOENT ? " yet" : "");
	while ((de = readdir(dp))) {
		struct stat st;
		_cleanup_free_ char *p = NULL;

		if (de->d_name[0] == '.' || !has_suffix(de->d_name, ".json"))
			continue;
		p = xasprintf("%s/%s", dir, de->d_name);
		if (stat(p, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (!best || st.st_mtim.tv_sec > best_t.tv_sec ||
		    (st.st_mtim.tv_sec == best_t.tv_sec &&
		     (st.st_mtim.tv_nsec > best_t.tv_nsec ||
		      (st.st_mtim.tv_nsec == best_t.tv_nsec && strcmp(p, best) > 0)))) {
			free(best);
			best = steal_pointer(&p);
			best_t = st.st_mtim;
		}
	}
	closedir(dp);
	if (!best)
		return werr_set(err, 0, "no saved conversation in %s yet", dir);
	*path = best;
	return 0;
}

static bool dotdot(const char *p)
{
	for (const char *s = p; (s = strstr(s, "..")); s += 2)
		if ((s == p || s[-1] == '/') && (s[2] == '\0' || s[2] == '/'))
			return true;
	return false;
}

int conv_resolve(const char *data, const char *name, char **path, struct werr *err)
{
	size_t dl = strlen(data);

	*path = NULL;
	if (!name || !*name)
		return werr_set(err, 0, "no file name given");
	if (dotdot(name))
		return werr_set(err, 0, "%s: '..' is not allowed; conversations live under %s", name, data);
	if (name[0] == '/') {
		if (strncmp(name, data, dl) || name[dl] != '/')
			return werr_set(err, 0, "%s: not under %s (the only place warden chat may write); "
			                "give a name relative to %s/conversations", name, data, data);
		*path = xstrdup(name);
		return 0;
	}
	{
		_cleanup_free_ char *dir = conv_dir(data);

		*path = has_suffix(name, ".json") ? xasprintf("%s/%s", dir, name)
		                                  : xasprintf("%s/%s.json", dir, name);
	}
	return 0;
}

static const char *str_field(json_object *o, const char *k)
{
	json_object *v;

	if (!json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static bool one_of(const char *s, const char *const *set)
{
	for (size_t i = 0; set[i]; i++)
		if (!strcmp(s, set[i]))
			return true;
	return false;
}

int conv_validate(json_object *msgs, struct werr *err)
{
	static const char *const roles[] = { "user", "assistant", "computer", NULL };
	static const char *const types[] = { "message", "code", "console", "image",
	                                     "confirmation", "file", NULL };

	if (!json_object_is_type(msgs, json_type_array))
		return werr_set(err, 0, "not a conversation: the top level must be a JSON array of "
		                "messages {\"role\", \"type\", \"content\"}");
	for (size_t i = 0; i < json_object_array_length(msgs); i++) {
		json_object *m = json_object_array_get_idx(msgs, i), *v;
		const char *role, *type;

		if (!json_object_is_type(m, json_type_object))
			return werr_set(err, 0, "message %zu: not an object", i + 1);
		role = str_field(m, "role");
		type = str_field(m, "type");
		if (!role || !one_of(role, roles))
			return werr_set(err, 0, "message %zu: \"role\" must be user, assistant or computer",
			                i + 1);
		if (!type || !one_of(type, types))
			return werr_set(err, 0, "message %zu: \"type\" must be message, code or console",
			                i + 1);
		if (!json_object_object_get_ex(m, "content", &v) ||
		    !json_object_is_type(v, json_type_string))
			return werr_set(err, 0, "message %zu: \"content\" must be a string", i + 1);
		if (json_object_object_get_ex(m, "format", &v) &&
		    !json_object_is_type(v, json_type_string))
			return werr_set(err, 0, "message %zu: \"format\" must be a string", i + 1);
		if (!strcmp(type, "code") && !str_field(m, "format"))
			return werr_set(err, 0, "message %zu: a code message needs a \"format\" "
			                "(its language)", i + 1);
	}
	return 0;
}

int conv_write_json(const char *path, json_object *obj, const char *what, struct werr *err)
{
	_cleanup_free_ char *dir = xstrdup(path), *tmp = NULL;
	_cleanup_close_ int fd = -1, dfd = -1;
	const char *text;
	char *slash = strrchr(dir, '/');

	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir_p(dir, 0700, err) < 0)
			return -1;
	}
	text = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY |
	                                            JSON_C_TO_STRING_NOSLASHESCAPE);
	tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return werr_set(err, errno, "%s: %s", what, tmp);
	if (write_all(fd, text, strlen(text)) < 0 || write_all(fd, "\n", 1) < 0 || fsync(fd) < 0) {
		werr_set(err, errno, "%s: %s", what, tmp);
		unlink(tmp);
		return -1;
	}
	if (close(steal_fd(&fd)) < 0 || rename(tmp, path) < 0) {
		werr_set(err, errno, "%s: %s", what, path);
		unlink(tmp);
		return -1;
	}
	if (slash && slash != dir) {
		dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0)
			(void)fsync(dfd);
	}
	return 0;
}

int conv_save(const char *path, json_object *msgs, struct werr *err)
{
	return conv_write_json(path, msgs, "saving the conversation", err);
}

void conv_linecol(const char *text, size_t off, int *line, int *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off && text[i]; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

int conv_json_parse(const char *path, const char *text, size_t len, json_object **out,
                    struct werr *err)
{
	json_tokener *tok = json_tokener_new();
	json_object *o;
	enum json_tokener_error e;
	size_t off;
	int line, col;

	*out = NULL;
	o = json_tokener_parse_ex(tok, text, (int)len);
	e = json_tokener_get_error(tok);
	off = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (o && e == json_tokener_success) {
		while (off < len && isspace((unsigned char)text[off]))
			off++;
		if (off == len) {
			*out = o;
			return 0;
		}
	}
	json_object_put(o);
	conv_linecol(text, off, &line, &col);
	return werr_set(err, 0, "%s:%d:%d: %s", path, line, col,
	                e == json_tokener_success ? "unexpected text after the JSON value"
	                : e == json_tokener_continue ? "the file ends too early (a missing } or ]?)"
	                : json_tokener_error_desc(e));
}

int conv_load(const char *path, json_object **msgs, struct werr *err)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	json_object *o;

	*msgs = NULL;
	if (bfile_read(path, CONV_FILE_MAX, &text, &len, err) < 0)
		return werr_wrap(err, "loading the conversation %s", path);
	if (len > CONV_FILE_MAX)
		return werr_set(err, 0, "%s: larger than %u MiB", path, CONV_FILE_MAX >> 20);
	if (conv_json_parse(path, text, len, &o, err) < 0)
		return -1;
	if (conv_validate(o, err) < 0) {
		json_object_put(o);
		return werr_wrap(err, "%s", path);
	}
	*msgs = o;
	return 0;
}

size_t conv_tokens_str(const char *s)
{
	return s ? (strlen(s) + 3) / 4 : 0;
}

size_t conv_tokens(json_object *msgs)
{
	size_t t = 0;

	for (size_t i = 0; i < json_object_array_length(msgs); i++) {
		json_object *m = json_object_array_get_idx(msgs, i);

		t += 4 + conv_tokens_str(str_field(m, "content"));
	}
	return t;
}

json_object *conv_trim(json_object *msgs, size_t budget)
{
	size_t n = json_object_array_length(msgs), start = n, used = 0;
	json_object *out = json_object_new_array();

	while (start > 0) {
		json_object *m = json_object_array_get_idx(msgs, start - 1);
		size_t t = 4 + conv_tokens_str(str_field(m, "content"));

		if (used + t > budget && start < n)
			break;
		used += t;
		start--;
	}
	if (start > 0) {
		/* cut at a user message, so no tool result loses its call */
		size_t s = start;

		while (s < n - 1 && strcmp(str_field(json_object_array_get_idx(msgs, s), "role") ?: "",
		                           "user"))
			s++;
		if (s < n - 1 || !strcmp(str_field(json_object_array_get_idx(msgs, s), "role") ?: "",
		                         "user"))
			start = s;
		else
			while (start < n - 1 &&
			       !strcmp(str_field(json_object_array_get_idx(msgs, start), "role") ?: "",
			               "computer"))
				start++;
	}
	for (size_t i = start; i < n; i++)
		json_object_array_add(out, json_object_get(json_object_array_get_idx(msgs, i)));
	return out;
}
