/* What listen.c and listen_mcp.c share (listen.h has the broker's view). */
#ifndef BROKER_API_LISTEN_INT_H
#define BROKER_API_LISTEN_INT_H

#include <libwebsockets.h>
#include <stdbool.h>
#include <stddef.h>

#include "listen_auth.h"
#include "serve.h"

struct mcp_server;
struct mcp_conn;
struct serve_opts;

#define TLS_FILE_MAX (1u << 20)
#define CONN_QUEUE_MAX (64u << 20)   /* events a client has not read: then it is dropped */
#define ACCEPT_PAUSE_US 200000       /* out of fds: stop accepting this long */

struct outmsg {
	struct outmsg *next;
	size_t len;
	unsigned char buf[];             /* LWS_PRE, then len bytes */
};

/* One network connection (lws's per-session data): a WebSocket on /ws,
 * or one HTTP request on /mcp at a time. */
struct conn {
	struct blisten *l;
	struct lws *wsi;
	struct sclient *c;               /* /ws: its client of the serve protocol */
	struct outmsg *head, *tail;
	size_t queued;
	char *in;                        /* a message (/ws) or a body (/mcp) being read */
	size_t in_len, in_cap;
	bool in_skip, in_binary, dead;
	/* /mcp: the request's MCP connection, and how its answer goes out */
	struct mcp_conn *mc;
	bool mcp, sse, sse_ok, head_sent, final_queued, answered, request;
};

struct blisten {
	struct lws_context *ctx;
	struct lws_vhost *vh;
	struct lauth auth;
	bool tls;
	char *cert, *key;
	size_t cert_len, key_len;
	struct serve *s;
	int listen_fd;
	struct lws *listen_wsi;
	int sup_dup, wake_dup, listen_dup;
	lws_sorted_usec_list_t sul_tick, sul_accept;
	struct mcp_server *mcp;          /* /mcp: the MCP core over the same supervisor */
	bool quit;
	int rc;
};


/* listen_http.c: n more bytes of a message or body in cn->in, grown as it
 * comes (a connection holds what it sent, never a whole maximum) */
void listen_take(struct conn *cn, const char *in, size_t n);
/* listen_http.c: an answer of status with a plain-text body (0, or -1:
 * drop the connection) */
int listen_respond(struct lws *wsi, unsigned status, const char *body);

/* listen_mcp.c: /mcp, MCP over Streamable HTTP (the modern revision:
 * stateless POSTs, answered with JSON or, for a tools/call of a client
 * that accepts it, server-sent events) */
int lmcp_start(struct blisten *l, const struct serve_opts *o, struct werr *err);
void lmcp_free(struct blisten *l);
int lmcp_request(struct blisten *l, struct conn *cn, struct lws *wsi);   /* headers read */
int lmcp_body(struct conn *cn, const char *in, size_t len);
int lmcp_body_done(struct conn *cn);
int lmcp_writable(struct conn *cn);
void lmcp_end(struct conn *cn);

#endif
