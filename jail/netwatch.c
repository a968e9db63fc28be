/* Step 5: lo, and where a jail tried to go (issue 20).  The jail's network
 * namespace has no way out in any mode; this step gives the kernel a place
 * to send what a program sends off the jail anyway, so that the jail's init
 * can see where it was going and answer at once with the same "Network is
 * unreachable" the program got before (jail/netseen.c):
 *
 *   wd0  one end of a veth pair, in the jail's namespace: no ARP, no IPv6
 *        link-local address, addresses 192.0.2.1/32 and 2001:db8::1/128
 *        (documentation ranges), the default route of both families.  In
 *        mode none also 127.0.0.1/8 (lo stays down there, so what a
 *        resolver without /etc/resolv.conf asks for, 127.0.0.1:53, leaves
 *        through wd0 too and shows its name; a program may still bind
 *        127.0.0.1, and reaches nothing there, not even itself)
 *   wd1  the other end, no address: every packet wd0 sends arrives here
 *        and nowhere else; a packet socket bound to it, with a classic BPF
 *        filter that keeps only a TCP SYN or a UDP datagram, 512 bytes of
 *        it, is the watch init reads
 *
 * Every packet the jail sends looks up the main table first (a rule, "iif
 * lo lookup main", ahead of the local table, which moves from priority 0
 * to 3): so a jailed program that connects to one of wd0's own addresses
 * goes to the watch like any other, and only what arrives on wd0 (init's
 * answers) is delivered to them.  In modes loopback and proxy the main
 * table also has lo's own 127.0.0.0/8 and ::1, as local routes: the jail
 * still talks to itself there, and to warden's proxy; only a name lookup
 * to 127/8 goes to the watch (dns_rule).
 *
 * Who does what: the jail's child makes two sockets in its own namespace,
 * right after "go": a NETLINK_ROUTE socket and the packet socket (its
 * filter attached, not yet bound), and sends them to warden (SYNC_NETFDS),
 * first of all its reports.  warden sets the namespace up through that
 * netlink socket (jail_net_setup: lo, in modes loopback and proxy, then
 * the watch) while the child mounts, so the 0.5-1 ms this takes is off the
 * jail's path when a second core is free; "attached" then tells the child
 * whether the watch is there (SYNC_ATTACHED) or not (SYNC_ATTACHED_BARE,
 * the child closes its copy).  A netlink socket acts in the namespace it
 * was made in, with the rights of the process that made it (the child's,
 * in its own user namespace): warden's requests through it reach that
 * namespace only, whatever warden's own rights, and warden holds it only
 * until "attached".  No jailed code has run yet: the sockets and the
 * kernel's answers on them are trusted.
 *
 * If the watch cannot be made (a kernel without veth, say), the rules are
 * put back and the pair deleted again (its routes with it), and the jail
 * runs as before, with no route anywhere: ENETUNREACH at once, only
 * counted (jail/netcount.c). */
#include <errno.h>
#include <linux/filter.h>
#include <linux/ip.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/inet.h>
#include <netlink/route/link/inet6.h>
#include <netlink/route/link/veth.h>
#include <netlink/route/route.h>
#include <netlink/route/rule.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "jail_impl.h"

#define LO 1           /* ifindexes: lo is always 1 in a new namespace; */
#define WD0 2          /* these are given in the request */
#define WD1 3
#define DNS_TABLE 53   /* modes loopback and proxy: lookups to 127/8 (dns_rule) */

static const uint8_t v4_addr[4] = { 192, 0, 2, 1 };
static const uint8_t v6_addr[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };

static struct nl_addr *addr(int family, const void *bytes, int prefix)
{
	struct nl_addr *a = nl_addr_build(family, bytes, family == AF_INET ? 4 : 16);

	if (a)
		nl_addr_set_prefixlen(a, prefix);
	return a;
}

/* The veth pair (set up by link_up: the kernel refuses flags in the
 * request that creates it). */
static int make_pair(struct nl_sock *sk)
{
	struct rtnl_link *l = rtnl_link_veth_alloc(), *peer;
	int r;

	if (!l)
		return -NLE_NOMEM;
	peer = rtnl_link_veth_get_peer(l);
	rtnl_link_set_name(l, "wd0");
	rtnl_link_set_ifindex(l, WD0);
	rtnl_link_set_name(peer, "wd1");
	rtnl_link_set_ifindex(peer, WD1);
	r = rtnl_link_add(sk, l, NLM_F_CREATE | NLM_F_EXCL);
	rtnl_link_put(peer);
	rtnl_link_veth_release(l);
	return r;
}

/* Apply change to link ifindex (named name). */
static int link_set(struct nl_sock *sk, int ifindex, const char *name, struct rtnl_link *change)
{
	struct rtnl_link *l = rtnl_link_alloc();
	int r = -NLE_NOMEM;

	if (l && change) {
		rtnl_link_set_ifindex(l, ifindex);
		rtnl_link_set_name(l, name);
		r = rtnl_link_change(sk, l, change, 0);
	}
	rtnl_link_put(l);
	return r;
}

/* Bring link ifindex up with flags (lo, in a new namespace, is always
 * ifindex 1: it is registered first).  Before that, for the pair, while it
 * is down: no IPv6 link-local address on either end (one would be a local
 * address a jailed program could reach), and on wd0 route_localnet, so
 * packets to 127/8 may leave through it (mode none's resolver; in the
 * other modes lo has 127/8).  wd0 also goes without ARP: its neighbours
 * are itself, frames go out with its own address, and only wd1 gets them. */
static int link_up(struct nl_sock *sk, int ifindex, const char *name, unsigned flags)
{
	struct rtnl_link *conf = NULL, *up = rtnl_link_alloc();
	int r = 0;

	if (ifindex != LO) {
		r = (conf = rtnl_link_alloc()) ? 0 : -NLE_NOMEM;
		if (r >= 0)
			r = rtnl_link_inet6_set_addr_gen_mode(conf, IN6_ADDR_GEN_MODE_NONE);
		if (r >= 0 && ifindex == WD0)
			r = rtnl_link_inet_set_conf(conf, IPV4_DEVCONF_ROUTE_LOCALNET, 1);
		if (r >= 0)
			r = link_set(sk, ifindex, name, conf);
	}
	if (up)
		rtnl_link_set_flags(up, flags);
	if (r >= 0)
		r = link_set(sk, ifindex, name, up);
	rtnl_link_put(up);
	rtnl_link_put(conf);
	return r;
}

static int add_addr(struct nl_sock *sk, int family, const void *bytes, int prefix)
{
	struct rtnl_addr *a = rtnl_addr_alloc();
	struct nl_addr *local = addr(family, bytes, prefix);
	int r = -NLE_NOMEM;

	if (a && local) {
		rtnl_addr_set_ifindex(a, WD0);
		rtnl_addr_set_family(a, family);
		rtnl_addr_set_local(a, local);
		if (family == AF_INET6)
			rtnl_addr_set_flags(a, IFA_F_NODAD);
		r = rtnl_addr_add(sk, a, 0);
	}
	nl_addr_put(local);
	rtnl_addr_put(a);
	return r;
}

/* A route of type type to dst/prefix in table through link dev (none for a
 * throw), with src as its preferred source when given. */
static int route(struct nl_sock *sk, int family, int table, int type, const void *dst,
                 int prefix, int dev, const void *src)
{
	struct rtnl_route *rt = rtnl_route_alloc();
	struct nl_addr *d = NULL, *s = NULL;
	uint8_t zero[16] = { 0 };
	int r = -NLE_NOMEM;

	if (!rt || !(d = addr(family, dst ? dst : zero, prefix)))
		goto out;
	rtnl_route_set_family(rt, family);
	rtnl_route_set_table(rt, (uint32_t)table);
	rtnl_route_set_type(rt, (uint8_t)type);
	rtnl_route_set_dst(rt, d);
	if (type == RTN_LOCAL)
		rtnl_route_set_scope(rt, RT_SCOPE_HOST);
	if (src) {
		if (!(s = addr(family, src, family == AF_INET ? 32 : 128)))
			goto out;
		rtnl_route_set_pref_src(rt, s);
	}
	if (type != RTN_THROW) {
		struct rtnl_nexthop *nh = rtnl_route_nh_alloc();

		if (!nh)
			goto out;
		rtnl_route_nh_set_ifindex(nh, dev);
		rtnl_route_add_nexthop(rt, nh);
	}
	r = rtnl_route_add(sk, rt, NLM_F_CREATE | NLM_F_EXCL);
out:
	nl_addr_put(s);
	nl_addr_put(d);
	rtnl_route_put(rt);
	return r;
}

/* A rule of family at prio: to table, for what the jail sends when lo is
 * set (iif lo: every locally made packet), else for everything. */
static struct rtnl_rule *rule_new(int family, int prio, bool lo, int table)
{
	struct rtnl_rule *ru = rtnl_rule_alloc();

	if (!ru)
		return NULL;
	rtnl_rule_set_family(ru, family);
	rtnl_rule_set_prio(ru, (uint32_t)prio);
	rtnl_rule_set_table(ru, (uint32_t)table);
	rtnl_rule_set_action(ru, FR_ACT_TO_TBL);
	if (lo)
		rtnl_rule_set_iif(ru, "lo");
	return ru;
}

/* Add that rule, or (del) remove it. */
static int rule(struct nl_sock *sk, bool del, int family, int prio, bool lo, int table)
{
	struct rtnl_rule *ru = rule_new(family, prio, lo, table);
	int r;

	if (!ru)
		return -NLE_NOMEM;
	r = del ? rtnl_rule_delete(sk, ru, 0) : rtnl_rule_add(sk, ru, NLM_F_CREATE | NLM_F_EXCL);
	rtnl_rule_put(ru);
	return r;
}

/* Main before local for what the jail sends; local after, for the rest. */
static int rules(struct nl_sock *sk, int family)
{
	int r;

	if ((r = rule(sk, false, family, 2, true, RT_TABLE_MAIN)) < 0 ||
	    (r = rule(sk, false, family, 3, false, RT_TABLE_LOCAL)) < 0)
		return r;
	return rule(sk, true, family, 0, false, RT_TABLE_LOCAL);
}

/* Undo rules, as far as it got: the kernel's own rule at 0 back. */
static void rules_undo(struct nl_sock *sk, int family)
{
	(void)rule(sk, false, family, 0, false, RT_TABLE_LOCAL);
	(void)rule(sk, true, family, 3, false, RT_TABLE_LOCAL);
	(void)rule(sk, true, family, 2, true, RT_TABLE_MAIN);
}

/* Modes loopback and proxy: a name lookup to the jail's own 127/8 (glibc's
 * without /etc/resolv.conf, or a host's 127.0.0.53) goes to the watch too,
 * so its name is seen: a rule for UDP to port 53 (the kernel has matched
 * on ports since 4.17), to a table whose 127/8 leads to wd0.  Nothing in
 * the jail can serve port 53 (below 1024, and it holds no capability), so
 * nothing it could reach is taken from it.  Best effort: without it such
 * a lookup is refused by lo, as before, and not seen. */
static void dns_rule(struct nl_sock *sk)
{
	static const uint8_t lo4net[4] = { 127 };
	struct rtnl_rule *ru;

	if (route(sk, AF_INET, DNS_TABLE, RTN_UNICAST, lo4net, 8, WD0, v4_addr) < 0 ||
	    !(ru = rule_new(AF_INET, 1, true, DNS_TABLE)))
		return;
	rtnl_rule_set_ipproto(ru, IPPROTO_UDP);
	rtnl_rule_set_dport(ru, 53);
	(void)rtnl_rule_add(sk, ru, NLM_F_CREATE | NLM_F_EXCL);
	rtnl_rule_put(ru);
}

/* Keep a TCP SYN (no ACK) or a UDP datagram, IPv4 (first fragments only)
 * or IPv6 (no extension header), 512 bytes of it; drop everything else.
 * A SOCK_DGRAM packet socket's filter sees the packet from its network
 * header on. */
static const struct sock_filter watch_prog[] = {
	/* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF + SKF_AD_PROTOCOL),
	/* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IP, 0, 9),       /* -> 11 */
	/* 2 */ BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 6),
	/* 3 */ BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x1fff, 15, 0),       /* -> 19 drop */
	/* 4 */ BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 9),
	/* 5 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_UDP, 12, 0),   /* -> 18 keep */
	/* 6 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_TCP, 0, 12),   /* -> 19 drop */
	/* 7 */ BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 0),
	/* 8 */ BPF_STMT(BPF_LD | BPF_B | BPF_IND, 13),
	/* 9 */ BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0x12),
	/* 10 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x02, 7, 8),          /* -> 18 / 19 */
	/* 11 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IPV6, 0, 7),    /* -> 19 drop */
	/* 12 */ BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 6),
	/* 13 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_UDP, 4, 0),   /* -> 18 keep */
	/* 14 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_TCP, 0, 4),   /* -> 19 drop */
	/* 15 */ BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 40 + 13),
	/* 16 */ BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0x12),
	/* 17 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x02, 0, 1),          /* -> 18 / 19 */
	/* 18 */ BPF_STMT(BPF_RET | BPF_K, JAIL_WATCH_SNAP),
	/* 19 */ BPF_STMT(BPF_RET | BPF_K, 0),
};

/* The packet socket for wd1, filtered, close-on-exec, not bound yet (wd1
 * does not exist yet): init's and no one else's (the program's execve
 * closes it). */
static int watch_socket(void)
{
	struct sock_fprog prog = { .len = sizeof(watch_prog) / sizeof(watch_prog[0]),
	                           .filter = (struct sock_filter *)watch_prog };
	int one = 1, fd;

	/* protocol 0: nothing is queued before the bind, and the filter is
	 * there before it */
	fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd >= 0 && (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) < 0 ||
	                setsockopt(fd, SOL_SOCKET, SO_LOCK_FILTER, &one, sizeof(one)) < 0 ||
	                setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) < 0)) {
		close(fd);
		return -1;
	}
	return fd;
}

int jail_net_socks(int *nl, int *pk, struct werr *err)
{
	*nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (*nl < 0)
		return werr_set(err, errno, "creating the jail's netlink socket");
	*pk = watch_socket();   /* none: no watch, the jail runs as before */
	return 0;
}

/* The watch: the pair, pk bound to wd1, addresses, routes, rules.  -1
 * when it could not be made (and nothing of it is left). */
static int watch(struct nl_sock *sk, int pk, enum wnet_mode mode)
{
	static const uint8_t lo4[4] = { 127, 0, 0, 1 }, lo4net[4] = { 127 }, lo6[16] = { [15] = 1 };
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
	                          .sll_ifindex = WD1 };
	bool six, ruled4 = false, ruled6 = false;
	struct rtnl_link *l;

	if (make_pair(sk) < 0)
		return -1;
	if (link_up(sk, WD0, "wd0", IFF_UP | IFF_NOARP) < 0 || link_up(sk, WD1, "wd1", IFF_UP) < 0 ||
	    bind(pk, (struct sockaddr *)&ll, sizeof(ll)) < 0)
		goto undo;
	six = add_addr(sk, AF_INET6, v6_addr, 128) >= 0;   /* IPv6 may be off */
	if (add_addr(sk, AF_INET, v4_addr, 32) < 0 ||
	    (mode == WNET_NONE && add_addr(sk, AF_INET, lo4, 8) < 0) ||
	    route(sk, AF_INET, RT_TABLE_MAIN, RTN_UNICAST, NULL, 0, WD0, v4_addr) < 0 ||
	    (six && route(sk, AF_INET6, RT_TABLE_MAIN, RTN_UNICAST, NULL, 0, WD0, v6_addr) < 0) ||
	    /* ::1 never leaves lo in IPv6: under none it finds no route
	     * (counted); elsewhere it is lo's, like 127/8 */
	    (mode == WNET_NONE && six &&
	     route(sk, AF_INET6, RT_TABLE_MAIN, RTN_THROW, lo6, 128, 0, NULL) < 0) ||
	    (mode != WNET_NONE &&
	     route(sk, AF_INET, RT_TABLE_MAIN, RTN_LOCAL, lo4net, 8, LO, NULL) < 0) ||
	    (mode != WNET_NONE && six &&
	     route(sk, AF_INET6, RT_TABLE_MAIN, RTN_LOCAL, lo6, 128, LO, NULL) < 0) ||
	    (ruled4 = true, rules(sk, AF_INET) < 0) ||
	    (six && (ruled6 = true, rules(sk, AF_INET6) < 0)))
		goto undo;
	if (mode != WNET_NONE)
		dns_rule(sk);
	return 0;
undo:
	if (ruled4)
		rules_undo(sk, AF_INET);
	if (ruled6)
		rules_undo(sk, AF_INET6);
	if ((l = rtnl_link_alloc())) {
		rtnl_link_set_ifindex(l, WD0);
		(void)rtnl_link_delete(sk, l);   /* its routes and addresses go too */
		rtnl_link_put(l);
	}
	return -1;
}

int jail_net_setup(int nl, int pk, enum wnet_mode mode, bool *watched, struct werr *err)
{
	struct nl_sock *sk = nl_socket_alloc();
	int r;

	*watched = false;
	if (!sk) {
		close(nl);
		return werr_set(err, ENOMEM, "netlink socket");
	}
	if ((r = nl_socket_set_fd(sk, NETLINK_ROUTE, nl)) < 0) {
		close(nl);
		nl_socket_free(sk);
		return werr_set(err, 0, "the jail's netlink socket: %s", nl_geterror(r));
	}
	/* lo up (modes loopback and proxy): 127.0.0.1 and ::1 come with it */
	if (mode != WNET_NONE && (r = link_up(sk, LO, "lo", IFF_UP)) < 0) {
		nl_socket_free(sk);   /* closes nl */
		return werr_set(err, 0, "bringing lo up: %s", nl_geterror(r));
	}
	*watched = pk >= 0 && watch(sk, pk, mode) == 0;
	nl_socket_free(sk);
	return 0;
}
