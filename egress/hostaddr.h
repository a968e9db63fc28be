/* The addresses of this host's own interfaces, for the egress proxy
 * (engine.c): a name that resolves to one of them must not be dialled, since
 * from the host it would reach every service listening on 0.0.0.0 or :: --
 * such an address is granted only by an entry that names it literally
 * (warden/netallow.h).  Private to egress/. */
#ifndef WARDEN_EGRESS_HOSTADDR_H
#define WARDEN_EGRESS_HOSTADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "warden/err.h"

/* own[i]: is addrs[i] (AF_INET or AF_INET6; an IPv4-mapped IPv6 one counts
 * as its IPv4 address) an address of one of this host's interfaces, up or
 * down, or the peer of a point-to-point one?  Read from the kernel at each
 * call (one RTM_GETADDR dump on a NETLINK_ROUTE socket of the caller's
 * network namespace: nothing else is needed, no file, no ioctl).  -1 and
 * err when the kernel could not be asked; own[] is then all false and the
 * caller must refuse, not guess. */
int ehost_own(const struct sockaddr_storage *addrs, size_t n, bool *own, struct werr *err);

#endif
