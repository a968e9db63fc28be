/* The egress process's confinement (egress/confine.c): no_new_privs, no
 * capability, Landlock with no file access, a seccomp allowlist.  Called
 * once, after the files it needs were read.  Private to egress/. */
#ifndef WARDEN_EGRESS_CONFINE_H
#define WARDEN_EGRESS_CONFINE_H

#include "warden/err.h"

/* warn: where a degraded step is said (no Landlock). */
int econfine(void (*warn)(const char *msg), struct werr *err);

#endif
