/* The user's chat configuration, <config>/config.json:
 *
 *   { "model": "openai/gpt-4o", "api_base": "...", "auto_run": false,
 *     "sandbox_profile": "workspace",
 *     "system_message": "...",          replaces warden's instructions
 *     "system_message_append": "...",   added after them
 *     (the facts about the jail are in the system message either way,
 *     chat_prompt.c)
 *     "max_output": 2800, "context_window": 8000,
 *     "profiles": { "NAME": { ...the same keys but "profiles"... } } }
 *
 * `--profile NAME` picks a named profile: its keys win over the top level,
 * and the command line wins over both.  An unknown key or a wrong type is
 * an error naming the file, the line and the column.  A missing file is an
 * empty configuration. */
#ifndef BROKER_CONFIG_H
#define BROKER_CONFIG_H

#include <stddef.h>

#include "warden/err.h"

struct chat_settings {
	char *model, *api_base, *sandbox_profile, *system_message, *system_message_append;
	int auto_run;                  /* -1 unset */
	int vision;                    /* images to the model: -1 unset (by the
	                                * model's name), 0 never, 1 always */
	long max_output, context_window;   /* 0 unset */
};

void chat_settings_init(struct chat_settings *s);
void chat_settings_free(struct chat_settings *s);
/* Every field set in over replaces the one in base. */
void chat_settings_merge(struct chat_settings *base, const struct chat_settings *over);

/* profile NULL: the top level only.  A profile that does not exist is an
 * error listing the ones that do. */
int config_parse(const char *path, const char *text, size_t len, const char *profile,
                 struct chat_settings *out, struct werr *err);
int config_load(const char *config_dir, const char *profile, struct chat_settings *out,
                struct werr *err);

#endif
