/* What the files of warden chat share (chat.h lists them): the chat's
 * state and the few functions one file calls in another. */
#ifndef BROKER_CHAT_INT_H
#define BROKER_CHAT_INT_H

#include <json-c/json.h>
#include <stdbool.h>

#include "core/broker.h"
#include "core/client.h"
#include "llm/llm.h"
#include "ui.h"

struct chat {
	const struct bdirs *d;
	struct ui ui;
	struct llm_config llm;
	struct bclient bc;
	bool bc_ok;
	struct bsession sess;
	bool sess_open;
	char *profile;                /* sandbox profile; NULL: the default */
	char *chat_profile;           /* --profile: config.json's profile; NULL: none */
	bool auto_run, verbose, oneshot;
	bool learn;                   /* sessions learn what blocks are refused (not
	                                 --no-learn), and may be widened */
	json_object *widened;         /* what the session was widened by ("read
	                                 /path"), as the supervisor granted it */
	long max_output, context_window;
	char *system_base;            /* --system-message: replaces warden's instructions */
	char *system_extra;           /* --system-message-append: added after them */
	json_object *msgs;
	char *conv_path;
	json_object *denied;          /* {"syscall": count} over the conversation */
	json_object *audit_ids;       /* sessions opened */
	bool fatal;                   /* the supervisor is gone */
	bool limits_told;             /* the weaker-limits line was shown */
	bool home_told;               /* the home-in-workspace line was shown */
	json_object *langs;           /* the languages the session runs (OPENED,
	                                 else LANGLIST), or NULL */
	bool langs_asked;             /* LANGLIST was tried */
	/* how the last reply with code brought it: tool calls, or (tools on,
	 * none made) fenced blocks */
	enum { CODE_NONE, CODE_TOOLS, CODE_FENCES } code_path;
};

/* A string member of a message, NULL when absent. */
static inline const char *mstr(json_object *m, const char *k)
{
	json_object *v;

	if (!m || !json_object_object_get_ex(m, k, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* chat_opts.c: a wrong command line, said on stderr; always -1. */
int chat_bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern const char chat_usage_text[];

/* chat_conv.c: the conversation, shown, added to, saved */
void chat_show_conversation(struct chat *c);
void chat_add_console(struct chat *c, const char *content);
void chat_save(struct chat *c);

/* chat_export.c: --resume's name to its file and its messages (either -1
 * with err); --export-script and --jupyter, each an exit status */
struct chat_opts;
int chat_resume_path(const struct bdirs *d, const struct chat_opts *o, const char *name,
                     char **path, struct werr *err);
int chat_resume_load(struct chat_opts *o, const char *path, json_object **msgs,
                     struct werr *err);
int chat_export_script(const struct bdirs *d, struct chat_opts *o);
int chat_export_notebook(const struct bdirs *d, struct chat_opts *o);

/* chat_prompt.c: the system message (malloc'd) and the profile's name */
char *chat_system_message(struct chat *c);
const char *chat_profile_name(const struct chat *c);

/* chat_run.c: show, approve and run one code message */
enum { RB_RAN, RB_DECLINED, RB_INTERRUPTED, RB_FATAL };
int chat_run_block(struct chat *c, json_object *m);
/* Open the chat's session, once (at start-up, so its jail starts while the
 * person types; again before a block when that failed).  -1 after telling
 * the person why. */
int chat_open_session(struct chat *c);
void chat_close_session(struct chat *c);
/* label (a fence's, as the model wrote it) names a language the session
 * runs, and not data (text, json, ...) */
bool chat_lang_runs(struct chat *c, const char *label);

/* chat_widen.c: what a block was refused, asked about (by the supervisor,
 * on the terminal), and %allow, %revoke, %profile save.  chat_widen_offer:
 * how many widenings were granted (the block then runs again); what the
 * model is told goes into model. */
struct sbuf;
int chat_widen_offer(struct chat *c, const char *refusals, const char *lang,
                     struct sbuf *model);
/* these two need an open session (chat_open_session, which is above) */
int chat_allow(struct chat *c, const char *arg);
int chat_revoke(struct chat *c);
int chat_profile_save(struct chat *c, const char *name);

/* chat_info.c: %info (what this chat runs with) and %jupyter (the
 * conversation as a notebook) */
void chat_info(struct chat *c);
/* 0 written (its path told), -1 not (why told) */
int chat_jupyter(struct chat *c, const char *arg);

/* chat_magic.c: a %command line (changed in place): 0 done, 1 it failed,
 * 2 no such command (each told) */
int chat_magic(struct chat *c, char *line);

#endif
