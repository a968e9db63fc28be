/* Internal to jail/: the steps of the child's entry order, one file each. */
#ifndef WARDEN_JAIL_IMPL_H
#define WARDEN_JAIL_IMPL_H

#include "warden/jail.h"

/* A computed mount plan (jail/plan.c), built in the parent before clone. */
struct wplan {
	struct wmount *m;
	size_t n;
	uid_t uid;  /* the jail's ids inside its user namespace: the caller's */
	gid_t gid;
	uid_t host_uid;  /* what they map to on the host: the caller's own ids, */
	gid_t host_gid;  /* or as root the slot's (jail/idmap.c) */
	int slot_fd;     /* as root, the slot's lock (moves to struct jail), else -1 */
};
int jail_plan(const struct jail_spec *spec, struct wplan *plan, struct werr *err);
void jail_plan_free(struct wplan *plan);
/* O_PATH of path (relative to dirfd) with no symlink followed in any
 * component; a final symlink is opened itself.  Needs openat2 (5.6). */
int jail_open_nofollow(int dirfd, const char *path, struct werr *err);

/* jail/idmap.c: as root, take a host uid slot and idmap the workspace and
 * the read-write binds to it (tree_fd); then clone3 from a helper holding
 * only the slot's ids.  jail_clone_as returns like fork (pid / 0 / -1). */
struct clone_args;
int jail_idmap_prepare(struct wplan *plan, const struct jail_spec *spec, struct werr *err);
long jail_clone_as(struct clone_args *ca, uid_t uid, gid_t gid, int *pidfd, struct werr *err);

/* jail/mounts.c: steps 3-4, build the tmpfs root, pivot_root, detach the
 * host.  On return the cwd is the workspace. */
int jail_mounts(const struct jail_spec *spec, const struct wplan *plan, struct werr *err);
/* jail/net.c: step 5, bring lo up through libnl-route. */
int jail_net_lo_up(struct werr *err);
/* jail/caps.c: step 9, drop every capability, bounding and ambient too. */
int jail_drop_caps(struct werr *err);
/* jail/landlock.c: step 11; returns the ABI used (0 when unavailable). */
int jail_landlock(const struct jail_spec *spec, const struct wplan *plan,
                  int *abi_used, struct werr *err);

#endif
