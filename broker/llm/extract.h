/* Code in assistant text, and tool calls repaired (extract.c).  Depends on
 * lmc.h only. */
#ifndef BROKER_EXTRACT_H
#define BROKER_EXTRACT_H

#include <json-c/json.h>
#include <stdbool.h>

/* Code blocks in assistant text, and the common mistakes of local models:
 * ```lang fenced blocks; a tool call written as plain JSON text
 * ({"name":"execute","arguments":{...}}); functions.execute(...); a tool
 * named after the language ({"name":"python","arguments":"..."}).
 * Returns a json array of LMC messages that replaces `text`: the prose
 * pieces as "message", each block as "code". */
json_object *llm_extract_code(const char *text);

/* A tool call whose name is "execute" (or a language) and whose arguments
 * are JSON {language, code}, a JSON string of that, or raw code.  0 with
 * *language and *code malloc'd, or -1 when it is not a code call. */
int llm_repair_call(const char *name, const char *args, char **language, char **code);
/* True when llm_extract_code turns a fence with this info string (what
 * follows the ``` on its line) into code to run: an unlabelled fence, or
 * any label but data and output (text, json, csv, ...).  The chat hides
 * such fences from the streamed text, because the code box shows them. */
bool llm_fence_runs(const char *info, size_t n);
/* A fence's label: the first word of its info string, copied into buf
 * (cut to cap - 1 bytes); returns its whole length, 0 when unlabelled. */
size_t llm_fence_label(const char *info, size_t n, char *buf, size_t cap);
/* True for the labels of fences that hold data or output (text, json, csv,
 * ...), never code to run. */
bool llm_fence_is_data(const char *label);

/* Only the fenced blocks of text whose label (as written: "py" stays "py")
 * runs(ctx, label) accepts become "code" messages; everything else is
 * prose, unlabelled fences and tool calls written as text included.  For
 * a model that was offered the tool and answered with fences instead: a
 * fence that names no language it may run is the model's text. */
json_object *llm_extract_fences(const char *text, bool (*runs)(void *ctx, const char *label),
                                void *ctx);
/* True for the names of languages a model may use as a tool name. */
bool llm_is_language(const char *name);

#endif
