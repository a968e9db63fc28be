/* The broker's frames (OpenSSH monitor.c's shape): a closed table says
 * which message is permitted in which state; a frame that is malformed,
 * unknown or not permitted now is a hostile broker, and ends the server
 * (server.c kills every jail).  Each handler checks its inputs again and
 * answers with the minimum.  Requests that are merely wrong (an unknown
 * session, a profile the user did not allow) are answered with ERROR. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "limrep.h"
#include "session.h"
#include "sv.h"
#include "warden/log.h"
#include "warden/util.h"

enum { ST_HELLO = 1u << 0, ST_READY = 1u << 1 };

struct handler {
	uint8_t type;
	unsigned states;        /* where it is permitted */
	int (*fn)(struct sv *sv, const struct wmsg *m);   /* -1: hostile */
};

static void reply_error(struct sv *sv, uint32_t req, uint32_t session, uint32_t block,
                        const char *msg)
{
	struct werr err = { 0 };

	wloop_send(&sv->loop, wproto_error(&sv->broker.out, req, session, block, msg, &err), &err);
}

static int h_hello(struct sv *sv, const struct wmsg *m)
{
	struct werr err = { 0 };
	char *names[WPROTO_DENIED_MAX];
	uint32_t n = 0;

	if (m->version != WPROTO_VERSION) {
		wlog_error("the broker speaks protocol %u, this supervisor %u: reinstall warden",
		           m->version, WPROTO_VERSION);
		return -1;
	}
	for (size_t i = 0; i < sv->n_pols && n < WPROTO_DENIED_MAX; i++)
		names[n++] = sv->pols[i]->name;
	sv->state = ST_READY;
	wloop_send(&sv->loop, wproto_welcome(&sv->broker.out, WPROTO_VERSION, sv->pols[0]->name,
	                                     sv->roots[0], names, n, &err), &err);
	return 0;
}

/* path is root or below it (both resolved). */
static bool under(const char *path, const char *root)
{
	size_t n = strlen(root);
	return !strncmp(path, root, n) && (path[n] == '\0' || path[n] == '/' || !strcmp(root, "/"));
}

/* The profile's hides hold at every workspace the broker may open: for the
 * workspace ws under an allowed root R, each hide pattern is evaluated at R
 * and at every directory between R and ws.  A workspace at or below a
 * hidden path (R/.ssh, R/a/.aws/x) is refused; a hidden path that lands
 * inside ws is added to its session's hides (extra).  -1 with msg set when
 * refused. */
static int check_hides(struct sv *sv, const struct wpolicy *pol, const char *ws,
                       struct wstrv *extra, char *msg, size_t msglen)
{
	char d[PATH_MAX];

	for (size_t r = 0; r < sv->n_roots; r++) {
		if (!under(ws, sv->roots[r]))
			continue;
		snprintf(d, sizeof(d), "%s", sv->roots[r]);
		for (;;) {
			size_t dl = strlen(d);
			const char *next;

			for (size_t i = 0; i < pol->hide.n; i++) {
				_cleanup_free_ char *h = NULL;
				struct werr err = { 0 };
				size_t hl;

				if (policy_expand(pol->hide.v[i], d, sv_caller_home(), &h, &err) < 0)
					continue;   /* the same expansion fails in the jail's plan */
				for (hl = strlen(h); hl > 1 && h[hl - 1] == '/'; hl--)
					h[hl - 1] = '\0';
				if (under(ws, h)) {
					snprintf(msg, msglen, "workspace %s is hidden by the profile %s "
					         "(\"%s\" at %s hides %s); open a workspace that is not "
					         "at or below a hidden path", ws, pol->name,
					         pol->hide.v[i], d, h);
					return -1;
				}
				if (strcmp(d, ws) && under(h, ws) && strcmp(h, ws))
					wstrv_push(extra, h);
			}
			if (!strcmp(d, ws))
				break;
			/* one component further towards ws */
			next = strchr(ws + (dl == 1 ? 1 : dl + 1), '/');
			if (next)
				snprintf(d, sizeof(d), "%.*s", (int)(next - ws), ws);
			else
				snprintf(d, sizeof(d), "%s", ws);
		}
	}
	return 0;
}

static int h_open(struct sv *sv, const struct wmsg *m)
{
	const struct wpolicy *pol = NULL;
	struct sv_sess *s;
	struct werr err = { 0 };
	char ws[PATH_MAX], msg[2 * PATH_MAX + 128];
	bool ok = false;

	if (m->flags & ~(WOPEN_ONESHOT | WOPEN_LEARN)) {
		reply_error(sv, m->req, 0, 0, "OPEN: unknown flags");
		return 0;
	}
	for (size_t i = 0; i < sv->n_pols; i++)
		if (!m->profile[0] ? i == 0 : !strcmp(sv->pols[i]->name, m->profile))
			pol = sv->pols[i];
	if (!pol) {
		size_t off = (size_t)snprintf(msg, sizeof(msg), "profile \"%s\" is not allowed; "
		                              "allowed:", m->profile);
		for (size_t i = 0; i < sv->n_pols && off < sizeof(msg) - 80; i++)
			off += (size_t)snprintf(msg + off, sizeof(msg) - off, " %s", sv->pols[i]->name);
		snprintf(msg + off, sizeof(msg) - off, " (start warden with --allow-profile NAME)");
		reply_error(sv, m->req, 0, 0, msg);
		return 0;
	}
	/* The supervisor resolves the path itself; the broker's word is only a
	 * request, granted when it lies under a root the user allowed. */
	if (sv_resolve_workspace(m->workspace[0] ? m->workspace : sv->roots[0], ws, &err) < 0) {
		reply_error(sv, m->req, 0, 0, err.msg);
		return 0;
	}
	for (size_t i = 0; i < sv->n_roots; i++)
		ok = ok || under(ws, sv->roots[i]);
	if (!ok) {
		snprintf(msg, sizeof(msg), "workspace %s is outside the allowed workspace %s "
		         "(start warden with --allow-workspace DIR)", ws, sv->roots[0]);
		reply_error(sv, m->req, 0, 0, msg);
		return 0;
	}
	if (sv->n_sessions >= sv->max_sessions) {
		if (sv->max_by_nofile)
			snprintf(msg, sizeof(msg), "too many open sessions (%zu: the most the open-files "
			         "limit %" PRIu64 " has room for); close one first, or restart warden with "
			         "a higher ulimit -n", sv->max_sessions, sv->nofile);
		else
			snprintf(msg, sizeof(msg), "too many open sessions (%zu, --max-sessions); close one "
			         "first, or restart warden with a higher --max-sessions", sv->max_sessions);
		reply_error(sv, m->req, 0, 0, msg);
		return 0;
	}
	{
		struct wstrv extra = { 0 };
		int rc;

		if (check_hides(sv, pol, ws, &extra, msg, sizeof(msg)) < 0) {
			wstrv_free(&extra);
			reply_error(sv, m->req, 0, 0, msg);
			return 0;
		}
		rc = sess_open(sv, pol, ws, &extra, m->flags & WOPEN_ONESHOT, m->flags & WOPEN_LEARN,
		               &s, &err);
		wstrv_free(&extra);
		if (rc < 0) {
			reply_error(sv, m->req, 0, 0, err.msg);
			return 0;
		}
	}
	{
		_cleanup_free_ char *pj = policy_to_json(pol);
		_cleanup_free_ char *lj = wlang_json();
		_cleanup_free_ char *mj = limits_report_json(pol);
		_cleanup_free_ char *jj = jail_report_json(pol, ws);
		wloop_send(&sv->loop, wproto_opened(&sv->broker.out, m->req, s->id, s->audit_id, pj, lj,
		                                    mj, jj, &err),
		           &err);
	}
	sess_prestart(sv, s);
	return 0;
}

static struct sv_sess *session_or_error(struct sv *sv, const struct wmsg *m)
{
	struct sv_sess *s = sess_find(sv, m->session);
	char msg[64];

	if (!s) {
		snprintf(msg, sizeof(msg), "no open session %u", m->session);
		reply_error(sv, m->req, m->session, m->block, msg);
	}
	return s;
}

static int h_run(struct sv *sv, const struct wmsg *m)
{
	struct sv_sess *s = session_or_error(sv, m);
	struct werr err = { 0 };

	if (!s)
		return 0;
	if (m->block == 0 || m->flags >= WAPPROVE__N) {
		reply_error(sv, 0, m->session, m->block, "RUN: block ids start at 1; approval unknown");
		return 0;
	}
	if (sess_run(sv, s, m->block, m->language, m->data, m->data_len, m->flags, &err) < 0)
		reply_error(sv, 0, m->session, m->block, err.msg);
	return 0;
}

static int h_interrupt(struct sv *sv, const struct wmsg *m)
{
	struct sv_sess *s = session_or_error(sv, m);

	if (s)
		sess_interrupt(sv, s);
	return 0;
}

static int h_close(struct sv *sv, const struct wmsg *m)
{
	struct sv_sess *s = session_or_error(sv, m);
	struct werr err = { 0 };

	if (!s)
		return 0;
	sess_close(sv, s, "closed by the broker");
	wloop_send(&sv->loop, wproto_closed(&sv->broker.out, m->session, &err), &err);
	return 0;
}

static int h_langs(struct sv *sv, const struct wmsg *m)
{
	_cleanup_free_ char *lj = wlang_json();
	struct werr err = { 0 };

	wloop_send(&sv->loop, wproto_langlist(&sv->broker.out, m->req, lj, &err), &err);
	return 0;
}

static int h_edit(struct sv *sv, const struct wmsg *m)
{
	_cleanup_free_ char *edited = NULL;
	struct werr err = { 0 };

	if (!sv->chat)
		return -1;   /* serve never edits: a broker that asks is not ours */
	if (!sv->edit_ok) {
		reply_error(sv, m->req, 0, 0, "editing needs a terminal");
		return 0;
	}
	if (sv_edit(sv, m->text, &edited, &err) < 0) {
		reply_error(sv, m->req, 0, 0, err.msg);
		return 0;
	}
	wloop_send(&sv->loop, wproto_edited(&sv->broker.out, m->req, edited, &err), &err);
	return 0;
}

static const struct handler handlers[] = {
	{ WM_HELLO, ST_HELLO, h_hello },
	{ WM_OPEN, ST_READY, h_open },
	{ WM_RUN, ST_READY, h_run },
	{ WM_INTERRUPT, ST_READY, h_interrupt },
	{ WM_CLOSE, ST_READY, h_close },
	{ WM_LANGS, ST_READY, h_langs },
	{ WM_EDIT, ST_READY, h_edit },
	{ WM_WIDEN, ST_READY, sv_widen },      /* widen.c */
	{ WM_REVOKE, ST_READY, sv_revoke },
	{ WM_SAVE, ST_READY, sv_save },        /* save.c: chat only */
};

/* -1: the broker is hostile or broken; the caller ends everything. */
int sv_dispatch(struct sv *sv, const struct wmsg *m)
{
	if (!sv->state)
		sv->state = ST_HELLO;
	for (size_t i = 0; i < ARRAY_SIZE(handlers); i++) {
		if (handlers[i].type != m->type)
			continue;
		if (!(handlers[i].states & (unsigned)sv->state)) {
			wlog_error("the broker sent %s, which is not permitted now; ending it",
			           wmsg_type_name(m->type));
			return -1;
		}
		if (handlers[i].fn(sv, m) < 0) {
			wlog_error("the broker's %s was refused; ending it", wmsg_type_name(m->type));
			return -1;
		}
		return 0;
	}
	wlog_error("the broker sent a %s frame, which only the supervisor sends; ending it",
	           wmsg_type_name(m->type));
	return -1;
}
