/* Private to policy/: the pieces the policy files share.
 *
 *   locate.c    json-c parse, position index (and duplicate keys), located errors
 *   parse.c     the schema: JSON -> fields of a struct wpolicy (one file)
 *   syntax.c    profile names, paths, host:port as text (no JSON)
 *   merge.c     defaults, `extends` merging, checks that span several keys
 *   profiles.c  profile lookup (user dir, built-ins), extends chains, list
 *   expand.c    $WORKSPACE / $HOME
 *   show.c      policy_to_json
 *   strv.c      string vectors, policy_free */
#ifndef WARDEN_POLICY_INTERNAL_H
#define WARDEN_POLICY_INTERNAL_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "warden/err.h"
#include "warden/policy.h"

#define WPOLICY_MAX_FILE   (1024 * 1024)   /* bytes in one policy file */
#define WPOLICY_MAX_DEPTH  8               /* profiles in one extends chain */
#define WPOLICY_MAX_TMPFS  (16ULL << 30)   /* 16G */

/* ---- locate.c ---------------------------------------------------------- */

/* Where a key and its value start, by path: "limits.memory",
 * "filesystem.read_only[2]", "filesystem.tmpfs./tmp".  Array elements have
 * koff == voff.  The root object has path "". */
struct wpos {
	char *path;
	size_t koff, voff;   /* byte offsets into the text */
};

struct wsrc {
	const char *source;  /* file name used in messages */
	const char *text;
	size_t len;
	struct wpos *pos;
	size_t n_pos, cap_pos;
};

/* Parse with json-c (strict), then scan the text ourselves for what json-c
 * accepts but JSON does not (single quotes, NaN, raw control characters),
 * for duplicate keys, and to record positions.  *out is a json-c object. */
int wsrc_parse(struct wsrc *s, json_object **out, struct werr *err);
void wsrc_free(struct wsrc *s);

/* 1-based line and column (in characters, not bytes) of a byte offset. */
void wsrc_linecol(const struct wsrc *s, size_t off, unsigned *line, unsigned *col);

/* "SOURCE:LINE:COL: message".  err_key points at the key of `path` (for an
 * array element: the element), err_val at its value.  A path that is not in
 * the index (a key that is absent) falls back to its nearest parent. */
int wsrc_err_off(const struct wsrc *s, size_t off, struct werr *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int wsrc_err_key(const struct wsrc *s, const char *path, struct werr *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int wsrc_err_val(const struct wsrc *s, const char *path, struct werr *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* ---- parse.c ----------------------------------------------------------- */

/* Every key of the schema that can be set, for "set in this file or
 * inherited" bookkeeping (merge.c). */
enum wfield {
	F_NAME, F_DESCRIPTION, F_EXTENDS,
	F_READ_ONLY, F_READ_WRITE, F_OPTIONAL, F_TMPFS, F_HIDE,
	F_PROTECT, F_UNPROTECT, F_UNHIDE,
	F_NET_MODE, F_NET_ALLOW,
	F_MEMORY, F_PIDS, F_CPUS, F_WALL_TIME, F_CPU_TIME, F_FILE_SIZE,
	F_OPEN_FILES, F_OUTPUT, F_BACKGROUND,
	F_DENY_ACTION, F_AUDIT, F_ALLOW_EXTRA, F_DENY_EXTRA,
	F_ENV_PASS, F_ENV_SET,
	F__COUNT
};

/* Read the keys present in `root` into *p (which starts zeroed) and mark
 * them in set[]; append[f] marks a list or map written "KEY+" (its entries
 * are added to the inherited ones).  `extends` receives the parent's name,
 * if any.  errs NULL: the first error ends the parse (-1, err).  Else
 * (`warden policy check`) each key's error is appended to errs and the
 * parse goes on with the next key; -1 when there was any (err clear),
 * or for an error that ends it anyway (err set, not appended). */
int wpolicy_parse_fields(const struct wsrc *s, json_object *root, struct wpolicy *p,
                         bool set[F__COUNT], bool append[F__COUNT], char **extends,
                         struct wstrv *errs, struct werr *err);

/* "filesystem.read_only" for F_READ_ONLY (the section and the key, as
 * written in a file), in buf; "" for a top-level field. */
const char *wpolicy_field_path(int f, char *buf, size_t len);

/* ---- syntax.c ---------------------------------------------------------- */

/* Profile names: letters, digits, '-', '_', '.'; not starting with '.',
 * at most 64 characters, not ending in ".json". */
bool wprofile_name_ok(const char *name);

/* Path syntax shared with policy_expand: checks and normalizes a policy path
 * ("//usr/" -> "/usr", "${HOME}/x" -> "$HOME/x").  On error, *why is a
 * static "what; fix" text. */
int wpath_normalize(const char *raw, char **out, const char **why);


/* ---- merge.c ----------------------------------------------------------- */

/* The defaults of every key (docs/policy.md). */
void wpolicy_defaults(struct wpolicy *p);

/* Move the fields set[] in `child` over those of `base` (the resolved
 * parent, or the defaults), or add them to base's for append[], then check
 * what spans several keys.  A key set in this file wins over an inherited
 * one it contradicts; two keys of the same file that contradict each other
 * are an error located in `s`.  errs as for wpolicy_parse_fields: each
 * error appended and the checks go on (the entry in question kept), -1
 * at the end when there was any. */
int wpolicy_merge(const struct wsrc *s, struct wpolicy *base, struct wpolicy *child,
                  const bool set[F__COUNT], const bool append[F__COUNT], struct wstrv *errs,
                  struct werr *err);

/* ---- expand.c ---------------------------------------------------------- */

enum wvar { WVAR_WORKSPACE, WVAR_HOME, WVAR_DOLLAR };

/* s[*i] == '$': reads "$WORKSPACE", "${WORKSPACE}", "$HOME", "${HOME}" or
 * "$$", advances *i past it.  -1 for anything else, with *bad set to the
 * unknown variable text (malloc'd). */
int wvar_read(const char *s, size_t *i, enum wvar *var, char **bad);

/* ---- profiles.c -------------------------------------------------------- */

/* $XDG_CONFIG_HOME/warden/profiles or ~/.config/warden/profiles; NULL when
 * neither variable gives an absolute directory.  malloc'd. */
char *wprofile_user_dir(void);

/* strv.c */
/* parse.c: the string-vector field an enum wfield value names, or NULL. */
struct wstrv *policy_strv_field(struct wpolicy *p, int f);

void wstrv_move(struct wstrv *dst, struct wstrv *src);
void wstrv_remove_at(struct wstrv *s, size_t i);

#endif
