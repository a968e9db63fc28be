/* /mcp: MCP over Streamable HTTP, the modern revision (docs/mcp.md,
 * docs/serve.md "Listening"), on the MCP core of mcp.h.
 *
 * Stateless: each POST carries one JSON-RPC message (or a 2025-03-26
 * batch) and is one MCP connection of the core, freed with its answer; a
 * session lives on by its handle, 128 random bits only its client knows
 * (SECURITY.md G213).  The answer is application/json, or, for a
 * tools/call of a client that accepts text/event-stream, a stream of
 * server-sent events that ends with the answer.  A POST that holds no
 * request (notifications, responses) gets 202 and no body.
 *
 * The token was checked before this file sees the request (listen.c);
 * here, before the body is read: POST only, no Origin (a browser's page
 * has no business here: DNS rebinding), a JSON content type, a
 * Content-Length within MCP_LINE_MAX.  The body then goes to the core's
 * decoder, which answers whatever is malformed. */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "listen_int.h"
#include "mcp.h"
#include "serve_opts.h"
#include "warden/util.h"
#include "warden/version.h"

static bool hdr_has(struct lws *wsi, enum lws_token_indexes t, const char *needle)
{
	char v[512];
	int n = lws_hdr_total_length(wsi, t);

	if (n <= 0 || n >= (int)sizeof(v) || lws_hdr_copy(wsi, v, sizeof(v), t) < 0)
		return false;
	for (char *p = v; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	return strstr(v, needle) != NULL;
}

static void queue_reset(struct conn *cn)
{
	while (cn->head) {
		struct outmsg *m = cn->head;
		cn->head = m->next;
		free(m);
	}
	cn->tail = NULL;
	cn->queued = 0;
}

void lmcp_end(struct conn *cn)
{
	if (cn->mc) {
		mcp_conn_free(cn->mc);   /* a call still running is interrupted */
		cn->mc = NULL;
	}
	queue_reset(cn);
	free(cn->in);
	cn->in = NULL;
	cn->in_len = cn->in_cap = 0;
	cn->mcp = cn->sse = cn->sse_ok = cn->head_sent = cn->final_queued = false;
	cn->answered = cn->request = cn->in_skip = false;
}

/* An answer with no MCP in it; the transaction ends. */
static int plain(struct conn *cn, unsigned status, const char *body)
{
	struct lws *wsi = cn->wsi;

	lmcp_end(cn);
	if (listen_respond(wsi, status, body) < 0)
		return -1;
	return lws_http_transaction_completed(wsi) ? -1 : 0;
}

int lmcp_request(struct blisten *l, struct conn *cn, struct lws *wsi)
{
	char len[32];
	long long n = -1;

	lmcp_end(cn);
	cn->l = l;
	cn->wsi = wsi;
	if (!lws_hdr_total_length(wsi, WSI_TOKEN_POST_URI))
		return plain(cn, 405, "405: /mcp takes POST (the modern revision of Streamable HTTP "
		             "is stateless: no GET stream, no DELETE)\n");
	if (lws_hdr_total_length(wsi, WSI_TOKEN_ORIGIN) > 0)
		return plain(cn, 403, "403: a request with an Origin (a browser's page) is refused\n");
	if (!l->mcp)
		return plain(cn, 503, "503: MCP is not available on this server\n");
	if (!hdr_has(wsi, WSI_TOKEN_HTTP_CONTENT_TYPE, "application/json"))
		return plain(cn, 415, "415: the body is one JSON-RPC message: Content-Type: "
		             "application/json\n");
	if (lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH) > 0 &&
	    lws_hdr_copy(wsi, len, sizeof(len), WSI_TOKEN_HTTP_CONTENT_LENGTH) > 0)
		n = strtoll(len, NULL, 10);
	if (n <= 0)
		return plain(cn, 411, "411: a POST to /mcp needs a Content-Length and a body\n");
	if (n > (long long)MCP_LINE_MAX)
		return plain(cn, 413, "413: a message is at most 2097152 bytes\n");
	cn->mcp = true;
	cn->sse_ok = hdr_has(wsi, WSI_TOKEN_HTTP_ACCEPT, "text/event-stream");
	return 0;
}

int lmcp_body(struct conn *cn, const char *in, size_t len)
{
	if (!cn->mcp || cn->in_skip)
		return 0;
	if (cn->in_len + len > MCP_LINE_MAX) {
		cn->in_skip = true;   /* the length lied: never held */
		return 0;
	}
	listen_take(cn, in, len);
	return 0;
}

/* What the body asks, seen before the core decodes it: does it hold a
 * request (an answer will come), and is one a tools/call (which may
 * stream)?  Malformed bodies are the core's to answer: it does at once. */
static void peek(const char *body, size_t len, bool *request, bool *call)
{
	struct json_tokener *tok = json_tokener_new_ex(MCP_JSON_DEPTH);
	json_object *root = tok ? json_tokener_parse_ex(tok, body, (int)len) : NULL;
	size_t n;

	*request = *call = false;
	if (root && json_object_is_type(root, json_type_object)) {
		n = 1;
	} else if (root && json_object_is_type(root, json_type_array)) {
		n = json_object_array_length(root);
	} else {
		n = 0;
	}
	for (size_t i = 0; i < n; i++) {
		json_object *m = json_object_is_type(root, json_type_array)
		                 ? json_object_array_get_idx(root, i) : root, *id, *method;

		if (!json_object_is_type(m, json_type_object) ||
		    !json_object_object_get_ex(m, "method", &method) ||
		    !json_object_object_get_ex(m, "id", &id) || json_object_is_type(id, json_type_null))
			continue;
		*request = true;
		if (json_object_is_type(method, json_type_string) &&
		    !strcmp(json_object_get_string(method), "tools/call"))
			*call = true;
	}
	json_object_put(root);
	if (tok)
		json_tokener_free(tok);
}

/* One text from the core: its answer (final), or a notification on the
 * way (an SSE event; dropped for a JSON answer). */
static void lmcp_send(void *ctx, const char *json, size_t len)
{
	struct conn *cn = ctx;
	struct outmsg *m;
	json_object *o = json_tokener_parse(json), *v;   /* the core's own text */
	bool final = !o || json_object_is_type(o, json_type_array) ||
	             !json_object_object_get_ex(o, "method", &v);

	json_object_put(o);
	if (cn->final_queued || (!final && !cn->sse))
		return;
	m = xmalloc(sizeof(*m) + LWS_PRE + len);
	m->next = NULL;
	m->len = len;
	memcpy(m->buf + LWS_PRE, json, len);
	if (cn->tail)
		cn->tail->next = m;
	else
		cn->head = m;
	cn->tail = m;
	cn->queued += len;
	if (final)
		cn->final_queued = true;
	lws_callback_on_writable(cn->wsi);
}

int lmcp_body_done(struct conn *cn)
{
	bool call;

	if (!cn->mcp)
		return 0;
	if (cn->in_skip)
		return plain(cn, 413, "413: a message is at most 2097152 bytes\n");
	peek(cn->in ? cn->in : "", cn->in_len, &cn->request, &call);
	cn->sse = cn->sse_ok && call;
	cn->mc = mcp_conn_new(cn->l->mcp, 0, lmcp_send, cn);
	mcp_conn_line(cn->mc, cn->in ? cn->in : "", cn->in_len);
	free(cn->in);
	cn->in = NULL;
	cn->in_len = cn->in_cap = 0;
	if (!cn->final_queued && !cn->request)   /* notifications only: accepted */
		return plain(cn, 202, "");
	if (cn->sse)
		lws_callback_on_writable(cn->wsi);   /* the stream starts now */
	return 0;
}

static int write_head(struct conn *cn)
{
	unsigned char buf[LWS_PRE + 512], *start = buf + LWS_PRE, *p = start,
	              *end = buf + sizeof(buf) - 1;
	struct lws *wsi = cn->wsi;

	if (cn->sse) {
		if (lws_add_http_common_headers(wsi, 200, "text/event-stream",
		                                LWS_ILLEGAL_HTTP_CONTENT_LEN, &p, end) ||
		    lws_add_http_header_by_name(wsi, (const unsigned char *)"cache-control:",
		                                (const unsigned char *)"no-cache", 8, &p, end) ||
		    lws_add_http_header_by_name(wsi, (const unsigned char *)"transfer-encoding:",
		                                (const unsigned char *)"chunked", 7, &p, end))
			return -1;
	} else if (lws_add_http_common_headers(wsi, 200, "application/json", cn->head->len, &p,
	                                       end)) {
		return -1;
	}
	if (lws_finalize_write_http_header(wsi, start, &p, end))
		return -1;
	cn->head_sent = true;
	return 0;
}

int lmcp_writable(struct conn *cn)
{
	struct lws *wsi = cn->wsi;
	struct outmsg *m;

	if (!cn->mcp)
		return 0;
	if (!cn->head_sent) {
		if (!cn->sse && !cn->final_queued)
			return 0;   /* a JSON answer waits for its length */
		if (write_head(cn) < 0)
			return -1;
		lws_callback_on_writable(wsi);
		return 0;
	}
	m = cn->head;
	if (!m)
		return 0;
	cn->head = m->next;
	if (!cn->head)
		cn->tail = NULL;
	cn->queued -= m->len;
	if (!cn->sse) {
		int w = lws_write(wsi, m->buf + LWS_PRE, m->len, LWS_WRITE_HTTP_FINAL);

		free(m);
		if (w < 0)
			return -1;
		lmcp_end(cn);
		return lws_http_transaction_completed(wsi) ? -1 : 0;
	}
	{
		/* one event in one chunk: "event: message", the text, a blank line */
		bool last = cn->final_queued && !cn->head;
		char *ev = xasprintf("%zx\r\nevent: message\ndata: %.*s\n\n\r\n%s",
		                     m->len + 23, (int)m->len, (const char *)m->buf + LWS_PRE,
		                     last ? "0\r\n\r\n" : "");
		size_t n = strlen(ev);
		unsigned char *out = xmalloc(LWS_PRE + n);
		int w;

		memcpy(out + LWS_PRE, ev, n);
		w = lws_write(wsi, out + LWS_PRE, n, last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP);
		free(out);
		free(ev);
		free(m);
		if (w < 0)
			return -1;
		if (last) {
			lmcp_end(cn);
			return lws_http_transaction_completed(wsi) ? -1 : 0;
		}
		if (cn->head)
			lws_callback_on_writable(wsi);
	}
	return 0;
}

static int frame_hook(void *ctx, const struct wmsg *m)
{
	return mcp_server_frame(ctx, m);
}

int lmcp_start(struct blisten *l, const struct serve_opts *o, struct werr *err)
{
	struct mcp_opts mo = { .server_version = WARDEN_VERSION,
	                       .idle_ms = o->session_idle_s * 1000u };

	l->mcp = mcp_server_new(serve_bclient(l->s), &mo);
	if (mcp_server_start(l->mcp, err) < 0) {
		mcp_server_free(l->mcp);
		l->mcp = NULL;
		return werr_wrap(err, "/mcp");
	}
	serve_set_frame_hook(l->s, frame_hook, l->mcp);
	/* the core opened a session for the facts its tools quote; over HTTP
	 * nobody owns it, and it would hold one of --max-sessions from the
	 * start: a call without a handle opens its own */
	mcp_server_close_untaken(l->mcp);
	return 0;
}

void lmcp_free(struct blisten *l)
{
	if (l->mcp)
		mcp_server_free(l->mcp);
	l->mcp = NULL;
}
