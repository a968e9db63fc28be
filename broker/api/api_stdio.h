/* warden serve --stdio: the JSON-lines API (docs/serve.md).
 *
 * The request parser is separate from the event loop so that the fuzzer
 * (tests/fuzz/fuzz_stdio.c) and the unit tests can call it without a
 * supervisor.  Everything on stdin is hostile: every malformed line gets an
 * error event naming what was wrong, and the API goes on. */
#ifndef BROKER_SERVE_H
#define BROKER_SERVE_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#define SERVE_LINE_MAX (2u * 1024 * 1024)  /* one request line, newline excluded */
#define SERVE_MESSAGE_MAX (1u * 1024 * 1024) /* a chat message */
#define SERVE_ID_MAX 256                    /* a string id, in bytes */
#define SERVE_SESSION_MAX 128               /* a session (audit) id, in bytes */
#define SERVE_JSON_DEPTH 16

enum serve_op {
	SOP_NONE = 0,
	SOP_OPEN,
	SOP_RUN,
	SOP_INTERRUPT,
	SOP_CLOSE,
	SOP_LANGUAGES,
	SOP_CHAT,
	SOP_APPROVE,
	SOP_WIDEN,
	SOP_REVOKE,
};

struct serve_req {
	json_object *id;          /* number or string (owned reference); NULL if absent */
	enum serve_op op;
	char *profile;            /* open (optional) */
	char *workspace;          /* open (optional), absolute */
	bool oneshot;             /* open */
	bool learn;               /* open: the session learns (issue 23) */
	char *session;            /* run, interrupt, close */
	char *language;           /* run */
	char *code;               /* run, approve (edited): code_len bytes, no NUL inside,
	                             NUL-terminated */
	size_t code_len;
	char *message;            /* chat: the user's message (at most 1 MiB) */
	bool yes;                 /* approve, widen: "answer":"yes" (else "no") */
	char *ask;                /* widen: the question's "ask" */
};

/* Parses one line (without its newline).  0: *req filled.  1: a blank line
 * (nothing to do).  -1: malformed; errbuf holds one line saying what was
 * wrong, and req->id is still set when the line had a usable id, so that
 * the error can be matched to its request.  req is cleared on entry; free
 * it with serve_req_free in every case. */
int serve_parse_request(const char *line, size_t len, struct serve_req *req, char *errbuf,
                        size_t errlen);
void serve_req_free(struct serve_req *req);

const char *serve_op_name(enum serve_op op);

#endif
