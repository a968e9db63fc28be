/* The broker's side of the supervisor connection, for code that wants one
 * block at a time (warden chat).  warden serve --stdio drives struct wconn
 * directly, because it multiplexes many sessions.
 *
 * Everything the supervisor sends is trusted; everything here is about
 * asking politely.  All calls block until their answer arrives. */
#ifndef BROKER_CLIENT_H
#define BROKER_CLIENT_H

#include <signal.h>
#include <stdint.h>

#include "warden/broker_start.h"
#include "warden/proto.h"

/* The supervisor's socket is always this fd in the broker. */
#define BROKER_SUP_FD WBROKER_SUP_FD

struct bclient {
	struct wconn c;
	uint32_t next_req, next_block;
	char *default_profile, *default_workspace;
	char **profiles; uint32_t n_profiles;   /* the ones the user allowed */
};

/* HELLO/WELCOME on fd. */
int bclient_init(struct bclient *b, int fd, struct werr *err);
void bclient_free(struct bclient *b);

struct bsession {
	uint32_t id;
	char *audit_id;        /* the session id in the audit log */
	char *policy_json;     /* the effective policy, for the system message */
	char *languages_json;  /* [{"name":..,"aliases":[..],"persistent":bool}] */
	char *limits_json;     /* {"memory":"rlimit",...}: what enforces each limit */
	char *jail_json;       /* {"policy_source":..,"landlock_abi":N} (proto.h) */
};
/* profile/workspace NULL: the defaults from WELCOME. */
int bclient_open(struct bclient *b, const char *profile, const char *workspace,
                 uint32_t flags, struct bsession *s, struct werr *err);
void bsession_free(struct bsession *s);

struct bclient_cb {
	void (*output)(void *ctx, int stream, const uint8_t *data, size_t len);
	void (*audit)(void *ctx, const char *syscall, uint64_t count);   /* may be NULL */
	/* rich output: format "png", "jpeg" or "html" (may be NULL) */
	void (*display)(void *ctx, const char *format, const uint8_t *data, size_t len);
	void (*line)(void *ctx, uint32_t line);   /* the block's running line (may be NULL) */
	/* a learning session's report of the block (REFUSALS: the learner's
	 * JSON, hostile; core/refusals.h reads it), before its RESULT (may be
	 * NULL) */
	void (*refusals)(void *ctx, const char *json);
};
/* Run one block and wait for its RESULT.  While waiting, when *interrupt
 * becomes non-zero (a SIGINT handler sets it), INTERRUPT is sent once and
 * *interrupt is cleared.  res is owned by the caller (free res->denied
 * entries and res->message with wresult_free). */
int bclient_run(struct bclient *b, uint32_t session, const char *language, const char *code,
                size_t len, const struct bclient_cb *cb, void *ctx,
                volatile sig_atomic_t *interrupt, struct wresult *res, struct werr *err);
int bclient_close(struct bclient *b, uint32_t session, struct werr *err);
/* The languages JSON (see bsession.languages_json). */
int bclient_languages(struct bclient *b, char **json, struct werr *err);

/* Ask the supervisor to open text in the user's editor; *out is the edited
 * text (malloc'd).  Fails when the supervisor does not permit it. */
int bclient_edit(struct bclient *b, const char *text, char **out, struct werr *err);

/* WIDEN (kind WK_*, flags WWIDEN_*), REVOKE, SAVE: the supervisor's
 * answer, WIDENED: *status WW_*, *flags WWIDENED_*, *text (malloc'd) what
 * was done or why not.  -1 only when the connection failed. */
int bclient_widen(struct bclient *b, uint32_t session, unsigned kind, const char *value,
                  uint32_t flags, uint8_t *status, uint32_t *out_flags, char **text,
                  struct werr *err);
int bclient_revoke(struct bclient *b, uint32_t session, uint8_t *status, uint32_t *out_flags,
                   char **text, struct werr *err);
int bclient_save(struct bclient *b, uint32_t session, const char *name, uint8_t *status,
                 char **text, struct werr *err);

void wresult_free(struct wresult *r);

#endif
