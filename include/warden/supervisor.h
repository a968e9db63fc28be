/* What the command front-ends (cli/) ask of the supervisor: one program
 * in one fresh jail (supervisor/run.c), and the session server
 * (supervisor/server.c).  The front-ends parse the command line; the
 * supervisor does the work. */
#ifndef WARDEN_SUPERVISOR_H
#define WARDEN_SUPERVISOR_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "warden/broker_start.h"
#include "warden/cgroup.h"
#include "warden/err.h"
#include "warden/reason.h"

/* --- warden run ------------------------------------------------------------ *
 * cmd_run parses the command line into wrun_opts; doctor fills it directly. */

/* `warden run --learn`, `warden policy learn` (docs/learn.md) */
struct wrun_learn {
	bool on;
	const char *write;          /* --write FILE: the policy ("-": stdout) */
	const char *json_file;      /* --refusals FILE: the structured list, JSON */
	const char *name;           /* --name: the learned policy's (default "learned") */
	const char *include[64];    /* --include PATH|HOST:PORT|SYSCALL */
	size_t n_include;
};

struct wrun_opts {
	const char *profile, *policy_file, *workspace, *net;
	const char *audit_log, *json_file;
	char **argv;
	const char *env[64];
	size_t n_env;
	char *allow[64];         /* --allow HOST[:PORT]: added to network.allow */
	size_t n_allow;
	uint64_t memory, pids, timeout_ms, cpu_ms, output;
	double cpus;
	bool set_memory, set_pids, set_cpus, set_timeout, set_cpu_time, set_output;
	bool no_stdin, quiet;
	bool strict_limits;      /* refuse a limit nothing here can enforce */
	bool raw;                /* relay escape sequences to a terminal unchanged */
	int out_fd, err_fd;      /* where to relay; 0 means 1 and 2 */
	struct wrun_learn learn;
};


struct wrun_result {
	int exit_status;         /* what warden exits with */
	int exit_code;           /* the program's, -1 if signalled */
	int signal;              /* 0 if exited */
	enum wblock_reason reason;   /* warden/reason.h */
	uint64_t wall_ms, cpu_ms, peak_memory, output_bytes;
	uint64_t denied_total;
	bool output_direct;      /* stdout went into the caller's pipe, uncounted
	                          * (run.c direct_stdout); output_bytes is stderr's */
	bool learn_incomplete;   /* --learn: the learning was not complete */
	bool have_net;           /* net_unreachable was read (jail_net_unreachable): */
	uint64_t net_unreachable; /* attempts to reach an address with no route */
	bool net_watch;          /* the jail had the network watch (jail/netwatch.c) */
	char session[32];
};

/* Returns 0 when the program ran (whatever its status), -1 when warden
 * could not run it (err set; err->exit_code 125, 126 or 127). */
int wrun(const struct wrun_opts *o, struct wrun_result *res, struct werr *err);

/* Where warden-egress, the egress proxy's process of network mode proxy, is
 * looked for: WARDEN_EGRESS, else beside warden itself (the build tree),
 * else PREFIX/libexec/warden beside warden's bin/ (supervisor/egress_start.c;
 * `warden doctor` checks it).  malloc'd. */
char *wegress_exe_path(void);
/* `warden doctor`: start warden-egress as a session would (as root, as
 * user: the broker's), hand it its CONFIG, wait for READY (it confined
 * itself), close its socket and reap it.  0 when it was ready and exited 0;
 * -1 and err ("it was killed by SIGSYS: ...", with its last LOG line). */
int wegress_probe(const char *user, struct werr *err);

/* --- warden policy check ----------------------------------------------------
 * The checks a run of policy p in workspace (NULL: the current directory)
 * makes against this machine before it starts anything (jail_plan_check:
 * binds that cannot be used, links below writable places, /proc and /dev),
 * with the workspace, HOME and warden's own hides resolved as `warden run`
 * resolves them; the resolved workspace in ws.  Each problem is appended to
 * msgs, located in p's file where it writes the path at fault
 * ("FILE:LINE:COL: what; fix", policy_locate_path), else "FILE: what; fix".
 * 0: none; 1: some; -1 and err: the workspace cannot be used. */
struct wpolicy;
struct wstrv;
int wcheck_policy(const struct wpolicy *p, const char *workspace, char ws[PATH_MAX],
                  struct wstrv *msgs, struct werr *err);

/* --- warden serve / warden chat ------------------------------------------- */

struct wserve_opts {
	const char *profiles[32];
	size_t n_profiles;
	const char *policy_file, *audit_log, *broker_user;
	const char *files[WBROKER_FILES_MAX];   /* chat: --model replay:FILE, --resume FILE */
	const char *roots[32];
	size_t n_roots;
	bool stdio;
	bool mcp;               /* warden mcp: the broker serves MCP on stdio */
	bool named_default;     /* --profile/--sandbox given: profiles[0] */
	size_t max_sessions;    /* --max-sessions; 0: SV_MAX_SESSIONS */
	const char *net;        /* --net MODE, over every allowed profile */
	char *allow[64];        /* --allow HOST[:PORT], added to each */
	size_t n_allow;
	unsigned pool;          /* --pool */
	unsigned pool_idle_s;   /* --pool-idle */
	const char *listen;     /* --listen ADDR (serve): HOST:PORT, a path, or systemd */
	const char *token_file; /* --token-file FILE */
	const char *tls_cert, *tls_key;
	bool learn;             /* --learn: every session learns (issue 23) */
};
/* --max-sessions default and ceiling; --pool default and ceiling;
 * --pool-idle default, in seconds */
#define SV_MAX_SESSIONS       1000
#define SV_MAX_SESSIONS_CEIL  65536u
#define SV_POOL_DEFAULT   1u
#define SV_POOL_MAX       64u
#define SV_POOL_IDLE_S    60u

/* Serve the broker started with broker_argv (the options the supervisor
 * did not take; chat's, for the broker) until it exits; the process's exit
 * status.  chat: the broker runs `warden chat`; o->mcp: `mcp`; else
 * `serve --stdio` or `serve --listen`. */
int sv_serve(const struct wserve_opts *o, char **broker_argv, int n_broker_argv, bool chat);

#endif
