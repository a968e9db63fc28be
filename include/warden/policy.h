/* A policy: what a jail may see, use and spend.  Parsed from JSON (json-c),
 * validated strictly (unknown keys are errors), every error located by
 * file:line:column.  Paths may contain $WORKSPACE and $HOME; they are kept
 * unexpanded here and expanded by policy_expand_path() when a jail is built,
 * so `policy check` can validate a file without a workspace. */
#ifndef WARDEN_POLICY_H
#define WARDEN_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "warden/err.h"

/* network.mode (docs/policy.md "network"): none: a private network
 * namespace whose lo stays down (no address at all, not even 127.0.0.1);
 * loopback: the same with lo up, so a program can serve and reach itself;
 * proxy: loopback plus warden's allowlisting proxy on 127.0.0.1:3128. */
enum wnet_mode { WNET_NONE = 0, WNET_PROXY, WNET_LOOPBACK };
enum wdeny_action { WDENY_ERRNO = 0, WDENY_KILL };

struct wstrv { char **v; size_t n; };          /* owned string vector */

struct wtmpfs { char *path; uint64_t size; };   /* size in bytes, > 0 */

struct wlimits {
	uint64_t memory;      /* bytes; 0 = unlimited */
	uint64_t pids;        /* 0 = unlimited */
	double   cpus;        /* CPUs of bandwidth; 0 = unlimited */
	uint64_t wall_ms;     /* 0 = unlimited */
	uint64_t cpu_ms;      /* 0 = unlimited */
	uint64_t file_size;   /* bytes; 0 = unlimited */
	uint64_t open_files;  /* 0 = unlimited (inherit) */
	uint64_t output;      /* bytes of stdout+stderr; 0 = unlimited */
	bool background;      /* sessions: a block's processes may outlive it
	                         (until its wall_time); default false: killed
	                         when the block ends */
};

struct wpolicy {
	char *name;                 /* "workspace" */
	char *source;               /* file it came from, for messages */
	char *description;          /* optional, may be NULL */

	/* filesystem */
	struct wstrv read_only;     /* bound read-only (must exist, else skipped
	                               if listed in optional) */
	struct wstrv read_write;    /* bound read-write */
	struct wstrv optional;      /* read_only entries that may be missing */
	struct wtmpfs *tmpfs; size_t n_tmpfs;
	struct wstrv hide;          /* masked: /dev/null over files, empty
	                               read-only tmpfs over directories */
	struct wstrv protect;       /* read-only where they exist, cannot be
	                               created where they do not (like the
	                               protected catalog, warden/catalog.h) */
	struct wstrv unprotect;     /* catalog entries dropped, by name */
	struct wstrv unhide;
	bool workspace_writable;    /* $WORKSPACE in read_write (derived) */

	/* network */
	enum wnet_mode net;
	struct wstrv net_allow;     /* "host[:port]" entries, proxy mode
	                               (include/warden/netallow.h) */

	struct wlimits limits;

	/* syscalls */
	enum wdeny_action deny_action;
	bool audit;
	struct wstrv allow_extra;   /* syscall names added to the allowlist */
	struct wstrv deny_extra;    /* syscall names removed from it */

	/* env: only these reach the jail */
	struct wstrv env_pass;      /* names copied from the caller if set */
	struct wstrv env_set_keys;  /* parallel arrays: NAME -> value (value */
	struct wstrv env_set_vals;  /*   may contain $WORKSPACE/$HOME) */
};

/* Built-in profiles live in policy/profiles/NAME.json; they are compiled into
 * the binary (so an installed warden needs no data files) and may be
 * overridden by user profiles in $XDG_CONFIG_HOME/warden/profiles/NAME.json
 * (~/.config/warden/profiles).  Lookup order: user dir, then built-in. */

/* Parse a policy file.  On error: -1, err->msg = "FILE:LINE:COL: what; fix".
 * *out is NULL on entry and set only on success. */
int policy_load_file(const char *path, struct wpolicy **out, struct werr *err);
/* Parse from memory; `source` names it in messages. */
int policy_load_buffer(const char *source, const char *text, size_t len,
                       struct wpolicy **out, struct werr *err);
/* Resolve a profile name (user dir, then built-in).  Unknown name: error
 * listing the available profiles. */
int policy_load_profile(const char *name, struct wpolicy **out, struct werr *err);

/* `warden policy check`: policy_load_file and policy_load_profile, going
 * on after an error wherever that is safe (the next key, the next check
 * across keys), so that every error is found, not only the first.  Each is
 * appended to *errors ("FILE:LINE:COL: what; fix").  0 and *out when there
 * is none; else -1, *out NULL. */
int policy_check_file(const char *path, struct wstrv *errors, struct wpolicy **out);
int policy_check_profile(const char *name, struct wstrv *errors, struct wpolicy **out);

/* Where p's own file (p->source: a file, or a built-in's text) writes a
 * filesystem entry that names `path` once $WORKSPACE and $HOME are
 * expanded (workspace, home): the message msg located there,
 * "FILE:LINE:COL: msg" (malloc'd); NULL when the file names no such entry
 * (it is inherited, or the file cannot be read again). */
char *policy_locate_path(const struct wpolicy *p, const char *path, const char *workspace,
                         const char *home, const char *msg);

void policy_free(struct wpolicy *p);

/* Names of all profiles (built-in and user), sorted, deduplicated, with the
 * file each comes from.  Caller frees with wstrv_free(). */
int policy_list(struct wstrv *names, struct wstrv *sources, struct werr *err);

/* The effective policy (defaults filled in) as pretty JSON, in the same
 * schema the parser accepts, so `policy show x > f.json` round-trips.
 * Returns malloc'd string. */
char *policy_to_json(const struct wpolicy *p);

/* Expand $WORKSPACE / $HOME (also ${WORKSPACE}) in `raw`.  Unknown $VARs are
 * an error.  Result malloc'd in *out. */
int policy_expand(const char *raw, const char *workspace, const char *home,
                  char **out, struct werr *err);

/* The first n bytes of s are an environment variable name: letters, digits
 * and '_', not starting with a digit, at most 128.  One rule for env.pass,
 * env.set and `warden run --env`. */
bool policy_env_name_ok(const char *s, size_t n);
/* A profile name: letters, digits, '-', '_', '.', at most 64, not starting
 * with '.' or '-', not ending in ".json" (policy/syntax.c) */
bool wprofile_name_ok(const char *name);

/* A profile that extends another by these additions, as a policy file's
 * text (pretty JSON, one newline at its end; policy/render.c): name,
 * description and extends; filesystem's read_only+ and read_write+;
 * network's mode (when net_mode is set) and allow (allow+ when allow_plus:
 * the profile extended has a list already); syscalls' allow_extra+.  An
 * empty or NULL list is left out, and a section with nothing in it. */
struct wpolicy_ext {
	const char *name, *description, *extends;
	const struct wstrv *read_only, *read_write, *allow, *allow_extra;
	const char *net_mode;
	bool allow_plus;
};
char *wpolicy_ext_text(const struct wpolicy_ext *e);

/* "none", "loopback", "proxy"; and back (-1: not a mode). */
const char *policy_net_mode_name(enum wnet_mode m);
int policy_net_mode_parse(const char *s, enum wnet_mode *m);

/* One network.allow entry (warden/netallow.h's wnet_entry_parse, and a
 * URL told apart): 0, or -1 and why ("what; the form"). */
int policy_allow_check(const char *s, struct werr *why);
/* Add --allow entries to p's net_allow: each checked by wnet_entry_parse,
 * duplicates skipped.  -1 and err ("--allow 'X': what; fix") on a bad one. */
int policy_add_allow(struct wpolicy *p, char *const *entries, size_t n, struct werr *err);

/* Built-in profile texts (generated at build time from policy/profiles). */
struct wbuiltin_profile { const char *name; const char *json; };
extern const struct wbuiltin_profile wbuiltin_profiles[];
extern const size_t wbuiltin_profiles_n;

void wstrv_free(struct wstrv *s);
int wstrv_push(struct wstrv *s, const char *str);   /* copies */
bool wstrv_contains(const struct wstrv *s, const char *str);

#endif
