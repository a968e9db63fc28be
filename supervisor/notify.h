/* The supervisor's side of seccomp user notification: every syscall the
 * jail's filter denies arrives here; it is answered with EPERM, counted per
 * syscall and audited.
 *
 * Everything here is bounded whatever the jail does (finding 5 of the
 * red-team review: 200,000 distinct numbers once made a 47 MB log):
 *   - numbers below WNOTIFY_NR_MAX that libseccomp names get an entry of
 *     their own; every other number (unknown to the kernel or libseccomp,
 *     or of a foreign arch) shares one entry named "unknown", whose first
 *     records keep the real number ("nr");
 *   - lookups are O(1): an array indexed by number holds each entry's slot;
 *   - the first WNOTIFY_AUDIT_EACH calls of each entry since the last
 *     wnotify_mark are audited in full ("denied" records), the rest only
 *     counted;
 *   - at most WNOTIFY_RECORDS_MAX "denied" records are written per budget
 *     (one per `warden run`, one per session, shared by its jails); the
 *     records left out are counted and reported by wnotify_flush_dropped
 *     as one "denied_dropped" record. */
#ifndef WARDEN_NOTIFY_H
#define WARDEN_NOTIFY_H

#include <stdbool.h>
#include <stdint.h>

#include "audit.h"
#include "warden/err.h"

#define WNOTIFY_AUDIT_EACH 16
#define WNOTIFY_NR_MAX 1024        /* x86_64 numbers are below 512 */
#define WNOTIFY_RECORDS_MAX 512    /* "denied" records per run or session */
#define WNOTIFY_UNKNOWN "unknown"

#define WNOTIFY_FIRST_MAX 128     /* the decoded first call kept per entry */

struct wdenied {
	char name[40];
	int nr;                    /* for "unknown": the first number seen */
	uint64_t count;            /* since the last wnotify_mark */
	char first[WNOTIFY_FIRST_MAX]; /* the first call since the last mark,
	                              decoded (supervisor/decode.h), cut to fit */
};

/* Shared by every listener of one run or session. */
struct wnotify_budget {
	uint32_t records;          /* "denied" records written */
	uint64_t dropped;          /* left out, not yet reported */
};

struct wnotify {
	int fd;                    /* listener; -1 when closed */
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	uint16_t *slot;            /* [WNOTIFY_NR_MAX]: index + 1 in tab, 0 none */
	struct wdenied *tab;       /* in order of first appearance; at most
	                              WNOTIFY_NR_MAX + 1 entries */
	size_t n, cap;
	size_t unknown;            /* index + 1 of the "unknown" entry, 0 none */
	uint64_t total;
	struct waudit *audit;      /* may be NULL */
	const char *session;
	struct wnotify_budget own, *budget;
	struct wdenied *last;      /* the entry of the last answered call, or NULL
	                              (valid until the next wnotify_handle) */
	bool last_audited;         /* ... and it was written as a "denied" record */
	/* A learning run (supervisor/learn.c): offered each notification
	 * first (w->req); true when it took it, and answers it itself.  It
	 * takes only calls the policy's own filter allows, so whatever it
	 * returns false for is denied here, as in every run. */
	bool (*divert)(void *ctx, struct wnotify *w);
	void *divert_ctx;
};

/* budget NULL: the listener has its own (a `warden run`). */
int wnotify_init(struct wnotify *w, int fd, struct waudit *audit, const char *session,
                 struct wnotify_budget *budget, struct werr *err);
/* The kernel's size of an answer (after a wnotify_init). */
size_t wnotify_resp_size(void);
/* Answer one pending notification.  Returns 0, or -1 when the listener is
 * finished (every filtered task gone) and should be closed. */
int wnotify_handle(struct wnotify *w);
/* Start counting afresh (a new block): counts and the per-name audit
 * allowance go back to zero; the entries stay. */
void wnotify_mark(struct wnotify *w);
void wnotify_free(struct wnotify *w);
/* For people, on one line: each entry counted since the last mark with its
 * count and first call, e.g. "socket (3; first: socket(AF_PACKET, SOCK_RAW,
 * 768))"; cut to fit len.  Returns the number of entries shown (0: none). */
size_t wnotify_summary(const struct wnotify *w, char *buf, size_t len);
/* The entries counted since the last mark, as JSON: [{"name":..,"count":..}] */
json_object *wnotify_to_json(const struct wnotify *w);
/* When the budget dropped records since the last call, write one
 * "denied_dropped" record: rec's fields (session, block, ...) plus
 * "dropped" (N) and "limit".  Takes ownership of rec. */
void wnotify_flush_dropped(struct wnotify *w, json_object *rec);

#endif
