/* Step 5: the jail's network namespace starts with lo down and nothing else.
 * Bring lo up (through libnl-route) so programs can talk to themselves on
 * 127.0.0.1; there is no route anywhere else. */
#include <errno.h>
#include <net/if.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>

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
