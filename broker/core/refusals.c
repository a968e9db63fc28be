/* A learning session's report of a block (refusals.h): hostile JSON in,
 * checked entries out. */
#include <string.h>

#include "jstrict.h"
#include "refusals.h"
#include "warden/util.h"

#define FIELD_MAX 4096   /* a path's bound (PATH_MAX), and a reason's */

/* A string member, at most FIELD_MAX bytes and without NUL; NULL
 * otherwise (absent, null, another type). */
static const char *str_of(json_object *o, const char *k)
{
	json_object *v;
	const char *s;
	size_t n;

	if (!json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	s = json_object_get_string(v);
	n = (size_t)json_object_get_string_len(v);
	return n <= FIELD_MAX && !memchr(s, '\0', n) ? s : NULL;
}

static bool bool_of(json_object *o, const char *k)
{
	json_object *v;

	return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_boolean) &&
	       json_object_get_boolean(v);
}

static int kind_of(const char *key)
{
	if (!key)
		return -1;
	if (!strcmp(key, "filesystem.read_only"))
		return WK_READ;
	if (!strcmp(key, "filesystem.read_write"))
		return WK_WRITE;
	if (!strcmp(key, "network.allow"))
		return WK_HOST;
	return -1;
}

static void add(struct brefusal *v, size_t *n, const char *op, const char *target, int kind,
                const char *value, const char *danger)
{
	struct brefusal *r;

	for (size_t i = 0; i < *n; i++)   /* the same proposal once */
		if (v[i].kind == (unsigned)kind && !strcmp(v[i].value, value))
			return;
	if (*n >= BREFUSALS_MAX)
		return;
	r = &v[(*n)++];
	r->op = xstrdup(op);
	r->target = xstrdup(target);
	r->kind = (unsigned)kind;
	r->value = xstrdup(value);
	r->danger = danger ? xstrdup(danger) : NULL;
}

int brefusals_parse(const char *json, struct brefusals *out)
{
	json_object *root = NULL, *list;
	char err[128];

	memset(out, 0, sizeof(*out));
	if (!json || jstrict_parse(json, strlen(json), 8, &root, err, sizeof(err)) < 0)
		return -1;
	if (!json_object_is_type(root, json_type_object) ||
	    !json_object_object_get_ex(root, "refusals", &list) ||
	    !json_object_is_type(list, json_type_array)) {
		json_object_put(root);
		return -1;
	}
	out->complete = bool_of(root, "complete");
	if (str_of(root, "why_incomplete"))
		out->why_incomplete = xstrdup(str_of(root, "why_incomplete"));
	for (size_t i = 0; i < json_object_array_length(list); i++) {
		json_object *e = json_object_array_get_idx(list, i), *p;
		const char *op = str_of(e, "op"), *target = str_of(e, "target"), *value;
		int kind;

		if (!json_object_is_type(e, json_type_object) || !op || !target ||
		    !json_object_object_get_ex(e, "proposal", &p) ||
		    !json_object_is_type(p, json_type_object) ||
		    (kind = kind_of(str_of(p, "key"))) < 0 || !(value = str_of(p, "value")) ||
		    !*value)
			continue;
		if (bool_of(e, "dangerous")) {
			if (strcmp(op, "probe"))   /* only looked at: not worth a word */
				add(out->bad, &out->n_bad, op, target, kind, value,
				    str_of(e, "danger") ? str_of(e, "danger") : "dangerous");
		} else if (bool_of(e, "included") && !bool_of(e, "covered")) {
			add(out->ask, &out->n_ask, op, target, kind, value, NULL);
		}
	}
	json_object_put(root);
	return 0;
}

static void free_one(struct brefusal *r)
{
	free(r->op);
	free(r->target);
	free(r->value);
	free(r->danger);
}

void brefusals_free(struct brefusals *r)
{
	for (size_t i = 0; i < r->n_ask; i++)
		free_one(&r->ask[i]);
	for (size_t i = 0; i < r->n_bad; i++)
		free_one(&r->bad[i]);
	free(r->why_incomplete);
	memset(r, 0, sizeof(*r));
}

bool brefusals_block_failed(const struct wresult *res)
{
	return res->reason != WB_EXITED || res->exit_code != 0;
}

const char *brefusal_verb(unsigned kind)
{
	return kind == WK_READ ? "read" : kind == WK_WRITE ? "write" : "reach";
}

char *brefusal_question(const struct brefusal *r, const char *profile)
{
	const char *v = brefusal_verb(r->kind);

	return xasprintf("the code tried to %s %s (refused by profile %s). Allow %s for this "
	                 "session?", v, r->value, profile ? profile : "?", v);
}
