/* `warden policy check`'s second half (warden/supervisor.h): the checks a
 * run makes of a loaded policy against this machine, with the workspace,
 * HOME and warden's own hides resolved as `warden run` resolves them
 * (run.c, run_policy), and its syscall filter built as a run builds it,
 * so that `check` says ok when a run would not refuse the policy.  Nothing is made on the host: no cgroup, no
 * audit record, no placeholder (jail_plan_check). */
#include <limits.h>
#include <string.h>

#include "sv.h"
#include "warden/auditlog.h"
#include "warden/filter.h"
#include "warden/jail.h"
#include "warden/supervisor.h"
#include "warden/util.h"

int wcheck_policy(const struct wpolicy *p, const char *workspace, char ws[PATH_MAX],
                  struct wstrv *msgs, struct werr *err)
{
	struct jail_spec spec = JAIL_SPEC_INIT;
	struct wstrv hides = { 0 }, paths = { 0 }, below = { 0 }, found = { 0 };
	_cleanup_free_ char *log = NULL;
	const char *env_log = getenv("WARDEN_AUDIT_LOG");
	int r;

	if (sv_resolve_workspace(workspace, ws, err) < 0)
		return -1;
	/* the audit log a run would use: its directory is hidden when the
	 * workspace holds it (sv_own_hides) */
	log = env_log && *env_log ? xstrdup(env_log) : waudit_default_path();
	sv_own_hides(ws, log, &hides);
	spec.pol = p;
	spec.workspace = ws;
	spec.home = sv_caller_home();
	spec.protect_extra = hides.v;
	spec.protect_reg = NULL;   /* a check makes no placeholder */
	r = jail_plan_check(&spec, &paths, &below, &found);
	/* the syscall filter, as jr_prepare builds it (this libseccomp must
	 * know every name the policy adds or removes) */
	if (!wfilter_find_prebuilt(p)) {
		scmp_filter_ctx f = NULL;
		struct werr ferr = { 0 };

		if (wfilter_build(p, &f, &ferr) < 0) {
			wstrv_push(&paths, "");
			wstrv_push(&below, "");
			wstrv_push(&found, ferr.msg);
			r = -1;
		}
		if (f)
			seccomp_release(f);
	}
	/* where the file writes the bind, else the writable place it lies
	 * in (a default entry below a path the file made writable) */
	for (size_t i = 0; i < found.n; i++) {
		char *m = policy_locate_path(p, paths.v[i], ws, spec.home, found.v[i]);

		if (!m && below.v[i][0])
			m = policy_locate_path(p, below.v[i], ws, spec.home, found.v[i]);
		if (!m)
			m = xasprintf("%s: %s", p->source ? p->source : p->name, found.v[i]);
		wstrv_push(msgs, m);
		free(m);
	}
	wstrv_free(&hides);
	wstrv_free(&paths);
	wstrv_free(&below);
	wstrv_free(&found);
	return r < 0 ? 1 : 0;
}
