/* Step 5: the jail's network namespace starts with lo down and nothing else.
 * In mode "none" it stays so: no address at all, not even 127.0.0.1.  In
 * "loopback" and "proxy", bring lo up (through libnl-route) so programs can
 * talk to themselves on 127.0.0.1; there is no route anywhere else.  In
 * "proxy", then make the listener warden's proxy serves and hand it over. */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "jail_impl.h"

int jail_net_lo_up(struct werr *err)
{
	struct nl_sock *sk = nl_socket_alloc();
	struct rtnl_link *lo = NULL, *change = NULL;
	int r, ret = -1;

	if (!sk)
		return werr_set(err, ENOMEM, "netlink socket");
	if ((r = nl_connect(sk, NETLINK_ROUTE)) < 0) {
		werr_set(err, 0, "connecting to rtnetlink: %s", nl_geterror(r));
		goto out;
	}
	/* In a new network namespace lo is always ifindex 1 (it is registered
	 * first); naming it directly saves an RTM_GETLINK round trip. */
	lo = rtnl_link_alloc();
	change = rtnl_link_alloc();
	if (!lo || !change) {
		werr_set(err, ENOMEM, "rtnl_link_alloc");
		goto out;
	}
	rtnl_link_set_ifindex(lo, 1);
	rtnl_link_set_name(lo, "lo");
	rtnl_link_set_flags(change, IFF_UP);
	if ((r = rtnl_link_change(sk, lo, change, 0)) < 0) {
		werr_set(err, 0, "bringing lo up: %s", nl_geterror(r));
		goto out;
	}
	ret = 0;
out:
	rtnl_link_put(change);
	rtnl_link_put(lo);
	nl_socket_free(sk);
	return ret;
}

/* A TCP listener on 127.0.0.1:JAIL_PROXY_PORT of the jail's own namespace,
 * sent to the parent in a SYNC_PROXY frame and closed here: the jail never
 * holds it, so no jailed process can accept on it or close it.  Safe while
 * the child still has capabilities: it binds only inside the jail's own
 * network namespace, which has nothing but lo. */
int jail_sync_send_fd(int sync, uint8_t type, int fd, const char *what, struct werr *err)
{
	struct sync_frame f = { .type = type };
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = &f, .iov_len = sizeof(f) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
	                     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	if (sendmsg(sync, &mh, MSG_NOSIGNAL) < 0)
		return werr_set(err, errno, "handing %s to warden", what);
	return 0;
}

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
		r = jail_sync_send_fd(sync, SYNC_PROXY, fd, "the proxy's listener", err);
	close(fd);
	return r;
}
