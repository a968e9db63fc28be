/* What serve.c and serve_chat.c share (serve.h has the transports' view). */
#ifndef BROKER_API_SERVE_INT_H
#define BROKER_API_SERVE_INT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "api_stdio.h"
#include "core/client.h"
#include "core/refusals.h"
#include "core/utf8.h"
#include "serve.h"

/* One block: run by a client ("run"), or by a chat (its model's code). */
struct srun {
	struct srun *next;
	json_object *id;
	char *language;
	char *code;
	size_t code_len;
	uint32_t block;
	unsigned approval;        /* WAPPROVE_*: how the code came to run */
	bool chat;                /* a chat's: its output feeds the chat too */
};

struct schat;                 /* serve_chat.c: a session's conversation */

struct ssession {
	struct ssession *next;
	struct sclient *owner;    /* NULL: its client is gone; events go nowhere */
	uint32_t id;
	char *audit_id;
	json_object *languages;   /* the array from OPENED */
	char *policy_json;        /* the effective policy from OPENED (a chat's prompt) */
	char *profile, *workspace;
	struct srun *running;     /* NULL when idle */
	struct srun *q_head, *q_tail;
	unsigned queued;
	struct utf8_tail tail[2]; /* stdout, stderr */
	bool lines;               /* the running block sent an active line */
	bool closing;
	json_object *close_id;
	long last_ms;             /* the last request or block end (--session-idle) */
	struct schat *chat;
	/* a learning session (serve_widen.c): the running block's report, and
	 * the questions of its last failed block, "asks_block.N" */
	char *refusals;
	struct brefusals asks;
	uint32_t asks_block;
};

struct spending {
	struct spending *next;
	struct sclient *owner;    /* NULL: its client is gone */
	uint32_t req;
	enum serve_op op;
	json_object *id;
	char *profile, *workspace;
	bool oneshot, learn;
	char *session;            /* widen, revoke: the session's (audit) id */
};

struct sclient {
	struct sclient *next;
	struct serve *s;
	serve_emit_fn emit;
	void *ctx;
	bool shutdown;            /* its input ended: its sessions are closing */
};

struct schat_hub;             /* serve_chat.c: the worker threads' news */

struct serve {
	struct bclient b;
	struct serve_cfg cfg;
	struct sclient *clients;
	struct ssession *sessions;
	unsigned n_sessions;
	struct spending *pending;
	unsigned n_pending;
	size_t queued_bytes;
	int wake_fd;              /* eventfd: a chat's worker has news */
	struct schat_hub *hub;
	int (*frame_hook)(void *ctx, const struct wmsg *m);
	void *hook_ctx;
	/* queue a block on a session (r owned; it runs now when nothing runs):
	 * serve.c's, for serve_chat.c below it, which calls nothing above */
	void (*submit)(struct serve *s, struct ssession *ss, struct srun *r);
};

/* serve_event.c: the events.  A JSON string of valid UTF-8 from any bytes. */
json_object *serve_jstr_n(const char *s, size_t n);
json_object *serve_jstr(const char *s);
/* Writes ev (owned) to the client; nothing when c is NULL. */
void serve_emit(struct sclient *c, json_object *ev);
/* {"id":..,"event":name,"session":..,KEY:VALUE...,NULL} (serve.c) */
void serve_event(struct sclient *c, json_object *id, const char *name, const char *session,
                 ...);
void serve_error(struct sclient *c, json_object *id, const char *session, const char *fmt,
                 ...) __attribute__((format(printf, 4, 5)));
/* The LMC message {"id","session","role":role,"type":type} to add to. */
json_object *serve_lmc(struct ssession *ss, json_object *id, const char *role,
                       const char *type);
void serve_srun_free(struct srun *r);
/* the supervisor connection: frames queued on s->b.c.out go out (-1: it
 * failed, said); an error no request owns; requests that wait for the
 * supervisor's answer, by req */
int serve_send(struct serve *s);
void serve_orphan_error(struct serve *s, const char *msg);
struct spending *serve_pending_new(struct serve *s, struct sclient *c, struct serve_req *q);
void serve_pending_send(struct serve *s, struct spending *p, int r, const struct werr *err);
struct spending *serve_pending_take(struct serve *s, uint32_t req);
void serve_pending_free(struct spending *p);

/* serve_widen.c: a learning session's refusals as questions (issue 23) */
void swiden_refusals(struct ssession *ss, const char *json);
/* after a block's "result": its questions (a failed block's) */
void swiden_after_result(struct ssession *ss, json_object *id, const char *language,
                         const struct wresult *res);
/* the "widen" and "revoke" ops of ss */
void swiden_request(struct serve *s, struct sclient *c, struct ssession *ss,
                    struct serve_req *q);
/* the supervisor's WIDENED, as "widened" (or "revoked") */
void swiden_answered(struct sclient *c, json_object *id, const char *session, bool revoke,
                     const struct wmsg *m);
void swiden_free(struct ssession *ss);

/* serve_chat.c */
void schat_hub_init(struct serve *s);
void schat_hub_free(struct serve *s);
void schat_on_wake(struct serve *s);
void schat_request(struct serve *s, struct sclient *c, struct ssession *ss,
                   struct serve_req *q);
void schat_approve(struct serve *s, struct sclient *c, struct ssession *ss,
                   struct serve_req *q);
/* interrupt: a chat's model request or its approval wait ends the turn;
 * true when there was one (a running block is interrupted by serve.c) */
bool schat_interrupt(struct serve *s, struct ssession *ss);
bool schat_busy(const struct ssession *ss);
/* {"event":"turn_end",...,"reason":reason}: the last event of every "chat" */
void schat_turn_end(struct sclient *c, json_object *id, const char *session,
                    const char *reason);
/* a chat's block: its output (valid UTF-8), rich output, and its end */
void schat_output(struct ssession *ss, const char *text, size_t n);
void schat_display(struct ssession *ss, const char *format, const uint8_t *data, size_t len);
void schat_block_done(struct serve *s, struct ssession *ss, const struct wresult *res,
                      const char *error);
/* the session is going: a chat's turn ends ("closed"), its worker is let go */
void schat_free(struct serve *s, struct ssession *ss);

#endif
