/* warden: entry point.  Dispatches to the subcommands in cmd_*.c. */
#include <stdio.h>
#include <string.h>

#include "warden/cmd.h"

static void usage(FILE *f)
{
	fputs("usage: warden COMMAND [ARGS]\n"
	      "\n"
	      "  run [OPTIONS] -- PROGRAM [ARG...]   run one program in a fresh jail\n"
	      "  policy check FILE | show NAME | list\n"
	      "  audit [--session ID] [--denied] [--json] [--audit-log FILE]\n"
	      "  doctor                              what this kernel and user can use\n"
	      "  version\n"
	      "\n"
	      "`warden COMMAND --help` describes each command.\n", f);
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	if (!cmd || !strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		usage(cmd ? stdout : stderr);
		return cmd ? 0 : 2;
	}
	if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
		puts("warden " WARDEN_VERSION);
		return 0;
	}
	if (!strcmp(cmd, "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(cmd, "policy"))
		return cmd_policy(argc - 1, argv + 1);
	if (!strcmp(cmd, "audit"))
		return cmd_audit(argc - 1, argv + 1);
	if (!strcmp(cmd, "doctor"))
		return cmd_doctor(argc - 1, argv + 1);
	fprintf(stderr, "warden: unknown command '%s'; try `warden --help`\n", cmd);
	return 2;
}
