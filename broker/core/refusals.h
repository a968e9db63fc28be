/* A learning session's report of one block (issue 23): the learner's JSON
 * list (include/warden/learn.h, wl_to_json) as the supervisor relayed it
 * in REFUSALS.  It derives from the jail's memory, so it is parsed here as
 * hostile (jstrict, bounds, types): chat, serve and MCP read it only
 * through this.  What may be asked about:
 *   askable     a proposal the learner would include (not dangerous, not
 *               covered) of a kind a session can be widened by: a path to
 *               read or write, a host;
 *   dangerous   a proposal left out as dangerous (learn/danger.c): never a
 *               one-key question; said, with how a person may allow it.
 * The supervisor decides every widening again on its own facts
 * (supervisor/widen.c): nothing here is trusted for that. */
#ifndef BROKER_REFUSALS_H
#define BROKER_REFUSALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "warden/proto.h"

#define BREFUSALS_MAX 16   /* questions of one block, at most */

struct brefusal {
	char *op;          /* "read", "write", "create", "proxy", ... (the learner's) */
	char *target;      /* what the program named */
	unsigned kind;     /* WK_READ, WK_WRITE, WK_HOST */
	char *value;       /* the path or host:port proposed */
	char *danger;      /* why it is dangerous, or NULL */
};

struct brefusals {
	struct brefusal ask[BREFUSALS_MAX];   /* askable */
	size_t n_ask;
	struct brefusal bad[BREFUSALS_MAX];   /* dangerous, not only looked at */
	size_t n_bad;
	bool complete;
	char *why_incomplete;
};

/* 0 and out filled; -1 (out empty) when json is not the learner's list. */
int brefusals_parse(const char *json, struct brefusals *out);
void brefusals_free(struct brefusals *r);
/* A block worth asking about: it did not exit 0. */
bool brefusals_block_failed(const struct wresult *res);
/* "read", "write", "reach": what the code tried, as a verb */
const char *brefusal_verb(unsigned kind);
/* The question, for serve's and MCP's clients (chat's is the supervisor's
 * own): "the code tried to read /srv/data/x.csv (refused by profile
 * workspace). Allow read for this session?" (malloc'd) */
char *brefusal_question(const struct brefusal *r, const char *profile);

#endif
