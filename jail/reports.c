/* init's reports, after the jail started (jail/init.c sends them on the
 * sync socket): the program's status, the ack of a sweep, and where the
 * jail tried to go (SYNC_NET, jail/netseen.c).  init runs confined, so
 * each is checked as words from the jail: a status must be one a wait
 * could give, a destination must pass jail_net_try_ok. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jail_impl.h"

int jail_freeze(const struct jail *j)
{
	return (int)syscall(SYS_pidfd_send_signal, j->pidfd, JAIL_SIG_FREEZE, NULL, 0);
}

int jail_thaw(const struct jail *j)
{
	return (int)syscall(SYS_pidfd_send_signal, j->pidfd, JAIL_SIG_THAW, NULL, 0);
}

/* A wait status init may report: exited 0-255 or killed by a signal. */
static bool plausible_status(int st)
{
	if (WIFEXITED(st))
		return (st & ~0xff00) == 0;
	return WIFSIGNALED(st) && WTERMSIG(st) > 0 && WTERMSIG(st) < NSIG && (st & ~0xff) == 0;
}

/* A destination init reported, if it is one (jail_net_try_ok). */
static void keep_net(struct jail *j, struct jail_net_try *t)
{
	t->name[sizeof(t->name) - 1] = '\0';
	if (!jail_net_try_ok(t))
		return;
	if (j->seen.kept < JAIL_NET_KEPT)
		j->seen.t[j->seen.kept++] = *t;
	if (j->seen.n < UINT32_MAX)
		j->seen.n++;
}

void jail_net_take(struct jail *j)
{
	struct sync_frame f;

	while (j->sync_fd >= 0 &&
	       recv(j->sync_fd, &f, sizeof(f), MSG_DONTWAIT | MSG_PEEK) == (ssize_t)sizeof(f) &&
	       f.type == SYNC_NET) {
		if (recv(j->sync_fd, &f, sizeof(f), MSG_DONTWAIT) != (ssize_t)sizeof(f))
			break;
		keep_net(j, &f.net);
	}
}

enum jail_ev jail_read(struct jail *j)
{
	for (;;) {
		struct sync_frame f;
		ssize_t n;

		if (j->sync_fd < 0)
			return JAIL_EV_EOF;
		n = recv(j->sync_fd, &f, sizeof(f), MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return JAIL_EV_NONE;
		/* EOF (or an error): the fd stays open for its owner to close.
		 * A caller that watches it in epoll must remove it first: a
		 * jail being set up may hold a copy (clone copies the fd table
		 * until the child's step 7), and a registration outlives a
		 * close() while any copy of the file lives. */
		if (n <= 0)
			return JAIL_EV_EOF;
		if ((size_t)n != sizeof(f))
			continue; /* not from init: ignored */
		if (f.type == SYNC_NET) {
			keep_net(j, &f.net);
			continue;
		}
		if (f.type == SYNC_SWEPT)
			return JAIL_EV_SWEPT;
		if (f.type == SYNC_STATUS && plausible_status(f.status)) {
			j->status = f.status;
			j->have_status = true;
			return JAIL_EV_STATUS;
		}
	}
}

void jail_exit_status(struct jail *j, siginfo_t *si)
{
	enum jail_ev ev;

	/* init has exited: what it sent is queued, then EOF */
	do
		ev = jail_read(j);
	while (ev != JAIL_EV_NONE && ev != JAIL_EV_EOF);
	if (!j->have_status)
		return; /* init was killed (the supervisor did it): its own status */
	if (WIFEXITED(j->status)) {
		si->si_code = CLD_EXITED;
		si->si_status = WEXITSTATUS(j->status);
	} else {
		si->si_code = CLD_KILLED;
		si->si_status = WTERMSIG(j->status);
	}
}
