/* Who a jail is on the host when warden runs as root (jail/idmap.c).
 *
 * As root, no jail may act as host uid 0.  Each jail gets its own
 * unprivileged host uid and gid from a dedicated range (like systemd's
 * DynamicUser or podman's --userns=auto), one slot per jail, held by a lock
 * file for the jail's whole life so concurrent jails of one or several
 * warden processes never share a host uid, and with it the kernel's per-user
 * counts (inotify instances, message queues, pending signals, processes).
 * The jail's writable binds are idmapped mounts that map their owner to the
 * jail's host uid, so the jail can work there and what it creates belongs to
 * the owner.  An unprivileged caller needs none of this: its jail maps to
 * itself (docs/design.md "Ids"). */
#ifndef WARDEN_IDMAP_H
#define WARDEN_IDMAP_H

#include <stdint.h>
#include <sys/types.h>

#include "warden/err.h"

/* The built-in range: above the ids of ordinary users and of the usual
 * /etc/subuid allocations (100000 + 65536 per user), below systemd's
 * container and "foreign" ranges' end and below 2^31, which some tools
 * read as negative.  An /etc/subuid and /etc/subgid entry for the user
 * "warden" replaces it. */
#define WIDMAP_DEFAULT_BASE  0x78000000u   /* 2013265920 */
#define WIDMAP_DEFAULT_COUNT 65536u
#define WIDMAP_USER          "warden"
#define WIDMAP_LOCK_DIR      "/run/warden"

struct widrange {
	uint32_t uid_base, gid_base, count;
	char source[96];              /* "built-in" or "/etc/subuid+/etc/subgid (warden)" */
};

/* The range jails take their host ids from.  An /etc/subuid or /etc/subgid
 * entry for "warden" that is malformed or reaches below 65536 is an error,
 * never silently replaced by the built-in one. */
int widmap_range(struct widrange *r, struct werr *err);

/* One jail's host identity: the lock on its slot (close it once the jail is
 * reaped, never before) and the ids that go with the slot. */
struct widslot {
	int lock_fd;
	uid_t uid;
	gid_t gid;
};
int widmap_slot_get(struct widslot *s, struct werr *err);

/* A user namespace (an fd) whose only mapping is from_uid -> to_uid and
 * from_gid -> to_gid: the idmap of a mount that shows files of from_uid as
 * to_uid's, and stores to_uid's new files as from_uid's. */
int widmap_userns(uid_t from_uid, gid_t from_gid, uid_t to_uid, gid_t to_gid,
                  struct werr *err);

/* A detached recursive copy of the mount tree at fd (an O_PATH fd opened by
 * the caller), idmapped through userns_fd, nosuid and nodev.  `path` only
 * names it in errors.  Returns the tree's fd, or -1 and err when the
 * filesystem (or a mount below it) cannot be idmapped. */
int widmap_tree(int fd, const char *path, int userns_fd, struct werr *err);

#endif
