/* wclose_later: drop an fd whose release is slow without waiting for it.
 *
 * The last close of a packet socket (the network watch, jail/netwatch.c)
 * waits for an RCU grace period in the kernel (packet_release ->
 * synchronize_net): 8-15 ms on this 2-core VM, on the path of whoever
 * drops it last.  If that were the jail's init, the supervisor would see
 * the jail end that much later; if it were warden at its exit, `warden
 * run` would return that much later.  So the supervisor keeps a copy until
 * the jail is reaped and then hands it to the closer: a forked helper,
 * one per process, started on first use, that receives fds over a
 * socketpair and closes them in its own time.  It ends when this process
 * closes its end (at exit), after the fds already sent.
 *
 * The closer holds nothing else (every other fd is closed at its start),
 * is in a session of its own (a terminal's ^C is not for it), and, forked
 * from a root supervisor, drops to nobody first: closing needs no
 * privilege.  If it cannot be started or has died, the fd is closed here,
 * and only the time is lost. */
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "warden/util.h"

static int closer_fd = -1;
static pid_t closer_pid;

static __attribute__((noreturn)) void closer_main(int s)
{
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setsid();
	if (dup2(s, 0) < 0)
		_exit(1);
	syscall(SYS_close_range, 1, ~0U, 0);
	if (getuid() == 0 && (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
	                      setresuid(65534, 65534, 65534) < 0))
		_exit(1);
	for (;;) {
		char b, cbuf[CMSG_SPACE(sizeof(int) * 16)];
		struct iovec iov = { .iov_base = &b, .iov_len = 1 };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
		                     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
		ssize_t n = recvmsg(0, &mh, MSG_CMSG_CLOEXEC);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(0);
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
				continue;
			for (size_t i = 0; i < k; i++) {
				int fd;

				memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
				close(fd);
			}
		}
	}
}

static int closer_start(void)
{
	int sp[2];
	pid_t pid;

	if (closer_pid > 0)
		(void)waitpid(closer_pid, NULL, WNOHANG);   /* one that died */
	closer_pid = 0;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(sp[0]);
		close(sp[1]);
		return -1;
	}
	if (pid == 0)
		closer_main(sp[1]);
	close(sp[1]);
	closer_fd = sp[0];
	closer_pid = pid;
	return 0;
}

void wclose_later(int *fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = "c", .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
	                     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

	if (*fd < 0)
		return;
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), fd, sizeof(int));
	for (int tries = 0; tries < 2; tries++) {
		if (closer_fd < 0 && closer_start() < 0)
			break;
		if (sendmsg(closer_fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) == 1)
			break;
		/* it died (EPIPE), or is so far behind that its queue is full:
		 * a new one takes over */
		close(closer_fd);
		closer_fd = -1;
	}
	close(*fd);   /* not the last reference when the closer has it */
	*fd = -1;
}
