/* warden-egress: the egress proxy of network mode "proxy", in a process of
 * its own (docs/design.md "Network: the egress proxy's process", issue 21).
 * Started by the supervisor (supervisor/egress_start.c), never by hand:
 * fd 3 is its SOCK_SEQPACKET link (warden/egress.h).
 *
 * Order:
 *   1. only fds 0-3 stay open; not dumpable (no core, no ptrace by its
 *      own uid, /proc/PID of it owned by root); its name for ps and pgrep;
 *   2. CONFIG, the first frame;
 *   3. what needs the system before confinement: the open-files limit
 *      raised, the loop, the resolver (resolv.conf, /dev/urandom, the
 *      /etc/hosts snapshot);
 *   4. confinement (confine.c), before a byte of a jail is read;
 *   5. READY, then ADD/REMOVE served until the supervisor closes its end. */
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "confine.h"
#include "engine.h"
#include "link.h"
#include "resolve.h"
#include "warden/egress.h"

#if defined(__SANITIZE_ADDRESS__)
/* make asan: LeakSanitizer's check at exit needs ptrace and /proc, which the
 * confined process does not have; memory errors are still caught. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}
#endif

static void say(const char *what, const struct werr *err)
{
	char msg[WERR_MSG_MAX + 64];

	snprintf(msg, sizeof(msg), "%s: %s", what, err->msg);
	elink_warn(msg);
	fprintf(stderr, "warden-egress: %s\n", msg);
}

int main(void)
{
	struct wegress_conf conf;
	struct werr err = { 0 };
	struct wloop l;
	struct eres *res;
	struct stat st;
	int type = 0, rc;
	socklen_t tl = sizeof(type);

	if (syscall(SYS_close_range, WEGRESS_FD + 1, ~0U, 0) < 0)
		for (int fd = WEGRESS_FD + 1; fd < 65536; fd++)
			close(fd);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	/* started by execveat on an fd, the kernel names the process after the
	 * fd's number: give it its name back */
	prctl(PR_SET_NAME, "warden-egress", 0, 0, 0);
	if (fstat(WEGRESS_FD, &st) < 0 || !S_ISSOCK(st.st_mode) ||
	    getsockopt(WEGRESS_FD, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_SEQPACKET) {
		fputs("warden-egress: fd 3 is not the supervisor's socket: warden-egress is started "
		      "by warden (network mode proxy), not directly\n", stderr);
		return 125;
	}
	/* a peer that went away is an error to handle, not a death */
	signal(SIGPIPE, SIG_IGN);
	if (elink_config(&conf, &err) < 0) {
		say("starting", &err);
		return 125;
	}
	eproxy_fd_budget(conf.fd_reserve);
	if (wloop_init(&l, &err) < 0 || !(res = eres_new(&l, elink_warn, &err))) {
		say("starting", &err);
		return 125;
	}
	if (econfine(elink_warn, &err) < 0) {
		say("starting", &err);
		return 125;
	}
	rc = elink_serve(&l, res, &conf);
	eres_free(res);
	wloop_free(&l);
	return rc;
}
