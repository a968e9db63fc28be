/* The serve protocol (docs/serve.md), apart from its transport: sessions,
 * runs, chats and the supervisor connection, for any number of clients.
 *
 * A client is what one transport gives: `serve --stdio` has one (stdin and
 * stdout), `serve --listen` one per WebSocket connection.  Each request a
 * client sends is one JSON object (a line, a text frame); each event goes
 * back to that client only, through its emit function.  A session belongs
 * to the client that opened it: another client's request naming it gets
 * "unknown session", exactly as a session that does not exist, and when a
 * client goes, its sessions are closed (SECURITY.md G213).
 *
 * The files: serve.c (this: clients, sessions, runs, the supervisor's
 * frames), serve_chat.c (the "chat" op: the LLM turn loop of a session),
 * serve_opts.c (serve's command line, read before confinement); the
 * transports api_stdio.c and listen.c over them. */
#ifndef BROKER_API_SERVE_H
#define BROKER_API_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "warden/err.h"

struct serve;
struct sclient;
struct serve_chat_cfg;   /* serve_chat.c: the model, fixed at start */

/* One event (one JSON object, no newline) for the client's transport. */
typedef void (*serve_emit_fn)(void *ctx, const char *json, size_t len);

struct serve_cfg {
	unsigned session_idle_s;              /* sessions unused this long end; 0 never */
	const struct serve_chat_cfg *chat;    /* NULL: "chat" is refused */
	bool one_client;                      /* stdio: errors tied to no request are its own */
};

/* HELLO on the supervisor's socket (fd), then ready.  NULL with err. */
struct serve *serve_new(int sup_fd, const struct serve_cfg *cfg, struct werr *err);
void serve_free(struct serve *s);
int serve_sup_fd(const struct serve *s);
/* A fd that becomes readable when a chat's model request has news for the
 * loop (serve_chat.c's worker threads); the loop then calls serve_wake. */
int serve_wake_fd(const struct serve *s);
void serve_wake(struct serve *s);

/* The supervisor's socket is readable: handle what it sent.  0, or -1
 * when it is gone or broken (every client got an error event). */
int serve_on_supervisor(struct serve *s);
/* Milliseconds until serve_tick has work (idle sessions), -1 for none. */
long serve_timeout_ms(const struct serve *s);
void serve_tick(struct serve *s);

struct sclient *serve_client_new(struct serve *s, serve_emit_fn emit, void *ctx);
/* One request (one JSON object; blank: nothing). */
void serve_client_request(struct sclient *c, const char *req, size_t len);
/* An event of the server's own for this client (a request too long to
 * read, ...): {"id":null,"event":"error","message":msg}. */
void serve_client_error(struct sclient *c, const char *msg);
/* The client's input ended: close its sessions, their events still go to
 * it (with "id":null); serve_client_busy says when all are closed. */
void serve_client_shutdown(struct sclient *c);
bool serve_client_busy(const struct sclient *c);
/* The transport is gone: its sessions are closed, their events dropped,
 * and c is freed. */
void serve_client_gone(struct sclient *c);

long serve_now_ms(void);   /* CLOCK_MONOTONIC */

/* The supervisor connection (HELLO done), for another protocol's core on
 * the same connection (MCP, listen_mcp.c); frames go to hook first, and
 * those it takes (1) are not the serve protocol's. */
struct bclient *serve_bclient(struct serve *s);
struct wmsg;
void serve_set_frame_hook(struct serve *s, int (*hook)(void *ctx, const struct wmsg *m),
                          void *ctx);

/* Sessions open now, over every client (the tests' and the logs' count). */
unsigned serve_n_sessions(const struct serve *s);

#endif
