/* `warden run`'s report (supervisor/run_int.h): the summary written to
 * --json and to the audit log's run_end, the lines on stderr (what stopped
 * the program, denied calls, weaker limits), and the note a run in the
 * caller's home gives at its start. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "limrep.h"
#include "run_int.h"
#include "sv.h"
#include "warden/cgroup.h"
#include "warden/log.h"
#include "warden/util.h"

/* --- summary ------------------------------------------------------------ */

static json_object *limits_json(const struct wpolicy *p, const struct wcg *cg, bool landlock,
                                int abi)
{
	enum wmech mech[WLIM__N];
	json_object *o;
	char buf[64];

	for (int k = 0; k < WLIM__N; k++)
		mech[k] = wcg_mech(cg, (enum wlimit_kind)k);
	o = limits_mech_object(p, mech);
	json_object_object_add(o, "tmpfs", json_object_new_string("tmpfs size"));
	if (landlock)
		snprintf(buf, sizeof(buf), "landlock-abi-%d", abi);
	else
		snprintf(buf, sizeof(buf), "unavailable");
	json_object_object_add(o, "filesystem", json_object_new_string(buf));
	return o;
}

static void write_json_file(const char *path, json_object *o)
{
	char *tmp = xasprintf("%s.tmp.%d", path, getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
	                                                  JSON_C_TO_STRING_NOSLASHESCAPE);

	if (fd < 0 || write_all(fd, s, strlen(s)) < 0 || write_all(fd, "\n", 1) < 0 ||
	    close(fd) < 0 || rename(tmp, path) < 0) {
		wlog_warn("writing the summary %s: %s", path, strerror(errno));
		unlink(tmp);
	}
	free(tmp);
}

json_object *strv_json(char *const *v)
{
	json_object *a = json_object_new_array();
	for (; *v; v++)
		json_object_array_add(a, json_object_new_string(*v));
	return a;
}

/* A program that failed while its memory limit was RLIMIT_AS (no memory
 * cgroup: jail/enter.c's fallback).  The kernel counts no refused
 * allocation, and a MemoryError or ENOMEM may be the program's own, so
 * this says what warden knows: the failure, the limit and what enforces
 * it, and, when the largest process's peak resident memory (the kernel's
 * ru_maxrss, a lower bound of its address space) reached half the limit,
 * that the limit most likely stopped it.  The program's words on stderr
 * are not read: they are the jail's. */
static void memory_rlimit_note(const struct run *r, const struct wrun_result *res)
{
	char how[32], note[1024];

	snprintf(how, sizeof(how), res->signal ? " (signal %d)" : " (exit %d)",
	         res->signal ? res->signal : res->exit_code);
	sv_memory_note(r->pol, r->jr.cg, res->reason, res->exit_code, "the program", how,
	               &res->peak_memory, "--memory raises it", note, sizeof(note));
	if (note[0])
		wlog_info("%s", note);
}

/* The summary (--json), run_end in the audit log, and the lines on stderr. */
void run_report(struct run *r, struct wrun_result *res)
{
	const struct wpolicy *pol = r->pol;
	struct wcg *cg = r->jr.cg;
	json_object *denied = wnotify_to_json(&r->notify), *summary = json_object_new_object();

	json_object_object_add(summary, "session", json_object_new_string(res->session));
	json_object_object_add(summary, "exit_code", res->signal ? json_object_new_null()
	                                                         : json_object_new_int(res->exit_code));
	json_object_object_add(summary, "signal", res->signal ? json_object_new_int(res->signal)
	                                                      : json_object_new_null());
	json_object_object_add(summary, "exit_status", json_object_new_int(res->exit_status));
	json_object_object_add(summary, "reason", json_object_new_string(wblock_reason_name(res->reason)));
	json_object_object_add(summary, "wall_ms", json_object_new_int64((int64_t)res->wall_ms));
	json_object_object_add(summary, "cpu_ms", json_object_new_int64((int64_t)res->cpu_ms));
	json_object_object_add(summary, "peak_memory_bytes", json_object_new_int64((int64_t)res->peak_memory));
	/* null: stdout went into the caller's pipe uncounted (direct_stdout) */
	json_object_object_add(summary, "output_bytes", res->output_direct ? json_object_new_null()
	                       : json_object_new_int64((int64_t)res->output_bytes));
	json_object_object_add(summary, "denied_syscalls", denied);
	/* attempts that found no route: the kernel's count (jail/netcount.c) */
	json_object_object_add(summary, "network_unreachable", res->have_net ?
	                       json_object_new_int64((int64_t)res->net_unreachable) : NULL);
	/* where it tried to go (jail/netseen.c) */
	json_object_object_add(summary, "network_tried", sv_net_tried_json(&r->jr.jl.seen));
	json_object_object_add(summary, "limits", limits_json(pol, cg, r->jr.jl.landlock, r->jr.jl.landlock_abi));
	json_object_object_add(summary, "profile", json_object_new_string(pol->name));
	if (r->o->json_file)
		write_json_file(r->o->json_file, summary);
	{
		json_object *drop = json_object_new_object();
		json_object_object_add(drop, "session", json_object_new_string(res->session));
		wnotify_flush_dropped(&r->notify, drop);
	}
	waudit_emit(r->audit, "run_end", json_object_get(summary));
	json_object_put(summary);
	if (r->o->quiet)
		return;
	if (r->stop_signal)
		wlog_error("stopped: warden was asked to stop (%s) and killed the jail "
		           "(session %s)", r->stop_signal == SIGINT ? "Ctrl-C twice" :
		           r->stop_signal == SIGHUP ? "SIGHUP" : r->stop_signal == SIGQUIT ?
		           "SIGQUIT" : "SIGTERM", res->session);
	if (res->reason != WB_EXITED && res->reason != WB_SIGNALED) {
		char lim[32] = "";
		if (res->reason == WB_TIMEOUT)
			format_duration_ms(pol->limits.wall_ms, lim, sizeof(lim));
		else if (res->reason == WB_OUTPUT)
			format_size(pol->limits.output, lim, sizeof(lim));
		else if (res->reason == WB_OOM)
			format_size(pol->limits.memory, lim, sizeof(lim));
		else if (res->reason == WB_CPU_TIME)
			format_duration_ms(pol->limits.cpu_ms, lim, sizeof(lim));
		else if (res->reason == WB_PIDS)
			snprintf(lim, sizeof(lim), "%" PRIu64, pol->limits.pids);
		wlog_error("stopped: %s limit%s%s reached (session %s)", wblock_reason_name(res->reason),
		           lim[0] ? " " : "", lim, res->session);
	}
	memory_rlimit_note(r, res);
	if (r->notify.n) {
		char line[1024];
		wnotify_summary(&r->notify, line, sizeof(line));
		wlog_error("denied syscalls: %s; see `warden audit --session %s`", line, res->session);
	}
	if ((res->have_net && res->net_unreachable) || r->jr.jl.seen.n) {
		char line[2048];
		sv_net_note(pol, res->have_net ? res->net_unreachable : 0, &r->jr.jl.seen,
		            "the program", "--profile network, or --net proxy --allow HOST,", line,
		            sizeof(line));
		wlog_info("%s", line);
	}
	{
		char weak[128] = "", none[64] = "";
		for (int k = 0; k < WLIM__N; k++) {
			enum wmech m = wcg_mech(cg, (enum wlimit_kind)k);
			char *dst = m == WMECH_RLIMIT ? weak : m == WMECH_UNAVAILABLE ? none : NULL;
			size_t cap = m == WMECH_RLIMIT ? sizeof(weak) : sizeof(none);
			if (dst)
				snprintf(dst + strlen(dst), cap - strlen(dst), "%s%s",
				         dst[0] ? ", " : "", wlimit_kind_name((enum wlimit_kind)k));
		}
		/* once per user and machine, and again when it changes
		 * (supervisor/once.c); --json and run_end always name them */
		if (weak[0] || none[0]) {
			char note[512];

			snprintf(note, sizeof(note), "%s%s%s%s%s", weak[0] ? weak : "",
			         weak[0] ? " limit enforced by per-process rlimits only" : "",
			         weak[0] && none[0] ? ", " : "", none[0] ? none : "",
			         none[0] ? " limit enforced by nothing" : "");
			if (sv_say_once("cgroup", note))
				wlog_warn("no writable cgroup: %s; `warden doctor` gives the commands "
				          "that delegate one to you (said once, until this changes)", note);
		}
	}
	if (!r->jr.jl.landlock)
		wlog_warn("Landlock is unavailable on this kernel: mounts alone confine the filesystem");
}

/* At the start: the workspace holds the caller's home, so say what is
 * protected there; and a scan that stopped at its bound (jail/protect.c). */
void report_protect(const struct run *r)
{
	const struct wprotect_stats *p = &r->jr.jl.protect;

	if (p->incomplete)
		wlog_warn("the workspace has more entries than warden scans for nested repositories "
		          "(100,000): repositories beyond them are not protected");
	if (r->o->quiet || !p->home)
		return;
	wlog_info("your home directory is in the workspace: %u paths your machine runs or trusts "
	          "are read-only or kept from being created, %u credential paths are hidden; "
	          "`warden policy show --catalog` lists them", p->protected_n + p->covered_n,
	          p->hidden_n);
}
