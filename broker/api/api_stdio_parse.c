/* The request parser of warden serve --stdio (api_stdio.h).  Pure: no I/O, no
 * supervisor, so that the fuzzer and the unit tests drive it directly.
 *
 * Two passes.  A small scanner of our own enforces plain JSON first: json-c
 * even in strict mode accepts single-quoted keys, NaN, Infinity, "1." and
 * raw control characters in strings.  Then json-c builds the value (strict,
 * with UTF-8 validation), and everything after that is checked here: the
 * value is an object, every key is known for its op, every field has its
 * type and bound, and strings carry no NUL byte (JSON allows "\u0000"). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "api_stdio.h"
#include "warden/proto.h"
#include "warden/util.h"

struct opdef {
	const char *name;
	enum serve_op op;
	const char *fields;   /* the keys it takes besides id and op, space-separated */
};

static const struct opdef ops[] = {
	{ "open", SOP_OPEN, "profile workspace oneshot" },
	{ "run", SOP_RUN, "session language code" },
	{ "interrupt", SOP_INTERRUPT, "session" },
	{ "close", SOP_CLOSE, "session" },
	{ "languages", SOP_LANGUAGES, "" },
	{ "chat", SOP_CHAT, "session message" },
	{ "approve", SOP_APPROVE, "session answer code" },
};

const char *serve_op_name(enum serve_op op)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ops); i++)
		if (ops[i].op == op)
			return ops[i].name;
	return "none";
}

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

void serve_req_free(struct serve_req *req)
{
	if (!req)
		return;
	json_object_put(req->id);
	free(req->profile);
	free(req->workspace);
	free(req->session);
	free(req->language);
	free(req->code);
	free(req->message);
	memset(req, 0, sizeof(*req));
}

/* A name from the request, fit to quote in a one-line message: at most
 * 32 bytes (cut on a UTF-8 boundary), control characters as '?'. */
static const char *shown(char dst[40], const char *src, size_t len)
{
	size_t n = len < 32 ? len : 32, i;

	while (n < len && n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80)
		n--;   /* do not split a sequence */
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)src[i];
		dst[i] = (char)(c < 0x20 || c == 0x7f ? '?' : c);
	}
	dst[n] = '\0';
	return dst;
}

static bool word_in(const char *list, const char *w)
{
	size_t n = strlen(w);
	const char *p = list;

	if (n == 0)
		return false;
	while ((p = strstr(p, w))) {
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return true;
		p += n;
	}
	return false;
}

/* A string field: type, NUL bytes, length.  *out is malloc'd. */
static int get_str(json_object *o, const char *key, bool required, size_t max, char **out,
                   size_t *out_len, const char *opname, char *errbuf, size_t errlen)
{
	json_object *v;
	const char *s;
	size_t n;

	*out = NULL;
	if (out_len)
		*out_len = 0;
	if (!json_object_object_get_ex(o, key, &v)) {
		if (required)
			return perr(errbuf, errlen, "\"%s\" needs the field \"%s\"", opname, key);
		return 0;
	}
	if (!json_object_is_type(v, json_type_string))
		return perr(errbuf, errlen, "field \"%s\" must be a string, not %s", key,
		            json_type_to_name(json_object_get_type(v)));
	s = json_object_get_string(v);
	n = (size_t)json_object_get_string_len(v);
	if (memchr(s, '\0', n))
		return perr(errbuf, errlen, "field \"%s\" contains a NUL byte", key);
	if (n > max)
		return perr(errbuf, errlen, "field \"%s\" is %zu bytes; the limit is %zu", key, n,
		            max);
	if (n == 0 && required)
		return perr(errbuf, errlen, "field \"%s\" is empty", key);
	*out = xmalloc(n + 1);
	memcpy(*out, s, n);
	(*out)[n] = '\0';
	if (out_len)
		*out_len = n;
	return 0;
}

/* ---- the plain-JSON scanner ---- */

struct scan {
	const char *p;
	size_t len, off;
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

	if (depth > SERVE_JSON_DEPTH)
		return scan_fail(sc, "nesting too deep");
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

static int check_id(json_object *id, char *errbuf, size_t errlen)
{
	switch (json_object_get_type(id)) {
	case json_type_int:
		return 0;
	case json_type_double:
		if (!isfinite(json_object_get_double(id)))
			return perr(errbuf, errlen, "\"id\" must be a finite number or a string");
		return 0;
	case json_type_string: {
		size_t n = (size_t)json_object_get_string_len(id);
		if (memchr(json_object_get_string(id), '\0', n))
			return perr(errbuf, errlen, "\"id\" contains a NUL byte");
		if (n > SERVE_ID_MAX)
			return perr(errbuf, errlen, "\"id\" is %zu bytes; the limit is %u", n,
			            SERVE_ID_MAX);
		return 0;
	}
	default:
		return perr(errbuf, errlen, "\"id\" must be a number or a string, not %s",
		            json_type_to_name(json_object_get_type(id)));
	}
}

static int parse_fields(json_object *root, struct serve_req *req, char *errbuf, size_t errlen)
{
	const struct opdef *def = NULL;
	json_object *v;
	const char *opname;
	size_t i;

	if (!json_object_object_get_ex(root, "op", &v))
		return perr(errbuf, errlen, "the request has no \"op\" (one of: open, run, "
		            "interrupt, close, languages, chat, approve)");
	if (!json_object_is_type(v, json_type_string))
		return perr(errbuf, errlen, "\"op\" must be a string, not %s",
		            json_type_to_name(json_object_get_type(v)));
	opname = json_object_get_string(v);
	for (i = 0; i < ARRAY_SIZE(ops); i++)
		if ((size_t)json_object_get_string_len(v) == strlen(ops[i].name) &&
		    !strcmp(opname, ops[i].name))
			def = &ops[i];
	if (!def) {
		char buf[40];
		return perr(errbuf, errlen, "unknown op \"%s\" (one of: open, run, interrupt, "
		            "close, languages, chat, approve)",
		            shown(buf, opname, (size_t)json_object_get_string_len(v)));
	}
	req->op = def->op;

	json_object_object_foreach(root, key, val) {
		(void)val;
		if (!strcmp(key, "id") || !strcmp(key, "op") || word_in(def->fields, key))
			continue;
		char buf[40], takes[80] = "id, op";
		size_t n = strlen(takes);
		/* def->fields is space-separated for word_in(); list it with commas */
		for (const char *f = def->fields; *f && n + 3 < sizeof(takes); f++) {
			if (f == def->fields || f[-1] == ' ') {
				takes[n++] = ',';
				takes[n++] = ' ';
			}
			if (*f != ' ')
				takes[n++] = *f;
		}
		takes[n] = '\0';
		return perr(errbuf, errlen, "unknown field \"%s\" in \"%s\" (it takes: %s)",
		            shown(buf, key, strlen(key)), def->name, takes);
	}

	switch (def->op) {
	case SOP_OPEN:
		if (get_str(root, "profile", false, WPROTO_NAME_MAX, &req->profile, NULL,
		            def->name, errbuf, errlen) < 0 ||
		    get_str(root, "workspace", false, WPROTO_PATH_MAX - 1, &req->workspace, NULL,
		            def->name, errbuf, errlen) < 0)
			return -1;
		if (req->workspace && req->workspace[0] != '/')
			return perr(errbuf, errlen, "field \"workspace\" must be an absolute path");
		if (json_object_object_get_ex(root, "oneshot", &v)) {
			if (!json_object_is_type(v, json_type_boolean))
				return perr(errbuf, errlen, "field \"oneshot\" must be true or false, "
				            "not %s", json_type_to_name(json_object_get_type(v)));
			req->oneshot = json_object_get_boolean(v);
		}
		return 0;
	case SOP_RUN:
		if (get_str(root, "session", true, SERVE_SESSION_MAX, &req->session, NULL,
		            def->name, errbuf, errlen) < 0 ||
		    get_str(root, "language", true, WPROTO_NAME_MAX, &req->language, NULL,
		            def->name, errbuf, errlen) < 0)
			return -1;
		if (!json_object_object_get_ex(root, "code", &v))
			return perr(errbuf, errlen, "\"run\" needs the field \"code\"");
		if (json_object_is_type(v, json_type_string) &&
		    (size_t)json_object_get_string_len(v) > WPROTO_CODE_MAX)
			return perr(errbuf, errlen, "field \"code\" is %zu bytes; the limit is %u "
			            "(split the block)", (size_t)json_object_get_string_len(v),
			            WPROTO_CODE_MAX);
		/* empty code is allowed: it runs nothing and gives a result */
		if (!json_object_is_type(v, json_type_string))
			return perr(errbuf, errlen, "field \"code\" must be a string, not %s",
			            json_type_to_name(json_object_get_type(v)));
		return get_str(root, "code", false, WPROTO_CODE_MAX, &req->code, &req->code_len,
		               def->name, errbuf, errlen);
	case SOP_INTERRUPT:
	case SOP_CLOSE:
		return get_str(root, "session", true, SERVE_SESSION_MAX, &req->session, NULL,
		               def->name, errbuf, errlen);
	case SOP_CHAT:
		return get_str(root, "session", true, SERVE_SESSION_MAX, &req->session, NULL,
		               def->name, errbuf, errlen) < 0 ? -1 :
		       get_str(root, "message", true, SERVE_MESSAGE_MAX, &req->message, NULL,
		               def->name, errbuf, errlen);
	case SOP_APPROVE: {
		char *answer = NULL;

		if (get_str(root, "session", true, SERVE_SESSION_MAX, &req->session, NULL,
		            def->name, errbuf, errlen) < 0 ||
		    get_str(root, "answer", true, 8, &answer, NULL, def->name, errbuf, errlen) < 0)
			return -1;
		req->yes = !strcmp(answer, "yes");
		if (!req->yes && strcmp(answer, "no")) {
			free(answer);
			return perr(errbuf, errlen, "field \"answer\" must be \"yes\" or \"no\"");
		}
		free(answer);
		if (json_object_object_get_ex(root, "code", &v)) {
			if (!req->yes)
				return perr(errbuf, errlen, "\"code\" (the edited block) goes with "
				            "\"answer\":\"yes\" only");
			return get_str(root, "code", true, WPROTO_CODE_MAX, &req->code, &req->code_len,
			               def->name, errbuf, errlen);
		}
		return 0;
	}
	case SOP_LANGUAGES:
	case SOP_NONE:
		return 0;
	}
	return 0;
}

int serve_parse_request(const char *line, size_t len, struct serve_req *req, char *errbuf,
                        size_t errlen)
{
	struct json_tokener *tok = NULL;
	json_object *root = NULL, *id;
	enum json_tokener_error jerr;
	size_t i, end;
	int r = -1;

	memset(req, 0, sizeof(*req));
	if (errlen)
		errbuf[0] = '\0';
	for (i = 0; i < len; i++)
		if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
			break;
	if (i == len)
		return 1;
	if (len > SERVE_LINE_MAX)
		return perr(errbuf, errlen, "the request is %zu bytes; the limit is %u", len,
		            SERVE_LINE_MAX);
	if (len > INT32_MAX)
		return perr(errbuf, errlen, "the request is too long");

	{
		struct scan sc = { .p = line, .len = len };
		if (!scan_value(&sc, 1))
			return perr(errbuf, errlen, "not JSON: %s at byte %zu", sc.what, sc.off);
		scan_ws(&sc);
		if (sc.off < len)
			return perr(errbuf, errlen, "trailing data after the JSON value at byte %zu "
			            "(one request per line)", sc.off);
		sc.off = 0;
		scan_ws(&sc);
		if (line[sc.off] != '{')
			return perr(errbuf, errlen, "a request must be a JSON object, not %s",
			            line[sc.off] == '[' ? "an array" : line[sc.off] == '"' ? "a string" :
			            line[sc.off] == 'n' ? "null" :
			            line[sc.off] == 't' || line[sc.off] == 'f' ? "a boolean" : "a number");
	}
	tok = json_tokener_new_ex(SERVE_JSON_DEPTH + 1);
	if (!tok)
		return perr(errbuf, errlen, "out of memory");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	root = json_tokener_parse_ex(tok, line, (int)len);
	jerr = json_tokener_get_error(tok);
	if (!root) {
		if (jerr == json_tokener_continue)
			perr(errbuf, errlen, "not JSON: the line ends inside a value");
		else if (jerr == json_tokener_success)
			perr(errbuf, errlen, "a request must be a JSON object, not null");
		else
			perr(errbuf, errlen, "not JSON: %s at byte %zu",
			     json_tokener_error_desc(jerr), json_tokener_get_parse_end(tok));
		goto out;
	}
	end = json_tokener_get_parse_end(tok);
	for (i = end; i < len; i++)
		if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r') {
			perr(errbuf, errlen, "trailing data after the JSON value at byte %zu "
			     "(one request per line)", i);
			goto out;
		}
	if (!json_object_is_type(root, json_type_object)) {
		perr(errbuf, errlen, "a request must be a JSON object, not %s",
		     json_type_to_name(json_object_get_type(root)));
		goto out;
	}
	/* the id first: a later error is still matched to its request */
	if (json_object_object_get_ex(root, "id", &id)) {
		if (check_id(id, errbuf, errlen) < 0)
			goto out;
		req->id = json_object_get(id);
	} else {
		perr(errbuf, errlen, "the request has no \"id\" (a number or a string that "
		     "its events will carry)");
		goto out;
	}
	r = parse_fields(root, req, errbuf, errlen);
out:
	json_object_put(root);
	json_tokener_free(tok);
	if (r < 0) {
		/* keep the id, drop the rest */
		json_object *keep = req->id;
		req->id = NULL;
		serve_req_free(req);
		req->id = keep;
	}
	return r;
}
