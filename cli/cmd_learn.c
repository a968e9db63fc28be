/* The learning options of `warden run` (--learn and the four that go with
 * it); `warden policy learn` is `warden run --learn` by another name
 * (cmd_run_as; docs/learn.md).  The run itself is wrun() (supervisor/run.c). */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "cmd_learn.h"
#include "warden/policy.h"
#include "warden/util.h"

int cmd_learn_opt(int opt, const char *arg, struct wrun_opts *o)
{
	struct wrun_learn *l = &o->learn;

	switch (opt) {
	case OPT_LEARN:
		l->on = true;
		return 0;
	case OPT_WRITE:
		l->write = arg;
		return 0;
	case OPT_REFUSALS:
		l->json_file = arg;
		return 0;
	case OPT_NAME:
		if (!wprofile_name_ok(arg)) {
			wlog_error("--name '%s': a profile name is letters, digits, '-', '_' and '.', "
			           "at most 64, not starting with '.' or '-'", arg);
			return -1;
		}
		l->name = arg;
		return 0;
	case OPT_INCLUDE:
		if (l->n_include >= ARRAY_SIZE(l->include)) {
			wlog_error("--include: at most %zu", ARRAY_SIZE(l->include));
			return -1;
		}
		l->include[l->n_include++] = arg;
		return 0;
	default:
		return -1;
	}
}

int cmd_learn_check(const struct wrun_opts *o)
{
	const struct wrun_learn *l = &o->learn;

	if (!l->on && (l->write || l->json_file || l->name || l->n_include)) {
		wlog_error("--write, --refusals, --name and --include go with --learn (or use "
		           "`warden policy learn`)");
		return -1;
	}
	return 0;
}
