/* Internal to jail/: the steps of the child's entry order, one file each. */
#ifndef WARDEN_JAIL_IMPL_H
#define WARDEN_JAIL_IMPL_H

#include "warden/jail.h"

/* A computed mount plan (jail/plan.c), built in the parent before clone. */
struct wplan {
	struct wmount *m;
	size_t n, cap;
	uid_t uid;  /* the jail's ids inside its user namespace: the caller's */
	gid_t gid;
	uid_t host_uid;  /* what they map to on the host: the caller's own ids, */
	gid_t host_gid;  /* or as root the slot's (jail/idmap.c) */
	int slot_fd;     /* as root, the slot's lock (moves to struct jail), else -1 */
	struct wprotect_stats protect;   /* jail/protect.c's counts */
};
int jail_plan(const struct jail_spec *spec, struct wplan *plan, struct werr *err);
void jail_plan_free(struct wplan *plan);
/* jail/protect.c: the protected and hidden paths inside the writable binds
 * of plan (and the workspace), given to add one by one. */
int jail_protect(const struct jail_spec *spec, struct wplan *plan,
                 int (*add)(struct wplan *, const char *, enum wmount_kind, struct werr *),
                 struct werr *err);

/* jail/idmap.c: as root, take a host uid slot and idmap the workspace and
 * the read-write binds to it (tree_fd); then clone3 from a helper holding
 * only the slot's ids.  The helper first joins the cgroups whose v1 "tasks"
 * files are in join (wcg_join_fds), so the jail is born in them.
 * jail_clone_as returns the jail's pid (-1 and err on failure) in the
 * caller; the jail runs entry(arg), which must not return, on a stack of
 * its own (it cannot return into the caller's frames). */
struct clone_args;
int jail_idmap_prepare(struct wplan *plan, const struct jail_spec *spec, struct werr *err);
long jail_clone_as(const struct clone_args *ca, uid_t uid, gid_t gid, const int *join, size_t n_join,
                   void (*entry)(void *), void *arg, int *pidfd, struct werr *err);

/* jail/mounts.c: steps 3-4, build the tmpfs root, pivot_root, detach the
 * host.  On return the cwd is the workspace. */
int jail_mounts(const struct jail_spec *spec, const struct wplan *plan, struct werr *err);
/* jail/net.c: step 5b (proxy) listen on 127.0.0.1:JAIL_PROXY_PORT, send
 * the listener on sync (SYNC_PROXY) and close it. */
int jail_net_proxy_listener(int sync, struct werr *err);
/* A frame of type with n (1 or 2) fds (SCM_RIGHTS) to the parent, before
 * READY. */
int jail_sync_send_fds(int sync, uint8_t type, const int *fds, size_t n, const char *what,
                       struct werr *err);
/* jail/netwatch.c: step 5, lo and the network watch.  The child makes the
 * sockets (*pk -1 when the packet socket cannot be had: no watch); the
 * parent sets the namespace up through nl (closed here): lo up in modes
 * loopback and proxy (-1 and err when that fails), then the watch, pk
 * bound to its far end (*watched, or nothing of it left). */
#define JAIL_WATCH_SNAP 512   /* bytes of a packet the watch keeps */
#define JAIL_WATCH_FD 5       /* where the watch's socket waits for init */
#define JAIL_WATCH_SIG_FD 6   /* and init's signalfd (made before seccomp) */
int jail_net_socks(int *nl, int *pk, struct werr *err);
int jail_net_setup(int nl, int pk, enum wnet_mode mode, bool *watched, struct werr *err);
/* jail/netseen.c: init's side.  Read what is queued on the watch, answer
 * it, report each new destination on sync (SYNC_NET). */
void jail_watch_read(int watch, int sync);
void jail_watch_forget(void);   /* a new block: report everything anew */
/* Pure, for tests: where packet p (n bytes from its IP header) goes
 * (*l4: its transport header's offset), -1 when it is not an IPv4 or IPv6
 * TCP or UDP packet; and the answer to it, in out (0 when none). */
int jail_watch_parse(const uint8_t *p, size_t n, struct jail_net_try *t, size_t *l4);
size_t jail_watch_answer(const uint8_t *p, size_t n, const struct jail_net_try *t, size_t l4,
                         uint8_t *out, size_t cap);
/* The supervisor's check of a report (jail_read): family, protocol, name. */
bool jail_net_try_ok(const struct jail_net_try *t);
/* jail/caps.c: step 9, drop every capability, bounding and ambient too. */
int jail_drop_caps(struct werr *err);
/* jail/landlock.c: step 11; returns the ABI used (0 when unavailable). */
int jail_landlock(const struct jail_spec *spec, const struct wplan *plan,
                  int *abi_used, struct werr *err);

/* The sync socket between jail_start and the jail: fixed-size frames of
 * one SOCK_SEQPACKET message each.  Until SYNC_STARTED they are the entry's
 * report (jail/enter.c); after it, init's reports (jail/init.c). */
enum sync_msg {
	SYNC_GO = 'G',          /* parent -> child: ids mapped: set up the mounts */
	SYNC_ATTACHED = 'A',    /* parent -> child: cgroups attached, the network
	                         * set up with the watch: go on */
	SYNC_ATTACHED_BARE = 'a', /* the same, without the watch (close it) */
	SYNC_ERROR = 'E',       /* setup failed: err */
	SYNC_PROXY = 'P',       /* proxy mode: the proxy's listener (SCM_RIGHTS) */
	SYNC_NETFDS = 'L',      /* first of all: the jail's netlink socket and the
	                         * watch's packet socket (SCM_RIGHTS, 1 or 2 fds)
	                         * for the parent's jail_net_setup; the parent
	                         * keeps the packet socket, so init's exit never
	                         * waits on its slow release (common/closer.c) */
	SYNC_READY = 'R',       /* confined (+ the seccomp listener, landlock_abi) */
	SYNC_EXEC_FAILED = 'X', /* execve failed: err, err.exit_code 126/127 */
	SYNC_STARTED = 'S',     /* init: the program was exec'ed */
	SYNC_SWEPT = 'K',       /* init: leftovers killed, the program stopped (JAIL_SIG_FREEZE) */
	SYNC_STATUS = 'W',      /* init: the program ended; status = its wait status */
	SYNC_NET = 'N',         /* init: a new destination the jail tried (net) */
};

struct sync_frame {
	uint8_t type;
	int32_t landlock_abi;
	int32_t status;
	struct werr err;
	struct jail_net_try net;
};

/* Report and end: the child never recovers once it has started entering.
 * fd is the sync socket, or the exec report pipe of jail/init.c. */
__attribute__((noreturn)) void jail_child_fail(int fd, uint8_t type, const struct werr *e);
/* jail/enter.c: step 13, execve with the jail's PATH; reports on fd. */
__attribute__((noreturn)) void jail_exec(const struct jail_spec *spec, int fd);
/* jail/init.c: after step 12, become the jail's init: start the program,
 * report its start, then reap, forward signals, sweep and report its
 * status until it ends. */
__attribute__((noreturn)) void jail_init(const struct jail_spec *spec, int sync, bool watch);

#endif
