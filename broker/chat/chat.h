/* warden chat (broker side).  Private to the broker.
 *
 * The command line is parsed once, by chat_preload, into struct chat_opts;
 * main.c calls it before broker_confine and hands the result to chat_main
 * after.  Two things a chat needs cannot be opened after confinement: the
 * replay recording given with --model replay:FILE (outside the data
 * directory) and the file named by --export-script; chat_preload opens
 * them too.  It never fails the start: a wrong command line (said on
 * stderr at once) or an unreadable config.json (said by chat_main) makes
 * chat_main return 2.  It also gives the TCP ports the confined broker may
 * connect to (broker_confine): 443, 80, 53 (DNS over TCP), the port of the
 * model's endpoint (--api-base or config.json's api_base, ollama's 11434 by
 * default) and of a proxy named by the environment.
 *
 * The files: chat_opts.c (this step), chat.c (the turn loop and chat_main),
 * chat_export.c (--export-script, --jupyter and --resume's file),
 * chat_prompt.c (the system message), chat_run.c (approve and run a block),
 * chat_magic.c (%commands), chat_info.c (%info, %jupyter), chat_conv.c (the
 * conversation shown, added to, saved); chat_int.h is what they share.
 * Calls go one way: chat.c over chat_magic.c over chat_info.c over
 * chat_run.c over chat_conv.c over chat_prompt.c. */
#ifndef BROKER_CHAT_H
#define BROKER_CHAT_H

#include <json-c/json.h>
#include <stdbool.h>

#include "core/broker.h"
#include "config.h"
#include "warden/err.h"

struct chat_opts {
	struct chat_settings s;       /* the command line over config.json */
	char *api_key, *profile, *export_script, *resume;
	bool resume_set, no_tools, verbose, oneshot, help, no_learn;
	bool conversations;           /* --conversations: list (and pick) saved ones */
	bool jupyter_set;             /* --jupyter [NAME|-]: the notebook, no chat */
	char *jupyter;                /* its NAME, "-" (stdout) or NULL (the
	                                 conversation's name) */
	long max_tokens;
	double temperature;
	long connect_ms, idle_ms, replay_delay_ms;
	char *message;
	/* what chat_preload found, for chat_main */
	bool bad;                     /* the command line is wrong (already said) */
	bool config_bad;              /* config.json could not be read: config_err */
	struct werr config_err;
	int export_fd;                /* --export-script's file, opened early; -1 */
	char *export_path;
	json_object *resume_msgs;     /* --resume FILE, read early (it may be outside
	                                 the data directory), or NULL */
	char *resume_path;
	char *demo_path;              /* the demo recording on this machine, or NULL */
};

#define CHAT_PORTS_MAX 16
void chat_preload(int argc, char **argv, const struct bdirs *d, struct chat_opts *o,
                  uint16_t *ports, size_t *n_ports);
/* chat_preload without the terminal: the options, config.json and the
 * ports, for a chat that has no terminal (serve's "chat" op, serve_opts.c). */
void chat_load_opts(int argc, char **argv, const struct bdirs *d, struct chat_opts *o,
                    uint16_t *ports, size_t *n_ports);
/* The system message warden chat sends, for a chat over the API (serve's
 * "chat" op, broker/api/serve_chat.c): the same text for a session's
 * profile, workspace, policy and languages (the supervisor's JSON). */
struct chat_prompt_in {
	const char *profile, *workspace, *policy_json, *languages_json;
	const char *system_base, *system_extra;   /* --system-message(-append) */
	bool tools;
	long max_output;
};
char *chat_prompt_for(const struct chat_prompt_in *in);   /* malloc'd */
/* The chat, after confinement; o is used up (chat_opts_free still frees it). */
int chat_main(struct chat_opts *o, const struct bdirs *d);
/* Frees; o may be zeroed with export_fd -1, or filled by chat_preload. */
void chat_opts_free(struct chat_opts *o);

#endif
