/* The limits report of the OPENED reply: see limrep.h. */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "warden/cgroup.h"
#include "warden/landlock.h"
#include "warden/util.h"
#include "limrep.h"
#include "sv.h"

json_object *limits_mech_object(const struct wpolicy *p, const enum wmech mech[WLIM__N])
{
	json_object *o = json_object_new_object();

	for (int k = 0; k < WLIM__N; k++)
		json_object_object_add(o, wlimit_kind_name((enum wlimit_kind)k),
		                       json_object_new_string(wmech_name(mech[k])));
	json_object_object_add(o, "wall_time", json_object_new_string(p->limits.wall_ms ? "timerfd" : "none"));
	json_object_object_add(o, "file_size", json_object_new_string(p->limits.file_size ? "rlimit" : "none"));
	json_object_object_add(o, "open_files", json_object_new_string(p->limits.open_files ? "rlimit" : "none"));
	json_object_object_add(o, "output", json_object_new_string(p->limits.output ? "supervisor" : "none"));
	return o;
}

char *limits_report_json(const struct wpolicy *p)
{
	enum wmech mech[WLIM__N];
	struct wcg_probe pr;
	json_object *o;
	char *s;

	wcg_probe(&pr);
	for (int k = 0; k < WLIM__N; k++)
		mech[k] = wlimit_requested(&p->limits, (enum wlimit_kind)k) ? pr.mech[k] : WMECH_NONE;
	o = limits_mech_object(p, mech);
	s = xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return s;
}

char *jail_report_json(const struct wpolicy *p, const char *ws)
{
	json_object *o = json_object_new_object();
	int abi = wll_abi();   /* what each jail's Landlock step gets on this kernel */
	const char *home = sv_caller_home();
	size_t hl = strlen(ws);
	char *s;

	/* the caller's home lies in the workspace: chat says once what is
	 * protected there (jail/protect.c) */
	json_object_object_add(o, "home_in_workspace", json_object_new_boolean(
	                       !strncmp(home, ws, hl) && (home[hl] == '\0' || home[hl] == '/')));
	json_object_object_add(o, "policy_source",
	                       json_object_new_string(p->source ? p->source : "unknown"));
	json_object_object_add(o, "landlock_abi", json_object_new_int(abi > 0 ? abi : 0));
	s = xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	                                              JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return s;
}

void sv_memory_note(const struct wpolicy *p, struct wcg *cg, enum wblock_reason reason,
                    int exit_code, const char *who, const char *how, const uint64_t *peak,
                    const char *raise, char *buf, size_t len)
{
	char lim[32], used[32];

	buf[0] = '\0';
	/* failed: a non-zero exit, or a signal */
	if (!((reason == WB_EXITED && exit_code) || reason == WB_SIGNALED) || !p->limits.memory ||
	    wcg_mech(cg, WLIM_MEMORY) != WMECH_RLIMIT)
		return;
	format_size(p->limits.memory, lim, sizeof(lim));
	if (peak && *peak >= p->limits.memory / 2) {
		format_size(*peak, used, sizeof(used));
		snprintf(buf, len, "memory: %s failed%s after its largest process used %s of the %s "
		         "its memory limit allows: it most likely ran out.  The limit is an rlimit "
		         "here (RLIMIT_AS, no memory cgroup), which counts address space reserved, "
		         "more than memory used: %s; `warden doctor` shows how to get a cgroup", who,
		         how, used, lim, raise);
		return;
	}
	snprintf(buf, len, "memory: %s failed%s while its memory limit (%s) was an rlimit "
	         "(RLIMIT_AS, no memory cgroup here): if it reports running out of memory "
	         "(MemoryError, ENOMEM, bad_alloc), that limit refused an allocation; it counts "
	         "address space reserved, more than memory used: %s", who, how, lim, raise);
}
