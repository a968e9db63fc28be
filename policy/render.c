/* A profile that extends another by a few additions, written as a policy
 * file (warden/policy.h, wpolicy_ext_text): what `warden policy learn`
 * proposes (learn/report.c) and what chat's `%profile save` writes
 * (supervisor/save.c).  One writer, so both files read the same and both
 * pass the parser that reads them back. */
#include <json-c/json.h>

#include "warden/policy.h"
#include "warden/util.h"

/* key: the strings of v as an array, unless v is empty */
static void add_list(json_object *o, const char *key, const struct wstrv *v)
{
	json_object *a;

	if (!v || !v->n)
		return;
	a = json_object_new_array();
	for (size_t i = 0; i < v->n; i++)
		json_object_array_add(a, json_object_new_string(v->v[i]));
	json_object_object_add(o, key, a);
}

/* key: o, unless o has nothing (then o is freed) */
static void add_section(json_object *parent, const char *key, json_object *o)
{
	if (json_object_object_length(o))
		json_object_object_add(parent, key, o);
	else
		json_object_put(o);
}

char *wpolicy_ext_text(const struct wpolicy_ext *e)
{
	json_object *o = json_object_new_object(), *fs = json_object_new_object();
	json_object *net = json_object_new_object(), *sys = json_object_new_object();
	char *text;

	json_object_object_add(o, "name", json_object_new_string(e->name));
	json_object_object_add(o, "description", json_object_new_string(e->description));
	json_object_object_add(o, "extends", json_object_new_string(e->extends));
	add_list(fs, "read_only+", e->read_only);
	add_list(fs, "read_write+", e->read_write);
	add_section(o, "filesystem", fs);
	if (e->net_mode)
		json_object_object_add(net, "mode", json_object_new_string(e->net_mode));
	add_list(net, e->allow_plus ? "allow+" : "allow", e->allow);
	add_section(o, "network", net);
	add_list(sys, "allow_extra+", e->allow_extra);
	add_section(o, "syscalls", sys);
	text = xasprintf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
	                 JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return text;
}
