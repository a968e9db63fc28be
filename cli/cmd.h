/* The subcommands of the `warden` executable (cli/cmd_*.c).  Each
 * takes argv after the subcommand name (argv[0] is the subcommand) and
 * returns the process exit status. */
#ifndef WARDEN_CMD_H
#define WARDEN_CMD_H

int cmd_run(int argc, char **argv);
int cmd_policy(int argc, char **argv);
int cmd_audit(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_mcp(int argc, char **argv);
int cmd_chat(int argc, char **argv);

/* cli/pager.c: when stdout is a terminal, stdout goes through a pager
 * from here on ($PAGER, else less -FRX); the pager's pid, 0 when none.
 * wpager_end closes stdout and waits for the pager to quit. */
#include <sys/types.h>
pid_t wpager_start(void);
void wpager_end(pid_t pid);

/* Transitional: the log functions live in warden/log.h; include it. */
#include "warden/log.h"

#include "warden/version.h"

#endif
