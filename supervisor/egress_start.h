/* Starting warden-egress (supervisor/egress_start.c): the binary, opened
 * once, and one fork+execveat per start.  Used by proxy.c only.  Private
 * to supervisor/. */
#ifndef WARDEN_SV_EGRESS_START_H
#define WARDEN_SV_EGRESS_START_H

#include <stdbool.h>
#include <sys/types.h>

#include "warden/err.h"

struct sv_egress_exe {
	int fd;            /* O_PATH of the binary */
	bool drop;         /* warden runs as root: switch to uid/gid */
	uid_t uid;
	gid_t gid;
};

/* Find and open the binary; as root, look up user (the broker's). */
int sv_egress_prepare(struct sv_egress_exe *x, const char *user, struct werr *err);
/* Fork and exec it with sock (its end of the socketpair) on fd 3: the
 * child's pid, or -1 and err. */
pid_t sv_egress_spawn(const struct sv_egress_exe *x, int sock, struct werr *err);
void sv_egress_exe_close(struct sv_egress_exe *x);

#endif
