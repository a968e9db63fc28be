/* wclose_later: drop an fd whose release is slow without waiting for it.
 *
 * The last close of a packet socket (the network watch, jail/netwatch.c)
 * waits for an RCU grace period in the kernel (packet_release ->
 * synchronize_net): 8-15 ms on this 2-core VM, on the path of whoever
 * drops it last.  If that were the jail's init, the supervisor would see
 * the jail end that much later; if it were warden at its exit, `warden
 * run` would return that much later.  So the supervisor keeps a copy until
 * the jail is reaped and then hands it to the closer: a helper process,
 * one per process, started on first use, that receives fds over a
 * socketpair, and closes them once we say we have closed ours ("d"), or
 * when this process closes its end (at exit).
 *
 * The closer holds nothing else (every other fd is closed at its start),
 * is in a session of its own (a terminal's ^C is not for it) and reads
 * nothing but fds from this process.  It keeps this process's credentials:
 * sharing our memory, it must not become a user someone else could trace
 * (and a change of credentials would make that memory non-dumpable for us
 * too); as root it is a root process that only closes what we sent it.
 * If it cannot be started or has died, the fd is closed here, and only the
 * time is lost. */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "warden/util.h"

static int closer_fd = -1;
static pid_t closer_pid;

/* The closer shares this process's memory (CLONE_VM: no copy of the page
 * tables, which was most of a fork's 0.4 ms here), so it runs on a stack
 * of its own and touches nothing else of ours: it makes its system calls
 * directly (rsys: no errno, which lives in our thread's TLS), calls no
 * libc function but the CMSG macros' plain arithmetic,
 * and takes everything it needs in its argument (its socket's number).  It is not a thread of
 * ours (no CLONE_THREAD, CLONE_FILES or CLONE_SIGHAND): its own fds,
 * signal dispositions and credentials, with every signal blocked. */
#define CLOSER_STACK (16 * 1024)

#ifndef __x86_64__
#error "common/closer.c makes its system calls for x86_64, the one architecture warden's filter has"
#endif
__attribute__((no_sanitize_address)) static long rsys4(long n, long a, long b, long c, long d)
{
	register long r10 __asm__("r10") = d;
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
	                 : "rcx", "r11", "memory");
	return ret;
}
#define rsys(n, a, b, c) rsys4(n, a, b, c, 0)

/* Not instrumented: under ASan its checks would run on our thread's state
 * from another process. */
#define HELD_MAX 64

__attribute__((no_sanitize_address)) static void drop_held(int *held, int *n)
{
	for (int i = 0; i < *n; i++)
		rsys(SYS_close, held[i], 0, 0);
	*n = 0;
}

__attribute__((no_sanitize_address)) static int closer_main(void *p)
{
	uint64_t all = ~(uint64_t)0;
	int s = (int)(intptr_t)p, held[HELD_MAX], n_held = 0;

	rsys4(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, 0, sizeof(all));
	rsys(SYS_setsid, 0, 0, 0);
	if (s > 0)
		rsys(SYS_close_range, 0, s - 1, 0);
	rsys(SYS_close_range, s + 1, ~0U, 0);
	for (;;) {
		char b = 0, cbuf[CMSG_SPACE(sizeof(int) * 16)];
		struct iovec iov = { .iov_base = &b, .iov_len = 1 };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
		                     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
		long n = rsys(SYS_recvmsg, s, (long)&mh, MSG_CMSG_CLOEXEC);

		if (n == -EINTR)
			continue;
		if (n <= 0)
			break;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
				continue;
			for (size_t i = 0; i < k; i++) {
				const unsigned char *d = CMSG_DATA(c) + i * sizeof(int);
				unsigned char fd[sizeof(int)];

				for (size_t j = 0; j < sizeof(int); j++)   /* no memcpy: see above */
					fd[j] = d[j];
				if (n_held < HELD_MAX)
					held[n_held++] = *(int *)(void *)fd;
				else
					rsys(SYS_close, *(int *)(void *)fd, 0, 0);
			}
		}
		/* 'd': the sender has closed its copies of what it sent */
		if (b == 'd')
			drop_held(held, &n_held);
	}
	drop_held(held, &n_held);
	rsys(SYS_exit, 0, 0, 0);
	return 0;
}

static int closer_start(void)
{
	char *stack;
	int sp[2];
	pid_t pid;

	if (closer_pid > 0)
		(void)waitpid(closer_pid, NULL, WNOHANG);   /* one that died */
	closer_pid = 0;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return -1;
	/* a stack of its own each time: a closer replaced because it fell
	 * behind may still be running on the last one (never unmapped: a
	 * replacement is rare, and 16 KiB) */
	stack = mmap(NULL, CLOSER_STACK, PROT_READ | PROT_WRITE,
	             MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED) {
		close(sp[0]);
		close(sp[1]);
		return -1;
	}
	pid = clone(closer_main, stack + CLOSER_STACK, CLONE_VM | SIGCHLD, (void *)(intptr_t)sp[1]);
	close(sp[1]);
	if (pid < 0) {
		close(sp[0]);
		return -1;
	}
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
	/* Ours first, then "done": the closer holds what it received until
	 * then, so its close is the last one, not ours (left to itself it
	 * was often faster than this close, and ours paid the 8-15 ms) */
	close(*fd);
	*fd = -1;
	if (closer_fd >= 0)
		(void)send(closer_fd, "d", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
}
