/* The egress proxy's engine (egress/engine.c) alone, on a host loopback
 * listener, in this process (no confinement, no supervisor), for
 * tests/cli/proxy_engine.bats: the same wloop, resolver and eproxy that
 * warden-egress runs, driven by real clients (curl, python) from outside.
 * Its records are written as the supervisor writes them
 * (wproxy_net_record); warnings go to stderr.
 *
 *   proxyd [--audit FILE] [--audit-max N] [--head-timeout MS] [--dial-timeout MS]
 *          [--idle-timeout MS] [--second PORTFILE2] [--fd-free N] [--confine 1]
 *          PORTFILE [ALLOW...]
 *
 * The timeouts are struct eproxy_conf's (egress/engine.h), set small by the
 * tests; warden itself always uses the defaults.
 *
 * --second: a second proxy with the same list in the same loop, on its own
 * port (written to PORTFILE2): two jails' proxies in one egress process.
 *
 * --fd-free N: once listening, fill the fd table with /dev/null until only N
 * slots are free (N from 1 to 64; the open-files limit, set with prlimit,
 * at most 4096): the table is full before the fd budget refuses anything,
 * as when the process's own fds outgrow its reserve, so an accept meets
 * EMFILE (engine.c's pause).
 *
 * --confine 1: once listening, confine this process as warden-egress
 * confines itself (egress/confine.c: no_new_privs, Landlock with no file
 * access, the seccomp allowlist that kills on anything else), so every
 * engine test also proves that the allowlist covers what the engine does.
 *
 * Listens on 127.0.0.1, an ephemeral port, which it writes to PORTFILE
 * (renamed into place once listening); serves until SIGTERM or SIGINT, then
 * frees the proxy (so its "net_dropped" record is written) and exits 0. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "audit.h"
#include "confine.h"
#include "engine.h"
#include "warden/loop.h"
#include "proxy.h"
#include "resolve.h"
#include "warden/policy.h"

static struct waudit *audit;

static void on_audit(void *ctx, const struct wegress_rec *r)
{
	const struct eproxy_conf *c = ctx;

	waudit_emit(audit, "net", wproxy_net_record(r, NULL, r->rule >= 0 ? c->allow[r->rule] : NULL));
}

static void on_warn(const char *msg)
{
	fprintf(stderr, "warden: warning: %s\n", msg);
}

static void dropped(uint64_t n, uint32_t limit)
{
	json_object *r;

	if (!n || !audit)
		return;
	r = json_object_new_object();
	json_object_object_add(r, "dropped", json_object_new_int64((int64_t)n));
	json_object_object_add(r, "limit", json_object_new_int64(limit ? limit : 4096));
	waudit_emit(audit, "net_dropped", r);
}

static void on_signal(struct wloop *l, struct wsrc *src, uint32_t ev)
{
	struct signalfd_siginfo si;

	(void)!read(src->fd, &si, sizeof(si));
	wloop_quit(l, 0);
}

/* --fd-free n: /dev/null in every slot of the fd table but n; -1 on failure
 * (said on stderr).  The fds are kept: the table stays full. */
static int fill_fds(int n)
{
	struct rlimit rl;
	int last[64], k = 0, fd;

	if (n < 1 || n > 64 || getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur > 4096) {
		fprintf(stderr, "proxyd: --fd-free takes 1 to 64 and an open-files limit of at most "
		        "4096 (prlimit --nofile=200)\n");
		return -1;
	}
	while ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
		last[k++ % 64] = fd;
	if (errno != EMFILE || k < n) {
		perror("proxyd: --fd-free: filling the fd table");
		return -1;
	}
	while (n--)
		close(last[--k % 64]);
	return 0;
}

/* A listener on 127.0.0.1, an ephemeral port, written to portfile once
 * listening; -1 on failure (said on stderr). */
static int listen_on(const char *portfile, struct wloop *l, const struct eproxy_conf *conf,
                     struct eproxy **out)
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
	*out = eproxy_new(l, fd, conf, &err);
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
	      "[--idle-timeout MS] [--second PORTFILE2] [--fd-free N] [--confine 1] PORTFILE "
	      "[ALLOW...]\n",
	      stderr);
	return 2;
}

int main(int argc, char **argv)
{
	struct wstrv allow = { 0 };
	struct eproxy_conf conf = { .name = "proxyd-test", .source = "tests/helpers/proxyd.c",
	                            .ctx = &conf, .warn = on_warn };
	struct werr err = { 0 };
	struct wloop l;
	struct wsrc sig;
	struct eproxy *p, *p2 = NULL;
	const char *second = NULL;
	bool confine = false;
	int fd_free = 0;
	sigset_t set;
	int i = 1, rc = 0;

	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "--audit")) {
			if (waudit_open(argv[i + 1], &audit, &err) < 0) {
				fprintf(stderr, "proxyd: %s\n", err.msg);
				return 1;
			}
			conf.audit = on_audit;
		} else if (!strcmp(argv[i], "--audit-max")) {
			conf.audit_max = (uint32_t)strtoul(argv[i + 1], NULL, 10);
		} else if (!strcmp(argv[i], "--second")) {
			second = argv[i + 1];
		} else if (!strcmp(argv[i], "--fd-free")) {
			fd_free = atoi(argv[i + 1]);
			if (fd_free < 1)
				return usage();
		} else if (!strcmp(argv[i], "--confine")) {
			confine = !strcmp(argv[i + 1], "1");
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
		wstrv_push(&allow, argv[k]);
	conf.allow = allow.v;
	conf.n_allow = allow.n;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	eproxy_fd_budget(64);
	if (wloop_init(&l, &err) < 0 ||
	    wloop_watch(&l, &sig, signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK), EPOLLIN,
	                on_signal, NULL) < 0 || !(conf.res = eres_new(&l, on_warn, &err))) {
		fprintf(stderr, "proxyd: loop: %s\n", err.msg);
		return 1;
	}
	if ((second && strlen(second) > 4000) || listen_on(argv[i], &l, &conf, &p) < 0 ||
	    (second && listen_on(second, &l, &conf, &p2) < 0))
		return 1;
	/* json-c seeds its hash from RDRAND, or getrandom(2) where RDRAND
	 * fails: at the first key, which must come before the filter (the
	 * egress process itself writes no JSON) */
	{
		json_object *o = json_object_new_object();
		json_object_object_add(o, "seed", NULL);
		json_object_put(o);
	}
	/* before confinement (which allows no open): it needs one fd for a
	 * moment (Landlock's ruleset), which it gives back */
	if (fd_free && fill_fds(fd_free) < 0)
		return 1;
	if (confine && econfine(on_warn, &err) < 0) {
		fprintf(stderr, "proxyd: %s\n", err.msg);
		return 1;
	}
	while (!l.quitting)
		if (wloop_wait(&l, -1) < 0) {
			perror("proxyd: epoll_wait");
			rc = 1;
			break;
		}
	dropped(eproxy_free(p), conf.audit_max);
	if (p2)
		dropped(eproxy_free(p2), conf.audit_max);
	eres_free(conf.res);
	wloop_unwatch(&l, &sig);
	wloop_free(&l);
	waudit_close(audit);
	wstrv_free(&allow);
	return rc;
}
