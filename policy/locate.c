/* Positions for policy errors.
 *
 * json-c parses the text but forgets where keys and values were, and it is
 * lenient in places (single-quoted strings, NaN, raw newlines in strings,
 * duplicate keys: last one wins).  So after json-c accepts a text, a small
 * scanner of our own walks it again: it enforces plain JSON, rejects
 * duplicate keys, and records where each key and value starts, by path
 * ("limits.memory", "filesystem.read_only[2]").  Semantic checks then look
 * the path up to say FILE:LINE:COL. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "warden/util.h"

#define SCAN_MAX_DEPTH 64

void wsrc_linecol(const struct wsrc *s, size_t off, unsigned *line, unsigned *col)
{
	size_t i;

	*line = 1;
	*col = 1;
	if (off > s->len)
		off = s->len;
	for (i = 0; i < off; i++) {
		unsigned char c = (unsigned char)s->text[i];
		if (c == '\n') {
			(*line)++;
			*col = 1;
		} else if ((c & 0xC0) != 0x80) {
			/* count characters: skip UTF-8 continuation bytes */
			(*col)++;
		}
	}
}

static int verr_off(const struct wsrc *s, size_t off, struct werr *err,
                    const char *fmt, va_list ap)
{
	char msg[WERR_MSG_MAX];
	unsigned line, col;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	wsrc_linecol(s, off, &line, &col);
	return werr_set(err, 0, "%s:%u:%u: %s", s->source, line, col, msg);
}

int wsrc_err_off(const struct wsrc *s, size_t off, struct werr *err, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = verr_off(s, off, err, fmt, ap);
	va_end(ap);
	return r;
}

/* The entry for `path`, or for its nearest recorded parent. */
static const struct wpos *find_pos(const struct wsrc *s, const char *path, bool *exact)
{
	_cleanup_free_ char *p = xstrdup(path);
	size_t i;

	*exact = true;
	for (;;) {
		for (i = 0; i < s->n_pos; i++)
			if (!strcmp(s->pos[i].path, p))
				return &s->pos[i];
		*exact = false;
		if (!*p)
			return NULL;
		/* drop the last component: ".key" or "[n]" */
		char *dot = strrchr(p, '.'), *br = strrchr(p, '[');
		char *cut = dot > br ? dot : br;
		if (!cut)
			cut = p;
		*cut = '\0';
	}
}

static int verr_path(const struct wsrc *s, const char *path, bool key, struct werr *err,
                     const char *fmt, va_list ap)
{
	bool exact;
	const struct wpos *pos = find_pos(s, path, &exact);
	size_t off = 0;

	if (pos)
		/* a missing key is reported at the key of its parent */
		off = (key || !exact) ? pos->koff : pos->voff;
	return verr_off(s, off, err, fmt, ap);
}

int wsrc_err_key(const struct wsrc *s, const char *path, struct werr *err, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = verr_path(s, path, true, err, fmt, ap);
	va_end(ap);
	return r;
}

int wsrc_err_val(const struct wsrc *s, const char *path, struct werr *err, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = verr_path(s, path, false, err, fmt, ap);
	va_end(ap);
	return r;
}

void wsrc_free(struct wsrc *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n_pos; i++)
		free(s->pos[i].path);
	free(s->pos);
	s->pos = NULL;
	s->n_pos = s->cap_pos = 0;
}

/* ---- the position index ---------------------------------------------------
 *
 * Runs only on a text json-c has accepted in strict mode, so the structure
 * is known to be well formed; it does not judge the syntax again.  It checks
 * only what json-c's strict mode lets through (NaN and Infinity, numbers
 * such as "1." or "-01", raw control characters in strings, 'keys' in
 * single quotes, \u0000 in keys), rejects duplicate keys, and records where
 * each key and value starts.  Keys are decoded by json-c itself, so a path
 * names a key exactly as the parsed object does.  Anything unexpected is an
 * error, never a guess: the scan fails closed. */

struct scan {
	struct wsrc *s;
	size_t i;
	struct json_tokener *tok;   /* decodes key literals */
	struct werr *err;
};

static int peek(const struct scan *sc)
{
	return sc->i < sc->s->len ? (unsigned char)sc->s->text[sc->i] : -1;
}

static void skip_ws(struct scan *sc)
{
	int c;

	while ((c = peek(sc)) == ' ' || c == '\t' || c == '\n' || c == '\r')
		sc->i++;
}

static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static bool word_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_';
}

/* Something json-c's strict parse would not have accepted. */
static int unexpected(struct scan *sc)
{
	return wsrc_err_off(sc->s, sc->i, sc->err, "unexpected text; check the JSON syntax here");
}

static void record(struct scan *sc, char *path, size_t koff, size_t voff)
{
	struct wsrc *s = sc->s;

	if (s->n_pos == s->cap_pos) {
		s->cap_pos = s->cap_pos ? s->cap_pos * 2 : 64;
		s->pos = realloc(s->pos, s->cap_pos * sizeof(*s->pos));
		if (!s->pos)
			abort();
	}
	s->pos[s->n_pos++] = (struct wpos){ .path = path, .koff = koff, .voff = voff };
}

/* The string at sc->i (its opening quote); leaves sc->i after it. */
static int skip_string(struct scan *sc, bool key)
{
	const struct wsrc *s = sc->s;

	for (sc->i++; sc->i < s->len && s->text[sc->i] != '"'; sc->i++) {
		unsigned char c = (unsigned char)s->text[sc->i];
		if (c < 0x20)
			return wsrc_err_off(s, sc->i, sc->err,
			                    "control character (code %d) inside a string; "
			                    "write it as an escape such as \\n or \\t", c);
		if (c != '\\')
			continue;
		/* json-c would cut the key short at the NUL */
		if (key && s->len - sc->i >= 6 && !memcmp(s->text + sc->i, "\\u0000", 6))
			return wsrc_err_off(s, sc->i, sc->err,
			                    "\\u0000 (NUL) is not allowed in a policy; remove it");
		sc->i++;   /* the escaped character: \" does not end the string */
	}
	if (sc->i >= s->len)
		return unexpected(sc);
	sc->i++;
	return 0;
}

/* Plain JSON numbers only: json-c also takes "1.", "00" and "-01". */
static bool number_ok(const char *t, size_t n)
{
	size_t i = 0;

	if (i < n && t[i] == '-')
		i++;
	if (i < n && t[i] == '0')
		i++;
	else if (i < n && is_digit(t[i]))
		while (i < n && is_digit(t[i]))
			i++;
	else
		return false;
	if (i < n && t[i] == '.') {
		if (++i >= n || !is_digit(t[i]))
			return false;
		while (i < n && is_digit(t[i]))
			i++;
	}
	if (i < n && (t[i] == 'e' || t[i] == 'E')) {
		if (++i < n && (t[i] == '+' || t[i] == '-'))
			i++;
		if (i >= n || !is_digit(t[i]))
			return false;
		while (i < n && is_digit(t[i]))
			i++;
	}
	return i == n;
}

/* A number, true, false or null; json-c also takes NaN and Infinity. */
static int scan_scalar(struct scan *sc)
{
	const char *t = sc->s->text + sc->i;
	size_t start = sc->i, n;
	int c;

	while ((c = peek(sc)) >= 0 && (word_char(c) || c == '-' || c == '+' || c == '.'))
		sc->i++;
	n = sc->i - start;
	if (n == 0)
		return unexpected(sc);
	if (t[0] == '-' || is_digit(t[0])) {
		if (number_ok(t, n))
			return 0;
		return wsrc_err_off(sc->s, start, sc->err,
		                    "malformed number; write e.g. 256, 1.5 or 1e3");
	}
	if ((n == 4 && !memcmp(t, "true", 4)) || (n == 5 && !memcmp(t, "false", 5)) ||
	    (n == 4 && !memcmp(t, "null", 4)))
		return 0;
	return wsrc_err_off(sc->s, start, sc->err,
	                    "unexpected \"%.*s\"; a value is a \"string\", a number, "
	                    "true, false, null, a [list] or an {object}", (int)(n > 20 ? 20 : n), t);
}

/* The key literal at koff..sc->i, decoded by json-c. */
static char *decode_key(struct scan *sc, size_t koff)
{
	json_object *k;
	char *r = NULL;

	json_tokener_reset(sc->tok);
	k = json_tokener_parse_ex(sc->tok, sc->s->text + koff, (int)(sc->i - koff));
	if (json_object_is_type(k, json_type_string))
		r = xstrdup(json_object_get_string(k));
	json_object_put(k);
	return r;
}

static int scan_value(struct scan *sc, char *path, size_t koff, int depth);

/* An object or a list.  Duplicate keys: json-c silently keeps the last one,
 * which would let a careless edit override a limit without anyone noticing.
 * Reported once the object is scanned (an error inside it comes first), at
 * the earliest second occurrence. */
static int scan_container(struct scan *sc, const char *path, int depth)
{
	bool obj = peek(sc) == '{';
	int close = obj ? '}' : ']', c, r = -1;
	json_object *seen = json_object_new_object();   /* key -> offset of its first use */
	_cleanup_free_ char *dup = NULL;
	size_t dup_off = 0, first_off = 0, idx;

	sc->i++;
	skip_ws(sc);
	if (peek(sc) == close) {
		sc->i++;
		r = 0;
		goto out;
	}
	for (idx = 0;; idx++) {
		_cleanup_free_ char *key = NULL;
		json_object *prev;
		size_t koff;

		skip_ws(sc);
		koff = sc->i;
		if (obj) {
			/* strict json-c still takes 'key' */
			if (peek(sc) == '\'') {
				wsrc_err_off(sc->s, sc->i, sc->err, "keys must be in double quotes, "
				             "not single quotes; write \"key\"");
				goto out;
			}
			if (peek(sc) != '"')
				goto bad;
			if (skip_string(sc, true) < 0)
				goto out;
			if (!(key = decode_key(sc, koff)))
				goto bad;
			if (!json_object_object_get_ex(seen, key, &prev)) {
				json_object_object_add(seen, key, json_object_new_int64((int64_t)koff));
			} else if (!dup) {
				dup = xstrdup(key);
				dup_off = koff;
				first_off = (size_t)json_object_get_int64(prev);
			}
			skip_ws(sc);
			if (peek(sc) != ':')
				goto bad;
			sc->i++;
			skip_ws(sc);
		}
		if (scan_value(sc, obj ? (*path ? xasprintf("%s.%s", path, key) : xstrdup(key))
		                       : xasprintf("%s[%zu]", path, idx),
		               obj ? koff : sc->i, depth + 1) < 0)
			goto out;
		skip_ws(sc);
		c = peek(sc);
		if (c != ',' && c != close)
			goto bad;
		sc->i++;
		if (c == close)
			break;
	}
	r = 0;
	if (dup) {
		unsigned line, col;
		wsrc_linecol(sc->s, first_off, &line, &col);
		r = wsrc_err_off(sc->s, dup_off, sc->err, "duplicate key \"%s\" (first at line %u); "
		                 "remove one of them", dup, line);
	}
	goto out;
bad:
	r = unexpected(sc);
out:
	json_object_put(seen);
	return r;
}

/* `path` (malloc'd) goes into the index. */
static int scan_value(struct scan *sc, char *path, size_t koff, int depth)
{
	int c = peek(sc);

	if (depth > SCAN_MAX_DEPTH) {
		free(path);
		return wsrc_err_off(sc->s, sc->i, sc->err,
		                    "nested too deeply; a policy needs at most 3 levels");
	}
	record(sc, path, koff, sc->i);
	if (c == '{' || c == '[')
		return scan_container(sc, path, depth);
	if (c == '"')
		return skip_string(sc, false);
	return scan_scalar(sc);
}

static int scan_text(struct wsrc *s, struct werr *err)
{
	struct scan sc = { .s = s, .err = err, .tok = json_tokener_new() };
	int r;

	if (!sc.tok)
		return werr_set(err, 0, "%s: out of memory", s->source);
	skip_ws(&sc);
	r = scan_value(&sc, xstrdup(""), sc.i, 0);
	skip_ws(&sc);
	if (r == 0 && sc.i < s->len)
		r = unexpected(&sc);
	json_tokener_free(sc.tok);
	return r;
}

/* ---- json-c -------------------------------------------------------------- */

static size_t prev_nonspace(const struct wsrc *s, size_t off, bool *found)
{
	*found = false;
	while (off > 0) {
		char c = s->text[--off];
		if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			*found = true;
			return off;
		}
	}
	return 0;
}

/* Length of the word at off, at most 20 (the text need not be NUL-terminated). */
static size_t word_len(const struct wsrc *s, size_t off)
{
	size_t n = 0;

	while (off + n < s->len && n < 20 && word_char((unsigned char)s->text[off + n]))
		n++;
	return n;
}

/* A friendlier message for json-c's error at byte `off`. */
static int jsonc_error(const struct wsrc *s, enum json_tokener_error e, size_t off,
                       struct werr *err)
{
	int c = off < s->len ? (unsigned char)s->text[off] : -1;
	bool found;
	size_t prev = prev_nonspace(s, off, &found);
	unsigned pline, pcol, line, col;

	if (c == '/')
		return wsrc_err_off(s, off, err, "comments are not allowed in JSON; remove it "
		                    "(a \"description\" key can hold a note)");
	if ((c == '}' || c == ']') && found && s->text[prev] == ',')
		return wsrc_err_off(s, prev, err, "trailing comma before '%c'; remove the comma", c);
	if (c == '\'')
		return wsrc_err_off(s, off, err,
		                    "strings must be in double quotes, not single quotes; write \"text\"");
	if (e == json_tokener_error_parse_unexpected && off > 0 && off < s->len &&
	    off <= (size_t)INT_MAX) {
		/* Did a whole value end before this?  Then it is trailing text. */
		struct json_tokener *t = json_tokener_new();
		json_object *o = t ? json_tokener_parse_ex(t, s->text, (int)off) : NULL;
		bool complete = o != NULL;
		json_object_put(o);
		json_tokener_free(t);
		if (complete)
			return wsrc_err_off(s, off, err, "unexpected text after the end of the "
			                    "policy; a policy file holds exactly one JSON object");
	}

	switch (e) {
	case json_tokener_error_depth:
		return wsrc_err_off(s, off, err, "nested too deeply; a policy needs at most 3 levels");
	case json_tokener_error_parse_null:
	case json_tokener_error_parse_boolean:
	case json_tokener_error_parse_number:
	case json_tokener_error_parse_eof:
		/* json-c stops after the bad word: point at its start instead */
		while (off > 0 && word_char((unsigned char)s->text[off - 1]))
			off--;
		if (off > 0 && s->text[off - 1] == '-')
			off--;
		return wsrc_err_off(s, off, err, "invalid value; a value is a \"string\", a number, "
		                    "true, false, null, a [list] or an {object}");
	case json_tokener_error_parse_array:
	case json_tokener_error_parse_object_value_sep:
		wsrc_linecol(s, off, &line, &col);
		wsrc_linecol(s, prev, &pline, &pcol);
		if (found && pline < line)
			return wsrc_err_off(s, off, err, "expected ',' or '%c' before this; "
			                    "is a comma missing at the end of line %u?",
			                    e == json_tokener_error_parse_array ? ']' : '}', pline);
		return wsrc_err_off(s, off, err, "expected ',' or '%c' here; separate %s with commas",
		                    e == json_tokener_error_parse_array ? ']' : '}',
		                    e == json_tokener_error_parse_array ? "list elements" : "members");
	case json_tokener_error_parse_object_key_name:
		if (c >= 0 && word_char(c))
			return wsrc_err_off(s, off, err, "keys must be in double quotes; write \"%.*s\"",
			                    (int)word_len(s, off), s->text + off);
		return wsrc_err_off(s, off, err, "expected a key in double quotes; "
		                    "write e.g. \"name\": \"mine\"");
	case json_tokener_error_parse_object_key_sep:
		return wsrc_err_off(s, off, err, "expected ':' after the key; write \"key\": value");
	case json_tokener_error_parse_string:
		/* json-c stops inside the escape: point at its backslash */
		for (size_t k = off; k > 0 && off - k < 6; k--) {
			if (s->text[k - 1] == '\\') {
				off = k - 1;
				break;
			}
		}
		return wsrc_err_off(s, off, err, "invalid escape in a string; use \\\" \\\\ \\/ \\b "
		                    "\\f \\n \\r \\t or \\uXXXX");
	case json_tokener_error_parse_comment:
		return wsrc_err_off(s, off, err, "comments are not allowed in JSON; remove it");
	case json_tokener_error_parse_utf8_string:
		return wsrc_err_off(s, off, err, "invalid UTF-8; save the file as UTF-8");
	case json_tokener_error_parse_unexpected:
		if (c >= 0 && word_char(c)) {
			size_t n = word_len(s, off);
			return wsrc_err_off(s, off, err, "unexpected \"%.*s\"; put text in double "
			                    "quotes, e.g. \"%.*s\"", (int)(n > 20 ? 20 : n), s->text + off,
			                    (int)(n > 20 ? 20 : n), s->text + off);
		}
		if (c > 0x20 && c < 0x7f)
			return wsrc_err_off(s, off, err, "unexpected '%c'; check the JSON syntax here", c);
		return wsrc_err_off(s, off, err, "unexpected character; check the JSON syntax here");
	default:
		return wsrc_err_off(s, off, err, "%s; check the JSON syntax here",
		                    json_tokener_error_desc(e));
	}
}

int wsrc_parse(struct wsrc *s, json_object **out, struct werr *err)
{
	struct json_tokener *tok = NULL;
	json_object *obj = NULL;
	enum json_tokener_error e;
	bool found;
	size_t i, end;
	int r = -1;

	*out = NULL;
	for (i = 0; i < s->len && s->text[i] && strchr(" \t\r\n", s->text[i]); i++)
		;
	if (i == s->len)
		return wsrc_err_off(s, 0, err, "the file is empty; a policy is a JSON object, "
		                    "e.g. {\"name\": \"mine\"}");
	if (s->len > WPOLICY_MAX_FILE)
		return wsrc_err_off(s, 0, err, "the policy is larger than %d bytes; "
		                    "a policy is a small JSON object", WPOLICY_MAX_FILE);
	if (memchr(s->text, '\0', s->len))
		return wsrc_err_off(s, (size_t)((const char *)memchr(s->text, '\0', s->len) - s->text),
		                    err, "NUL byte in the file; save it as plain UTF-8 text");

	tok = json_tokener_new_ex(SCAN_MAX_DEPTH);
	if (!tok)
		return werr_set(err, 0, "%s: out of memory", s->source);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	obj = json_tokener_parse_ex(tok, s->text, (int)s->len);
	e = json_tokener_get_error(tok);
	if (e == json_tokener_continue) {
		end = prev_nonspace(s, s->len, &found) + 1;
		wsrc_err_off(s, end, err, "the file ends before the JSON is complete; "
		             "a closing '}', ']' or '\"' is missing");
		goto out;
	}
	if (e != json_tokener_success || !obj) {
		jsonc_error(s, e, json_tokener_get_parse_end(tok), err);
		goto out;
	}
	if (scan_text(s, err) < 0)
		goto out;
	if (!json_object_is_type(obj, json_type_object)) {
		wsrc_err_off(s, i, err, "the top level must be a JSON object; "
		             "write the policy as {\"name\": ..., \"limits\": {...}}");
		goto out;
	}
	*out = steal_pointer(&obj);
	r = 0;
out:
	json_object_put(obj);
	json_tokener_free(tok);
	return r;
}
