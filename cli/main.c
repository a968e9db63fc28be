/* warden: entry point.  Dispatches to the subcommands in cmd_*.c. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "warden/protect.h"
#include "warden/util.h"

static void usage(FILE *f)
{
	fputs("usage: warden [chat] [OPTIONS] [MESSAGE]   chat with an LLM; code runs in jails\n"
	      "       warden COMMAND [ARGS]\n"
	      "\n"
	      "  chat [OPTIONS] [MESSAGE]            the conversation (the default)\n"
	      "  serve --stdio [OPTIONS]             JSON-lines API for other programs\n"
	      "  mcp [OPTIONS]                       an MCP server on stdio, for agents\n"
	      "  run [OPTIONS] -- PROGRAM [ARG...]   run one program in a fresh jail\n"
	      "  policy check FILE|NAME | show NAME | list\n"
	      "  audit [--last N|--since TIME|--all|--session ID] [--denied] [--json]\n"
	      "  doctor                              what this kernel and user can use\n"
	      "  version\n"
	      "\n"
	      "`warden COMMAND --help` describes each command; see man warden, or\n"
	      "man warden-COMMAND (warden-run, warden-chat, ...).\n", f);
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	wtiming_main();   /* WARDEN_TIMING=1: the profile starts at exec */
	/* not a command: the placeholders' cleaner warden leaves behind
	 * (warden/protect.h) */
	if (argc == 2 && !strcmp(argv[1], WPROTECT_CLEANER_ARG))
		return wprotect_cleaner_main();
	if (cmd && (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h"))) {
		usage(stdout);
		return 0;
	}
	if (cmd && (!strcmp(cmd, "version") || !strcmp(cmd, "--version"))) {
		puts("warden " WARDEN_VERSION);
		return 0;
	}
	/* `warden` alone, or with chat options or a message, is `warden chat` */
	if (!cmd || cmd[0] == '-')
		return cmd_chat(argc, argv);
	if (!strcmp(cmd, "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(cmd, "policy"))
		return cmd_policy(argc - 1, argv + 1);
	if (!strcmp(cmd, "audit"))
		return cmd_audit(argc - 1, argv + 1);
	if (!strcmp(cmd, "serve"))
		return cmd_serve(argc - 1, argv + 1);
	if (!strcmp(cmd, "mcp"))
		return cmd_mcp(argc - 1, argv + 1);
	if (!strcmp(cmd, "chat"))
		return cmd_chat(argc - 1, argv + 1);
	if (!strcmp(cmd, "doctor"))
		return cmd_doctor(argc - 1, argv + 1);
	fprintf(stderr, "warden: unknown command '%s'; try `warden --help`\n", cmd);
	return 2;
}
