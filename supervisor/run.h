/* One program in one fresh jail, from policy to result (supervisor/run.c).
 * cmd_run parses the command line into wrun_opts; other callers (doctor,
 * later the session layer) fill it directly. */
#ifndef WARDEN_RUN_H
#define WARDEN_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "warden/cgroup.h"
#include "warden/err.h"
#include "warden/reason.h"

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
	char session[32];
};

/* Returns 0 when the program ran (whatever its status), -1 when warden
 * could not run it (err set; err->exit_code 125, 126 or 127). */
int wrun(const struct wrun_opts *o, struct wrun_result *res, struct werr *err);

#endif
