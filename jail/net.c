/* Step 5: the jail's network namespace starts with lo down and nothing else.
 * Bring lo up so programs can talk to themselves on 127.0.0.1; there is no
 * route anywhere else.  One SIOCSIFFLAGS ioctl on a throwaway socket: no
 * netlink library, whose constructors every `warden` start paid for. */
#include <errno.h>
#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "jail_impl.h"

int jail_net_lo_up(struct werr *err)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return werr_set(err, errno, "a socket to bring lo up");
	memset(&ifr, 0, sizeof(ifr));
	/* a new network namespace holds lo alone, down, with no address */
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0 ||
	    (ifr.ifr_flags |= IFF_UP, ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)) {
		int e = errno;
		close(fd);
		return werr_set(err, e, "bringing lo up in the jail's network namespace");
	}
	close(fd);
	return 0;
}
