/* Plain JSON with bounds (jstrict.h).  Pure: no I/O. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "jstrict.h"

static int perr(char *errbuf, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int perr(char *errbuf, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errlen) {
		va_start(ap, fmt);
		vsnprintf(errbuf, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* ---- the plain-JSON scanner ---- */

struct scan {
	const char *p;
	size_t len, off;
	int max_depth;
	const char *what;   /* set on failure */
};

static void scan_ws(struct scan *sc)
{
	while (sc->off < sc->len && (sc->p[sc->off] == ' ' || sc->p[sc->off] == '\t' ||
	                             sc->p[sc->off] == '\r' || sc->p[sc->off] == '\n'))
		sc->off++;
}

static bool scan_fail(struct scan *sc, const char *what)
{
	sc->what = what;
	return false;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool scan_string(struct scan *sc)
{
	sc->off++;   /* the opening quote */
	while (sc->off < sc->len) {
		unsigned char c = (unsigned char)sc->p[sc->off];
		if (c == '"') {
			sc->off++;
			return true;
		}
		if (c < 0x20)
			return scan_fail(sc, "a raw control character in a string (escape it)");
		if (c == '\\') {
			if (++sc->off >= sc->len)
				break;
			c = (unsigned char)sc->p[sc->off];
			if (c == 'u') {
				for (int i = 1; i <= 4; i++)
					if (sc->off + (size_t)i >= sc->len || !is_hex(sc->p[sc->off + (size_t)i]))
						return scan_fail(sc, "a bad \\u escape");
				sc->off += 4;
			} else if (!strchr("\"\\/bfnrt", c) || c == '\0') {
				return scan_fail(sc, "a bad escape in a string");
			}
		}
		sc->off++;
	}
	return scan_fail(sc, "an unterminated string");
}

static bool scan_number(struct scan *sc)
{
	const char *p = sc->p;

	if (sc->off < sc->len && p[sc->off] == '-')
		sc->off++;
	if (sc->off >= sc->len || !is_digit(p[sc->off]))
		return scan_fail(sc, "a bad number");
	if (p[sc->off] == '0')
		sc->off++;
	else
		while (sc->off < sc->len && is_digit(p[sc->off]))
			sc->off++;
	if (sc->off < sc->len && p[sc->off] == '.') {
		sc->off++;
		if (sc->off >= sc->len || !is_digit(p[sc->off]))
			return scan_fail(sc, "a bad number (a digit must follow '.')");
		while (sc->off < sc->len && is_digit(p[sc->off]))
			sc->off++;
	}
	if (sc->off < sc->len && (p[sc->off] == 'e' || p[sc->off] == 'E')) {
		sc->off++;
		if (sc->off < sc->len && (p[sc->off] == '+' || p[sc->off] == '-'))
			sc->off++;
		if (sc->off >= sc->len || !is_digit(p[sc->off]))
			return scan_fail(sc, "a bad number (a digit must follow the exponent)");
		while (sc->off < sc->len && is_digit(p[sc->off]))
			sc->off++;
	}
	return true;
}

static bool scan_word(struct scan *sc, const char *w)
{
	size_t n = strlen(w);

	if (sc->len - sc->off < n || memcmp(sc->p + sc->off, w, n))
		return scan_fail(sc, "an unexpected character (JSON has true, false, null, "
		                 "numbers, \"strings\", arrays and objects)");
	sc->off += n;
	return true;
}

static bool scan_value(struct scan *sc, int depth)
{
	char c;

	scan_ws(sc);
	if (sc->off >= sc->len)
		return scan_fail(sc, "the line ends inside a value");
	c = sc->p[sc->off];
	switch (c) {
	case '"':
		return scan_string(sc);
	case 't':
		return scan_word(sc, "true");
	case 'f':
		return scan_word(sc, "false");
	case 'n':
		return scan_word(sc, "null");
	case '[':
	case '{': {
		char close = c == '[' ? ']' : '}';
		if (depth > sc->max_depth)
			return scan_fail(sc, "nesting too deep");
		sc->off++;
		scan_ws(sc);
		if (sc->off < sc->len && sc->p[sc->off] == close) {
			sc->off++;
			return true;
		}
		for (;;) {
			if (c == '{') {
				scan_ws(sc);
				if (sc->off >= sc->len || sc->p[sc->off] != '"')
					return scan_fail(sc, "an object key that is not a \"string\"");
				if (!scan_string(sc))
					return false;
				scan_ws(sc);
				if (sc->off >= sc->len || sc->p[sc->off] != ':')
					return scan_fail(sc, "a missing ':' after an object key");
				sc->off++;
			}
			if (!scan_value(sc, depth + 1))
				return false;
			scan_ws(sc);
			if (sc->off >= sc->len)
				return scan_fail(sc, "the line ends inside a value");
			if (sc->p[sc->off] == close) {
				sc->off++;
				return true;
			}
			if (sc->p[sc->off] != ',')
				return scan_fail(sc, "a missing ',' or closing bracket");
			sc->off++;
		}
	}
	default:
		if (c == '-' || is_digit(c))
			return scan_number(sc);
		return scan_fail(sc, "an unexpected character (JSON has true, false, null, "
		                 "numbers, \"strings\", arrays and objects)");
	}
}

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

int jstrict_parse(const char *s, size_t len, int max_depth, json_object **out, char *errbuf,
                  size_t errlen)
{
	struct scan sc = { .p = s, .len = len, .max_depth = max_depth };
	struct json_tokener *tok;
	enum json_tokener_error jerr;
	json_object *root;
	size_t i, end;

	*out = NULL;
	if (errlen)
		errbuf[0] = '\0';
	if (len > INT32_MAX)
		return perr(errbuf, errlen, "the text is too long (%zu bytes)", len);
	if (!scan_value(&sc, 1))
		return perr(errbuf, errlen, "not JSON: %s at byte %zu", sc.what, sc.off);
	scan_ws(&sc);
	if (sc.off < len)
		return perr(errbuf, errlen, "trailing data after the JSON value at byte %zu "
		            "(one per line)", sc.off);

	/* the scanner counts containers from 1; json-c's depth counts the
	 * same levels and fails past its bound */
	tok = json_tokener_new_ex(max_depth + 1);
	if (!tok)
		return perr(errbuf, errlen, "out of memory");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	root = json_tokener_parse_ex(tok, s, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	if (!root && jerr == json_tokener_continue) {
		/* a bare number at the very end: json-c waits for what follows it;
		 * the scanner has seen the whole text, so a space ends it */
		root = json_tokener_parse_ex(tok, " ", 1);
		jerr = json_tokener_get_error(tok);
		end = len;
	}
	if (!root && jerr != json_tokener_success) {
		if (jerr == json_tokener_continue)
			perr(errbuf, errlen, "not JSON: the line ends inside a value");
		else
			perr(errbuf, errlen, "not JSON: %s at byte %zu", json_tokener_error_desc(jerr),
			     json_tokener_get_parse_end(tok));
		json_tokener_free(tok);
		return -1;
	}
	json_tokener_free(tok);
	for (i = end; i < len; i++)
		if (!is_ws(s[i])) {
			json_object_put(root);
			return perr(errbuf, errlen, "trailing data after the JSON value at byte %zu "
			            "(one per line)", i);
		}
	if (!root) {   /* the text was null */
		*out = NULL;
		return 0;
	}
	*out = root;
	return 0;
}

const char *jstrict_type_name(const json_object *o)
{
	switch (json_object_get_type(o)) {
	case json_type_object: return "an object";
	case json_type_array: return "an array";
	case json_type_string: return "a string";
	case json_type_int:
	case json_type_double: return "a number";
	case json_type_boolean: return "a boolean";
	case json_type_null: return "null";
	}
	return "null";
}
