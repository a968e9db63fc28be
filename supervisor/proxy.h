/* Network mode "proxy" from the supervisor's side (docs/design.md "Network:
 * the egress proxy's process", issue 21).  The proxy itself runs in its own
 * unprivileged, confined process, warden-egress (egress/): it parses what
 * jailed code and the network send, which the supervisor never does.  Here,
 * one per supervisor and started at the first jail that needs it:
 *
 *   the process  started (egress_start.c), restarted when it dies or sends
 *                what it must not (0.2 s, doubling to 5 s between tries),
 *                stopped by wproxy_shutdown; its start and end audited
 *                (egress_start, egress_end);
 *   its link     a SOCK_SEQPACKET socketpair of strict frames
 *                (warden/egress.h): CONFIG, then ADD (a jail's listener by
 *                SCM_RIGHTS, its policy's name, source and allow entries)
 *                and REMOVE per jail; back AUDIT, REMOVED, LOG, all decoded
 *                as hostile: a malformed or unexpected one kills the
 *                process, never the supervisor;
 *   the audit    each AUDIT becomes a "net" record written here (the
 *                supervisor alone writes the log) with the jail's session,
 *                within 4096 per jail, then one "net_dropped";
 *   the fallback the supervisor keeps its own copy of every jail's
 *                listener; while the process is down it accepts there and
 *                answers a fixed 502 that says why, without reading what
 *                the client sent.
 * Private to supervisor/. */
#ifndef WARDEN_SV_PROXY_H
#define WARDEN_SV_PROXY_H

#include <json-c/json.h>

#include "audit.h"
#include "warden/loop.h"
#include "warden/egress.h"
#include "warden/err.h"
#include "warden/policy.h"

struct wproxy;

struct wproxy_conf {
	const struct wpolicy *pol;   /* net_allow, name and source (for the 403): copied */
	struct waudit *audit;        /* may be NULL; must outlive the supervisor's loop */
	const char *audit_session;   /* the session's audit id, or NULL: copied */
};

/* Serve listen_fd (a jail's listener; the proxy owns it from now on) by
 * the egress process, started now on loop l if it is not running.  Every
 * proxy of the process uses the same loop. */
struct wproxy *wproxy_new(struct wloop *l, int listen_fd, const struct wproxy_conf *conf,
                          struct werr *err);
/* The jail is ending: the egress closes its connections (each audited as
 * it ends) and forgets it. */
void wproxy_free(struct wproxy *p);
/* The same, and wait (2 s at most) until the egress process has sent the
 * jail's last connections' records: a learning run reads them at its end. */
void wproxy_free_wait(struct wproxy *p);
/* Read what the egress process has already sent (its records of refusals
 * go out before the refused client reads its answer): before a learning
 * session's block is reported. */
void wproxy_drain(void);
/* As root: the user the egress process runs as (the broker's; default
 * WBROKER_USER).  Before the first wproxy_new. */
void wproxy_user(const char *user);
/* The supervisor is ending: the egress process is told (EOF), its last
 * records are written (at most 2 s), then it is killed and reaped, and
 * nothing of it is left on the loop.  Safe when it never started. */
void wproxy_shutdown(void);

/* The audit log's "net" record of r (docs/design.md "The audit log"):
 * session and rule may be NULL.  Shared with tests/helpers/proxyd.c. */
json_object *wproxy_net_record(const struct wegress_rec *r, const char *session,
                               const char *rule);

#endif
