/* warden serve --listen: the network front of the serve protocol, in the
 * unprivileged, confined broker (listen.h).
 *
 * libwebsockets speaks HTTP/1.1, WebSocket and TLS; warden parses none of
 * it.  lws runs the loop: the supervisor's socket, the chats' wake fd and
 * the listening socket are adopted into it as raw descriptors.  The
 * listening socket came from the supervisor (fd 8): the broker accepts on
 * it and hands each connection to lws (lws_adopt_descriptor_vhost), so it
 * never calls bind() or listen() and its Landlock rules still allow no
 * TCP bind, its seccomp filter no unix socket() (SECURITY.md G210, G45).
 *
 * The order of a request: lws reads the headers; then, before any body is
 * read and before the serve protocol hears of the connection, the
 * Authorization header is checked (LWS_CALLBACK_HTTP for HTTP requests,
 * LWS_CALLBACK_HTTP_CONFIRM_UPGRADE for WebSocket upgrades): anything but
 * the token is answered 401 (G211).  A CONNECT request, which lws would
 * turn into a raw socket without asking, is hung up on. */
#include <errno.h>
#include <fcntl.h>
#include <libwebsockets.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api_stdio.h"
#include "listen.h"
#include "listen_int.h"
#include "mcp.h"
#include "serve.h"
#include "serve_opts.h"
#include "warden/broker_start.h"
#include "warden/token.h"
#include "warden/util.h"

#define TICK_US (250 * LWS_US_PER_MS)

/* ---- answers to HTTP ------------------------------------------------------- */

/* The request carries the token. */
static bool authorized(struct blisten *l, struct lws *wsi)
{
	char hdr[LAUTH_HEADER_MAX + 1];
	int n = lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_AUTHORIZATION);

	if (n <= 0 || n > LAUTH_HEADER_MAX)
		return false;
	n = lws_hdr_copy(wsi, hdr, sizeof(hdr), WSI_TOKEN_HTTP_AUTHORIZATION);
	if (n <= 0)
		return false;
	return lauth_check(&l->auth, hdr, (size_t)n) == 1;
}

static const char unauth_body[] =
	"401: this warden needs \"Authorization: Bearer TOKEN\" (the token is in the file "
	"warden named when it started, or the one given with --token-file)\n";

static bool uri_is(struct lws *wsi, enum lws_token_indexes t, const char *path)
{
	char uri[64];
	int n = lws_hdr_total_length(wsi, t);

	if (n <= 0 || n >= (int)sizeof(uri) || lws_hdr_copy(wsi, uri, sizeof(uri), t) < 0)
		return false;
	/* the path alone: a query string is not part of it */
	uri[strcspn(uri, "?")] = '\0';
	return !strcmp(uri, path);
}

static int on_http(struct blisten *l, struct conn *cn, struct lws *wsi)
{
	if (!authorized(l, wsi)) {
		if (listen_respond(wsi, 401, unauth_body) < 0)
			return -1;
		return lws_http_transaction_completed(wsi) ? -1 : 0;
	}
	if (uri_is(wsi, WSI_TOKEN_POST_URI, "/mcp") || uri_is(wsi, WSI_TOKEN_GET_URI, "/mcp") ||
	    uri_is(wsi, WSI_TOKEN_DELETE_URI, "/mcp") || uri_is(wsi, WSI_TOKEN_PUT_URI, "/mcp") ||
	    uri_is(wsi, WSI_TOKEN_OPTIONS_URI, "/mcp") || uri_is(wsi, WSI_TOKEN_PATCH_URI, "/mcp")) {
		if (!cn)
			return listen_respond(wsi, 500, "500: no state for this connection\n") < 0 ||
			       lws_http_transaction_completed(wsi) ? -1 : 0;
		return lmcp_request(l, cn, wsi);
	}
	if (uri_is(wsi, WSI_TOKEN_GET_URI, "/ws")) {
		if (listen_respond(wsi, 400, "400: /ws speaks WebSocket: send an Upgrade request\n") < 0)
			return -1;
	} else if (listen_respond(wsi, 404, "404: warden serves /ws (WebSocket) and /mcp (MCP over "
	                          "HTTP)\n") < 0) {
		return -1;
	}
	return lws_http_transaction_completed(wsi) ? -1 : 0;
}

/* 0: the upgrade goes on; 1: answered here; -1: hang up. */
static int on_upgrade(struct blisten *l, struct lws *wsi, const char *what)
{
	if (!authorized(l, wsi))
		return listen_respond(wsi, 401, unauth_body) < 0 ? -1 : 1;
	if (!what || strcasecmp(what, "websocket"))
		return listen_respond(wsi, 400, "400: only WebSocket upgrades\n") < 0 ? -1 : 1;
	if (!uri_is(wsi, WSI_TOKEN_GET_URI, "/ws"))
		return listen_respond(wsi, 404, "404: the WebSocket endpoint is /ws\n") < 0 ? -1 : 1;
	return 0;
}

/* ---- /ws: a client of the serve protocol ------------------------------------------- */

static void conn_emit(void *ctx, const char *json, size_t len)
{
	struct conn *cn = ctx;
	struct outmsg *m;

	if (cn->dead)
		return;
	if (cn->queued + len > CONN_QUEUE_MAX) {
		/* a client that does not read its events: dropped, its sessions end */
		fprintf(stderr, "warden-broker: a WebSocket client left %zu bytes of events unread; "
		        "closing it\n", cn->queued);
		cn->dead = true;
		lws_set_timeout(cn->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
		return;
	}
	m = xmalloc(sizeof(*m) + LWS_PRE + len);
	m->next = NULL;
	m->len = len;
	memcpy(m->buf + LWS_PRE, json, len);
	if (cn->tail)
		cn->tail->next = m;
	else
		cn->head = m;
	cn->tail = m;
	cn->queued += len;
	lws_callback_on_writable(cn->wsi);
}

static int conn_write(struct conn *cn)
{
	struct outmsg *m = cn->head;

	if (!m || cn->dead)
		return 0;
	cn->head = m->next;
	if (!cn->head)
		cn->tail = NULL;
	cn->queued -= m->len;
	if (lws_write(cn->wsi, m->buf + LWS_PRE, m->len, LWS_WRITE_TEXT) < (int)m->len) {
		free(m);
		return -1;
	}
	free(m);
	if (cn->head)
		lws_callback_on_writable(cn->wsi);
	return 0;
}

/* One text frame's piece: a whole message is one request. */
static void conn_receive(struct conn *cn, const char *in, size_t len)
{
	struct lws *wsi = cn->wsi;

	if (lws_is_first_fragment(wsi)) {
		cn->in_len = 0;
		cn->in_skip = false;
		cn->in_binary = lws_frame_is_binary(wsi);
	}
	if (!cn->in_skip && !cn->in_binary) {
		if (cn->in_len + len > SERVE_LINE_MAX) {
			cn->in_skip = true;
		} else {
			listen_take(cn, in, len);
		}
	}
	if (!lws_is_final_fragment(wsi) || lws_remaining_packet_payload(wsi))
		return;
	if (cn->in_binary)
		serve_client_error(cn->c, "a binary message is not a request: send each request as "
		                   "one JSON object in a text message");
	else if (cn->in_skip)
		serve_client_error(cn->c, "a request is longer than 2097152 bytes; it was skipped "
		                   "(code blocks are limited to 1048576 bytes)");
	else
		serve_client_request(cn->c, cn->in ? cn->in : "", cn->in_len);
	cn->in_len = 0;
	if (cn->in_cap > 65536) {   /* a large message: its buffer goes with it */
		free(cn->in);
		cn->in = NULL;
		cn->in_cap = 0;
	}
}

static void conn_end(struct conn *cn)
{
	if (cn->c) {
		serve_client_gone(cn->c);
		cn->c = NULL;
	}
	while (cn->head) {
		struct outmsg *m = cn->head;
		cn->head = m->next;
		free(m);
	}
	cn->tail = NULL;
	cn->queued = 0;
	free(cn->in);
	cn->in = NULL;
	cn->in_len = cn->in_cap = 0;
}

static int cb_net(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                  size_t len)
{
	struct blisten *l = lws_context_user(lws_get_context(wsi));
	struct conn *cn = user;

	/* the token first, whatever else holds: these two decide who is in */
	switch (reason) {
	case LWS_CALLBACK_HTTP:
		return on_http(l, cn, wsi);
	case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
		return on_upgrade(l, wsi, in);
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		/* checked again at the handshake: an upgrade that came another
		 * way is hung up on */
		return authorized(l, wsi) ? 0 : -1;
	default:
		break;
	}
	/* a connection that never got as far as a protocol (a TLS handshake
	 * that failed) has no per-connection data: nothing of ours to do */
	if (!cn)
		return lws_callback_http_dummy(wsi, reason, user, in, len);
	switch (reason) {
	case LWS_CALLBACK_HTTP_BODY:
		return lmcp_body(cn, in, len);
	case LWS_CALLBACK_HTTP_BODY_COMPLETION:
		return lmcp_body_done(cn);
	case LWS_CALLBACK_HTTP_WRITEABLE:
		return lmcp_writable(cn);
	case LWS_CALLBACK_CLOSED_HTTP:
		lmcp_end(cn);
		return 0;
	case LWS_CALLBACK_ESTABLISHED:
		cn->l = l;
		cn->wsi = wsi;
		cn->c = serve_client_new(l->s, conn_emit, cn);
		return 0;
	case LWS_CALLBACK_RECEIVE:
		if (cn->c)
			conn_receive(cn, in, len);
		return 0;
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return conn_write(cn);
	case LWS_CALLBACK_CLOSED:
	case LWS_CALLBACK_WSI_DESTROY:
		conn_end(cn);
		lmcp_end(cn);
		return 0;
	case LWS_CALLBACK_RAW_ADOPT:
	case LWS_CALLBACK_RAW_RX:
	case LWS_CALLBACK_RAW_WRITEABLE:
		/* a CONNECT request turned raw by lws: nothing here for it */
		return -1;
	default:
		return lws_callback_http_dummy(wsi, reason, user, in, len);
	}
}

/* ---- the broker's own descriptors in lws's loop ------------------------------------ */

static void accept_again(lws_sorted_usec_list_t *sul)
{
	struct blisten *l = lws_container_of(sul, struct blisten, sul_accept);

	if (l->listen_wsi)
		lws_rx_flow_control(l->listen_wsi, 1);
}

static void accept_all(struct blisten *l)
{
	for (;;) {
		lws_sock_file_fd_type u;
		int fd = accept4(l->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
				/* no room for one more: pause instead of spinning on it */
				lws_rx_flow_control(l->listen_wsi, 0);
				lws_sul_schedule(l->ctx, 0, &l->sul_accept, accept_again, ACCEPT_PAUSE_US);
			}
			return;
		}
		u.sockfd = fd;
		/* lws closes fd itself when it cannot take it */
		lws_adopt_descriptor_vhost(l->vh, LWS_ADOPT_SOCKET | LWS_ADOPT_HTTP |
		                                  (l->tls ? LWS_ADOPT_ALLOW_SSL : 0), u, NULL, NULL);
	}
}

static void quit(struct blisten *l, int rc)
{
	l->quit = true;
	l->rc = rc;
	lws_cancel_service(l->ctx);
}

static int cb_fd(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                 size_t len)
{
	struct blisten *l = lws_context_user(lws_get_context(wsi));
	int fd;

	switch (reason) {
	case LWS_CALLBACK_RAW_ADOPT_FILE:
		return 0;
	case LWS_CALLBACK_RAW_RX_FILE:
		fd = lws_get_socket_fd(wsi);
		if (fd == l->sup_dup) {
			if (serve_on_supervisor(l->s) < 0)
				quit(l, 1);
		} else if (fd == l->wake_dup) {
			serve_wake(l->s);
		} else if (fd == l->listen_dup) {
			accept_all(l);
		}
		return 0;
	case LWS_CALLBACK_RAW_CLOSE_FILE:
		if (lws_get_socket_fd(wsi) == l->sup_dup && !l->quit)
			quit(l, 1);
		return 0;
	case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
	case LWS_CALLBACK_PROTOCOL_INIT:
	case LWS_CALLBACK_PROTOCOL_DESTROY:
	case LWS_CALLBACK_WSI_CREATE:
	case LWS_CALLBACK_WSI_DESTROY:
	case LWS_CALLBACK_RAW_FILE_BIND_PROTOCOL:
	case LWS_CALLBACK_RAW_FILE_DROP_PROTOCOL:
	case LWS_CALLBACK_GET_THREAD_ID:
	case LWS_CALLBACK_ADD_POLL_FD:
	case LWS_CALLBACK_DEL_POLL_FD:
	case LWS_CALLBACK_CHANGE_MODE_POLL_FD:
	case LWS_CALLBACK_LOCK_POLL:
	case LWS_CALLBACK_UNLOCK_POLL:
		return 0;
	default:
		/* a client that named this protocol: never */
		return -1;
	}
}

/* Idle sessions, MCP calls' timeouts: a quarter of a second is close
 * enough for both. */
static void tick(lws_sorted_usec_list_t *sul)
{
	struct blisten *l = lws_container_of(sul, struct blisten, sul_tick);

	serve_tick(l->s);
	if (l->mcp)
		mcp_server_tick(l->mcp, mcp_now_ms());
	lws_sul_schedule(l->ctx, 0, &l->sul_tick, tick, TICK_US);
}

static const struct lws_protocols protocols[] = {
	/* HTTP and /ws (a WebSocket without a subprotocol binds to the first) */
	{ "warden", cb_net, sizeof(struct conn), 64 * 1024, 0, NULL, 0 },
	{ "warden-internal-fd", cb_fd, 0, 0, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 }
};

static int adopt_fd(struct blisten *l, int fd, int *dup_out, struct lws **wsi_out,
                    struct werr *err)
{
	lws_sock_file_fd_type u;
	struct lws *w;

	/* lws closes what it adopted: give it its own descriptor */
	*dup_out = fcntl(fd, F_DUPFD_CLOEXEC, 16);
	if (*dup_out < 0)
		return werr_set(err, errno, "dup");
	u.filefd = *dup_out;
	w = lws_adopt_descriptor_vhost(l->vh, LWS_ADOPT_RAW_FILE_DESC, u, "warden-internal-fd",
	                               NULL);
	if (!w)
		return werr_set(err, 0, "libwebsockets could not watch fd %d", fd);
	if (wsi_out)
		*wsi_out = w;
	return 0;
}

/* ---- start and end ------------------------------------------------------------------ */

static int read_fd(int fd, size_t max, char **out, size_t *len, const char *what,
                   struct werr *err)
{
	char *buf = xmalloc(max + 1);
	size_t n = 0;

	for (;;) {
		ssize_t r = read(fd, buf + n, max + 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			return werr_set(err, errno, "reading %s", what);
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max) {
			free(buf);
			return werr_set(err, 0, "%s: more than %zu bytes", what, max);
		}
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

int blisten_preload(bool tls, struct blisten **out, struct werr *err)
{
	struct blisten *l = xcalloc(1, sizeof(*l));
	struct lws_context_creation_info info;
	char *tok = NULL;
	size_t tlen = 0;
	struct stat st;

	*out = NULL;
	l->tls = tls;
	l->listen_fd = WBROKER_LISTEN_FD;
	l->sup_dup = l->wake_dup = l->listen_dup = -1;
	if (fstat(WBROKER_LISTEN_FD, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		werr_set(err, 0, "fd %d is not the listening socket: warden-broker is started by "
		         "`warden serve --listen`", WBROKER_LISTEN_FD);
		goto fail;
	}
	if (read_fd(WBROKER_TOKEN_FD, WTOKEN_MAX, &tok, &tlen, "the token", err) < 0)
		goto fail;
	close(WBROKER_TOKEN_FD);
	if (lauth_init(&l->auth, tok, tlen) < 0) {
		werr_set(err, 0, "the token the supervisor handed over is not one");
		goto fail;
	}
	explicit_bzero(tok, tlen);
	free(tok);
	tok = NULL;
	if (tls && (read_fd(WBROKER_CERT_FD, TLS_FILE_MAX, &l->cert, &l->cert_len,
	                    "the TLS certificate", err) < 0 ||
	            read_fd(WBROKER_KEY_FD, TLS_FILE_MAX, &l->key, &l->key_len, "the TLS key",
	                    err) < 0))
		goto fail;
	close(WBROKER_CERT_FD);
	close(WBROKER_KEY_FD);

	lws_set_log_level(LLL_ERR, NULL);
	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN_SERVER;   /* a server that adopts, never binds */
	info.protocols = protocols;
	info.user = l;
	info.gid = -1;
	info.uid = -1;
	info.options = LWS_SERVER_OPTION_VALIDATE_UTF8 | LWS_SERVER_OPTION_DISABLE_IPV6 |
	               (tls ? LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT : 0);
	info.alpn = "http/1.1";   /* no HTTP/2: one protocol to serve and to reason about */
	if (tls) {
		info.server_ssl_cert_mem = l->cert;
		info.server_ssl_cert_mem_len = (unsigned)l->cert_len;
		info.server_ssl_private_key_mem = l->key;
		info.server_ssl_private_key_mem_len = (unsigned)l->key_len;
	}
	l->ctx = lws_create_context(&info);
	if (l->key) {
		explicit_bzero(l->key, l->key_len);
		free(l->key);
		l->key = NULL;
	}
	if (!l->ctx) {
		werr_set(err, 0, "libwebsockets could not start%s", tls ? " (is --tls-cert a PEM "
		         "certificate and --tls-key its PEM private key?)" : "");
		goto fail;
	}
	l->vh = lws_get_vhost_by_name(l->ctx, "default");
	if (!l->vh) {
		werr_set(err, 0, "libwebsockets made no vhost");
		goto fail;
	}
	*out = l;
	return 0;
fail:
	if (tok) {
		explicit_bzero(tok, tlen);
		free(tok);
	}
	blisten_free(l);
	return -1;
}

int blisten_main(struct blisten *l, const struct serve_opts *o)
{
	struct serve_cfg cfg = { .session_idle_s = o->session_idle_s, .chat = o->chat };
	struct werr err = { 0 };

	l->s = serve_new(o->sup_fd, &cfg, &err);
	if (!l->s || lmcp_start(l, o, &err) < 0) {
		fprintf(stderr, "warden-broker: %s\n", err.msg);
		return 125;
	}
	fcntl(l->listen_fd, F_SETFL, fcntl(l->listen_fd, F_GETFL) | O_NONBLOCK);
	if (adopt_fd(l, serve_sup_fd(l->s), &l->sup_dup, NULL, &err) < 0 ||
	    adopt_fd(l, serve_wake_fd(l->s), &l->wake_dup, NULL, &err) < 0 ||
	    adopt_fd(l, l->listen_fd, &l->listen_dup, &l->listen_wsi, &err) < 0) {
		fprintf(stderr, "warden-broker: %s\n", err.msg);
		return 125;
	}
	lws_sul_schedule(l->ctx, 0, &l->sul_tick, tick, TICK_US);
	while (!l->quit)
		if (lws_service(l->ctx, 0) < 0)
			break;
	return l->rc;
}

void blisten_free(struct blisten *l)
{
	if (!l)
		return;
	if (l->ctx) {
		lws_sul_cancel(&l->sul_tick);
		lws_sul_cancel(&l->sul_accept);
		/* every connection ends: its client is gone before the server */
		lws_context_destroy(l->ctx);
	}
	lmcp_free(l);
	serve_free(l->s);
	free(l->cert);
	if (l->key)
		explicit_bzero(l->key, l->key_len);
	free(l->key);
	free(l);
}
