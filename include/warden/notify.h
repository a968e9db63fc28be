/* The supervisor's side of seccomp user notification: every syscall the
 * jail's filter denies arrives here; it is answered with EPERM, counted per
 * syscall and audited (the first WNOTIFY_AUDIT_EACH of each name in full,
 * the rest as counts in the run's summary). */
#ifndef WARDEN_NOTIFY_H
#define WARDEN_NOTIFY_H

#include <stdint.h>

#include "warden/audit.h"
#include "warden/err.h"

#define WNOTIFY_AUDIT_EACH 16

struct wdenied {
	char name[40];
	int nr;
	uint64_t count;
};

struct wnotify {
	int fd;                    /* listener; -1 when closed */
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	struct wdenied *tab;       /* in order of first appearance */
	size_t n, cap;
	uint64_t total;
	struct waudit *audit;      /* may be NULL */
	const char *session;
	struct wdenied *last;      /* the entry of the last answered call, or NULL
	                              (valid until the next wnotify_handle) */
};

int wnotify_init(struct wnotify *w, int fd, struct waudit *audit, const char *session,
                 struct werr *err);
/* Answer one pending notification.  Returns 0, or -1 when the listener is
 * finished (every filtered task gone) and should be closed. */
int wnotify_handle(struct wnotify *w);
void wnotify_free(struct wnotify *w);
/* The list as JSON: [{"name":..,"count":..}] */
json_object *wnotify_to_json(const struct wnotify *w);

#endif
