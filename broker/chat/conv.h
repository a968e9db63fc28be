/* Conversations on disk: JSON arrays of LMC messages (llm.h) under
 * <data>/conversations/<timestamp>-<slug>.json, written atomically
 * (temp file, fsync, rename), 0600.  Also: the token estimate, trimming a
 * history to a context window, and the export of the approved code as a
 * runnable shell script. */
#ifndef BROKER_CONV_H
#define BROKER_CONV_H

#include <json-c/json.h>
#include <stddef.h>
#include <time.h>

#include "warden/err.h"

/* The console content that tells the model the user declined a block; an
 * exported script leaves such blocks out. */
#define CONV_DECLINED "The user declined to run this code."
#define CONV_NOT_RUN "This code was not run: "

/* The notes warden adds, each on a line of its own, after a block's
 * output for the model (chat_run.c); the script export reads them back
 * (conv_script.c).  A block's own output could print one of these lines
 * too: the export would then only say more than it must, or leave out a
 * block that printed as if interrupted; it never runs anything it would
 * not have. */
#define CONV_INTERRUPTED "[interrupted by the user (Ctrl-C)]"
#define CONV_COULD_NOT_RUN "[warden: the block could not run: "   /* why] */
#define CONV_STOPPED "[stopped by the jail: the policy's "       /* NAME limit was reached] */
#define CONV_SIGNALED "[killed by signal "                       /* N] */
#define CONV_DENIED "[the jail's policy denied these system calls: "   /* LIST. ...] */
#define CONV_STATE_LOST "[the session restarted: "               /* ...] */
#define CONV_NEW_JAIL "[warden: this block ran in a new "        /* LANG jail: ...] */

/* "<data>/conversations" (malloc'd). */
char *conv_dir(const char *data);
/* A new file name for a conversation whose first user message is `first`
 * (may be NULL): "<dir>/2024-05-01_12-30-05-analyse-the-sales.json". */
char *conv_new_path(const char *data, const char *first);
/* The most recently modified conversation, or -1 with err. */
int conv_latest(const char *data, char **path, struct werr *err);
/* %save/%load/--resume names: an absolute path must be under data; a
 * relative one is under <data>/conversations (".json" added when missing).
 * -1 with err for anything that leaves data ("..", other absolute paths). */
int conv_resolve(const char *data, const char *name, char **path, struct werr *err);

/* Check the LMC shape: an array of objects with a known role and type and
 * a string content.  err names the message ("message 3: ..."). */
int conv_validate(json_object *msgs, struct werr *err);
int conv_save(const char *path, json_object *msgs, struct werr *err);
/* Any JSON value to path the same way (directories made 0700, temp file,
 * fsync, rename, 0600); what names the job in errors. */
int conv_write_json(const char *path, json_object *obj, const char *what, struct werr *err);
int conv_load(const char *path, json_object **msgs, struct werr *err);

/* JSON text to a value; errors say "path:line:col: what". */
int conv_json_parse(const char *path, const char *text, size_t len, json_object **out,
                    struct werr *err);
/* 1-based line and column of a byte offset. */
void conv_linecol(const char *text, size_t off, int *line, int *col);

/* ~4 characters per token, plus a little per message. */
size_t conv_tokens_str(const char *s);
size_t conv_tokens(json_object *msgs);
/* A new array (sharing the messages) of the latest messages that fit in
 * budget tokens; it never starts with a computer message (a tool result
 * without its call), and always keeps the last message. */
json_object *conv_trim(json_object *msgs, size_t budget);

/* conv_script.c: the approved code blocks of a conversation as a POSIX
 * shell script that runs them in order, each language in one interpreter
 * for as long as the session's jail of that language lived (a new one
 * where the conversation says the jail was new), so that a block sees
 * what the earlier blocks of its language left, whatever ran between.
 * Declined, interrupted and unrun blocks are left out; what the script
 * cannot do as the session did (a limit that stopped a block, calls the
 * jail denied, images, a block left out) is listed at its top.  source:
 * the conversation's path as the person knows it.  malloc'd. */
char *conv_script(json_object *msgs, const char *source);
int conv_export_script(json_object *msgs, const char *source, const char *path,
                       struct werr *err);

/* conv_drivers.c: how an exported script runs a language (the session's
 * name or an alias, any case), or NULL. */
struct conv_interp {
	const char *name;       /* the session's name: python, shell, ... */
	const char *names;      /* ",name,alias,...," in lower case */
	const char *program;    /* the interpreter the script needs */
	const char *start;      /* the shell command that starts it */
	const char *driver;     /* its driver's text */
	int fd;                 /* the script's fd to its blocks (3..8) */
};
const struct conv_interp *conv_interp_find(const char *lang);
const struct conv_interp *conv_interp_all(size_t *n);

/* conv_nb.c: the conversation as a Jupyter notebook (nbformat 4.5): the
 * user's and the model's text as markdown cells, each code block as a code
 * cell (a cell magic such as %%bash for languages other than python) with
 * what came back as its outputs: console text as stream outputs, images
 * (base64.png / base64.jpeg) and html as display_data.  A new object. */
json_object *conv_notebook(json_object *msgs);
/* Where %jupyter writes: <data>/notebooks/NAME.ipynb (".ipynb" added when
 * missing); an absolute path must be under data; ".." is refused.  name
 * NULL or "": the conversation file's name (conv_path, may be NULL: a new
 * timestamped name). */
int conv_notebook_path(const char *data, const char *name, const char *conv_path, char **path,
                       struct werr *err);

/* Saved conversations, newest first, for --conversations: path, modified
 * time, message count, first user message (NULL when none). */
struct conv_entry {
	char *path;
	time_t mtime;
	size_t n_msgs;
	char *first;
};
/* 0 with *out (n entries; none is fine), -1 with err when the directory
 * cannot be read.  Files that are not conversations are skipped. */
int conv_list(const char *data, struct conv_entry **out, size_t *n, struct werr *err);
void conv_list_free(struct conv_entry *e, size_t n);

#endif
