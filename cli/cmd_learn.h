/* Private to cli/: the learning options shared by cmd_run.c and
 * cmd_policy.c (cli/cmd_learn.c). */
#ifndef WARDEN_CMD_LEARN_H
#define WARDEN_CMD_LEARN_H

#include "warden/supervisor.h"

enum { OPT_LEARN = 512, OPT_WRITE, OPT_REFUSALS, OPT_NAME, OPT_INCLUDE };

#define CMD_LEARN_OPTIONS \
	{ "learn", no_argument, NULL, OPT_LEARN }, \
	{ "write", required_argument, NULL, OPT_WRITE }, \
	{ "refusals", required_argument, NULL, OPT_REFUSALS }, \
	{ "name", required_argument, NULL, OPT_NAME }, \
	{ "include", required_argument, NULL, OPT_INCLUDE }

/* one line: warden run --help has 24 (tests/cli/commands.bats); the rest
 * is in warden-run(1) */
#define CMD_LEARN_USAGE \
	"  --learn             print the policy it lacked (--write FILE: man warden-run)\n"

/* one of the options above into o; -1 (said why) */
int cmd_learn_opt(int opt, const char *arg, struct wrun_opts *o);
/* after parsing: -1 (said why) when they were given without --learn */
int cmd_learn_check(const struct wrun_opts *o);
/* `warden run` (learn false) and `warden policy learn` (true) */
int cmd_run_as(int argc, char **argv, bool learn);

#endif
