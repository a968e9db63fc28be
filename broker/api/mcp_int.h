/* The MCP core's own structures, shared by mcp.c (messages, connections,
 * sessions, frames), mcp_run.c (the tools' calls and their results) and
 * mcp_tools.c (what tools/list and server/discover say).  Not for
 * transports: they use mcp.h. */
#ifndef BROKER_MCP_INT_H
#define BROKER_MCP_INT_H

#include <json-c/json.h>

#include "core/refusals.h"
#include "core/utf8.h"
#include "mcp.h"

#define MCP_SERVER_NAME "warden"
#define MCP_HANDLE_BYTES 16     /* random bytes of a session handle: 128 bits */
#define MCP_LIST_TTL_MS 3600000 /* tools/list and server/discover: fixed for the server's life */

/* A 2025-03-26 batch: its answers go out together, in one array, when the
 * last of its requests is answered (or cancelled). */
struct mbatch {
	struct mcp_conn *conn;     /* NULL once the connection is gone */
	json_object *answers;
	unsigned waiting;
};

/* Where an answer goes. */
struct mreply {
	struct mcp_conn *conn;     /* NULL once the connection is gone: nothing is sent */
	json_object *id;
	bool modern;
	struct mbatch *batch;
};

/* A call's text for the model: the first half of output_max, then the last
 * half in a ring, with a note of what was left out between them. */
struct mout {
	char *head, *ring;
	size_t half, head_len, ring_len, ring_pos;
	uint64_t total;
	struct utf8_tail tail[2];  /* stdout, stderr */
};

struct msess;

struct mcall {
	struct mcall *next;        /* in its session's queue, or its open's */
	struct mreply rp;
	enum mcp_tool tool;        /* run_code; open_session waits in struct mopen */
	struct msess *sess;
	char *language, *code;
	size_t code_len;
	uint32_t block, timeout_ms;
	long deadline;             /* 0: none */
	bool cancelled, timed_out, interrupted;
	struct mout out;
	json_object *images;       /* ImageContent items */
	/* a learning session's (mcp_elicit.c) */
	char *refusals;            /* the block's report (REFUSALS), until its result */
	bool elicit;               /* its client can be asked (form elicitation) */
	char *note;                /* what the person allowed: the answer's first text */
};

struct msess {
	struct msess *next;
	char handle[2 * MCP_HANDLE_BYTES + 1];
	uint32_t id;               /* the supervisor's */
	char *audit_id;
	char *profile, *workspace;
	json_object *languages;
	struct mcp_conn *owner;    /* the connection whose default session it is */
	struct mcall *running, *q_head, *q_tail;
	unsigned queued;
	bool closing, given;       /* given: handed to a connection or a call once */
	struct mreply close_rp;    /* close_session's answer, sent at CLOSED */
	bool close_answer;
	long last_used;
};

/* An OPEN waiting for OPENED. */
struct mopen {
	struct mopen *next;
	uint32_t req;
	struct mreply rp;          /* open_session's answer (rp.id NULL: none) */
	struct mcp_conn *for_conn; /* becomes this connection's default session */
	struct mcall *w_head, *w_tail;  /* run_code calls waiting for the session */
	char *profile, *workspace;
};

struct mcp_conn {
	struct mcp_server *srv;
	struct mcp_conn *next;
	unsigned flags;
	mcp_send_fn send;
	void *ctx;
	char legacy[MCP_VERSION_MAX + 1];  /* negotiated by initialize; "" before */
	bool elicit;               /* legacy: initialize declared form elicitation */
	struct msess *dflt;
	struct mopen *dflt_opening;
};

struct mcp_server {
	struct bclient *b;
	struct mcp_opts o;
	struct msess *sessions;
	struct mopen *opens;
	struct mcp_conn *conns;
	unsigned n_waiting;        /* calls and opens, all connections */
	bool closing_all;          /* mcp_server_close_all: what opens now closes */
	/* the facts of the first session, for the descriptions */
	json_object *policy, *limits, *languages;
	char *profile, *workspace;
	char *run_code_desc, *instructions;
	struct mask *asks;         /* questions to persons (mcp_elicit.c) */
	unsigned next_elicit;
};

/* mcp_elicit.c (below mcp_run.c; mcp.c acts on what it resolves) */
struct mask;
enum { MEL_NONE, MEL_WAITING, MEL_ANSWERED };
/* mrun_result's: the call's refusals (r: its result, failed: the block
 * did not exit 0).  MEL_NONE: answer r (what could not be asked was
 * added to it); MEL_WAITING: r is kept, the call waits for the person
 * (legacy); MEL_ANSWERED: the call was answered input_required (r kept). */
int melicit_offer(struct mcp_server *s, struct msess *ss, struct mcall *k, json_object *r,
                  bool failed);
/* a client's response: 1 when it answered one of our questions */
int melicit_response(struct mcp_server *s, struct mcp_conn *c, const struct mcp_msg *m);
/* a modern retry (call->request_state): 0 taken (k waits), -1 no such question */
int melicit_retry(struct mcp_server *s, struct mcall *k, const struct mcp_call *call);
/* WIDENED: 1 when one of ours */
int melicit_widened(struct mcp_server *s, const struct wmsg *m);
struct melicit_out {
	struct msess *sess;        /* NULL: it closed meanwhile */
	struct mcall *call;
	bool rerun, legacy;
	char *note;                /* malloc'd, or NULL */
	json_object *first;        /* !rerun: the answer (the first result, noted) */
};
/* the next question that is settled (taken out), and what to do */
struct mask *melicit_resolved(struct mcp_server *s);
void melicit_resolve(struct mcp_server *s, struct mask *a, struct melicit_out *out);
void melicit_tick(struct mcp_server *s, long now);
long melicit_next(const struct mcp_server *s);   /* -1: nothing to wait for */
/* a session or a connection is going (both NULL: everything); a call is
 * finished */
void melicit_forget(struct mcp_server *s, struct msess *ss, struct mcp_conn *c);
void melicit_drop_call(struct mcp_server *s, struct mcall *k);

/* mcp_reply.c (calls neither mcp.c nor mcp_run.c) */
void mcp_send(struct mcp_conn *c, json_object *o);
void mcp_answer(struct mreply *rp, json_object *result);     /* takes result */
void mcp_answer_error(struct mreply *rp, int code, const char *msg, json_object *data);
void mcp_reply_drop(struct mreply *rp);    /* no answer will come: release it */
void mcp_batch_release(struct mbatch *bt); /* one request of bt answered or dropped */
void mcp_sup_flush(struct mcp_server *s);
json_object *mcp_jstr_n(const char *p, size_t n);   /* valid UTF-8 whatever p holds */

/* mcp.c */
struct msess *mcp_sess_by_handle(struct mcp_server *s, const char *handle);
struct msess *mcp_sess_by_id(struct mcp_server *s, uint32_t id);
int mcp_open(struct mcp_server *s, struct mreply *rp, struct mcp_conn *for_conn,
             const char *profile, const char *workspace, struct mcall *waiting);
void mcp_sess_close(struct mcp_server *s, struct msess *ss);

/* mcp_run.c */
struct mcall *mcall_new(struct mreply *rp, struct mcp_call *c);   /* takes rp and c's strings */
void mcall_free(struct mcall *k);
void mcall_fail(struct mcall *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void mrun_enqueue(struct mcp_server *s, struct msess *ss, struct mcall *k);
void mrun_output(struct mcall *k, int stream, const uint8_t *p, size_t n);
void mrun_display(struct mcall *k, const char *format, const uint8_t *p, size_t n);
void mrun_result(struct mcp_server *s, struct msess *ss, const struct wresult *res);
void mrun_error(struct mcp_server *s, struct msess *ss, const char *msg);
void mrun_interrupt(struct mcp_server *s, struct msess *ss);
void mrun_opened(struct mcp_server *s, struct msess *ss, struct mreply *rp);
/* the session's running call is done (its answer sent, or none due) */
void mrun_finish(struct mcp_server *s, struct msess *ss);
/* run the waiting call again (a widening was granted); note (taken)
 * opens its answer */
void mrun_rerun(struct mcp_server *s, struct msess *ss, struct mcall *k, char *note);

/* mcp_tools.c */
int mtools_facts(struct mcp_server *s, const struct bsession *first, struct werr *err);
json_object *mtools_list(const struct mcp_server *s);
json_object *mtools_server_info(const struct mcp_server *s);
json_object *mtools_capabilities(void);

#endif
