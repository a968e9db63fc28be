/* The broker's synchronous side of the supervisor connection (client.h).
 *
 * Every call sends one request and reads frames until its answer arrives.
 * Frames that belong to nothing we asked for are dropped: the supervisor is
 * trusted, so they can only be late answers to something abandoned (an
 * OUTPUT after an error, say). */
#include <errno.h>
#include <poll.h>
#include <string.h>

#include "client.h"
#include "warden/util.h"

#define BCLIENT_POLL_MS 100

static int send_out(struct bclient *b, struct werr *err)
{
	if (wconn_flush_all(&b->c, err) < 0)
		return werr_wrap(err, "writing to the supervisor");
	return 0;
}

static int read_msg(struct bclient *b, struct wmsg *m, struct werr *err)
{
	if (wconn_read_msg(&b->c, m, err) < 0) {
		if (b->c.eof)
			return werr_set(err, 0, "the supervisor closed the connection");
		return werr_wrap(err, "reading from the supervisor");
	}
	return 0;
}

/* An ERROR frame's message as the call's error. */
static int from_error(const struct wmsg *m, struct werr *err)
{
	return werr_set(err, 0, "%s", m->text && *m->text ? m->text : "the supervisor refused");
}

int bclient_init(struct bclient *b, int fd, struct werr *err)
{
	struct wmsg m = { 0 };
	uint32_t i;
	int r = -1;

	memset(b, 0, sizeof(*b));
	wconn_init(&b->c, fd);
	b->next_req = 1;
	b->next_block = 1;
	if (wproto_hello(&b->c.out, WPROTO_VERSION, err) < 0 || send_out(b, err) < 0)
		return -1;
	if (read_msg(b, &m, err) < 0)
		return -1;
	if (m.type == WM_ERROR) {
		from_error(&m, err);
		goto out;
	}
	if (m.type != WM_WELCOME) {
		werr_set(err, 0, "the supervisor answered HELLO with %s", wmsg_type_name(m.type));
		goto out;
	}
	if (m.version != WPROTO_VERSION) {
		werr_set(err, 0, "the supervisor speaks protocol version %u, this broker %u: "
		         "install warden and warden-broker from the same build", m.version,
		         WPROTO_VERSION);
		goto out;
	}
	b->default_profile = steal_pointer(&m.profile);
	b->default_workspace = steal_pointer(&m.workspace);
	b->n_profiles = m.n_list;
	b->profiles = xcalloc(m.n_list + 1, sizeof(char *));
	for (i = 0; i < m.n_list; i++)
		b->profiles[i] = steal_pointer(&m.list[i]);
	r = 0;
out:
	wmsg_free(&m);
	return r;
}

void bclient_free(struct bclient *b)
{
	uint32_t i;

	if (!b)
		return;
	wconn_free(&b->c);
	free(b->default_profile);
	free(b->default_workspace);
	for (i = 0; b->profiles && i < b->n_profiles; i++)
		free(b->profiles[i]);
	free(b->profiles);
	memset(b, 0, sizeof(*b));
	b->c.fd = -1;
}

void bsession_free(struct bsession *s)
{
	if (!s)
		return;
	free(s->audit_id);
	free(s->policy_json);
	free(s->languages_json);
	free(s->limits_json);
	free(s->jail_json);
	memset(s, 0, sizeof(*s));
}

int bclient_open(struct bclient *b, const char *profile, const char *workspace,
                 uint32_t flags, struct bsession *s, struct werr *err)
{
	uint32_t req = b->next_req++;

	memset(s, 0, sizeof(*s));
	if (wproto_open(&b->c.out, req, profile ? profile : b->default_profile,
	                workspace ? workspace : b->default_workspace, flags, err) < 0 ||
	    send_out(b, err) < 0)
		return -1;
	for (;;) {
		struct wmsg m = { 0 };

		if (read_msg(b, &m, err) < 0)
			return -1;
		if (m.type == WM_OPENED && m.req == req) {
			s->id = m.session;
			s->audit_id = steal_pointer(&m.audit_id);
			s->policy_json = steal_pointer(&m.json);
			s->languages_json = steal_pointer(&m.langs);
			s->limits_json = steal_pointer(&m.limits);
			s->jail_json = steal_pointer(&m.jail);
			wmsg_free(&m);
			if (!s->audit_id)
				s->audit_id = xstrdup("");
			if (!s->languages_json)
				s->languages_json = xstrdup("[]");
			return 0;
		}
		if (m.type == WM_ERROR && m.req == req) {
			from_error(&m, err);
			wmsg_free(&m);
			return werr_wrap(err, "opening a session");
		}
		wmsg_free(&m);
	}
}

void wresult_free(struct wresult *r)
{
	uint32_t i;

	if (!r)
		return;
	for (i = 0; r->denied && i < r->n_denied; i++)
		free(r->denied[i].name);
	free(r->denied);
	free(r->message);
	memset(r, 0, sizeof(*r));
}

/* Take the RESULT out of m: the caller owns it, m no longer does. */
static void take_result(struct wmsg *m, struct wresult *res)
{
	*res = m->res;
	memset(&m->res, 0, sizeof(m->res));
}

int bclient_run(struct bclient *b, uint32_t session, const char *language, const char *code,
                size_t len, const struct bclient_cb *cb, void *ctx,
                volatile sig_atomic_t *interrupt, struct wresult *res, struct werr *err)
{
	uint32_t block = b->next_block++;

	memset(res, 0, sizeof(*res));
	if (wproto_run(&b->c.out, session, block, language, code, len, err) < 0 ||
	    send_out(b, err) < 0)
		return -1;
	for (;;) {
		struct pollfd pfd = { .fd = b->c.fd, .events = POLLIN };
		struct wmsg m = { 0 };
		int n;

		if (interrupt && *interrupt) {
			*interrupt = 0;
			if (wproto_interrupt(&b->c.out, session, err) < 0 || send_out(b, err) < 0)
				return -1;
		}
		/* whole frames already buffered first, then wait for more */
		n = wconn_next(&b->c, &m, err);
		if (n < 0)
			return werr_wrap(err, "reading from the supervisor");
		if (n == 0) {
			int pr = poll(&pfd, 1, BCLIENT_POLL_MS);
			if (pr < 0 && errno != EINTR)
				return werr_set(err, errno, "waiting for the supervisor");
			if (pr > 0 && wconn_fill(&b->c, err) < 0) {
				if (b->c.eof)
					return werr_set(err, 0, "the supervisor closed the connection "
					                "while a block ran");
				return werr_wrap(err, "reading from the supervisor");
			}
			continue;
		}
		if (m.session != session) {
			wmsg_free(&m);
			continue;
		}
		switch (m.type) {
		case WM_OUTPUT:
			if (m.block == block && cb && cb->output)
				cb->output(ctx, m.stream, m.data, m.data_len);
			break;
		case WM_DISPLAY:
			if (m.block == block && cb && cb->display)
				cb->display(ctx, m.format, m.data, m.data_len);
			break;
		case WM_LINE:
			if (m.block == block && cb && cb->line)
				cb->line(ctx, m.line);
			break;
		case WM_AUDIT:
			if (m.block == block && cb && cb->audit)
				cb->audit(ctx, m.syscall ? m.syscall : "?", m.count);
			break;
		case WM_REFUSALS:
			if (m.block == block && cb && cb->refusals)
				cb->refusals(ctx, m.text ? m.text : "");
			break;
		case WM_RESULT:
			if (m.res.block == block) {
				take_result(&m, res);
				wmsg_free(&m);
				return 0;
			}
			break;
		case WM_ERROR:
			if (m.block == block || m.block == 0) {
				from_error(&m, err);
				wmsg_free(&m);
				return -1;
			}
			break;
		case WM_CLOSED:
			wmsg_free(&m);
			return werr_set(err, 0, "the supervisor closed the session while a block ran");
		default:
			break;
		}
		wmsg_free(&m);
	}
}

int bclient_close(struct bclient *b, uint32_t session, struct werr *err)
{
	if (wproto_close(&b->c.out, session, err) < 0 || send_out(b, err) < 0)
		return -1;
	for (;;) {
		struct wmsg m = { 0 };

		if (read_msg(b, &m, err) < 0)
			return -1;
		if (m.type == WM_CLOSED && m.session == session) {
			wmsg_free(&m);
			return 0;
		}
		if (m.type == WM_ERROR && m.session == session && m.req == 0 && m.block == 0) {
			from_error(&m, err);
			wmsg_free(&m);
			return werr_wrap(err, "closing the session");
		}
		wmsg_free(&m);
	}
}

int bclient_languages(struct bclient *b, char **json, struct werr *err)
{
	uint32_t req = b->next_req++;

	*json = NULL;
	if (wproto_langs(&b->c.out, req, err) < 0 || send_out(b, err) < 0)
		return -1;
	for (;;) {
		struct wmsg m = { 0 };

		if (read_msg(b, &m, err) < 0)
			return -1;
		if (m.type == WM_LANGLIST && m.req == req) {
			*json = m.langs ? steal_pointer(&m.langs) : xstrdup("[]");
			wmsg_free(&m);
			return 0;
		}
		if (m.type == WM_ERROR && m.req == req) {
			from_error(&m, err);
			wmsg_free(&m);
			return -1;
		}
		wmsg_free(&m);
	}
}

int bclient_edit(struct bclient *b, const char *text, char **out, struct werr *err)
{
	uint32_t req = b->next_req++;

	*out = NULL;
	if (wproto_edit(&b->c.out, req, text, err) < 0 || send_out(b, err) < 0)
		return -1;
	for (;;) {
		struct wmsg m = { 0 };

		if (read_msg(b, &m, err) < 0)
			return -1;
		if (m.type == WM_EDITED && m.req == req) {
			*out = m.text ? steal_pointer(&m.text) : xstrdup("");
			wmsg_free(&m);
			return 0;
		}
		if (m.type == WM_ERROR && m.req == req) {
			from_error(&m, err);
			wmsg_free(&m);
			return werr_wrap(err, "opening the editor");
		}
		wmsg_free(&m);
	}
}

/* One WIDENED for req. */
static int widened(struct bclient *b, uint32_t req, uint8_t *status, uint32_t *out_flags,
                   char **text, struct werr *err)
{
	for (;;) {
		struct wmsg m = { 0 };

		if (read_msg(b, &m, err) < 0)
			return -1;
		if (m.type == WM_WIDENED && m.req == req) {
			*status = m.kind;
			if (out_flags)
				*out_flags = m.flags;
			*text = m.text ? steal_pointer(&m.text) : xstrdup("");
			wmsg_free(&m);
			return 0;
		}
		if (m.type == WM_ERROR && m.req == req) {
			*status = WW_REFUSED;
			*text = m.text ? steal_pointer(&m.text) : xstrdup("refused");
			wmsg_free(&m);
			return 0;
		}
		wmsg_free(&m);
	}
}

int bclient_widen(struct bclient *b, uint32_t session, unsigned kind, const char *value,
                  uint32_t flags, uint8_t *status, uint32_t *out_flags, char **text,
                  struct werr *err)
{
	uint32_t req = b->next_req++;

	*text = NULL;
	if (wproto_widen(&b->c.out, req, session, (uint8_t)kind, value, flags, err) < 0 ||
	    send_out(b, err) < 0)
		return -1;
	return widened(b, req, status, out_flags, text, err);
}

int bclient_revoke(struct bclient *b, uint32_t session, uint8_t *status, uint32_t *out_flags,
                   char **text, struct werr *err)
{
	uint32_t req = b->next_req++;

	*text = NULL;
	if (wproto_revoke(&b->c.out, req, session, err) < 0 || send_out(b, err) < 0)
		return -1;
	return widened(b, req, status, out_flags, text, err);
}

int bclient_save(struct bclient *b, uint32_t session, const char *name, uint8_t *status,
                 char **text, struct werr *err)
{
	uint32_t req = b->next_req++;

	*text = NULL;
	if (wproto_save(&b->c.out, req, session, name, err) < 0 || send_out(b, err) < 0)
		return -1;
	return widened(b, req, status, NULL, text, err);
}
