/* LMC messages and the tool's schema (lmc.h). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lmc.h"
#include "warden/util.h"

const char *lmc_str(json_object *m, const char *key)
{
	json_object *v;

	if (m && json_object_is_type(m, json_type_object) &&
	    json_object_object_get_ex(m, key, &v) && json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	return "";
}

json_object *lmc_msg(const char *role, const char *type, const char *format,
                     const char *content)
{
	json_object *m = json_object_new_object();

	json_object_object_add(m, "role", json_object_new_string(role));
	json_object_object_add(m, "type", json_object_new_string(type));
	if (format)
		json_object_object_add(m, "format", json_object_new_string(format));
	json_object_object_add(m, "content", json_object_new_string(content ? content : ""));
	return m;
}

char *lmc_base64(const unsigned char *p, size_t n)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = xmalloc((n + 2) / 3 * 4 + 1), *o = out;
	size_t i;

	for (i = 0; i + 2 < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
		*o++ = tab[v >> 18];
		*o++ = tab[(v >> 12) & 63];
		*o++ = tab[(v >> 6) & 63];
		*o++ = tab[v & 63];
	}
	if (i < n) {
		unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0);
		*o++ = tab[v >> 18];
		*o++ = tab[(v >> 12) & 63];
		*o++ = i + 1 < n ? tab[(v >> 6) & 63] : '=';
		*o++ = '=';
	}
	*o = '\0';
	return out;
}

const char *lmc_image_media(json_object *m)
{
	if (strcmp(lmc_str(m, "role"), "computer") || strcmp(lmc_str(m, "type"), "image"))
		return NULL;
	if (strcmp(lmc_str(m, "format"), "base64.png") == 0)
		return "image/png";
	if (strcmp(lmc_str(m, "format"), "base64.jpeg") == 0)
		return "image/jpeg";
	return NULL;
}

const char lmc_image_note[] =
	"\n[warden: the code produced an image; the user sees it, but this model does not "
	"take images]\n";

bool lmc_model_vision(const char *model, int vision)
{
	/* families that take images, as substrings of the model's name */
	static const char *const yes[] = {
		"gpt-4o", "gpt-4.1", "gpt-4-turbo", "gpt-4-vision", "gpt-5", "chatgpt-4o",
		"o1", "o3", "o4-mini", "claude-3", "claude-sonnet-4", "claude-opus-4",
		"claude-haiku-4", "claude-4", "gemini", "llava", "bakllava", "pixtral",
		"vision", "-vl", "minicpm-v", "moondream", "llama4", "gemma3",
	};
	const char *slash;

	if (vision)
		return vision > 0;
	if (!model)
		return false;
	slash = strrchr(model, '/');   /* "openai/gpt-4o" */
	if (slash)
		model = slash + 1;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		size_t n = strlen(yes[i]);
		if (yes[i][0] == 'o' && yes[i][1] >= '0' && yes[i][1] <= '9') {
			if (strncasecmp(model, yes[i], n) == 0)   /* o1, o3: a prefix only */
				return true;
		} else if (strcasestr(model, yes[i])) {
			return true;
		}
	}
	return false;
}

const char llm_tool_description[] =
	"Run code on the user's machine, inside warden's jail, and return its output "
	"(stdout and stderr). The jail's policy may deny files, network or system calls; "
	"a denial is reported in the output. State persists between calls of the same "
	"language.";

json_object *llm_tool_schema(void)
{
	json_object *s = json_object_new_object(), *props = json_object_new_object();
	json_object *lang = json_object_new_object(), *code = json_object_new_object();
	json_object *req = json_object_new_array();

	json_object_object_add(lang, "type", json_object_new_string("string"));
	json_object_object_add(lang, "description",
	                       json_object_new_string("The language: python, javascript, shell, ..."));
	json_object_object_add(code, "type", json_object_new_string("string"));
	json_object_object_add(code, "description", json_object_new_string("The code to run."));
	json_object_object_add(props, "language", lang);
	json_object_object_add(props, "code", code);
	json_object_array_add(req, json_object_new_string("language"));
	json_object_array_add(req, json_object_new_string("code"));
	json_object_object_add(s, "type", json_object_new_string("object"));
	json_object_object_add(s, "properties", props);
	json_object_object_add(s, "required", req);
	return s;
}
