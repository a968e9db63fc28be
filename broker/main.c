/* warden-broker MODE [ARGS]: the unprivileged half (broker.h).
 *
 * Order: only fds 0-7 stay open; fd 3 must be the supervisor's socket, 4
 * and 5 the config and data directories, 6 and 7 files the command line
 * named (include/warden/broker_start.h); chat loads what the LLM clients
 * need while files are still reachable; then the broker confines itself,
 * before it reads a byte of input; then the mode runs. */
#include <errno.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "core/broker.h"
#include "chat/chat.h"
#include "core/client.h"
#include "llm/llm.h"
#include "warden/util.h"

#if defined(__SANITIZE_ADDRESS__)
/* make asan: LeakSanitizer's check at exit needs ptrace and /proc, which the
 * confined broker does not have; memory errors are still caught. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}
#endif

static void usage(FILE *f)
{
	fputs("usage: warden-broker serve --stdio | mcp | chat [ARGS]\n"
	      "warden-broker is started by `warden serve`, `warden mcp` or `warden chat`, not "
	      "directly.\n", f);
}

/* Every fd but 0-2 and what the supervisor hands over (3-7,
 * include/warden/broker_start.h): an inherited fd would outlive
 * confinement (Landlock checks opens, not fds already open). */
static void close_other_fds(void)
{
	if (syscall(SYS_close_range, WBROKER_LAST_FD + 1, ~0U, 0) == 0)
		return;
	for (int fd = WBROKER_LAST_FD + 1; fd < 65536; fd++)
		close(fd);
}

int main(int argc, char **argv)
{
	struct bdirs dirs = { 0 };
	struct werr err = { 0 };
	/* serve --stdio and mcp talk to no model: no TCP at all */
	uint16_t ports[CHAT_PORTS_MAX];
	struct bconfine conf = { .tcp_ports = ports, .n_tcp_ports = 0 };
	/* chat's command line, parsed once here, before confinement */
	struct chat_opts copts = { .export_fd = -1 };
	struct stat st;
	const char *mode;
	int r;

	close_other_fds();
	bfiles_init();
	/* started by execveat on an fd, the kernel names the process after the
	 * fd's number: give it its name back for ps, top and pgrep */
	prctl(PR_SET_NAME, "warden-broker", 0, 0, 0);
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 125 : 0;
	}
	mode = argv[1];
	if (strcmp(mode, "serve") && strcmp(mode, "chat") && strcmp(mode, "mcp")) {
		fprintf(stderr, "warden-broker: unknown mode '%s' (serve, mcp or chat)\n", mode);
		return 125;
	}
	if (fstat(BROKER_SUP_FD, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		fputs("warden-broker: fd 3 is not the supervisor's socket: warden-broker is started "
		      "by `warden serve` or `warden chat`, not directly\n", stderr);
		return 125;
	}
	/* a vanished reader of stdout is an error to handle, not a death */
	signal(SIGPIPE, SIG_IGN);

	if (bdirs_init(&dirs, &err) < 0) {
		fprintf(stderr, "warden-broker: %s\n", err.msg);
		return werr_exit_code(&err);
	}
	if (!strcmp(mode, "chat")) {
		/* locale data, the CA bundle and the resolver's modules are files:
		 * read them now, Landlock hides them below */
		setlocale(LC_ALL, "");
		if (llm_global_init(&err) < 0) {
			fprintf(stderr, "warden-broker: %s\n", err.msg);
			bdirs_free(&dirs);
			return werr_exit_code(&err);
		}
		/* files named on the command line (a replay recording, the
		 * conversation to resume) are read before they are out of reach */
		chat_preload(argc - 1, argv + 1, &dirs, &copts, ports, &conf.n_tcp_ports);
	}
	if (broker_confine(&dirs, &conf, &err) < 0) {
		fprintf(stderr, "warden-broker: %s\n", err.msg);
		chat_opts_free(&copts);
		bdirs_free(&dirs);
		return werr_exit_code(&err);
	}
	if (!strcmp(mode, "serve"))
		r = serve_main(argc - 1, argv + 1, &dirs);
	else if (!strcmp(mode, "mcp"))
		r = mcp_main(argc - 1, argv + 1, &dirs);
	else
		r = chat_main(&copts, &dirs);
	chat_opts_free(&copts);
	bdirs_free(&dirs);
	return r;
}
