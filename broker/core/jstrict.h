/* Plain JSON (RFC 8259), parsed with bounds, for everything the broker reads
 * from an API client (serve --stdio's requests, MCP's messages).
 *
 * Two passes.  A small scanner of our own enforces plain JSON first: json-c
 * even in strict mode accepts single-quoted keys, NaN, Infinity, "1." and
 * raw control characters in strings.  Then json-c builds the value (strict,
 * UTF-8 validated, with the same depth bound).  Strings may still hold
 * "\u0000": callers that take strings check for NUL bytes. */
#ifndef BROKER_JSTRICT_H
#define BROKER_JSTRICT_H

#include <json-c/json.h>
#include <stddef.h>

/* One JSON text s[0..len) into *out (any type; owned by the caller), with
 * at most max_depth nested arrays and objects and only whitespace around
 * it.  0 ok; -1: *out is NULL and errbuf holds one line ("not JSON: a bad
 * escape in a string at byte 12", "trailing data after the JSON value at
 * byte 30 (one message per line)", "nesting too deep").  len <= INT32_MAX. */
int jstrict_parse(const char *s, size_t len, int max_depth, json_object **out, char *errbuf,
                  size_t errlen);

/* "an object", "an array", "a string", "a number", "a boolean", "null" */
const char *jstrict_type_name(const json_object *o);

#endif
