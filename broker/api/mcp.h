/* The MCP server's core (docs/mcp.md): transport-independent.
 *
 * THE SEAM.  A transport (mcp_stdio.c: `warden mcp`; the listener's /mcp)
 * owns the bytes and the event loop; this core owns everything MCP: the
 * decoder (mcp_parse.c), both eras, the tools, the sessions they run in,
 * the calls waiting for the supervisor.  A transport:
 *
 *   1. has a struct bclient (HELLO done, core/client.h) and makes one
 *      struct mcp_server on it: mcp_server_new, then mcp_server_start,
 *      which opens a first session (blocking) for the facts the tools'
 *      descriptions quote (profile, workspace, network, limits, languages);
 *   2. makes one struct mcp_conn per client context: a stdio connection, or
 *      an HTTP request or legacy HTTP session.  MCP_CONN_DEFAULT_SESSION
 *      gives the connection a session of its own for calls without
 *      "session" (stdio: the first one takes the session start opened);
 *      without it, such a call opens a fresh session and names it in
 *      structuredContent.session (modern HTTP: no connection state);
 *   3. feeds it messages: mcp_conn_line(conn, bytes, len), one JSON-RPC
 *      message (or a 2025-03-26 batch) without its newline.  Answers come
 *      back through the conn's send callback, one whole JSON text each
 *      (no newline), possibly later (tools/call answers when its block
 *      ends), possibly from mcp_server_frame or mcp_server_tick;
 *   4. hands every frame read from the supervisor to mcp_server_frame
 *      (1: it was this core's; 0: someone else's, e.g. serve's /ws), and
 *      calls mcp_server_tick when mcp_server_timeout says (call timeouts,
 *      idle sessions);
 *   5. frees a conn when its client is gone (mcp_conn_free: its running
 *      calls are interrupted and never answered, its default session is
 *      closed), and at the end mcp_server_close_all, then waits for
 *      mcp_server_done (every CLOSED came) before mcp_server_free.
 *
 * Shared with other users of the same bclient: b->next_req and
 * b->next_block number every request (so frames route by req, session and
 * block), and frames are queued on b->c.out and flushed at once.
 *
 * Everything a client sends is hostile: a malformed message gets a
 * JSON-RPC error (-32700, -32600, -32601, -32602, -32022) and the server
 * goes on; nothing of it reaches the supervisor but the RUN, INTERRUPT,
 * OPEN and CLOSE frames of calls that passed the decoder. */
#ifndef BROKER_MCP_H
#define BROKER_MCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/client.h"
#include "mcp_parse.h"
#include "warden/err.h"

#define MCP_OUTPUT_MAX (64u * 1024)   /* text of one call kept for the model: head and tail */
#define MCP_QUEUE_MAX 64              /* calls waiting behind a running one, per session */
#define MCP_CALLS_MAX 1024            /* calls and opens waiting, all connections */

struct mcp_server;
struct mcp_conn;

struct mcp_opts {
	const char *server_version;   /* serverInfo.version */
	size_t output_max;            /* 0: MCP_OUTPUT_MAX */
	uint32_t idle_ms;             /* a session unused this long is closed; 0: never */
};

/* One whole JSON-RPC text (an object, or a batch's array), no newline. */
typedef void (*mcp_send_fn)(void *ctx, const char *json, size_t len);

struct mcp_server *mcp_server_new(struct bclient *b, const struct mcp_opts *o);
/* Opens the first session and reads its facts; fails (err says why) when
 * the supervisor refuses it. */
int mcp_server_start(struct mcp_server *s, struct werr *err);
/* Nothing open, nothing waiting for the supervisor. */
bool mcp_server_done(const struct mcp_server *s);
/* Sends CLOSE for every session (stdin's EOF: every jail ends). */
void mcp_server_close_all(struct mcp_server *s);
void mcp_server_free(struct mcp_server *s);

/* 1 when m belonged to this core (and was handled), 0 otherwise. */
int mcp_server_frame(struct mcp_server *s, const struct wmsg *m);
/* ms until mcp_server_tick has work (-1: none); now from mcp_now_ms(). */
int mcp_server_timeout(const struct mcp_server *s, long now);
void mcp_server_tick(struct mcp_server *s, long now);
long mcp_now_ms(void);   /* CLOCK_MONOTONIC */

#define MCP_CONN_DEFAULT_SESSION 0x1u
struct mcp_conn *mcp_conn_new(struct mcp_server *s, unsigned flags, mcp_send_fn send, void *ctx);
void mcp_conn_line(struct mcp_conn *c, const char *line, size_t len);
void mcp_conn_free(struct mcp_conn *c);

#endif
