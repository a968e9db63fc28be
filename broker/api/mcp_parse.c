/* The MCP message decoder (mcp_parse.h).  Pure: no I/O.
 *
 * Order of the checks, so that an error is answered to its request whenever
 * the request had a usable id: plain JSON with bounds (core/jstrict.c), the
 * JSON-RPC envelope (jsonrpc, id, method, no other member), then the era
 * (params._meta), then the method's params, then a tool's arguments, each
 * against the inputSchema tools/list publishes (mcp_tools.c). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mcp_parse.h"
#include "core/jstrict.h"
#include "warden/proto.h"
#include "warden/util.h"

#define MCP_SAFE_INT 9007199254740991LL   /* 2^53 - 1: ids a JSON client keeps exactly */
#define MCP_METHOD_MAX 128

static const char *const legacy_versions[] = { MCP_LEGACY_VERSIONS };

struct methoddef {
	const char *name;
	enum mcp_method method;
	enum mcp_kind kind;
};

static const struct methoddef methods[] = {
	{ "initialize", MCP_M_INITIALIZE, MCP_K_REQUEST },
	{ "ping", MCP_M_PING, MCP_K_REQUEST },
	{ "server/discover", MCP_M_DISCOVER, MCP_K_REQUEST },
	{ "tools/list", MCP_M_TOOLS_LIST, MCP_K_REQUEST },
	{ "tools/call", MCP_M_TOOLS_CALL, MCP_K_REQUEST },
	{ "notifications/initialized", MCP_M_INITIALIZED, MCP_K_NOTIFICATION },
	{ "notifications/cancelled", MCP_M_CANCELLED, MCP_K_NOTIFICATION },
};

static const char *const tools[] = {
	[MCP_T_NONE] = "",
	[MCP_T_RUN_CODE] = "run_code",
	[MCP_T_OPEN_SESSION] = "open_session",
	[MCP_T_CLOSE_SESSION] = "close_session",
};

const char *mcp_method_name(enum mcp_method m)
{
	for (size_t i = 0; i < ARRAY_SIZE(methods); i++)
		if (methods[i].method == m)
			return methods[i].name;
	return "unknown";
}

const char *mcp_tool_name(enum mcp_tool t)
{
	return (size_t)t < ARRAY_SIZE(tools) ? tools[t] : "";
}

bool mcp_legacy_version(const char *v)
{
	for (size_t i = 0; i < ARRAY_SIZE(legacy_versions); i++)
		if (!strcmp(v, legacy_versions[i]))
			return true;
	return false;
}

static int fail(struct mcp_error *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct mcp_error *e, int code, const char *fmt, ...)
{
	va_list ap;

	e->code = code;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -1;
}

/* A name from the message, fit to quote in a one-line message: at most 32
 * bytes (cut on a UTF-8 boundary), control characters as '?'; dst holds 33. */
static const char *shown(char *dst, const char *src, size_t len)
{
	size_t n = len < 32 ? len : 32, i;

	while (n < len && n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80)
		n--;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)src[i];
		dst[i] = (char)(c < 0x20 || c == 0x7f ? '?' : c);
	}
	dst[n] = '\0';
	return dst;
}

void mcp_msg_free(struct mcp_msg *m)
{
	if (!m)
		return;
	json_object_put(m->id);
	json_object_put(m->cancel_id);
	free(m->call.language);
	free(m->call.code);
	free(m->call.session);
	free(m->call.profile);
	free(m->call.workspace);
	free(m->call.request_state);
	json_object_put(m->call.input_responses);
	json_object_put(m->result);
	memset(m, 0, sizeof(*m));
}

int mcp_decode_line(const char *line, size_t len, json_object **root, struct mcp_error *e)
{
	size_t i, n;
	char err[256];

	*root = NULL;
	memset(e, 0, sizeof(*e));
	for (i = 0; i < len; i++)
		if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
			break;
	if (i == len)
		return 1;
	if (len > MCP_LINE_MAX)
		return fail(e, MCP_E_PARSE, "the message is %zu bytes; the limit is %u", len,
		            MCP_LINE_MAX);
	if (jstrict_parse(line, len, MCP_JSON_DEPTH, root, err, sizeof(err)) < 0)
		return fail(e, MCP_E_PARSE, "%s", err);
	if (json_object_is_type(*root, json_type_object))
		return 0;
	if (!json_object_is_type(*root, json_type_array)) {
		fail(e, MCP_E_INVALID_REQUEST, "a message must be a JSON-RPC object, not %s",
		     jstrict_type_name(*root));
		goto bad;
	}
	n = json_object_array_length(*root);
	if (n == 0) {
		fail(e, MCP_E_INVALID_REQUEST, "an empty batch");
		goto bad;
	}
	if (n > MCP_BATCH_MAX) {
		fail(e, MCP_E_INVALID_REQUEST, "a batch of %zu messages; the limit is %u", n,
		     MCP_BATCH_MAX);
		goto bad;
	}
	return 0;
bad:
	json_object_put(*root);
	*root = NULL;
	return -1;
}

/* A request id or a requestId: a string or a safe integer.  what names it. */
static int check_id(json_object *v, const char *what, struct mcp_error *e)
{
	switch (json_object_get_type(v)) {
	case json_type_int: {
		int64_t x = json_object_get_int64(v);
		if (x > MCP_SAFE_INT || x < -MCP_SAFE_INT)
			return fail(e, MCP_E_INVALID_REQUEST, "\"%s\" is beyond 2^53-1; use a smaller "
			            "integer or a string", what);
		return 0;
	}
	case json_type_string: {
		size_t n = (size_t)json_object_get_string_len(v);
		if (memchr(json_object_get_string(v), '\0', n))
			return fail(e, MCP_E_INVALID_REQUEST, "\"%s\" contains a NUL byte", what);
		if (n > MCP_ID_MAX)
			return fail(e, MCP_E_INVALID_REQUEST, "\"%s\" is %zu bytes; the limit is %u",
			            what, n, MCP_ID_MAX);
		return 0;
	}
	case json_type_double:
		return fail(e, MCP_E_INVALID_REQUEST, "\"%s\" must be a string or an integer, not a "
		            "fraction", what);
	default:
		return fail(e, MCP_E_INVALID_REQUEST, "\"%s\" must be a string or an integer, not "
		            "%s", what, jstrict_type_name(v));
	}
}

/* A string member: type, NUL bytes, length, empty.  *out malloc'd. */
static int get_str(json_object *o, const char *key, bool required, size_t max, char **out,
                   size_t *out_len, const char *where, struct mcp_error *e)
{
	json_object *v;
	const char *s;
	size_t n;

	*out = NULL;
	if (out_len)
		*out_len = 0;
	if (!o || !json_object_object_get_ex(o, key, &v)) {
		if (required)
			return fail(e, MCP_E_PARAMS, "%s needs \"%s\"", where, key);
		return 0;
	}
	if (!json_object_is_type(v, json_type_string))
		return fail(e, MCP_E_PARAMS, "\"%s\" of %s must be a string, not %s", key, where,
		            jstrict_type_name(v));
	s = json_object_get_string(v);
	n = (size_t)json_object_get_string_len(v);
	if (memchr(s, '\0', n))
		return fail(e, MCP_E_PARAMS, "\"%s\" of %s contains a NUL byte", key, where);
	if (n > max)
		return fail(e, MCP_E_PARAMS, "\"%s\" of %s is %zu bytes; the limit is %zu", key,
		            where, n, max);
	*out = xmalloc(n + 1);
	memcpy(*out, s, n);
	(*out)[n] = '\0';
	if (out_len)
		*out_len = n;
	return 0;
}

/* A member that must be an object when present. */
static int opt_object(json_object *o, const char *key, const char *where, json_object **out,
                      struct mcp_error *e)
{
	json_object *v = NULL;

	if (out)
		*out = NULL;
	if (!o || !json_object_object_get_ex(o, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_object))
		return fail(e, MCP_E_PARAMS, "\"%s\" of %s must be an object, not %s", key, where,
		            jstrict_type_name(v));
	if (out)
		*out = v;
	return 0;
}

/* Only the keys of list (space-separated) in o. */
static int only_keys(json_object *o, const char *list, const char *where, int code,
                     struct mcp_error *e)
{
	json_object_object_foreach(o, key, val) {
		const char *p = list;
		size_t n = strlen(key);
		bool ok = false;

		(void)val;
		while (n && (p = strstr(p, key))) {
			if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) {
				ok = true;
				break;
			}
			p += n;
		}
		if (!ok) {
			char buf[40];
			return fail(e, code, "unknown member \"%s\" in %s (it takes: %s)",
			            shown(buf, key, n), where, list);
		}
	}
	return 0;
}

/* Elicitation in form mode among capabilities (client/elicitation
 * "Capabilities": an empty object means form mode). */
static bool can_elicit(json_object *caps)
{
	json_object *el;

	if (!caps || !json_object_object_get_ex(caps, "elicitation", &el) ||
	    !json_object_is_type(el, json_type_object))
		return false;
	return !json_object_object_length(el) || json_object_object_get_ex(el, "form", NULL);
}

/* The modern era's per-request _meta (basic/index "_meta"). */
static int decode_meta(json_object *params, struct mcp_msg *m, struct mcp_error *e)
{
	json_object *meta, *v;
	const char *s;
	size_t n;

	if (opt_object(params, "_meta", "params", &meta, e) < 0)
		return -1;
	if (!meta || !json_object_object_get_ex(meta, "io.modelcontextprotocol/protocolVersion", &v))
		return 0;   /* legacy */
	if (!json_object_is_type(v, json_type_string))
		return fail(e, MCP_E_PARAMS, "\"io.modelcontextprotocol/protocolVersion\" must be a "
		            "string, not %s", jstrict_type_name(v));
	s = json_object_get_string(v);
	n = (size_t)json_object_get_string_len(v);
	m->modern = true;
	shown(m->version, s, n > MCP_VERSION_MAX ? MCP_VERSION_MAX : n);
	if (n != strlen(MCP_MODERN_VERSION) || strcmp(s, MCP_MODERN_VERSION)) {
		memcpy(e->requested, m->version, sizeof(e->requested));
		return fail(e, MCP_E_VERSION, "Unsupported protocol version \"%s\": per-request "
		            "_meta speaks %s; the legacy revisions (%s and older) begin with initialize",
		            m->version, MCP_MODERN_VERSION, MCP_LEGACY_LATEST);
	}
	if (!json_object_object_get_ex(meta, "io.modelcontextprotocol/clientCapabilities", &v))
		return fail(e, MCP_E_PARAMS, "params._meta needs "
		            "\"io.modelcontextprotocol/clientCapabilities\" (an object; {} for none)");
	if (!json_object_is_type(v, json_type_object))
		return fail(e, MCP_E_PARAMS, "\"io.modelcontextprotocol/clientCapabilities\" must be "
		            "an object, not %s", jstrict_type_name(v));
	m->elicit = can_elicit(v);
	if (opt_object(meta, "io.modelcontextprotocol/clientInfo", "params._meta", NULL, e) < 0)
		return -1;
	if (json_object_object_get_ex(meta, "io.modelcontextprotocol/logLevel", &v) &&
	    !json_object_is_type(v, json_type_string))
		return fail(e, MCP_E_PARAMS, "\"io.modelcontextprotocol/logLevel\" must be a string");
	return 0;
}

static int decode_run_code(json_object *args, struct mcp_call *c, struct mcp_error *e)
{
	const char *w = "run_code's arguments";
	json_object *v;

	if (only_keys(args, "language code session timeout", w, MCP_E_PARAMS, e) < 0 ||
	    get_str(args, "language", true, WPROTO_NAME_MAX, &c->language, NULL, w, e) < 0 ||
	    get_str(args, "code", true, WPROTO_CODE_MAX, &c->code, &c->code_len, w, e) < 0 ||
	    get_str(args, "session", false, MCP_HANDLE_MAX, &c->session, NULL, w, e) < 0)
		return -1;
	if (!*c->language)
		return fail(e, MCP_E_PARAMS, "\"language\" of %s is empty", w);
	if (c->session && !*c->session)
		return fail(e, MCP_E_PARAMS, "\"session\" of %s is empty (leave it out for this "
		            "connection's session)", w);
	if (json_object_object_get_ex(args, "timeout", &v)) {
		double t;
		if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
			return fail(e, MCP_E_PARAMS, "\"timeout\" of %s must be a number of seconds, "
			            "not %s", w, jstrict_type_name(v));
		t = json_object_get_double(v);
		if (!isfinite(t) || t <= 0 || t > MCP_TIMEOUT_MAX)
			return fail(e, MCP_E_PARAMS, "\"timeout\" of %s must be more than 0 and at most "
			            "%d seconds", w, MCP_TIMEOUT_MAX);
		c->timeout_ms = (uint32_t)(t * 1000.0);
		if (c->timeout_ms == 0)
			c->timeout_ms = 1;
	}
	return 0;
}

static int decode_call(json_object *params, struct mcp_call *c, struct mcp_error *e)
{
	json_object *args = NULL;
	char *name = NULL, buf[40];
	size_t i;

	if (get_str(params, "name", true, MCP_METHOD_MAX, &name, NULL, "tools/call's params", e) < 0)
		return -1;
	for (i = 1; i < ARRAY_SIZE(tools); i++)
		if (!strcmp(name, tools[i]))
			c->tool = (enum mcp_tool)i;
	if (c->tool == MCP_T_NONE) {
		fail(e, MCP_E_PARAMS, "Unknown tool: %s (this server has run_code, open_session, "
		     "close_session)", shown(buf, name, strlen(name)));
		free(name);
		return -1;
	}
	free(name);
	if (opt_object(params, "arguments", "tools/call's params", &args, e) < 0 ||
	    get_str(params, "requestState", false, MCP_STATE_MAX, &c->request_state, NULL,
	            "tools/call's params", e) < 0 ||
	    opt_object(params, "inputResponses", "tools/call's params", &c->input_responses, e) < 0)
		return -1;
	if (c->input_responses)
		json_object_get(c->input_responses);
	switch (c->tool) {
	case MCP_T_RUN_CODE:
		if (!args)
			return fail(e, MCP_E_PARAMS, "run_code needs \"arguments\" with \"language\" "
			            "and \"code\"");
		return decode_run_code(args, c, e);
	case MCP_T_OPEN_SESSION:
		if (!args)
			return 0;
		if (only_keys(args, "profile workspace", "open_session's arguments", MCP_E_PARAMS,
		              e) < 0 ||
		    get_str(args, "profile", false, WPROTO_NAME_MAX, &c->profile, NULL,
		            "open_session's arguments", e) < 0 ||
		    get_str(args, "workspace", false, WPROTO_PATH_MAX - 1, &c->workspace, NULL,
		            "open_session's arguments", e) < 0)
			return -1;
		if (c->profile && !*c->profile)
			return fail(e, MCP_E_PARAMS, "\"profile\" of open_session's arguments is empty");
		if (c->workspace && c->workspace[0] != '/')
			return fail(e, MCP_E_PARAMS, "\"workspace\" of open_session's arguments must be "
			            "an absolute path");
		return 0;
	case MCP_T_CLOSE_SESSION:
		if (!args)
			return fail(e, MCP_E_PARAMS, "close_session needs \"arguments\" with \"session\"");
		if (only_keys(args, "session", "close_session's arguments", MCP_E_PARAMS, e) < 0 ||
		    get_str(args, "session", true, MCP_HANDLE_MAX, &c->session, NULL,
		            "close_session's arguments", e) < 0)
			return -1;
		if (!*c->session)
			return fail(e, MCP_E_PARAMS, "\"session\" of close_session's arguments is empty");
		return 0;
	case MCP_T_NONE:
		break;
	}
	return 0;
}

static int decode_params(json_object *params, struct mcp_msg *m, struct mcp_error *e)
{
	json_object *v;
	char *s = NULL;

	switch (m->method) {
	case MCP_M_INITIALIZE:
		if (!params)
			return fail(e, MCP_E_PARAMS, "initialize needs params with \"protocolVersion\"");
		if (get_str(params, "protocolVersion", true, MCP_VERSION_MAX, &s, NULL,
		            "initialize's params", e) < 0 ||
		    opt_object(params, "capabilities", "initialize's params", &v, e) < 0 ||
		    opt_object(params, "clientInfo", "initialize's params", NULL, e) < 0) {
			free(s);
			return -1;
		}
		snprintf(m->version, sizeof(m->version), "%s", s);
		free(s);
		m->elicit = can_elicit(v);
		return 0;
	case MCP_M_TOOLS_LIST:
		/* one page: no cursor this server gave can come back */
		if (params && json_object_object_get_ex(params, "cursor", &v))
			return fail(e, MCP_E_PARAMS, "invalid cursor: tools/list has one page");
		return 0;
	case MCP_M_TOOLS_CALL:
		if (!params)
			return fail(e, MCP_E_PARAMS, "tools/call needs params with \"name\" and "
			            "\"arguments\"");
		return decode_call(params, &m->call, e);
	case MCP_M_CANCELLED:
		if (!params || !json_object_object_get_ex(params, "requestId", &v))
			return fail(e, MCP_E_PARAMS, "notifications/cancelled needs \"requestId\"");
		if (check_id(v, "requestId", e) < 0)
			return -1;
		m->cancel_id = json_object_get(v);
		if (json_object_object_get_ex(params, "reason", &v) &&
		    !json_object_is_type(v, json_type_string))
			return fail(e, MCP_E_PARAMS, "\"reason\" must be a string");
		return 0;
	case MCP_M_PING:
	case MCP_M_DISCOVER:
	case MCP_M_INITIALIZED:
	case MCP_M_UNKNOWN:
		return 0;
	}
	return 0;
}

int mcp_decode(json_object *msg, struct mcp_msg *m, struct mcp_error *e)
{
	json_object *v, *params = NULL;
	const struct methoddef *def = NULL;
	const char *name;
	size_t n, i;
	char buf[40];
	int r = -1;

	memset(m, 0, sizeof(*m));
	memset(e, 0, sizeof(*e));
	if (!json_object_is_type(msg, json_type_object))
		return fail(e, MCP_E_INVALID_REQUEST, "a message must be a JSON-RPC object, not %s",
		            jstrict_type_name(msg));
	/* the id first: every later error is answered to it */
	if (json_object_object_get_ex(msg, "id", &v)) {
		if (check_id(v, "id", e) < 0)
			return -1;
		m->id = json_object_get(v);
	}
	if (!json_object_object_get_ex(msg, "jsonrpc", &v) ||
	    !json_object_is_type(v, json_type_string) || strcmp(json_object_get_string(v), "2.0")) {
		fail(e, MCP_E_INVALID_REQUEST, "a message needs \"jsonrpc\":\"2.0\"");
		goto out;
	}
	if (!json_object_object_get_ex(msg, "method", &v)) {
		if (json_object_object_get_ex(msg, "result", &v) ||
		    json_object_object_get_ex(msg, "error", NULL)) {
			/* an answer to this server's request (elicitation/create):
			 * its result, when it is an object; anything else says no */
			m->kind = MCP_K_RESPONSE;
			if (json_object_object_get_ex(msg, "result", &v) &&
			    json_object_is_type(v, json_type_object))
				m->result = json_object_get(v);
			r = 0;
			goto out;
		}
		fail(e, MCP_E_INVALID_REQUEST, "a message needs \"method\"");
		goto out;
	}
	if (!json_object_is_type(v, json_type_string)) {
		fail(e, MCP_E_INVALID_REQUEST, "\"method\" must be a string, not %s",
		     jstrict_type_name(v));
		goto out;
	}
	name = json_object_get_string(v);
	n = (size_t)json_object_get_string_len(v);
	m->kind = m->id ? MCP_K_REQUEST : MCP_K_NOTIFICATION;
	if (only_keys(msg, m->id ? "jsonrpc id method params" : "jsonrpc method params",
	              m->id ? "a request" : "a notification", MCP_E_INVALID_REQUEST, e) < 0)
		goto out;
	if (json_object_object_get_ex(msg, "params", &params) &&
	    !json_object_is_type(params, json_type_object)) {
		fail(e, MCP_E_INVALID_REQUEST, "\"params\" must be an object, not %s",
		     jstrict_type_name(params));
		goto out;
	}
	for (i = 0; i < ARRAY_SIZE(methods); i++)
		if (n == strlen(methods[i].name) && !strcmp(name, methods[i].name))
			def = &methods[i];
	if (m->kind == MCP_K_NOTIFICATION) {
		/* unknown notifications are ignored, as are requests sent
		 * without an id (nothing may answer them) */
		if (def && def->kind == MCP_K_NOTIFICATION) {
			m->method = def->method;
			r = decode_params(params, m, e);
		} else {
			r = 0;
		}
		goto out;
	}
	if (decode_meta(params, m, e) < 0)
		goto out;
	if (!def || def->kind != MCP_K_REQUEST) {
		fail(e, MCP_E_METHOD, "Method not found: %s", shown(buf, name, n));
		goto out;
	}
	m->method = def->method;
	if (m->modern && (m->method == MCP_M_INITIALIZE || m->method == MCP_M_PING)) {
		fail(e, MCP_E_METHOD, "Method not found: %s is not part of %s (no handshake; "
		     "send server/discover)", def->name, MCP_MODERN_VERSION);
		goto out;
	}
	if (!m->modern && m->method == MCP_M_DISCOVER) {
		fail(e, MCP_E_PARAMS, "server/discover needs params._meta with "
		     "\"io.modelcontextprotocol/protocolVersion\":\"%s\" and "
		     "\"io.modelcontextprotocol/clientCapabilities\"", MCP_MODERN_VERSION);
		goto out;
	}
	r = decode_params(params, m, e);
out:
	if (r < 0) {
		/* keep the id and the kind, drop the rest */
		json_object *keep = m->id;
		enum mcp_kind kind = m->kind;
		m->id = NULL;
		mcp_msg_free(m);
		m->id = keep;
		m->kind = keep ? MCP_K_REQUEST : kind;
	}
	return r;
}
