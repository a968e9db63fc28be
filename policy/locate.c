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

/* ---- the scanner --------------------------------------------------------- */

struct scan {
	struct wsrc *s;
	size_t i;
	char *path;          /* current path, grows */
	size_t plen, pcap;
	struct werr *err;
};

struct member { char *key; size_t koff; };

static void path_set_len(struct scan *sc, size_t len)
{
	sc->plen = len;
	sc->path[len] = '\0';
}

static void path_append(struct scan *sc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void path_append(struct scan *sc, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (sc->plen + (size_t)n + 1 > sc->pcap) {
		sc->pcap = (sc->plen + (size_t)n + 1) * 2;
		sc->path = realloc(sc->path, sc->pcap);
		if (!sc->path)
			abort();
	}
	va_start(ap, fmt);
	vsnprintf(sc->path + sc->plen, sc->pcap - sc->plen, fmt, ap);
	va_end(ap);
	sc->plen += (size_t)n;
}

static void record(struct scan *sc, size_t koff, size_t voff)
{
	struct wsrc *s = sc->s;

	if (s->n_pos == s->cap_pos) {
		s->cap_pos = s->cap_pos ? s->cap_pos * 2 : 64;
		s->pos = realloc(s->pos, s->cap_pos * sizeof(*s->pos));
		if (!s->pos)
			abort();
	}
	s->pos[s->n_pos++] = (struct wpos){ .path = xstrdup(sc->path), .koff = koff, .voff = voff };
}

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

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static void put_utf8(char *buf, size_t *n, unsigned cp)
{
	if (cp < 0x80) {
		buf[(*n)++] = (char)cp;
	} else if (cp < 0x800) {
		buf[(*n)++] = (char)(0xC0 | (cp >> 6));
		buf[(*n)++] = (char)(0x80 | (cp & 0x3F));
	} else if (cp < 0x10000) {
		buf[(*n)++] = (char)(0xE0 | (cp >> 12));
		buf[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
		buf[(*n)++] = (char)(0x80 | (cp & 0x3F));
	} else {
		buf[(*n)++] = (char)(0xF0 | (cp >> 18));
		buf[(*n)++] = (char)(0x80 | ((cp >> 12) & 0x3F));
		buf[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
		buf[(*n)++] = (char)(0x80 | (cp & 0x3F));
	}
}

static int read_hex4(struct scan *sc, unsigned *cp)
{
	const char *t = sc->s->text;
	int k, h;

	*cp = 0;
	for (k = 0; k < 4; k++) {
		if (sc->i >= sc->s->len || (h = hexval((unsigned char)t[sc->i])) < 0)
			return wsrc_err_off(sc->s, sc->i, sc->err,
			                    "\\u needs four hex digits; write e.g. \\u00e9");
		*cp = *cp * 16 + (unsigned)h;
		sc->i++;
	}
	return 0;
}

/* A string at sc->i (the opening quote).  When out is non-NULL, the decoded
 * text is returned there (for keys). */
static int scan_string(struct scan *sc, char **out)
{
	const struct wsrc *s = sc->s;
	size_t start = sc->i, n = 0;
	_cleanup_free_ char *buf = NULL;

	if (out) {
		*out = NULL;
		/* decoding never makes a string longer than its source */
		buf = xmalloc(s->len - start + 1);
	}
	sc->i++;
	for (;;) {
		int c = peek(sc);
		if (c < 0)
			return wsrc_err_off(s, start, sc->err,
			                    "string is not closed; add the closing '\"'");
		if (c == '"')
			break;
		if (c < 0x20)
			return wsrc_err_off(s, sc->i, sc->err,
			                    "control character (code %d) inside a string; "
			                    "write it as an escape such as \\n or \\t", c);
		if (c != '\\') {
			if (buf)
				buf[n++] = (char)c;
			sc->i++;
			continue;
		}
		size_t esc = sc->i;
		sc->i++;
		c = peek(sc);
		static const char esc_in[] = "\"\\/bfnrt", esc_out[] = "\"\\/\b\f\n\r\t";
		const char *e = c > 0 ? strchr(esc_in, c) : NULL;
		if (e) {
			if (buf)
				buf[n++] = esc_out[e - esc_in];
			sc->i++;
			continue;
		}
		if (c != 'u')
			return wsrc_err_off(s, esc, sc->err,
			                    "invalid escape in a string; use \\\" \\\\ \\/ \\b "
			                    "\\f \\n \\r \\t or \\uXXXX");
		sc->i++;
		unsigned cp, lo;
		if (read_hex4(sc, &cp) < 0)
			return -1;
		if (cp >= 0xD800 && cp < 0xDC00 && sc->i + 1 < s->len &&
		    s->text[sc->i] == '\\' && s->text[sc->i + 1] == 'u') {
			size_t save = sc->i;
			sc->i += 2;
			if (read_hex4(sc, &lo) < 0)
				return -1;
			if (lo >= 0xDC00 && lo < 0xE000)
				cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			else
				sc->i = save;
		}
		if (buf) {
			if (cp == 0)
				return wsrc_err_off(s, esc, sc->err,
				                    "\\u0000 (NUL) is not allowed in a policy; remove it");
			put_utf8(buf, &n, cp);
		}
	}
	sc->i++;   /* closing quote */
	if (out) {
		buf[n] = '\0';
		*out = steal_pointer(&buf);
	}
	return 0;
}

static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int scan_number(struct scan *sc)
{
	size_t start = sc->i;

	if (peek(sc) == '-')
		sc->i++;
	if (peek(sc) == '0') {
		sc->i++;
	} else if (is_digit(peek(sc))) {
		while (is_digit(peek(sc)))
			sc->i++;
	} else {
		goto bad;
	}
	if (peek(sc) == '.') {
		sc->i++;
		if (!is_digit(peek(sc)))
			goto bad;
		while (is_digit(peek(sc)))
			sc->i++;
	}
	if (peek(sc) == 'e' || peek(sc) == 'E') {
		sc->i++;
		if (peek(sc) == '+' || peek(sc) == '-')
			sc->i++;
		if (!is_digit(peek(sc)))
			goto bad;
		while (is_digit(peek(sc)))
			sc->i++;
	}
	return 0;
bad:
	return wsrc_err_off(sc->s, start, sc->err,
	                    "malformed number; write e.g. 256, 1.5 or 1e3");
}

static bool word_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_';
}

static int scan_word(struct scan *sc)
{
	static const char *const words[] = { "true", "false", "null" };
	size_t start = sc->i, k;

	while (word_char(peek(sc)))
		sc->i++;
	for (k = 0; k < ARRAY_SIZE(words); k++)
		if (sc->i - start == strlen(words[k]) &&
		    !memcmp(sc->s->text + start, words[k], sc->i - start))
			return 0;
	return wsrc_err_off(sc->s, start, sc->err,
	                    "unexpected \"%.*s\"; a value is a \"string\", a number, "
	                    "true, false, null, a [list] or an {object}",
	                    (int)(sc->i - start > 20 ? 20 : sc->i - start), sc->s->text + start);
}

static int scan_value(struct scan *sc, size_t koff, int depth);

static int cmp_member(const void *a, const void *b)
{
	const struct member *x = a, *y = b;
	int r = strcmp(x->key, y->key);

	if (r)
		return r;
	return x->koff < y->koff ? -1 : x->koff > y->koff;
}

/* Duplicate keys: json-c silently keeps the last one, which would let a
 * careless edit override a limit without anyone noticing. */
static int check_duplicates(struct scan *sc, struct member *m, size_t n)
{
	const struct member *dup = NULL, *first = NULL;
	unsigned line, col;
	size_t i;

	qsort(m, n, sizeof(*m), cmp_member);
	for (i = 1; i < n; i++) {
		if (strcmp(m[i - 1].key, m[i].key))
			continue;
		/* report the earliest second occurrence in the file */
		if (!dup || m[i].koff < dup->koff) {
			dup = &m[i];
			first = &m[i - 1];
			while (first > m && !strcmp((first - 1)->key, m[i].key))
				first--;
		}
	}
	if (!dup)
		return 0;
	wsrc_linecol(sc->s, first->koff, &line, &col);
	return wsrc_err_off(sc->s, dup->koff, sc->err,
	                    "duplicate key \"%s\" (first at line %u); remove one of them",
	                    dup->key, line);
}

static int scan_object(struct scan *sc, int depth)
{
	struct member *m = NULL;
	size_t n = 0, cap = 0, base = sc->plen, k;
	int r = -1;

	sc->i++;   /* '{' */
	skip_ws(sc);
	if (peek(sc) == '}') {
		sc->i++;
		return 0;
	}
	for (;;) {
		char *key = NULL;
		size_t koff;

		skip_ws(sc);
		koff = sc->i;
		if (peek(sc) != '"') {
			wsrc_err_off(sc->s, sc->i, sc->err, peek(sc) == '\'' ?
			             "keys must be in double quotes, not single quotes; write \"key\"" :
			             "expected a key in double quotes; write e.g. \"name\": \"mine\"");
			goto out;
		}
		if (scan_string(sc, &key) < 0)
			goto out;
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			m = realloc(m, cap * sizeof(*m));
			if (!m)
				abort();
		}
		m[n++] = (struct member){ .key = key, .koff = koff };
		skip_ws(sc);
		if (peek(sc) != ':') {
			wsrc_err_off(sc->s, sc->i, sc->err, "expected ':' after the key; write \"key\": value");
			goto out;
		}
		sc->i++;
		skip_ws(sc);
		path_append(sc, base ? ".%s" : "%s", key);
		if (scan_value(sc, koff, depth + 1) < 0)
			goto out;
		path_set_len(sc, base);
		skip_ws(sc);
		if (peek(sc) == '}') {
			sc->i++;
			break;
		}
		if (peek(sc) != ',') {
			wsrc_err_off(sc->s, sc->i, sc->err, "expected ',' or '}' after the value; "
			             "separate members with commas");
			goto out;
		}
		size_t comma = sc->i++;
		skip_ws(sc);
		if (peek(sc) == '}') {
			wsrc_err_off(sc->s, comma, sc->err, "trailing comma before '}'; remove the comma");
			goto out;
		}
	}
	r = check_duplicates(sc, m, n);
out:
	for (k = 0; k < n; k++)
		free(m[k].key);
	free(m);
	return r;
}

static int scan_array(struct scan *sc, int depth)
{
	size_t base = sc->plen, idx = 0;

	sc->i++;   /* '[' */
	skip_ws(sc);
	if (peek(sc) == ']') {
		sc->i++;
		return 0;
	}
	for (;;) {
		skip_ws(sc);
		path_append(sc, "[%zu]", idx++);
		if (scan_value(sc, sc->i, depth + 1) < 0)
			return -1;
		path_set_len(sc, base);
		skip_ws(sc);
		if (peek(sc) == ']') {
			sc->i++;
			return 0;
		}
		if (peek(sc) != ',')
			return wsrc_err_off(sc->s, sc->i, sc->err, "expected ',' or ']' after the "
			                    "list element; separate elements with commas");
		size_t comma = sc->i++;
		skip_ws(sc);
		if (peek(sc) == ']')
			return wsrc_err_off(sc->s, comma, sc->err,
			                    "trailing comma before ']'; remove the comma");
	}
}

static int scan_value(struct scan *sc, size_t koff, int depth)
{
	int c = peek(sc);

	if (depth > SCAN_MAX_DEPTH)
		return wsrc_err_off(sc->s, sc->i, sc->err,
		                    "nested too deeply; a policy needs at most 3 levels");
	record(sc, koff, sc->i);
	if (c == '{')
		return scan_object(sc, depth);
	if (c == '[')
		return scan_array(sc, depth);
	if (c == '"')
		return scan_string(sc, NULL);
	if (c == '-' || is_digit(c))
		return scan_number(sc);
	if (c == '\'')
		return wsrc_err_off(sc->s, sc->i, sc->err,
		                    "strings must be in double quotes, not single quotes; write \"text\"");
	if (c < 0)
		return wsrc_err_off(sc->s, sc->i, sc->err,
		                    "the file ends where a value was expected; complete it");
	return scan_word(sc);
}

static int scan_text(struct wsrc *s, struct werr *err)
{
	struct scan sc = { .s = s, .err = err };
	int r;

	sc.pcap = 64;
	sc.path = xmalloc(sc.pcap);
	path_set_len(&sc, 0);
	skip_ws(&sc);
	r = scan_value(&sc, sc.i, 0);
	if (r == 0) {
		skip_ws(&sc);
		if (sc.i < s->len)
			r = wsrc_err_off(s, sc.i, err, "unexpected text after the end of the policy; "
			                 "a policy file holds exactly one JSON object");
	}
	free(sc.path);
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
