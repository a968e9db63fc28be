/* The limits report of the OPENED reply: see limrep.h. */
#include <json-c/json.h>

#include "warden/cgroup.h"
#include "warden/util.h"
#include "limrep.h"

char *limits_report_json(const struct wpolicy *p)
{
	json_object *o = json_object_new_object();
	struct wcg_probe pr;
	char *s;

	wcg_probe(&pr);
	for (int k = 0; k < WLIM__N; k++) {
		enum wlimit_kind kind = (enum wlimit_kind)k;
		enum wmech m = wlimit_requested(&p->limits, kind) ? pr.mech[k] : WMECH_NONE;
		json_object_object_add(o, wlimit_kind_name(kind), json_object_new_string(wmech_name(m)));
	}
	json_object_object_add(o, "wall_time", json_object_new_string(p->limits.wall_ms ? "timerfd" : "none"));
	json_object_object_add(o, "file_size", json_object_new_string(p->limits.file_size ? "rlimit" : "none"));
	json_object_object_add(o, "open_files", json_object_new_string(p->limits.open_files ? "rlimit" : "none"));
	json_object_object_add(o, "output", json_object_new_string(p->limits.output ? "supervisor" : "none"));
	s = xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return s;
}
