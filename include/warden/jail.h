/* Starting one jail: clone3 into fresh namespaces, then, in the child, the
 * fixed entry order of docs/design.md ("The jail's entry order"), ending in
 * execve.  jail/ holds the child side; this header is the parent's view. */
#ifndef WARDEN_JAIL_H
#define WARDEN_JAIL_H

#include <seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "warden/cgroup.h"
#include "warden/err.h"
#include "warden/filter.h"
#include "warden/policy.h"
#include "warden/protect.h"

/* A bind or tmpfs in the jail's root, computed by the parent from the
 * policy before clone (jail/plan.c) so the child only executes a list.
 * WM_PIN, WM_PROTECT and WM_COVER are jail/protect.c's: a read-write and a
 * read-only bind of a path of the jail's own tree onto itself, and an
 * empty read-only file or directory over a placeholder or a link.  The
 * order is the strength jail/protect.c merges by. */
enum wmount_kind { WM_BIND_RO, WM_BIND_RW, WM_PIN, WM_PROTECT, WM_TMPFS, WM_COVER, WM_HIDE };
/* Where read-only binds that lie below a tmpfs are mounted (jail/plan.c,
 * plan_relocate); no policy path may be there. */
#define WPLAN_RELOC "/.warden-ro"
struct wmount {
	enum wmount_kind kind;
	char *path;          /* absolute: the policy's path, on the host and in the jail */
	char *at;            /* where it is mounted in the jail: path, or, for a
	                      * read-only bind below a tmpfs and all below it, the
	                      * same path under WPLAN_RELOC (jail/plan.c) */
	bool link;           /* relocated: a symlink at path leads to at */
	uint64_t size;       /* tmpfs only */
	bool optional;       /* missing source is skipped, not an error */
	/* binds only: the source, resolved once by the parent (jail/plan.c) */
	char *src;           /* canonical host path, no symlink in it */
	int src_fd;          /* O_PATH of src opened without following any link,
	                      * held across clone; -1 when missing (optional) */
	int tree_fd;         /* a detached mount the parent prepared (open_tree),
	                      * moved into place instead of cloning src; -1 */
};

struct jail_spec {
	const struct wpolicy *pol;
	const char *workspace;       /* absolute, resolved (realpath: no symlinks) */
	int workspace_fd;            /* O_PATH of the workspace, opened when it was
	                              * resolved and held since; the jail binds this
	                              * object, never whatever the path holds now.
	                              * -1: jail_plan opens the path itself */
	char *const *hide_extra;     /* more absolute paths to hide, NULL-terminated,
	                              * or NULL (the root's hides inside a session's
	                              * workspace, supervisor/dispatch.c) */
	char *const *protect_extra;  /* absolute paths to hide that must not be
	                              * created either (warden's own directories
	                              * when the workspace holds them), or NULL */
	struct wprotect_reg *protect_reg; /* where placeholders are listed; NULL:
	                              * none is made (a missing protected path
	                              * is then not covered) */
	const char *home;            /* HOME inside the jail */
	char *const *argv;           /* argv[0] is looked up on the jail's PATH */
	char *const *envp;           /* already filtered by the policy */
	int stdin_fd;                /* dup'ed to 0; -1 = /dev/null */
	int stdout_fd, stderr_fd;    /* dup'ed to 1 and 2 */
	int keep_fd;                 /* extra fd kept (sessions' control fd), -1 */
	const char *hostname;        /* default "warden" */
	scmp_filter_ctx filter;      /* built by the parent; loaded by the child */
	const struct wfilter_prog *prog; /* or a program compiled at build time */
	bool learn;                  /* filter is a learning one (wfilter_build_learn) */
	struct wcg *cg;              /* limits/ (cgroup.h): the jail joins it at
	                              * clone; may be NULL */
	bool rlimit_memory, rlimit_pids; /* cgroup fallback: set RLIMIT_AS/NPROC */
	bool new_session;            /* setsid(): no controlling terminal */
	bool defer_go;               /* jail_begin only: leave cg's attach and
	                              * "attached" to the caller (jail_go) */
};
/* Every jail_spec starts from this: each fd field -1 (none), not 0, which
 * is an fd (stdin) and would be handed to the jail. */
#define JAIL_SPEC_INIT { .workspace_fd = -1, .stdin_fd = -1, .stdout_fd = -1, \
                         .stderr_fd = -1, .keep_fd = -1 }

/* One destination a jail's program tried to reach, seen by the jail's
 * init in the packet that left for it (jail/netwatch.c, jail/netseen.c):
 * hostile words (the jail wrote that packet), checked again by jail_read. */
struct jail_net_try {
	uint8_t family;      /* AF_INET or AF_INET6 */
	uint8_t proto;       /* IPPROTO_TCP or IPPROTO_UDP */
	uint16_t port;       /* host order */
	uint8_t addr[16];    /* the first 4 for AF_INET */
	char name[256];      /* the name a DNS query asked for, or "": lowercase
	                      * letters, digits, '-', '_' and dots, at most 253
	                      * (common/dnsq.c) */
};
/* Where a jail tried to go since jail_net_forget: init reports each
 * destination once (until the next block); the first JAIL_NET_KEPT are
 * kept, n counts them all. */
#define JAIL_NET_KEPT 8
struct jail_net_seen {
	uint32_t n;
	uint32_t kept;
	struct jail_net_try t[JAIL_NET_KEPT];
};

struct jail {
	pid_t pid;          /* init's, in the caller's pid namespace */
	int pidfd;          /* init's, for epoll/waitid */
	int sync_fd;        /* init's reports (jail_read), non-blocking, or -1 */
	bool have_status;   /* init reported the program's end: */
	int status;         /*   its wait status (untrusted: reporting only) */
	int notify_fd;      /* seccomp listener, or -1 */
	int proxy_fd;       /* network mode proxy: the listening TCP socket the
	                     * jail's child made on its own 127.0.0.1:
	                     * JAIL_PROXY_PORT (non-blocking; the jail keeps no
	                     * copy), for the supervisor's proxy; else -1 */
	int watch_fd;       /* a copy of the network watch's packet socket
	                     * (jail/netwatch.c), only held: its release waits
	                     * for an RCU grace period, so it is dropped last,
	                     * by wclose_later; or -1 */
	bool watched;       /* the watch is there (else the socket is unused) */
	bool ready;         /* the child reported READY (jail_finish) */
	bool want_proxy;    /* network mode proxy: READY needs PROXY first */
	bool landlock;      /* Landlock was applied */
	int landlock_abi;
	/* As root, the lock on the jail's host uid slot (include/warden/idmap.h):
	 * the caller closes it only once the jail is reaped, so no other jail
	 * gets the same host uid while one of its processes lives.  -1 when
	 * warden is not root (the jail maps to the caller). */
	int slot_fd;
	/* As root: the helper that created the jail joined its v1 groups
	 * first, so the jail was born there; only v2 groups (if any) are
	 * left to attach (wcg_attach_fds with v2_only). */
	bool cg_joined;
	/* what jail/protect.c protected, hid and covered */
	struct wprotect_stats protect;
	uid_t host_uid;     /* the jail's ids on the host */
	gid_t host_gid;
	/* The jail's network namespace's counters, /proc/PID/net/snmp and
	 * snmp6 of init, opened from the host right after clone, before the
	 * child is released (each open file holds the namespace: they read on
	 * after the jail is gone); jail_net_unreachable reads them.  -1 when
	 * the kernel has none. */
	int snmp_fd, snmp6_fd;
	/* where it tried to go (jail_read keeps what init reports) */
	struct jail_net_seen seen;
};

/* Where warden's proxy listens inside a jail of network mode proxy: the
 * jail's own 127.0.0.1 (its HTTP_PROXY, supervisor/env.c). */
#define JAIL_PROXY_PORT 3128

/* Start the jail.  Returns 0 when the program has been exec'ed, as the
 * child of the jail's init (pid 1, jail/init.c): pid and pidfd are init's;
 * the jail ends when the program does.  The caller owns pidfd, notify_fd,
 * proxy_fd and sync_fd.  On failure -1 and err; err->exit_code is 126/127 when the
 * program could not be executed or found (the child is then already
 * reaped). */
int jail_start(const struct jail_spec *spec, struct jail *out, struct werr *err);

/* jail_start in two halves, for a caller with an event loop (the session
 * server): jail_begin does the parent's work up to releasing the child
 * ("go") and returns with pid, pidfd, sync_fd (non-blocking) and slot_fd
 * set; the child's own setup then runs while the caller does other work.
 * jail_finish reads what the child reported so far, without blocking
 * (call it when sync_fd is readable): 1 once the program was exec'ed
 * (notify_fd, landlock set), 0 not yet, -1 with err (126/127 as above).
 * After -1, or to give up, jail_abort kills and reaps the child and closes
 * every fd of j. */
int jail_begin(const struct jail_spec *spec, struct jail *out, struct werr *err);
int jail_finish(struct jail *j, struct werr *err);
/* With spec->defer_go: once the caller moved pid into the jail's cgroups
 * (wcg_attach_fds), tell the child it is attached ("attached"; it builds
 * its root meanwhile and waits for this before its cgroup namespace, its
 * fds, limits and the program: jail/enter.c).  -1 with err. */
int jail_go(struct jail *j, struct werr *err);
void jail_abort(struct jail *j);

/* Ask init to SIGKILL every process of the jail but itself and the
 * program, and to stop the program (SIGSTOP: every thread of it); it
 * answers JAIL_EV_SWEPT on sync_fd once nobody else is alive and the
 * program is stopped, so nothing of the jail runs until jail_thaw
 * continues the program (SIGCONT).  The signals are reserved: init acts on
 * them only when they come from outside the jail. */
#define JAIL_SIG_FREEZE (SIGRTMIN + 2)
#define JAIL_SIG_THAW (SIGRTMIN + 3)
int jail_freeze(const struct jail *j);
int jail_thaw(const struct jail *j);

/* One report of init, without blocking: JAIL_EV_STATUS also sets
 * have_status/status.  Malformed frames are skipped.  At JAIL_EV_EOF
 * sync_fd stays open: its owner takes it out of any epoll set, then
 * closes it (jail/enter.c says why). */
enum jail_ev { JAIL_EV_NONE, JAIL_EV_SWEPT, JAIL_EV_STATUS, JAIL_EV_EOF };
enum jail_ev jail_read(struct jail *j);

/* After init's pidfd reported its exit and si holds init's wait status:
 * replace it by the program's, as init reported it.  When init sent none
 * (it was killed), si is left as it is. */
void jail_exit_status(struct jail *j, siginfo_t *si);

/* `warden policy check`: what jail_start would refuse in spec's policy on
 * this machine, found before anything is made (jail/plan.c): a bind that
 * cannot be used (missing and not optional, a link below a place the jail
 * can write), a path warden builds itself (/proc, /dev).  All of them, not
 * only the first: each appended to msgs ("what; fix"), with at the same
 * index in paths the bind at fault and in below the writable place it
 * lies in ("" when none).  spec->protect_reg must be NULL: nothing is
 * made on the host (no placeholder).  0 when there is none, else -1. */
int jail_plan_check(const struct jail_spec *spec, struct wstrv *paths, struct wstrv *below,
                    struct wstrv *msgs);

/* What the protections of a jail for workspace ws depend on at its root
 * and the caller's home (jail/protect.c): a sum that changes when a
 * catalog path there (or one of extra) appears, goes or is replaced.  The
 * pool takes it right after a pooled jail's plan (its placeholders made)
 * and again when a session would take the jail (supervisor/session.c). */
uint64_t jail_protect_sum(const char *ws, const char *home, const struct wpolicy *pol,
                          char *const *extra);

/* How many times a program of the jail tried to reach an address its
 * network namespace has no route to, so far: the kernel's OutNoRoutes
 * counters (IPv4 and IPv6) of that namespace, read from the host through
 * j's snmp fds -- numbers the kernel makes, never the jail's memory or
 * words (jail/netcount.c).  Under network mode none (lo down) every
 * address is such, so each is an attempt to use the network; under
 * loopback and proxy, an attempt to go past the jail's own 127.0.0.1.
 * -1 when the counters cannot be read. */
int jail_net_unreachable(const struct jail *j, uint64_t *n);
/* Take every destination report init has queued before anything else it
 * sent (a block's end reads them first; jail_read keeps them too). */
void jail_net_take(struct jail *j);
/* "pypi.org (a name lookup)" or "203.0.113.9 port 443" or
 * "[2001:db8::5] port 53 (UDP)": t in words, into buf. */
void jail_net_try_text(const struct jail_net_try *t, char *buf, size_t len);
/* Open j's counters (jail_begin does, for init's pid). */
void jail_net_open(struct jail *j);

/* O_PATH of path (relative to dirfd) with no symlink followed in any
 * component; a final symlink is opened itself.  Needs openat2 (5.6). */
int jail_open_nofollow(int dirfd, const char *path, struct werr *err);

/* Kernel features, for doctor and for degrading explicitly. */
int landlock_abi_version(void);     /* <= 0 when unavailable */

#endif
