/* The MCP core's answers (mcp_int.h): a JSON-RPC result or error to the
 * connection, or into its 2025-03-26 batch, which goes out whole when its
 * last request is answered.  Below mcp.c and mcp_run.c, which both answer;
 * it calls neither.  A modern answer carries resultType "complete" and the
 * server's identity in _meta; a legacy one neither (their schemas have no
 * such members). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "mcp_int.h"
#include "warden/util.h"

long mcp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

json_object *mcp_jstr_n(const char *p, size_t n)
{
	struct utf8_tail t = { 0 };
	json_object *o;
	char *buf;
	size_t len;

	if (utf8_valid(p, n))
		return json_object_new_string_len(p, (int)n);
	buf = xmalloc(UTF8_OUT_MAX(n));
	len = utf8_sanitize(&t, (const uint8_t *)p, n, buf);
	len += utf8_finish(&t, buf + len);
	o = json_object_new_string_len(buf, (int)len);
	free(buf);
	return o;
}

/* ---- answers ------------------------------------------------------------ */

void mcp_send(struct mcp_conn *c, json_object *o)
{
	size_t n;
	const char *txt = json_object_to_json_string_length(
		o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);

	if (c && c->send)
		c->send(c->ctx, txt, n);
}

void mcp_batch_release(struct mbatch *bt)
{
	if (--bt->waiting > 0)
		return;
	if (bt->conn && json_object_array_length(bt->answers) > 0)
		mcp_send(bt->conn, bt->answers);
	json_object_put(bt->answers);
	free(bt);
}

/* msg is a whole JSON-RPC response (taken). */
static void deliver(struct mreply *rp, json_object *msg)
{
	if (rp->batch) {
		if (rp->batch->conn)
			json_object_array_add(rp->batch->answers, json_object_get(msg));
		mcp_batch_release(rp->batch);
		rp->batch = NULL;
	} else if (rp->conn) {
		mcp_send(rp->conn, msg);
	}
	json_object_put(msg);
	json_object_put(rp->id);
	rp->id = NULL;
	rp->conn = NULL;
}

void mcp_reply_drop(struct mreply *rp)
{
	if (rp->batch)
		mcp_batch_release(rp->batch);
	json_object_put(rp->id);
	memset(rp, 0, sizeof(*rp));
}

static json_object *envelope(struct mreply *rp)
{
	json_object *msg = json_object_new_object();

	json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
	/* an id that could not be read is left out (schema 2025-11-25 and
	 * 2026-07-28: JSONRPCErrorResponse's id is optional) */
	if (rp->id)
		json_object_object_add(msg, "id", json_object_get(rp->id));
	return msg;
}

void mcp_answer(struct mreply *rp, json_object *result)
{
	json_object *msg = envelope(rp);

	if (rp->modern) {
		struct mcp_conn *c = rp->conn ? rp->conn : rp->batch ? rp->batch->conn : NULL;
		json_object *meta = json_object_new_object();
		/* "complete", unless it is another kind (input_required) */
		if (!json_object_object_get_ex(result, "resultType", NULL))
			json_object_object_add(result, "resultType", json_object_new_string("complete"));
		json_object_object_add(meta, "io.modelcontextprotocol/serverInfo",
		                       c ? mtools_server_info(c->srv) : json_object_new_object());
		json_object_object_add(result, "_meta", meta);
	}
	json_object_object_add(msg, "result", result);
	deliver(rp, msg);
}

void mcp_answer_error(struct mreply *rp, int code, const char *text, json_object *data)
{
	json_object *msg = envelope(rp), *err = json_object_new_object();

	json_object_object_add(err, "code", json_object_new_int(code));
	json_object_object_add(err, "message", mcp_jstr_n(text, strlen(text)));
	if (data)
		json_object_object_add(err, "data", data);
	json_object_object_add(msg, "error", err);
	deliver(rp, msg);
}

void mcp_sup_flush(struct mcp_server *s)
{
	struct werr err = { 0 };

	/* a broken supervisor connection shows as EOF on its next read, where
	 * the transport ends everything */
	if (wconn_flush_all(&s->b->c, &err) < 0)
		fprintf(stderr, "warden-broker: writing to the supervisor: %s\n", err.msg);
}

