/* The end of a learning run (supervisor/learn.h): the denied calls and
 * the end go to the learner, which prints its report; its policy and its
 * JSON list, written into memfds, are copied where the command line said,
 * byte for byte: the supervisor does not parse them (what the learner
 * writes derives from the jail's memory).  Nothing is written when the
 * learning is incomplete. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "learn.h"
#include "warden/buf.h"
#include "warden/learn.h"
#include "warden/log.h"
#include "warden/util.h"

#define COPY_MAX (16u << 20)

static int send_buf(struct wlearn *L, const struct wbuf *b)
{
	return L->sock.fd >= 0 && send(L->sock.fd, b->d, b->len, MSG_NOSIGNAL) == (ssize_t)b->len
	       ? 0 : -1;
}

/* Where the policy and the JSON go, opened before the run (an unwritable
 * path fails before the program runs) without truncating: a file is
 * replaced only once learning is complete, and one made here is removed
 * when it is not. */
static int open_out(struct wlearn_out *o, const char *path, struct werr *err)
{
	o->fd = -1;
	o->path = path;
	o->created = false;
	if (!path)
		return 0;
	if (!strcmp(path, "-")) {
		o->fd = dup(1);
		return o->fd < 0 ? werr_set(err, errno, "--write -: stdout") : 0;
	}
	o->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (o->fd >= 0)
		o->created = true;
	else if (errno == EEXIST)
		o->fd = open(path, O_WRONLY | O_CLOEXEC);
	if (o->fd < 0)
		return werr_set(err, errno, "%s: cannot write it; choose another file", path);
	return 0;
}

int wlearn_outputs(struct wlearn *L, const char *write_path, const char *json_path,
                   struct werr *err)
{
	return open_out(&L->out[0], write_path, err) < 0 || open_out(&L->out[1], json_path, err) < 0
	       ? -1 : 0;
}

/* memfd -> the output, whole */
static int copy_out(int from, struct wlearn_out *o, struct werr *err)
{
	char buf[65536];
	off_t off = 0;

	if (strcmp(o->path, "-") && ftruncate(o->fd, 0) < 0)
		return werr_set(err, errno, "writing %s", o->path);
	for (;;) {
		ssize_t n = pread(from, buf, sizeof(buf), off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || off >= (off_t)COPY_MAX)
			break;
		if (write_all(o->fd, buf, (size_t)n) < 0)
			return werr_set(err, errno, "writing %s", o->path);
		off += n;
	}
	o->created = false;   /* it is the result now */
	return 0;
}

static void out_close(struct wlearn_out *o)
{
	if (o->created && o->path)
		(void)unlink(o->path);
	closep(&o->fd);
	o->created = false;
}

int wlearn_finish(struct wlearn *L, const struct wnotify *n, struct werr *err)
{
	const char *write_path = L->out[0].path, *json_path = L->out[1].path;
	struct pollfd p = { .fd = L->pidfd, .events = POLLIN };
	siginfo_t si;
	struct wbuf b;
	bool ok;
	int rc = 0;

	wbuf_init(&b, WL_FRAME_MAX);
	/* the calls the policy denied, with the supervisor's counts */
	for (size_t i = 0; n && i < n->n && L->sock.fd >= 0; i++) {
		if (!n->tab[i].count)
			continue;
		wbuf_reset(&b);
		if (wbuf_put_u8(&b, WLM_DENIED) < 0 || wbuf_put_str(&b, n->tab[i].name) < 0 ||
		    wbuf_put_u32(&b, (uint32_t)n->tab[i].nr) < 0 ||
		    wbuf_put_u64(&b, n->tab[i].count) < 0 || wbuf_put_str(&b, n->tab[i].first) < 0 ||
		    send_buf(L, &b) < 0)
			break;
	}
	wbuf_reset(&b);
	if (wbuf_put_u8(&b, WLM_END) < 0 || wbuf_put_u64(&b, L->unexamined) < 0 ||
	    wbuf_put_str(&b, L->why) < 0 || send_buf(L, &b) < 0) {
		if (!L->why[0])
			snprintf(L->why, sizeof(L->why), "the learner was gone at the end of the run");
	}
	wbuf_free(&b);
	/* its report, bounded: a learner that does not finish is killed */
	while (L->pidfd >= 0 && poll(&p, 1, WLEARN_END_MS) < 0 && errno == EINTR)
		;
	if (L->pidfd >= 0 && !(p.revents & POLLIN)) {
		syscall(SYS_pidfd_send_signal, L->pidfd, SIGKILL, NULL, 0);
		if (!L->why[0])
			snprintf(L->why, sizeof(L->why), "the learner did not finish its report "
			         "within %d s", WLEARN_END_MS / 1000);
	}
	memset(&si, 0, sizeof(si));
	if (L->pidfd >= 0)
		while (syscall(SYS_waitid, P_PIDFD, L->pidfd, &si, WEXITED, NULL) < 0 && errno == EINTR)
			;
	closep(&L->pidfd);
	L->pid = 0;
	ok = si.si_code == CLD_EXITED && si.si_status == 0 && !L->why[0] && !L->unexamined;
	if (!ok) {
		if (!L->why[0] && si.si_code == CLD_EXITED)
			snprintf(L->why, sizeof(L->why), "the learner failed (exit status %d)",
			         si.si_status);
		else if (!L->why[0] && !L->unexamined)
			snprintf(L->why, sizeof(L->why), "the learner was killed by signal %d",
			         si.si_status);
		else if (!L->why[0])
			snprintf(L->why, sizeof(L->why), "%llu calls were not examined",
			         (unsigned long long)L->unexamined);
		wlog_warn("learning is incomplete: %s%s", L->why,
		          write_path || json_path ? "; nothing was written: run it again" : "");
		return werr_set(err, 0, "learning is incomplete: %s", L->why);
	}
	if (write_path && (rc = copy_out(L->policy_fd, &L->out[0], err)) == 0 &&
	    strcmp(write_path, "-"))
		fprintf(stderr, "warden: wrote the policy to %s: check it with `warden policy check "
		        "%s`, run with --policy %s, or save it in ~/.config/warden/profiles/\n",
		        write_path, write_path, write_path);
	if (rc == 0 && json_path)
		rc = copy_out(L->json_fd, &L->out[1], err);
	if (rc < 0)
		wlog_error("%s", err->msg);
	return rc;
}

void wlearn_free(struct wlearn *L)
{
	if (L->sock.fd >= 0)
		wloop_unwatch(L->loop, &L->sock);
	if (L->timer.fd >= 0)
		wloop_unwatch(L->loop, &L->timer);
	if (L->pidfd >= 0) {
		syscall(SYS_pidfd_send_signal, L->pidfd, SIGKILL, NULL, 0);
		while (syscall(SYS_waitid, P_PIDFD, L->pidfd, NULL, WEXITED, NULL) < 0 &&
		       errno == EINTR)
			;
	}
	closep(&L->pidfd);
	closep(&L->policy_fd);
	closep(&L->json_fd);
	out_close(&L->out[0]);
	out_close(&L->out[1]);
	free(L->prog_owned);
	free(L->pend);
	free(L->resp);
	memset(L, 0, sizeof(*L));
	L->sock.fd = L->timer.fd = L->pidfd = L->policy_fd = L->json_fd = L->notify_fd = -1;
	L->out[0].fd = L->out[1].fd = -1;
}
