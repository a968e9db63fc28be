/* See supervisor/attach.h. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach.h"
#include "warden/cgroup.h"
#include "warden/util.h"

struct attach_req {
	uint32_t tag;
	int32_t pid;
};

struct attach_ans {
	uint32_t tag;
	int32_t err_no;
};

/* The attacher itself: one request at a time, until the supervisor's end
 * closes (or the supervisor dies: PDEATHSIG). */
static __attribute__((noreturn)) void attacher_main(int sock)
{
	for (;;) {
		struct attach_req rq;
		struct attach_ans an = { 0 };
		char cbuf[CMSG_SPACE(sizeof(int) * SV_ATTACH_FDS_MAX)];
		struct iovec iov = { .iov_base = &rq, .iov_len = sizeof(rq) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
		                     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
		ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(0);
		an.tag = rq.tag;
		if ((size_t)n != sizeof(rq) || rq.pid <= 0)
			an.err_no = EINVAL;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			size_t k;
			int fds[SV_ATTACH_FDS_MAX];

			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
				continue;
			k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			if (k > SV_ATTACH_FDS_MAX)
				k = SV_ATTACH_FDS_MAX;
			memcpy(fds, CMSG_DATA(c), k * sizeof(int));
			for (size_t i = 0; i < k; i++) {
				if (!an.err_no && wcg_attach_one(fds[i], rq.pid) < 0)
					an.err_no = errno ? errno : EIO;
				close(fds[i]);
			}
		}
		if (send(sock, &an, sizeof(an), MSG_NOSIGNAL) != (ssize_t)sizeof(an))
			_exit(0);
	}
}

int sv_attacher_start(struct sv_attacher *a, struct werr *err)
{
	int sp[2];
	pid_t pid;

	a->pid = 0;
	a->fd = -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return werr_set(err, errno, "creating the cgroup attacher's socket");
	pid = fork();
	if (pid < 0) {
		int e = errno;
		close(sp[0]);
		close(sp[1]);
		return werr_set(err, e, "starting the cgroup attacher");
	}
	if (pid == 0) {
		sigset_t none;

		/* it dies with the supervisor; it keeps only its socket */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		prctl(PR_SET_NAME, "warden-attach");   /* for ps, and tests */
		if (getppid() == 1)
			_exit(0);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_IGN);
		if (dup3(sp[1], 3, O_CLOEXEC) < 0)
			_exit(1);
		syscall(SYS_close_range, 4, ~0U, 0);
		for (int fd = 0; fd < 3; fd++)
			close(fd);
		attacher_main(3);
	}
	close(sp[1]);
	a->pid = pid;
	a->fd = sp[0];
	return 0;
}

int sv_attacher_ask(struct sv_attacher *a, uint32_t tag, pid_t pid, const int *dirfds, size_t n)
{
	struct attach_req rq = { .tag = tag, .pid = pid };
	char cbuf[CMSG_SPACE(sizeof(int) * SV_ATTACH_FDS_MAX)] = { 0 };
	struct iovec iov = { .iov_base = &rq, .iov_len = sizeof(rq) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t w;

	if (a->fd < 0 || n > SV_ATTACH_FDS_MAX)
		return -1;
	if (n) {
		struct cmsghdr *c;

		mh.msg_control = cbuf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(c), dirfds, sizeof(int) * n);
	}
	/* Never blocking: the attacher blocks on its answers while the
	 * supervisor, busy starting jails, does not read them; a blocking ask
	 * then waits on the attacher, which waits on the supervisor (seen with
	 * 1,000 sessions' first blocks at once).  A full socket is -1 here, and
	 * the caller attaches itself; session.c also keeps at most
	 * SV_ATTACH_INFLIGHT asks unanswered, far below what the socket holds. */
	do
		w = sendmsg(a->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	while (w < 0 && errno == EINTR);
	return w == (ssize_t)sizeof(rq) ? 0 : -1;
}

int sv_attacher_answer(struct sv_attacher *a, uint32_t *tag, int *err_no)
{
	struct attach_ans an;
	ssize_t n;

	if (a->fd < 0)
		return -1;
	do
		n = recv(a->fd, &an, sizeof(an), MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0 && errno == EAGAIN)
		return 0;
	if (n != (ssize_t)sizeof(an))
		return -1;
	*tag = an.tag;
	*err_no = an.err_no;
	return 1;
}

void sv_attacher_stop(struct sv_attacher *a)
{
	if (a->pid > 0) {
		kill(a->pid, SIGKILL);
		while (waitpid(a->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	a->pid = 0;
	closep(&a->fd);
}
