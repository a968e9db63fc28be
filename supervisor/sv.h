/* Helpers shared by the supervisor's one-shot path (run.c) and its session
 * server (serve.c, session.c, dispatch.c).  Private to supervisor/. */
#ifndef WARDEN_SV_H
#define WARDEN_SV_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "warden/err.h"
#include "warden/policy.h"

uint64_t sv_now_ms(void);
/* The caller's home directory: $HOME when sane, else the passwd entry. */
const char *sv_caller_home(void);
/* The jail's environment: env.pass (from the caller), env.set (expanded),
 * then `extra` ("NAME=VALUE" sets, "NAME" passes).  NULL on error. */
char **sv_build_env(const struct wpolicy *p, const char *const *extra, size_t n_extra,
                    const char *ws, const char *home, struct werr *err);
void sv_free_env(char **env);
/* 12 hex digits from getrandom: the session id of the audit log. */
void sv_new_session_id(char *buf, size_t len);
/* realpath, must be a directory, never "/" itself. */
int sv_resolve_workspace(const char *in, char out[PATH_MAX], struct werr *err);
/* O_PATH|O_DIRECTORY of a resolved workspace, opened without following any
 * symlink (it has none after realpath; one that appears since is refused). */
int sv_open_workspace(const char *ws, struct werr *err);
/* Lowercase hex SHA-256 of data (libcrypto) into out[65]. */
void sv_sha256_hex(const void *data, size_t len, char out[65]);

/* CPU of a jail's pid 1 and the children it reaped, from /proc (the
 * fallback when no cgroup counts the group). */
#include <stdbool.h>
#include <sys/types.h>
bool sv_pid1_cpu_ns(pid_t pid, uint64_t *ns);

#endif
