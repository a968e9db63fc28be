/* warden chat: its conversation, shown again, added to and saved. */
#include <stdio.h>
#include <string.h>

#include "chat_int.h"
#include "conv.h"
#include "core/lmc.h"
#include "core/sanitize.h"
#include "warden/util.h"

void chat_show_conversation(struct chat *c)
{
	for (size_t i = 0; i < json_object_array_length(c->msgs); i++) {
		json_object *m = json_object_array_get_idx(c->msgs, i);
		const char *role = mstr(m, "role") ?: "", *type = mstr(m, "type") ?: "";
		const char *content = mstr(m, "content") ?: "";

		if (!strcmp(role, "user")) {
			ui_bold(&c->ui, "> %s", content);
		} else if (!strcmp(type, "code")) {
			ui_code_box(&c->ui, mstr(m, "format"), chat_profile_name(c), content);
		} else if (!strcmp(type, "console")) {
			_cleanup_free_ char *s = wsan_str(content, strlen(content));

			ui_output(&c->ui, WSTREAM_STDOUT, s, strlen(s));
			ui_newline(&c->ui);
		} else {
			ui_model_text(&c->ui, content, strlen(content));
			ui_model_end(&c->ui);
		}
	}
}

void chat_add_console(struct chat *c, const char *content)
{
	json_object_array_add(c->msgs, lmc_msg("computer", "console", "output", content));
}

void chat_save(struct chat *c)
{
	struct werr err = { 0 };

	if (!json_object_array_length(c->msgs))
		return;
	if (!c->conv_path) {
		/* A new conversation gets a file once something answered: a chat
		 * whose model never replied (a wrong --api-base) leaves none. */
		bool replied = false;
		for (size_t i = 0; i < json_object_array_length(c->msgs) && !replied; i++)
			replied = strcmp(mstr(json_object_array_get_idx(c->msgs, i), "role") ?: "",
			                 "user") != 0;
		if (!replied)
			return;
		const char *first = NULL;

		for (size_t i = 0; i < json_object_array_length(c->msgs) && !first; i++) {
			json_object *m = json_object_array_get_idx(c->msgs, i);

			if (!strcmp(mstr(m, "role") ?: "", "user"))
				first = mstr(m, "content");
		}
		c->conv_path = conv_new_path(c->d->data, first);
	}
	if (conv_save(c->conv_path, c->msgs, &err) < 0)
		ui_error(&c->ui, "%s", err.msg);
}

