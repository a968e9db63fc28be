/* warden serve --stdio: the serve protocol (serve.c) as JSON lines on
 * stdin and stdout, one client (docs/serve.md).
 *
 * One poll loop watches stdin, the supervisor socket and the chats' wake
 * fd.  Events are written one per line with blocking writes.  At stdin's
 * end every session is closed (their "closed" events are written), then
 * the broker exits. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "api_stdio.h"
#include "serve.h"
#include "serve_opts.h"
#include "warden/proto.h"
#include "warden/util.h"

#define SERVE_READ_CHUNK (64u * 1024)
#define SERVE_SHUTDOWN_MS 5000                    /* stdin EOF: wait this long for CLOSED */

struct stdio {
	struct sclient *c;
	char *line;
	size_t line_len;
	bool discarding;
	bool stdin_eof, out_broken;
};

static void emit_line(void *ctx, const char *json, size_t n)
{
	struct stdio *io = ctx;
	char *line;

	if (io->out_broken)
		return;
	line = xmalloc(n + 1);
	memcpy(line, json, n);
	line[n] = '\n';
	if (write_all(STDOUT_FILENO, line, n + 1) < 0)
		io->out_broken = true;
	free(line);
}

/* Split what stdin gave into lines; a line over SERVE_LINE_MAX is reported
 * once and skipped up to its newline, never held. */
static void take_input(struct stdio *io, const char *buf, size_t n)
{
	while (n > 0) {
		const char *nl = memchr(buf, '\n', n);
		size_t seg = nl ? (size_t)(nl - buf) : n;

		if (!io->discarding) {
			if (io->line_len + seg > SERVE_LINE_MAX) {
				char msg[256];

				snprintf(msg, sizeof(msg), "a request line is longer than %u bytes; it "
				         "was skipped up to its newline (code blocks are limited to %u "
				         "bytes)", SERVE_LINE_MAX, WPROTO_CODE_MAX);
				serve_client_error(io->c, msg);
				io->discarding = true;
				io->line_len = 0;
			} else {
				memcpy(io->line + io->line_len, buf, seg);
				io->line_len += seg;
			}
		}
		if (!nl)
			return;
		if (!io->discarding)
			serve_client_request(io->c, io->line, io->line_len);
		io->discarding = false;
		io->line_len = 0;
		buf = nl + 1;
		n -= seg + 1;
	}
}

static void begin_shutdown(struct stdio *io)
{
	io->stdin_eof = true;
	if (io->line_len > 0 && !io->discarding)   /* a last line without newline */
		serve_client_request(io->c, io->line, io->line_len);
	io->line_len = 0;
	serve_client_shutdown(io->c);
}

int serve_stdio_main(const struct serve_opts *o)
{
	struct serve_cfg cfg = { .session_idle_s = o->session_idle_s, .chat = o->chat,
	                         .one_client = true };
	struct stdio io = { 0 };
	struct werr err = { 0 };
	struct serve *s = serve_new(o->sup_fd, &cfg, &err);
	char *buf = NULL;
	long deadline = 0;
	int rc = 1;

	if (!s) {
		fprintf(stderr, "warden-broker: %s\n", err.msg);
		return 125;
	}
	io.c = serve_client_new(s, emit_line, &io);
	io.line = xmalloc(SERVE_LINE_MAX + 1);
	buf = xmalloc(SERVE_READ_CHUNK);

	for (;;) {
		struct pollfd pfd[3] = {
			{ .fd = io.stdin_eof ? -1 : STDIN_FILENO, .events = POLLIN },
			{ .fd = serve_sup_fd(s), .events = POLLIN },
			{ .fd = serve_wake_fd(s), .events = POLLIN },
		};
		long timeout = serve_timeout_ms(s);
		int pr;

		if (io.out_broken && !io.stdin_eof)
			begin_shutdown(&io);
		if (io.stdin_eof) {
			long left;

			if (!serve_client_busy(io.c)) {
				rc = io.out_broken ? 1 : 0;
				break;
			}
			if (!deadline)
				deadline = serve_now_ms() + SERVE_SHUTDOWN_MS;
			left = deadline - serve_now_ms();
			if (left <= 0) {
				rc = io.out_broken ? 1 : 0;
				break;
			}
			if (timeout < 0 || left < timeout)
				timeout = left;
		}
		pr = poll(pfd, 3, timeout < 0 ? -1 : (int)(timeout > 60000 ? 60000 : timeout));
		if (pr < 0) {
			if (errno == EINTR)
				continue;
			serve_client_error(io.c, "poll failed");
			break;
		}
		serve_tick(s);
		if (pfd[1].revents && serve_on_supervisor(s) < 0) {
			rc = 1;
			break;
		}
		if (pfd[2].revents)
			serve_wake(s);
		if (pfd[0].revents) {
			ssize_t n = read(STDIN_FILENO, buf, SERVE_READ_CHUNK);
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0)
				begin_shutdown(&io);
			else
				take_input(&io, buf, (size_t)n);
		}
	}
	serve_free(s);
	free(buf);
	free(io.line);
	return rc;
}
