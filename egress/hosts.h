/* /etc/hosts, read once when the egress process starts (egress/hosts.c).
 *
 * c-ares 1.18 opens /etc/hosts at every lookup; the egress process has no
 * file system at all once confined (Landlock, egress/confine.c), so it
 * reads the file before and answers from this copy, and c-ares is told to
 * ask DNS only (resolve.c).  The copy is a snapshot: an edit of /etc/hosts
 * counts from the next start of the egress process (the next `warden run`,
 * or the server's next start).  Private to egress/. */
#ifndef WARDEN_EGRESS_HOSTS_H
#define WARDEN_EGRESS_HOSTS_H

#include <stddef.h>
#include <sys/socket.h>

#include "warden/err.h"

struct ehost {
	char *name;                   /* as written (compared without case) */
	struct sockaddr_storage addr; /* AF_INET or AF_INET6, port 0 */
};

struct ehosts {
	struct ehost *v;
	size_t n, cap;
};

/* Read path (at most 1 MiB; a missing file is an empty table).  Lines as
 * hosts(5): an address, then names; '#' starts a comment; an entry whose
 * address does not parse (a zone id, junk) is skipped, as c-ares does. */
int ehosts_load(struct ehosts *h, const char *path, struct werr *err);
/* Every address of name (case-insensitive, a trailing dot ignored on both
 * sides), in file order, at most max of them: how many. */
size_t ehosts_find(const struct ehosts *h, const char *name, struct sockaddr_storage *out,
                   size_t max);
void ehosts_free(struct ehosts *h);

#endif
