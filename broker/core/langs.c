/* A session's languages, as the supervisor's OPENED and LANGLIST list them
 * (broker/core/langs.h). */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "langs.h"

json_object *blang_trusted_json(const char *text, json_type want)
{
	json_object *o = text ? json_tokener_parse(text) : NULL;

	if (o && !json_object_is_type(o, want)) {
		json_object_put(o);
		o = NULL;
	}
	return o;
}

/* The canonical name of language (a name or an alias) in a languages
 * array, or NULL. */
const char *blang_lookup(json_object *langs, const char *language)
{
	size_t i, j, n = json_object_array_length(langs);

	for (i = 0; i < n; i++) {
		json_object *l = json_object_array_get_idx(langs, i), *name, *aliases;
		if (!json_object_object_get_ex(l, "name", &name) ||
		    !json_object_is_type(name, json_type_string))
			continue;
		if (!strcasecmp(json_object_get_string(name), language))
			return json_object_get_string(name);
		if (!json_object_object_get_ex(l, "aliases", &aliases) ||
		    !json_object_is_type(aliases, json_type_array))
			continue;
		for (j = 0; j < json_object_array_length(aliases); j++) {
			json_object *a = json_object_array_get_idx(aliases, j);
			if (json_object_is_type(a, json_type_string) &&
			    !strcasecmp(json_object_get_string(a), language))
				return json_object_get_string(name);
		}
	}
	return NULL;
}

/* "python (py, python3), javascript (js), shell" */
void blang_list(json_object *langs, char *buf, size_t len)
{
	size_t i, j, n = json_object_array_length(langs), off = 0;

	buf[0] = '\0';
	for (i = 0; i < n && off < len; i++) {
		json_object *l = json_object_array_get_idx(langs, i), *name, *aliases;
		if (!json_object_object_get_ex(l, "name", &name))
			continue;
		off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? ", " : "",
		                        json_object_get_string(name));
		if (off >= len || !json_object_object_get_ex(l, "aliases", &aliases) ||
		    !json_object_is_type(aliases, json_type_array) ||
		    json_object_array_length(aliases) == 0)
			continue;
		for (j = 0; j < json_object_array_length(aliases) && off < len; j++)
			off += (size_t)snprintf(buf + off, len - off, "%s%s", j ? ", " : " (",
			                        json_object_get_string(
				                        json_object_array_get_idx(aliases, j)));
		if (off < len)
			off += (size_t)snprintf(buf + off, len - off, ")");
	}
}
