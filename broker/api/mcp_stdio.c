/* warden mcp: the MCP server on stdio (docs/mcp.md), a transport over the
 * core of mcp.h.
 *
 * Newline-delimited JSON-RPC on stdin and stdout; stdout carries nothing
 * else (messages for people go to stderr).  One poll loop watches stdin and
 * the supervisor socket, and wakes for the core's timers.  A line longer
 * than MCP_LINE_MAX is answered once with -32700 and skipped up to its
 * newline, never held.  stdin's EOF ends the connection: its running
 * blocks are interrupted, every session is closed (every jail ends), and
 * the broker exits 0 once the supervisor confirmed it, or after
 * MCP_SHUTDOWN_MS. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "core/broker.h"
#include "mcp.h"
#include "warden/util.h"
#include "warden/version.h"

#define MCP_READ_CHUNK (64u * 1024)
#define MCP_SHUTDOWN_MS 5000

struct mstdio {
	struct bclient b;
	struct mcp_server *srv;
	struct mcp_conn *conn;
	char *line;
	size_t line_len;
	bool discarding, eof, out_broken;
};

static void send_stdout(void *ctx, const char *json, size_t len)
{
	struct mstdio *m = ctx;
	char *buf;

	if (m->out_broken)
		return;
	buf = xmalloc(len + 1);
	memcpy(buf, json, len);
	buf[len] = '\n';
	if (write_all(STDOUT_FILENO, buf, len + 1) < 0)
		m->out_broken = true;   /* the client is gone: as stdin's EOF */
	free(buf);
}

static void take_input(struct mstdio *m, const char *buf, size_t n)
{
	while (n > 0) {
		const char *nl = memchr(buf, '\n', n);
		size_t seg = nl ? (size_t)(nl - buf) : n;

		if (!m->discarding) {
			if (m->line_len + seg > MCP_LINE_MAX) {
				static const char err[] = "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32700,"
					"\"message\":\"a message line is longer than 2097152 bytes; it was "
					"skipped up to its newline\"}}";
				send_stdout(m, err, sizeof(err) - 1);
				m->discarding = true;
				m->line_len = 0;
			} else {
				memcpy(m->line + m->line_len, buf, seg);
				m->line_len += seg;
			}
		}
		if (!nl)
			return;
		if (!m->discarding)
			mcp_conn_line(m->conn, m->line, m->line_len);
		m->discarding = false;
		m->line_len = 0;
		buf = nl + 1;
		n -= seg + 1;
	}
}

/* 0 ok, -1 the supervisor is gone (said on stderr) */
static int read_supervisor(struct mstdio *m)
{
	struct werr err = { 0 };
	struct wmsg msg = { 0 };
	int r;

	if (wconn_fill(&m->b.c, &err) < 0 && !m->b.c.eof) {
		fprintf(stderr, "warden-broker: reading from the supervisor: %s\n", err.msg);
		return -1;
	}
	while ((r = wconn_next(&m->b.c, &msg, &err)) > 0) {
		if (!mcp_server_frame(m->srv, &msg) && msg.type == WM_ERROR)
			fprintf(stderr, "warden-broker: %s\n", msg.text ? msg.text : "error");
		wmsg_free(&msg);
	}
	if (r < 0) {
		fprintf(stderr, "warden-broker: a frame from the supervisor: %s\n", err.msg);
		return -1;
	}
	if (m->b.c.eof) {
		fputs("warden-broker: the supervisor closed the connection\n", stderr);
		return -1;
	}
	return 0;
}

static void begin_shutdown(struct mstdio *m)
{
	m->eof = true;
	if (m->line_len > 0 && !m->discarding)
		mcp_conn_line(m->conn, m->line, m->line_len);   /* a last line without newline */
	m->line_len = 0;
	mcp_conn_free(m->conn);   /* its blocks interrupted, its session closed */
	m->conn = NULL;
	mcp_server_close_all(m->srv);
}

static void usage(FILE *f)
{
	fputs("usage: warden-broker mcp\n"
	      "MCP (JSON-RPC) on stdin and stdout; see docs/mcp.md.\n", f);
}

int mcp_main(int argc, char **argv, const struct bdirs *d)
{
	struct mcp_opts opts = { .server_version = WARDEN_VERSION };
	struct mstdio m = { 0 };
	struct werr err = { 0 };
	long deadline = 0;
	char *buf;
	int rc = 1;

	(void)d;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		}
		fprintf(stderr, "warden-broker mcp: unknown option '%s'\n", argv[i]);
		usage(stderr);
		return 125;
	}
	if (bclient_init(&m.b, BROKER_SUP_FD, &err) < 0) {
		fprintf(stderr, "warden-broker: %s\n", err.msg);
		bclient_free(&m.b);
		return 125;
	}
	m.srv = mcp_server_new(&m.b, &opts);
	if (mcp_server_start(m.srv, &err) < 0) {
		fprintf(stderr, "warden-broker: %s\n", err.msg);
		mcp_server_free(m.srv);
		bclient_free(&m.b);
		return 125;
	}
	m.conn = mcp_conn_new(m.srv, MCP_CONN_DEFAULT_SESSION, send_stdout, &m);
	m.line = xmalloc(MCP_LINE_MAX + 1);
	buf = xmalloc(MCP_READ_CHUNK);

	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = m.eof ? -1 : STDIN_FILENO, .events = POLLIN },
			{ .fd = m.b.c.fd, .events = POLLIN },
		};
		long now = mcp_now_ms();
		int timeout = mcp_server_timeout(m.srv, now), pr;

		if (m.out_broken && !m.eof)
			begin_shutdown(&m);
		if (m.eof) {
			if (mcp_server_done(m.srv)) {
				rc = 0;
				break;
			}
			if (!deadline)
				deadline = now + MCP_SHUTDOWN_MS;
			if (deadline <= now) {
				rc = 0;
				break;
			}
			if (timeout < 0 || timeout > deadline - now)
				timeout = (int)(deadline - now);
		}
		pr = poll(pfd, 2, timeout);
		if (pr < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "warden-broker: poll: %s\n", strerror(errno));
			break;
		}
		if (pfd[1].revents && read_supervisor(&m) < 0) {
			rc = 1;
			break;
		}
		if (pfd[0].revents) {
			ssize_t n = read(STDIN_FILENO, buf, MCP_READ_CHUNK);
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0)
				begin_shutdown(&m);
			else
				take_input(&m, buf, (size_t)n);
		}
		mcp_server_tick(m.srv, mcp_now_ms());
	}
	mcp_conn_free(m.conn);
	mcp_server_free(m.srv);
	free(buf);
	free(m.line);
	bclient_free(&m.b);
	return rc;
}
