/* warden chat's options that the broker parses (broker/chat/chat_opts.c),
 * in one table.  The broker builds its getopt_long table from it; the
 * supervisor (cli/cmd_serve.c), which takes its own options out of chat's
 * command line and passes the rest on untouched, reads from it which of the
 * broker's options take a value, so that a value is never read as an
 * option of the supervisor's (`--system-message --workspace=/` is a system
 * message, not a workspace).  WCA_SERVE marks those `warden serve` passes
 * to the broker for its "chat" op. */
#ifndef WARDEN_CHAT_ARGS_H
#define WARDEN_CHAT_ARGS_H

#include <getopt.h>

enum wchat_arg_id {
	/* the ones with a short form are their letter */
	WCA_MODEL = 'm', WCA_AUTO_RUN = 'y', WCA_VERBOSE = 'v', WCA_HELP = 'h',
	WCA_API_BASE = 256, WCA_API_KEY, WCA_PROFILE, WCA_SANDBOX, WCA_NO_TOOLS,
	WCA_MAX_OUTPUT, WCA_CONTEXT, WCA_MAX_TOKENS, WCA_TEMP, WCA_RESUME, WCA_EXPORT,
	WCA_JUPYTER, WCA_SYSMSG, WCA_SYSMSG_APPEND, WCA_CONVERSATIONS, WCA_CONNECT,
	WCA_IDLE, WCA_ONESHOT, WCA_REPLAY_DELAY, WCA_SESSION_IDLE, WCA_NO_LEARN,
};

/* getopt_long's short options for the table (':' first: a missing value
 * is reported as ':') */
#define WCHAT_SHORTOPTS ":m:yvh"

enum { WCA_CHAT = 1, WCA_SERVE = 2 };

struct wchat_arg {
	const char *name;        /* without the dashes */
	int has_arg;             /* no_argument, required_argument, optional_argument */
	enum wchat_arg_id id;
	unsigned modes;          /* WCA_CHAT, WCA_SERVE */
};

/* Every entry, ended by one whose name is NULL. */
extern const struct wchat_arg wchat_args[];

/* getopt_long's table of the entries of `mode`, built once (static). */
const struct option *wchat_longopts(unsigned mode);

/* When argv[i] is one of the broker's options of `mode` as getopt_long
 * reads it ("--name", "--name=VALUE", a unique prefix of a long name, "-m",
 * "-mVALUE", a cluster "-ym VALUE"): the number of words it takes with its
 * value (1 or 2), and its entry in *which (the cluster's last).  0 when it
 * is none of them.  An optional value is only ever "--name=VALUE" here:
 * chat's --resume and --jupyter may take the next word when it is no
 * option, which the caller passes on as it is anyway. */
int wchat_arg_span(int argc, char *const argv[], int i, unsigned mode,
                   const struct wchat_arg **which);

#endif
