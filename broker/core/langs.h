/* The languages a session can run, from the supervisor's JSON
 * ([{"name":..,"aliases":[..],"persistent":bool}], include/warden/proto.h):
 * the one lookup every front-end uses. */
#ifndef BROKER_LANGS_H
#define BROKER_LANGS_H

#include <json-c/json.h>
#include <stddef.h>

/* text parsed as JSON of type want, or NULL: the supervisor's JSON, which
 * is trusted (it never parses the broker's), checked for its type anyway */
json_object *blang_trusted_json(const char *text, json_type want);
/* The canonical name of language (a name or an alias, any case) in a
 * languages array, or NULL. */
const char *blang_lookup(json_object *langs, const char *language);
/* "python (py, python3), javascript (js), shell" into buf */
void blang_list(json_object *langs, char *buf, size_t len);

#endif
