/* A cleanup watchdog for one run's cgroups.  warden may be SIGKILLed; its
 * jail then dies too (PDEATHSIG on the namespace's pid 1), but nobody would
 * remove the cgroup directories.  The watchdog is a forked copy of warden
 * in its own session, blocked on a pipe whose only writer is warden: when
 * warden goes away, for any reason, the read returns and the watchdog
 * kills whatever is left in the groups and removes them. */
#ifndef WARDEN_REAPER_H
#define WARDEN_REAPER_H

#include <sys/types.h>

#include "warden/cgroup.h"

struct wreaper { pid_t pid; int fd; };

/* Start it when cg has directories; else a no-op (pid 0).  Once it has
 * removed cg it collects the groups of dead wardens too (wcg_gc), off
 * warden's path. */
void wreaper_start(struct wreaper *r, struct wcg *cg);
/* After warden removed the groups itself: release the watchdog.  Never
 * waits for it; one still exiting is reaped by a later start/stop. */
void wreaper_stop(struct wreaper *r);
/* Hand the groups to the watchdog: it kills what is left in them and
 * removes them while warden goes on (exits).  Never waits. */
void wreaper_handover(struct wreaper *r);

/* The session server's one watchdog for all its jails' cgroups: when the
 * server is gone, for any reason, it kills and removes every
 * "warden-<server pid>-*" group.  Returns the fd to hold (and close when
 * done), or -1 when it could not start. */
int wreaper_start_server(void);

#endif
