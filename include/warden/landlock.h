/* Landlock, one small interface for the jail (jail/landlock.c) and the
 * broker's self-confinement (broker/core/confine.c); common/landlock.c.
 *
 * Best effort by ABI: wll_abi() probes the kernel; wll_create() handles
 * every file right the ABI knows (and TCP on ABI 4+ when asked, and the
 * abstract-unix-socket and signal scopes on ABI 6+); a rule's rights are
 * cut to what the ruleset handles, and a rule for a file (not a directory)
 * to the rights a file can take, so callers ask for what they mean and the
 * kernel gets what it accepts.  What a caller does when wll_abi() says 0
 * (no Landlock) is its own choice: the jail reports it, the broker warns. */
#ifndef WARDEN_LANDLOCK_H
#define WARDEN_LANDLOCK_H

#include <stdint.h>

#include "warden/err.h"

/* The kernel's access rights (Debian 12's headers stop at ABI 1 or 3). */
#define WLL_FS_EXECUTE      (1ULL << 0)
#define WLL_FS_WRITE_FILE   (1ULL << 1)
#define WLL_FS_READ_FILE    (1ULL << 2)
#define WLL_FS_READ_DIR     (1ULL << 3)
#define WLL_FS_REMOVE_DIR   (1ULL << 4)
#define WLL_FS_REMOVE_FILE  (1ULL << 5)
#define WLL_FS_MAKE_CHAR    (1ULL << 6)
#define WLL_FS_MAKE_DIR     (1ULL << 7)
#define WLL_FS_MAKE_REG     (1ULL << 8)
#define WLL_FS_MAKE_SOCK    (1ULL << 9)
#define WLL_FS_MAKE_FIFO    (1ULL << 10)
#define WLL_FS_MAKE_BLOCK   (1ULL << 11)
#define WLL_FS_MAKE_SYM     (1ULL << 12)
#define WLL_FS_REFER        (1ULL << 13)   /* ABI 2 */
#define WLL_FS_TRUNCATE     (1ULL << 14)   /* ABI 3 */
#define WLL_FS_IOCTL_DEV    (1ULL << 15)   /* ABI 5 */
/* the rights a rule for a file (not a directory) may carry */
#define WLL_FS_FILE (WLL_FS_EXECUTE | WLL_FS_WRITE_FILE | WLL_FS_READ_FILE | \
                     WLL_FS_TRUNCATE | WLL_FS_IOCTL_DEV)
#define WLL_NET_BIND_TCP    (1ULL << 0)    /* ABI 4 */
#define WLL_NET_CONNECT_TCP (1ULL << 1)    /* ABI 4 */

/* The kernel's Landlock ABI: > 0; 0 when it has none (ENOSYS) or has it
 * disabled (EOPNOTSUPP); -1 (errno set) when the probe fails otherwise. */
int wll_abi(void);

/* Every file right the ABI knows. */
uint64_t wll_fs_rights(int abi);

struct wll_ruleset {
	int fd;             /* -1 when none */
	int abi;
	uint64_t fs;        /* handled file rights */
	uint64_t net;       /* handled TCP rights; 0 below ABI 4 or without WLL_TCP */
};

/* wll_create flags */
#define WLL_TCP 1u      /* handle TCP bind and connect: only port rules allow them */

/* A ruleset for ABI abi (> 0) handling all its file rights, TCP when
 * flags has WLL_TCP and abi >= 4, and on ABI 6+ the abstract unix socket
 * and signal scopes.  rs->fd is -1 on failure. */
int wll_create(struct wll_ruleset *rs, int abi, unsigned flags, struct werr *err);

/* Allow access beneath fd (a directory, or just the file), cut to what rs
 * handles and, for a file, to WLL_FS_FILE; nothing left adds no rule.  fd
 * stays the caller's.  what names it in errors. */
int wll_allow_fd(const struct wll_ruleset *rs, int fd, uint64_t access, const char *what,
                 struct werr *err);

/* Allow access (WLL_NET_*) on a TCP port; a no-op when rs handles no TCP
 * (ABI < 4): then TCP is not restricted at all. */
int wll_allow_port(const struct wll_ruleset *rs, uint16_t port, uint64_t access,
                   struct werr *err);

/* Restrict the calling thread (no_new_privs or CAP_SYS_ADMIN first).
 * who names the confined process in errors ("the jail"). */
int wll_restrict(const struct wll_ruleset *rs, const char *who, struct werr *err);

/* Close the ruleset fd (safe on a failed or closed ruleset). */
void wll_close(struct wll_ruleset *rs);

#endif
