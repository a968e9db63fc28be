/* Step 5b: in mode "proxy", make the listener warden's proxy serves and
 * hand it over (lo is up by then: jail/netwatch.c), and the one way fds
 * go from the child to warden before READY. */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "jail_impl.h"

int jail_sync_send_fds(int sync, uint8_t type, const int *fds, size_t n, const char *what,
                       struct werr *err)
{
	struct sync_frame f = { .type = type };
	char cbuf[CMSG_SPACE(sizeof(int) * 2)] = { 0 };
	struct iovec iov = { .iov_base = &f, .iov_len = sizeof(f) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
	                     .msg_control = cbuf, .msg_controllen = CMSG_SPACE(sizeof(int) * n) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

	if (n < 1 || n > 2)
		return werr_set(err, EINVAL, "handing %s to warden", what);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * n);
	memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
	if (sendmsg(sync, &mh, MSG_NOSIGNAL) < 0)
		return werr_set(err, errno, "handing %s to warden", what);
	return 0;
}

/* A TCP listener on 127.0.0.1:JAIL_PROXY_PORT of the jail's own namespace,
 * sent to the parent in a SYNC_PROXY frame and closed here: the jail never
 * holds it, so no jailed process can accept on it or close it.  Safe while
 * the child still has capabilities: it binds only inside the jail's own
 * network namespace, which has nothing but lo. */
int jail_net_proxy_listener(int sync, struct werr *err)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(JAIL_PROXY_PORT),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int one = 1, fd, r = 0;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return werr_set(err, errno, "creating the proxy's socket");
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 512) < 0)
		r = werr_set(err, errno, "listening on the jail's 127.0.0.1:%d for the proxy",
		             JAIL_PROXY_PORT);
	else
		r = jail_sync_send_fds(sync, SYNC_PROXY, &fd, 1, "the proxy's listener", err);
	close(fd);
	return r;
}
