/* The host's own addresses (hostaddr.h): one RTM_GETADDR dump per call.
 *
 * Read at each resolution, not cached: an address added to an interface
 * a moment ago (a VPN, a container bridge, DHCP) counts at once.  The dump
 * comes from the kernel of this namespace, never from the jail, and holds
 * only addresses (a few dozen bytes each).  Only a NETLINK_ROUTE socket is used
 * (socket, sendto, recvmsg, close): what the egress process's seccomp filter
 * allows for it (egress/confine.c).  getifaddrs(3) would do the same after a dump of
 * every link with its statistics, which this does not need. */
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hostaddr.h"
#include "warden/netallow.h"
#include "warden/util.h"

#define SEQ 1

/* Mark every addrs[i] equal to the address of one attribute of ifa. */
static void mark(const struct nlmsghdr *nh, const struct sockaddr_storage *addrs, size_t n,
                 bool *own)
{
	const struct ifaddrmsg *ifa = NLMSG_DATA(nh);
	size_t alen = ifa->ifa_family == AF_INET ? 4 : ifa->ifa_family == AF_INET6 ? 16 : 0;
	int left = (int)IFA_PAYLOAD(nh);

	if (!alen)
		return;
	for (const struct rtattr *rta = IFA_RTA(ifa); RTA_OK(rta, left); rta = RTA_NEXT(rta, left)) {
		/* IFA_LOCAL is the interface's own address; IFA_ADDRESS is the
		 * same, or the peer of a point-to-point link: both count */
		if ((rta->rta_type != IFA_LOCAL && rta->rta_type != IFA_ADDRESS) ||
		    RTA_PAYLOAD(rta) != alen)
			continue;
		for (size_t i = 0; i < n; i++)
			if (wnet_addr_is((const struct sockaddr *)&addrs[i], ifa->ifa_family,
			                 RTA_DATA(rta)))
				own[i] = true;
	}
}

int ehost_own(const struct sockaddr_storage *addrs, size_t n, bool *own, struct werr *err)
{
	struct {
		struct nlmsghdr nh;
		struct ifaddrmsg ifa;
	} req = {
		.nh = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_GETADDR,
		        .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP, .nlmsg_seq = SEQ },
		.ifa = { .ifa_family = AF_UNSPEC },
	};
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	/* a dump's messages come in buffers of at most 32 KiB (the kernel
	 * sizes them by the reader's buffer, up to that) */
	static char buf[32768] __attribute__((aligned(NLMSG_ALIGNTO)));
	_cleanup_close_ int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);

	memset(own, 0, n * sizeof(*own));
	if (fd < 0)
		return werr_set(err, errno, "reading the host's addresses: a NETLINK_ROUTE socket");
	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return werr_set(err, errno, "reading the host's addresses: sending RTM_GETADDR");
	for (;;) {
		struct sockaddr_nl from = { 0 };
		struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
		struct msghdr mh = { .msg_name = &from, .msg_namelen = sizeof(from),
		                     .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t got = recvmsg(fd, &mh, 0);
		int left;

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			goto failed;
		if (mh.msg_flags & MSG_TRUNC) {
			errno = EMSGSIZE;
			goto failed;
		}
		if (from.nl_pid != 0)   /* only the kernel answers */
			continue;
		left = (int)got;
		for (const struct nlmsghdr *nh = (const void *)buf; NLMSG_OK(nh, left);
		     nh = NLMSG_NEXT(nh, left)) {
			if (nh->nlmsg_seq != SEQ)
				continue;
			if (nh->nlmsg_type == NLMSG_DONE)
				return 0;
			if (nh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(nh);

				errno = nh->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) && e->error ? -e->error
				                                                             : EPROTO;
				goto failed;
			}
			if (nh->nlmsg_type == RTM_NEWADDR &&
			    nh->nlmsg_len >= NLMSG_LENGTH(sizeof(struct ifaddrmsg)))
				mark(nh, addrs, n, own);
		}
	}
failed:
	memset(own, 0, n * sizeof(*own));
	return werr_set(err, errno, "reading the host's addresses (RTM_GETADDR)");
}
