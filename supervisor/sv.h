/* Helpers shared by the supervisor's one-shot path (run.c) and its session
 * server (server.c, session.c, dispatch.c).  Private to supervisor/. */
#ifndef WARDEN_SV_H
#define WARDEN_SV_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "warden/broker_start.h"
#include <json-c/json.h>

#include "warden/err.h"
#include "warden/jail.h"
#include "warden/policy.h"
#include "warden/protect.h"

uint64_t sv_now_ms(void);
/* Milliseconds from t to now, 0 when t is later: a time taken after now was
 * read (sj_freeze's sweep_at_ms, in the same tick) made now - t wrap to
 * 2^64 - 1, and a sweep started that instant was judged 30 s late and its
 * jail killed (the background test's 1-in-5 failure as warden-test). */
static inline uint64_t ms_since(uint64_t now, uint64_t t)
{
	return now > t ? now - t : 0;
}
/* The caller's home directory: $HOME when sane, else the passwd entry. */
const char *sv_caller_home(void);
/* The jail's environment: env.pass (from the caller), env.set (expanded),
 * in network mode proxy the proxy's variables (over any of those), then
 * `extra` ("NAME=VALUE" sets, "NAME" passes).  NULL on error. */
char **sv_build_env(const struct wpolicy *p, const char *const *extra, size_t n_extra,
                    const char *ws, const char *home, struct werr *err);
void sv_free_env(char **env);
/* --net MODE (NULL: the policy's) and --allow entries (validated, added to
 * network.allow) over a loaded policy: `warden run`, and every profile a
 * `warden serve`/`chat` allows.  --allow without mode proxy is an error. */
int sv_apply_net(struct wpolicy *p, const char *net, char *const *allow, size_t n_allow,
                 struct werr *err);
/* 12 hex digits from getrandom: the session id of the audit log. */
void sv_new_session_id(char *buf, size_t len);
/* realpath, must be a directory, never "/" itself. */
int sv_resolve_workspace(const char *in, char out[PATH_MAX], struct werr *err);
/* O_PATH|O_DIRECTORY of a resolved workspace, opened without following any
 * symlink (it has none after realpath; one that appears since is refused). */
int sv_open_workspace(const char *ws, struct werr *err);
/* Lowercase hex SHA-256 of data (common/sha256.c) into out[65]. */
void sv_sha256_hex(const void *data, size_t len, char out[65]);

/* $VAR/warden when VAR is an absolute path (the XDG rule), else
 * $HOME/fallback/warden: the caller's config and data directories. */
char *sv_xdg_dir(const char *var, const char *fallback, struct werr *err);
/* One of warden's helper programs (warden-broker, warden-egress): the
 * absolute path in env_var, else beside warden itself (the build tree),
 * else PREFIX/libexec/warden beside warden's bin/.  malloc'd. */
char *sv_helper_path(const char *env_var, const char *name);

/* warden's own directories that lie in the workspace ws (HOME as the
 * workspace): the config (API keys), the data (conversations) and the
 * audit log's directory -- or the log itself when that directory holds
 * the workspace.  Pushed onto out, to be hidden in the jail as the
 * profile's hides are.  audit_path: the log in use, or NULL. */
void sv_own_hides(const char *ws, const char *audit_path, struct wstrv *out);
/* The placeholders' registry of this process (warden/protect.h), in its
 * default place; -1 and err naming it and the fix. */
int sv_open_reg(struct wprotect_reg *reg, struct werr *err);

/* Start warden-broker (supervisor/broker.c): argv[1..] its mode and
 * arguments, sock its end of the socketpair (fd 3 in the broker), user the
 * broker's user when warden runs as root, files the paths the command line
 * names for it to read (NULL when none), handed over as fds 6 and 7. */
struct sv_broker_start {
	char **argv;
	int sock;
	const char *user;
	const char *files[WBROKER_FILES_MAX];
	/* serve --listen: fds 8 to 11 (listener, token, TLS cert and key; -1
	 * none), still the caller's to close; NULL without --listen */
	const int *listen_fds;
};
#include <sys/types.h>
pid_t sv_start_broker(const struct sv_broker_start *bs, struct werr *err);

/* A note said once per user and machine (supervisor/once.c): true when
 * note differs from what was last said under what (then it is kept as
 * the new one), false when it was said already. */
bool sv_say_once(const char *what, const char *note);

/* The note a run or a block ends with when its program tried to reach the
 * network: n times found no route (jail_net_unreachable), or tried the
 * places in seen (init's reports, jail/netseen.c; NULL: none): the network
 * mode of p, where it tried to go, and what lets it out (allow: the
 * options, as the front-end takes them); who: "the program", "the block".
 * "" when it tried nothing. */
void sv_net_note(const struct wpolicy *p, uint64_t n, const struct jail_net_seen *seen,
                 const char *who, const char *allow, char *buf, size_t len);
/* {"count": N, "first": [{"name"?, "address", "port", "protocol"}...]}:
 * where the jail tried to go, for the audit log and --json. */
json_object *sv_net_tried_json(const struct jail_net_seen *seen);

/* serve --listen (supervisor/listen.c): the listening socket, the token's
 * pipe and the TLS files, for the broker's fds 8 to 11 (-1: none), and
 * where it listens, for the messages. */
struct sv_listen {
	int fds[WBROKER_EXTRA_FDS];
	char where[128];
	char *unix_path;        /* a socket file made here: removed at the end, */
	int unix_dir;           /* from this directory, held since it was made */
	char *unix_name;        /* by this name, if it is still this inode */
	uint64_t unix_dev, unix_ino;
};
#define SV_LISTEN_INIT { .fds = { -1, -1, -1, -1 }, .unix_dir = -1 }
struct wserve_opts;
/* roots: the canonical workspaces served (no secret of the listener may
 * lie in one). */
int sv_listen_prepare(const struct wserve_opts *o, char *const *roots, size_t n_roots,
                      struct sv_listen *l, struct werr *err);
/* The broker has the fds: close ours. */
void sv_listen_handed(struct sv_listen *l);
/* The end: the fds closed, a socket file made here removed. */
void sv_listen_close(struct sv_listen *l);

/* CPU of a jail: its init (pid) and all its descendants, with what they
 * reaped, from /proc (the fallback when no cgroup counts the group). */
#include <stdbool.h>
#include <sys/types.h>
bool sv_jail_cpu_ns(pid_t pid, uint64_t *ns);

#endif
