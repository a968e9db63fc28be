/* Private to policy/parse.c (the schema: keys and sections) and
 * policy/parse_values.c (each kind of value, read and checked), which
 * parse.c calls and which calls nothing of it. */
#ifndef WARDEN_PARSE_INT_H
#define WARDEN_PARSE_INT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "internal.h"

enum kkind {
	K_SECTION,      /* an object of further keys */
	K_NAME,         /* a profile name */
	K_TEXT,         /* one line of text */
	K_PATHS,        /* list of paths */
	K_TMPFS,        /* {path: size} */
	K_SIZE,         /* "512M", bytes, "unlimited" */
	K_COUNT,        /* whole number, "unlimited" */
	K_CPUS,         /* number, "unlimited" */
	K_DURATION,     /* "5m", "unlimited" */
	K_NET_MODE,     /* "none" | "loopback" | "proxy" */
	K_HOSTPORTS,    /* ["host[:port]"] (warden/netallow.h) */
	K_DENY_ACTION,  /* "errno" | "kill" */
	K_BOOL,
	K_SYSCALLS,     /* list of syscall names */
	K_CATNAMES,     /* list of catalog entries' names (warden/catalog.h) */
	K_ENV_NAMES,    /* list of variable names */
	K_ENV_SET,      /* {NAME: value} */
};

struct keydef {
	const char *key;
	enum kkind kind;
	int field;                    /* enum wfield, or -1 for sections */
	const struct keydef *sub;     /* K_SECTION: its keys, NULL-terminated */
	const char *example;          /* for type errors */
	uint64_t max;                 /* K_COUNT, K_SIZE: upper bound, 0 = none */
};

struct pctx {
	const struct wsrc *s;
	struct wpolicy *p;
	bool *set;
	bool *append;        /* set[f] came from "KEY+": add to the inherited value */
	char **extends;
	struct werr *err;
	struct wstrv *errs;  /* policy_check_*: every key's error, the parse goes on */
	bool failed;         /* errs got one */
};

/* parse_values.c: helpers parse.c uses too */
const char *pv_type_name(json_object *v);
bool pv_is_unlimited(json_object *v);
const char *pv_get_str(json_object *v);
/* the uint64_t field of p that enum wfield f names, or NULL */
uint64_t *pv_u64_field(struct wpolicy *p, int f);
/* the candidate nearest to word (edit distance), for "did you mean" */
const char *pv_closest(const char *word, const char *const *cands, size_t n);

/* parse_values.c: each reads the value at path (its key k) into c->p,
 * located errors on failure */
int pv_read_name(struct pctx *c, const struct keydef *k, const char *path, json_object *v, char **out);
int pv_read_text(struct pctx *c, const struct keydef *k, const char *path, json_object *v, char **out);
int pv_read_paths(struct pctx *c, const struct keydef *k, const char *path, json_object *v);
int pv_read_catnames(struct pctx *c, const struct keydef *k, const char *path, json_object *v);
int pv_read_size(struct pctx *c, const char *key, const char *path, json_object *v, bool unlimited_ok, const char *example, uint64_t *out);
int pv_read_count(struct pctx *c, const struct keydef *k, const char *path, json_object *v, uint64_t *out);
int pv_read_cpus(struct pctx *c, const struct keydef *k, const char *path, json_object *v, double *out);
int pv_read_duration(struct pctx *c, const struct keydef *k, const char *path, json_object *v, uint64_t *out);
int pv_read_tmpfs(struct pctx *c, const struct keydef *k, const char *path, json_object *v);
int pv_read_net_mode(struct pctx *c, const char *path, json_object *v);
int pv_read_hostports(struct pctx *c, const struct keydef *k, const char *path, json_object *v);
int pv_read_deny_action(struct pctx *c, const char *path, json_object *v);
int pv_read_syscalls(struct pctx *c, const struct keydef *k, const char *path, json_object *v);
int pv_read_env_names(struct pctx *c, const struct keydef *k, const char *path, json_object *v);
int pv_read_env_set(struct pctx *c, const struct keydef *k, const char *path, json_object *v);

#endif
