/* The request parser of warden serve --stdio (api_stdio.h).  Pure: no I/O, no
 * supervisor, so that the fuzzer and the unit tests drive it directly.
 *
 * Plain JSON with bounds comes from core/jstrict.c; everything after that
 * is checked here: the value is an object, every key is known for its op,
 * every field has its type and bound, and strings carry no NUL byte (JSON
 * allows "\u0000"). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "api_stdio.h"
#include "core/jstrict.h"
#include "warden/proto.h"
#include "warden/util.h"

struct opdef {
	const char *name;
	enum serve_op op;
	const char *fields;   /* the keys it takes besides id and op, space-separated */
};

static const struct opdef ops[] = {
	{ "open", SOP_OPEN, "profile workspace oneshot learn" },
	{ "run", SOP_RUN, "session language code" },
	{ "interrupt", SOP_INTERRUPT, "session" },
	{ "close", SOP_CLOSE, "session" },
	{ "languages", SOP_LANGUAGES, "" },
	{ "chat", SOP_CHAT, "session message" },
	{ "approve", SOP_APPROVE, "session answer code" },
	{ "widen", SOP_WIDEN, "session ask answer" },
	{ "revoke", SOP_REVOKE, "session" },
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
	free(req->ask);
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

/* The required field "answer": "yes" (true) or "no" (false). */
static int get_answer(json_object *o, bool *yes, const char *opname, char *errbuf, size_t errlen)
{
	char *answer = NULL;

	if (get_str(o, "answer", true, 8, &answer, NULL, opname, errbuf, errlen) < 0)
		return -1;
	*yes = !strcmp(answer, "yes");
	if (!*yes && strcmp(answer, "no")) {
		free(answer);
		return perr(errbuf, errlen, "field \"answer\" must be \"yes\" or \"no\"");
	}
	free(answer);
	return 0;
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
		            "interrupt, close, languages, chat, approve, widen, revoke)");
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
		            "close, languages, chat, approve, widen, revoke)",
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
		if (json_object_object_get_ex(root, "learn", &v)) {
			if (!json_object_is_type(v, json_type_boolean))
				return perr(errbuf, errlen, "field \"learn\" must be true or false, "
				            "not %s", json_type_to_name(json_object_get_type(v)));
			req->learn = json_object_get_boolean(v);
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
	case SOP_WIDEN:
		return get_str(root, "session", true, SERVE_SESSION_MAX, &req->session, NULL,
		               def->name, errbuf, errlen) < 0 ||
		       get_str(root, "ask", true, 32, &req->ask, NULL, def->name, errbuf, errlen) < 0 ||
		       get_answer(root, &req->yes, def->name, errbuf, errlen) < 0 ? -1 : 0;
	case SOP_INTERRUPT:
	case SOP_CLOSE:
	case SOP_REVOKE:
		return get_str(root, "session", true, SERVE_SESSION_MAX, &req->session, NULL,
		               def->name, errbuf, errlen);
	case SOP_CHAT:
		return get_str(root, "session", true, SERVE_SESSION_MAX, &req->session, NULL,
		               def->name, errbuf, errlen) < 0 ? -1 :
		       get_str(root, "message", true, SERVE_MESSAGE_MAX, &req->message, NULL,
		               def->name, errbuf, errlen);
	case SOP_APPROVE: {
		if (get_str(root, "session", true, SERVE_SESSION_MAX, &req->session, NULL,
		            def->name, errbuf, errlen) < 0 ||
		    get_answer(root, &req->yes, def->name, errbuf, errlen) < 0)
			return -1;
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
	json_object *root = NULL, *id;
	size_t i;
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
	if (jstrict_parse(line, len, SERVE_JSON_DEPTH, &root, errbuf, errlen) < 0)
		return -1;
	if (!json_object_is_type(root, json_type_object)) {
		perr(errbuf, errlen, "a request must be a JSON object, not %s",
		     jstrict_type_name(root));
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
	if (r < 0) {
		/* keep the id, drop the rest */
		json_object *keep = req->id;
		req->id = NULL;
		serve_req_free(req);
		req->id = keep;
	}
	return r;
}
