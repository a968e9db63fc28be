/* The supervisor's egress proxy (supervisor/proxy.c) alone, on a host
 * loopback listener, for tests/cli/proxy_engine.bats and the benchmark:
 * the same wloop and wproxy that `warden run` uses, driven by real clients
 * (curl, python) from outside.
 *
 *   proxyd [--audit FILE] [--audit-max N] [--head-timeout MS] PORTFILE [ALLOW...]
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

static int usage(void)
{
	fputs("usage: proxyd [--audit FILE] [--audit-max N] [--head-timeout MS] PORTFILE [ALLOW...]\n",
	      stderr);
	return 2;
}

int main(int argc, char **argv)
{
	struct wpolicy pol = { .name = "proxyd-test", .source = "tests/helpers/proxyd.c" };
	struct wproxy_conf conf = { .pol = &pol };
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	struct werr err = { 0 };
	struct wloop l;
	struct wsrc sig;
	struct wproxy *p;
	sigset_t set;
	char tmp[4200];
	FILE *f;
	int i = 1, fd, rc = 0;

	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "--audit")) {
			if (waudit_open(argv[i + 1], &conf.audit, &err) < 0) {
				fprintf(stderr, "proxyd: %s\n", err.msg);
				return 1;
			}
		} else if (!strcmp(argv[i], "--audit-max")) {
			conf.audit_max = (uint32_t)strtoul(argv[i + 1], NULL, 10);
		} else if (!strcmp(argv[i], "--head-timeout")) {
			conf.head_timeout_ms = (uint32_t)strtoul(argv[i + 1], NULL, 10);
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
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 1024) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
		perror("proxyd: listen");
		return 1;
	}
	p = wproxy_new(&l, fd, &conf, &err);
	if (!p) {
		fprintf(stderr, "proxyd: %s\n", err.msg);
		return 1;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", argv[i]);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%u\n", ntohs(sa.sin_port)) < 0 || fclose(f) != 0 ||
	    rename(tmp, argv[i]) < 0) {
		perror("proxyd: port file");
		return 1;
	}
	while (!l.quitting)
		if (wloop_wait(&l, -1) < 0) {
			perror("proxyd: epoll_wait");
			rc = 1;
			break;
		}
	wproxy_free(p);
	wloop_unwatch(&l, &sig);
	wloop_free(&l);
	waudit_close(conf.audit);
	wstrv_free(&pol.net_allow);
	return rc;
}
