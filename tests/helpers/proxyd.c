/* The supervisor's egress proxy (supervisor/proxy.c) alone, on a host
 * loopback listener, for tests/cli/proxy_engine.bats and the benchmark:
 * the same wloop and wproxy that `warden run` uses, driven by real clients
 * (curl, python) from outside.
 *
 *   proxyd [--audit FILE] [--audit-max N] [--head-timeout MS] [--dial-timeout MS]
 *          [--idle-timeout MS] [--second PORTFILE2] PORTFILE [ALLOW...]
 *
 * The timeouts are struct wproxy_conf's (proxy.h), set small by the tests;
 * warden itself always uses the defaults.
 *
 * --second: a second proxy with the same list in the same loop, on its own
 * port (written to PORTFILE2): two jails' proxies in one supervisor.
 *
 * Listens on 127.0.0.1, an ephemeral port, which it writes to PORTFILE
 * (renamed into place once listening); serves until SIGTERM or SIGINT, then
 * frees the proxy (so its "net_dropped" record is written) and exits 0. */
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "audit.h"
#include "loop.h"
#include "proxy.h"
#include "warden/policy.h"

static void on_signal(struct wloop *l, struct wsrc *src, uint32_t ev)
{
	struct signalfd_siginfo si;

	(void)!read(src->fd, &si, sizeof(si));
	wloop_quit(l, 0);
}

/* A listener on 127.0.0.1, an ephemeral port, written to portfile once
 * listening; -1 on failure (said on stderr). */
static int listen_on(const char *portfile, struct wloop *l, const struct wproxy_conf *conf,
                     struct wproxy **out)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	struct werr err = { 0 };
	char tmp[4200];
	FILE *f;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 1024) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
		perror("proxyd: listen");
		return -1;
	}
	*out = wproxy_new(l, fd, conf, &err);
	if (!*out) {
		fprintf(stderr, "proxyd: %s\n", err.msg);
		return -1;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", portfile);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%u\n", ntohs(sa.sin_port)) < 0 || fclose(f) != 0 ||
	    rename(tmp, portfile) < 0) {
		perror("proxyd: port file");
		return -1;
	}
	return 0;
}

static int usage(void)
{
	fputs("usage: proxyd [--audit FILE] [--audit-max N] [--head-timeout MS] [--dial-timeout MS] "
	      "[--idle-timeout MS] [--second PORTFILE2] PORTFILE [ALLOW...]\n",
	      stderr);
	return 2;
}

int main(int argc, char **argv)
{
	struct wpolicy pol = { .name = "proxyd-test", .source = "tests/helpers/proxyd.c" };
	struct wproxy_conf conf = { .pol = &pol };
	struct werr err = { 0 };
	struct wloop l;
	struct wsrc sig;
	struct wproxy *p, *p2 = NULL;
	const char *second = NULL;
	sigset_t set;
	int i = 1, rc = 0;

	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "--audit")) {
			if (waudit_open(argv[i + 1], &conf.audit, &err) < 0) {
				fprintf(stderr, "proxyd: %s\n", err.msg);
				return 1;
			}
		} else if (!strcmp(argv[i], "--audit-max")) {
			conf.audit_max = (uint32_t)strtoul(argv[i + 1], NULL, 10);
		} else if (!strcmp(argv[i], "--second")) {
			second = argv[i + 1];
		} else if (!strcmp(argv[i], "--head-timeout")) {
			conf.head_timeout_ms = (uint32_t)strtoul(argv[i + 1], NULL, 10);
		} else if (!strcmp(argv[i], "--dial-timeout")) {
			conf.dial_timeout_ms = (uint32_t)strtoul(argv[i + 1], NULL, 10);
		} else if (!strcmp(argv[i], "--idle-timeout")) {
			conf.relay_idle_ms = (uint32_t)strtoul(argv[i + 1], NULL, 10);
		} else {
			return usage();
		}
	}
	if (i >= argc || strlen(argv[i]) > 4000)
		return usage();
	for (int k = i + 1; k < argc; k++)
		wstrv_push(&pol.net_allow, argv[k]);

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (wloop_init(&l, &err) < 0 ||
	    wloop_watch(&l, &sig, signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK), EPOLLIN,
	                on_signal, NULL) < 0) {
		fprintf(stderr, "proxyd: loop: %s\n", err.msg);
		return 1;
	}
	if ((second && strlen(second) > 4000) || listen_on(argv[i], &l, &conf, &p) < 0 ||
	    (second && listen_on(second, &l, &conf, &p2) < 0))
		return 1;
	while (!l.quitting)
		if (wloop_wait(&l, -1) < 0) {
			perror("proxyd: epoll_wait");
			rc = 1;
			break;
		}
	wproxy_free(p);
	wproxy_free(p2);
	wloop_unwatch(&l, &sig);
	wloop_free(&l);
	waudit_close(conf.audit);
	wstrv_free(&pol.net_allow);
	return rc;
}
