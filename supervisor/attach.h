/* The session server's cgroup attacher: a small process, forked when the
 * server starts, that moves a starting jail's init into its cgroups so the
 * loop does not wait for it.  On cgroup v1 each write to a hierarchy's
 * cgroup.procs waits for the kernel (synchronize_rcu): 15-28 ms a jail on
 * the development VM, most of a session jail's start in the supervisor
 * (docs/design.md, "Starting a session's jail").  The jail waits for
 * "go" meanwhile (jail_spec.defer_go), so it never runs outside its
 * limits.
 *
 * The attacher takes requests only from the supervisor, over a private
 * socketpair: a tag, a pid, and the cgroup directories as fds; it answers
 * the tag and an errno, in the order asked.  It holds no other fd and has
 * the supervisor's own rights, which the same writes needed before.
 * Private to supervisor/. */
#ifndef WARDEN_SV_ATTACH_H
#define WARDEN_SV_ATTACH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "warden/err.h"

#define SV_ATTACH_FDS_MAX 16
/* Asks left unanswered at most; beyond, the supervisor attaches itself on
 * the loop (slower, never stuck: see sv_attacher_ask).  Each side's socket
 * holds about 270 frames (measured: SOCK_SEQPACKET, default buffers). */
#define SV_ATTACH_INFLIGHT 64

struct sv_attacher {
	pid_t pid;      /* 0: none */
	int fd;         /* the supervisor's end (SOCK_SEQPACKET), -1: none */
};

/* Fork it; the caller watches a->fd for answers. */
int sv_attacher_start(struct sv_attacher *a, struct werr *err);
/* Ask it to move pid into the groups of dirfds (at most
 * SV_ATTACH_FDS_MAX), without blocking.  -1 when it is gone or its socket is
 * full (the caller attaches itself). */
int sv_attacher_ask(struct sv_attacher *a, uint32_t tag, pid_t pid, const int *dirfds,
                    size_t n);
/* One answer without blocking: 1 (tag, err_no: 0 or the write's errno),
 * 0 none yet, -1 the attacher is gone. */
int sv_attacher_answer(struct sv_attacher *a, uint32_t *tag, int *err_no);
/* SIGKILL and reap it: no write of it can follow.  Safe when none. */
void sv_attacher_stop(struct sv_attacher *a);

#endif
