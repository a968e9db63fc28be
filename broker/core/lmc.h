/* LMC messages (the conversation format, llm.h) and the one tool the model
 * is offered.  The bottom of the LLM code: it depends on json-c only. */
#ifndef BROKER_LMC_H
#define BROKER_LMC_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

/* The name of the one tool. */
#define LLM_TOOL_NAME "execute"
/* What a tool call nobody answered, or that printed nothing, returns. */
#define LMC_NO_OUTPUT "(no output)"

/* A whole reply (text plus tool-call arguments) is bounded. */
#define LLM_REPLY_MAX (8u << 20)

/* One LMC message {role, type, format (omitted when NULL), content}. */
json_object *lmc_msg(const char *role, const char *type, const char *format,
                     const char *content);
/* A string member of a message; "" when absent or not a string. */
const char *lmc_str(json_object *m, const char *key);

/* Standard base64 (RFC 4648, padded) of n bytes: malloc'd, NUL-terminated. */
char *lmc_base64(const unsigned char *p, size_t n);

/* An image message {"role":"computer","type":"image","format":"base64.png"
 * or "base64.jpeg"}: its media type ("image/png"), NULL for anything else. */
const char *lmc_image_media(json_object *m);
/* What a model that takes no images reads instead of one (static text). */
extern const char lmc_image_note[];
/* Whether a model takes image input, by its name (a table of families:
 * gpt-4o, gpt-4.1, claude-3, llava, ...); vision overrides it (1 yes,
 * -1 no, 0 the table). */
bool lmc_model_vision(const char *model, int vision);

/* The tool's JSON-schema parameters (new object) and description. */
json_object *llm_tool_schema(void);
extern const char llm_tool_description[];

#endif
