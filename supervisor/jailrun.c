/* See supervisor/jailrun.h. */
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jailrun.h"
#include "sv.h"
#include "warden/util.h"

void jr_init(struct jailrun *r, const struct wpolicy *pol)
{
	memset(r, 0, sizeof(*r));
	r->pol = pol;
	r->reaper.fd = -1;
	r->jl.pidfd = r->jl.notify_fd = r->jl.proxy_fd = r->jl.sync_fd = r->jl.slot_fd = -1;
	r->jl.snmp_fd = r->jl.snmp6_fd = r->jl.watch_fd = -1;
	r->killed_for = WB__N;
}

int jr_prepare(struct jailrun *r, const char *cgname, bool watchdog, struct jail_spec *spec,
               struct werr *err)
{
	if (wcg_create(cgname, &r->pol->limits, &r->cg, err) < 0)
		return -1;
	wtiming("cgroup create");
	r->watchdog = watchdog;
	if (watchdog) {
		wreaper_start(&r->reaper, r->cg);
		wtiming("reaper");
	}
	r->prog = wfilter_find_prebuilt(r->pol);
	if (!r->prog && wfilter_build(r->pol, &r->filter, err) < 0)
		return -1;
	wtiming("filter build");
	spec->pol = r->pol;
	spec->cg = r->cg;
	spec->filter = r->filter;
	spec->prog = r->prog;
	/* where no cgroup can, per-process rlimits stand in (jail/enter.c) */
	spec->rlimit_memory = wcg_mech(r->cg, WLIM_MEMORY) == WMECH_RLIMIT;
	spec->rlimit_pids = wcg_mech(r->cg, WLIM_PIDS) == WMECH_RLIMIT;
	return 0;
}

int jr_start(struct jailrun *r, const struct jail_spec *spec, struct werr *err)
{
	int rc = jail_start(spec, &r->jl, err);

	if (r->filter) {   /* loaded by the child (or never): not needed again */
		seccomp_release(r->filter);
		r->filter = NULL;
	}
	return rc;
}

int jr_serve_proxy(struct jailrun *r, struct wloop *l, struct waudit *audit,
                   const char *session, struct werr *err)
{
	if (r->jl.proxy_fd < 0)
		return 0;
	r->proxy_conf = (struct wproxy_conf){ .pol = r->pol, .audit = audit,
	                                      .audit_session = session };
	/* the proxy owns the listener from here, even when it fails */
	r->proxy = wproxy_new(l, steal_fd(&r->jl.proxy_fd), &r->proxy_conf, err);
	return r->proxy ? 0 : -1;
}

void jr_proxy_end(struct jailrun *r)
{
	if (r->proxy)
		wproxy_free(r->proxy);   /* each open connection audited as it ends */
	r->proxy = NULL;
}

void jr_learn_filter(struct jailrun *r, struct jail_spec *spec, scmp_filter_ctx ctx)
{
	if (r->filter)
		seccomp_release(r->filter);
	r->filter = ctx;
	r->prog = NULL;
	spec->filter = ctx;
	spec->prog = NULL;
	spec->learn = true;
}

int jr_begin(struct jailrun *r, const struct jail_spec *spec, struct werr *err)
{
	int rc = jail_begin(spec, &r->jl, err);

	if (r->filter) {   /* the child has its copy: not needed again */
		seccomp_release(r->filter);
		r->filter = NULL;
	}
	return rc;
}

void jr_kill(struct jailrun *r, enum wblock_reason why)
{
	if (r->killed_for == WB__N)
		r->killed_for = why;
	if (r->jl.pidfd >= 0)
		syscall(SYS_pidfd_send_signal, r->jl.pidfd, SIGKILL, NULL, 0);
	if (r->cg)
		wcg_kill(r->cg);
}

uint64_t jr_cpu_ns(const struct jailrun *r, const struct wcg_stats *st)
{
	uint64_t ns = 0;

	if (st->have_cpu)
		return st->cpu_ns;
	return sv_jail_cpu_ns(r->jl.pid, &ns) ? ns : 0;
}

void jr_reap(struct jailrun *r, siginfo_t *si, struct rusage *ru)
{
	memset(si, 0, sizeof(*si));
	if (ru)
		memset(ru, 0, sizeof(*ru));
	while (syscall(SYS_waitid, P_PIDFD, r->jl.pidfd, si, WEXITED, ru) < 0 && errno == EINTR)
		;
	/* the program's real status, as init reported it (jail/init.c) */
	jail_exit_status(&r->jl, si);
}

void jr_judge(const struct jailrun *r, const struct wcg_stats *st, bool by_driver,
              const siginfo_t *si, int status, bool interrupted, struct wend *e)
{
	struct wend_facts f = {
		.killed_for = r->killed_for, .by_driver = by_driver,
		.code = by_driver ? 0 : si->si_code, .status = by_driver ? status : si->si_status,
		.interrupted = interrupted, .cpu_limited = r->pol->limits.cpu_ms != 0,
		.oom_kills = st->have_oom ? st->oom_kills : 0,
		.pids_max_hits = st->have_pids ? st->pids_max_hits : 0,
	};

	wend_judge(&f, e);
}

void jr_end(struct jailrun *r)
{
	jr_proxy_end(r);
	closep(&r->jl.pidfd);
	closep(&r->jl.proxy_fd);
	closep(&r->jl.notify_fd);
	closep(&r->jl.sync_fd);
	closep(&r->jl.slot_fd);   /* reaped (or never started): its host uid is free */
	closep(&r->jl.snmp_fd);
	closep(&r->jl.snmp6_fd);
	wclose_later(&r->jl.watch_fd);
	if (r->watchdog && r->reaper.pid > 0) {
		/* `warden run`: the watchdog removes the groups while warden
		 * exits with the status it has already reported; the jail's
		 * processes are gone already (init was reaped, and the kernel
		 * killed the rest of its pid namespace), and the watchdog
		 * kills anything left before removing them (G13). */
		wcg_free(r->cg);
		wreaper_handover(&r->reaper);
	} else {
		wcg_destroy(r->cg);
		if (r->watchdog)
			wreaper_stop(&r->reaper);
	}
	r->cg = NULL;
	wtiming("cgroups handed over");
	if (r->filter) {
		seccomp_release(r->filter);
		r->filter = NULL;
	}
}
