/* Protected and hidden paths inside the jail's writable binds (the
 * catalogs of warden/catalog.h, the policy's own protect list, the
 * caller's PATH), and the placeholders that keep missing ones from being
 * created.  Owned by jail/protect.c; docs/design.md, "Protected and hidden
 * paths".
 *
 * A missing protected path is covered at its nearest missing component:
 * the parent creates a placeholder there on the host (an empty directory,
 * or for a file of the home catalog a symlink to PLACEHOLDER_TARGET, which
 * can never resolve, so every host program sees no file) and the jail
 * mounts an empty read-only file or directory over it.  Placeholders are
 * removed when no warden process that may have a jail relying on them is
 * left: every process holds a shared lock on the registry while it runs;
 * the one that gets the lock exclusively (at its end, or at the start of
 * the next warden) removes every placeholder the registry lists that is
 * still one. */
#ifndef WARDEN_PROTECT_H
#define WARDEN_PROTECT_H

#include <stdbool.h>
#include <stddef.h>

#include "warden/err.h"

#define WPROTECT_PLACEHOLDER_TARGET "/dev/null/warden: protected while a jail runs"

struct wprotect_reg {
	int dir_fd;      /* the registry's directory, -1 */
	int lock_fd;     /* "placeholders.lock", held shared; -1 */
};

/* Open (creating it 0700) the registry directory dir, take the shared
 * lock, and first remove what an earlier warden left, if it is alone.
 * Not being able to is an error: placeholders could not be cleaned up. */
int wprotect_reg_open(struct wprotect_reg *r, const char *dir, struct werr *err);
/* At the end of the process: drop the shared lock; if no other warden
 * holds one, remove every listed placeholder that is still one. */
void wprotect_reg_close(struct wprotect_reg *r);
/* The cleaner that wprotect_reg_close leaves behind execs warden with
 * argv[1] WPROTECT_CLEANER_ARG and the registry on fds 3 (directory) and
 * 4 (lock, shared); this is its main. */
#define WPROTECT_CLEANER_ARG "--placeholder-cleanup"
int wprotect_cleaner_main(void);

/* The registry's place for this caller: $XDG_RUNTIME_DIR/warden (when that
 * is a 0700 directory of the caller's), else
 * /run/warden as root, else the state directory: $XDG_STATE_HOME/warden, or
 * HOME/.local/state/warden with the caller's home (from $HOME, else the
 * password database: sv_caller_home) (malloc'd). */
char *wprotect_reg_default_dir(const char *home);

/* What a plan protected, for the one line a run or a chat prints when
 * the workspace holds the caller's home. */
struct wprotect_stats {
	unsigned protected_n;   /* read-only binds of existing paths */
	unsigned hidden_n;      /* hidden existing paths */
	unsigned covered_n;     /* placeholders covered */
	unsigned repos;         /* nested repositories found */
	bool home;              /* the caller's home lies in a writable bind */
	bool incomplete;        /* the scan stopped at its bound */
};

#endif
