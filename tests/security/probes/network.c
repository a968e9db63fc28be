/* Network: a private network namespace with nothing but lo and warden's
 * network watch (jail/netwatch.c: a veth pair wd0/wd1 whose two ends are
 * both in this namespace, so nothing it carries leaves it).  Checked two
 * ways: /proc/net/dev, and SIOCGIFCONF (configured IPv4 interfaces: lo,
 * and wd0); the pair's ends are each other's peers in this namespace
 * (RTM_GETLINK: IFLA_LINK names the other, and no IFLA_LINK_NETNSID says
 * it lives elsewhere).
 * With argv[1], a TCP port the harness listens on at the host's 127.0.0.1:
 * connecting to it must fail (the jail's lo is its own); the harness checks
 * from the host that no connection arrived. */
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "probe.h"

static void try_host_port(const char *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port)),
	                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in6 sa6 = { .sin6_family = AF_INET6, .sin6_port = sa.sin_port,
	                            .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		PROBE_FAIL("socket(AF_INET, SOCK_STREAM): %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		ESCAPED("connected to the host's 127.0.0.1:%s", port);
	note("connect 127.0.0.1:%s: %s", port, strerrorname_np(errno));
	close(fd);
	/* the same over IPv6: the host listens on 127.0.0.1 only, so a
	 * connection is the jail's own ::1 (what mode none must not have) */
	fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		note("no IPv6 socket: %s", strerrorname_np(errno));
		return;
	}
	if (connect(fd, (struct sockaddr *)&sa6, sizeof(sa6)) == 0)
		note("connect [::1]:%s: connected", port);
	else
		note("connect [::1]:%s: %s", port, strerrorname_np(errno));
	close(fd);
}

/* The ifindex link's veth peer has in this namespace, or 0 (no peer, or
 * a peer in another namespace). */
static int peer_here(const char *link)
{
	struct { struct nlmsghdr h; struct ifinfomsg i; } req = {
		.h = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_GETLINK,
		       .nlmsg_flags = NLM_F_REQUEST },
		.i = { .ifi_family = AF_UNSPEC, .ifi_index = (int)if_nametoindex(link) } };
	char buf[8192];
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE), peer = 0;
	ssize_t n;

	if (fd < 0 || !req.i.ifi_index)
		PROBE_FAIL("netlink for %s: %s", link, strerror(errno));
	if (send(fd, &req, sizeof(req), 0) < 0 || (n = recv(fd, buf, sizeof(buf), 0)) <= 0)
		PROBE_FAIL("RTM_GETLINK %s: %s", link, strerror(errno));
	close(fd);
	for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
	     h = NLMSG_NEXT(h, n)) {
		struct ifinfomsg *i = NLMSG_DATA(h);
		int len = (int)IFLA_PAYLOAD(h);

		if (h->nlmsg_type != RTM_NEWLINK)
			continue;
		for (struct rtattr *a = IFLA_RTA(i); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
			if (a->rta_type == IFLA_LINK_NETNSID)
				return 0;
			if (a->rta_type == IFLA_LINK)
				memcpy(&peer, RTA_DATA(a), sizeof(int));
		}
	}
	return peer;
}

int main(int argc, char **argv)
{
	char line[512], names[256] = "";
	struct ifreq ifr[32];
	struct ifconf ifc;
	int n = 0, fd;
	FILE *f;

	if (argc > 1)
		try_host_port(argv[1]);
	f = fopen("/proc/net/dev", "re");
	if (!f)
		PROBE_FAIL("/proc/net/dev: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':'), *name = line;

		if (!colon)
			continue;     /* the two header lines */
		*colon = '\0';
		while (*name == ' ')
			name++;
		if (strcmp(name, "lo") && strcmp(name, "wd0") && strcmp(name, "wd1"))
			ESCAPED("network device %s in /proc/net/dev", name);
		n++;
		snprintf(names + strlen(names), sizeof(names) - strlen(names), " %.32s", name);
	}
	fclose(f);
	note("/proc/net/dev:%s", n ? names : " (none)");
	if (strstr(names, " wd0")) {
		if (peer_here("wd0") != (int)if_nametoindex("wd1") ||
		    peer_here("wd1") != (int)if_nametoindex("wd0"))
			ESCAPED("wd0 and wd1 are not each other's peers in the jail's namespace");
		note("wd0 and wd1: each other's peers, here");
	}

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		PROBE_FAIL("socket(AF_INET): %s", strerror(errno));
	ifc.ifc_len = sizeof(ifr);
	ifc.ifc_req = ifr;
	if (ioctl(fd, SIOCGIFCONF, &ifc) < 0)
		PROBE_FAIL("SIOCGIFCONF: %s", strerror(errno));
	for (size_t i = 0; i < ifc.ifc_len / sizeof(struct ifreq); i++)
		if (strcmp(ifr[i].ifr_name, "lo") && strcmp(ifr[i].ifr_name, "wd0"))
			ESCAPED("interface %s has an IPv4 address", ifr[i].ifr_name);
	note("SIOCGIFCONF: %zu address(es), lo and wd0 only", ifc.ifc_len / sizeof(struct ifreq));
	close(fd);
	BLOCKED("%s", probe_notes);
}
