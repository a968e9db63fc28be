/* warden chat: what a block was refused, and the session widened for it
 * (issue 23; docs/learn.md "In a session").
 *
 * The chat's session learns (unless --no-learn): the supervisor relays
 * the learner's report of each block (REFUSALS, hostile JSON; read by
 * core/refusals.c).  When a block failed and was refused a path or a host
 * the learner would allow, each is put to the person -- by the
 * supervisor, not by this process: it stops the broker and asks on the
 * terminal itself (supervisor/ask.c), so that a broker taken over through
 * the model's replies can neither answer nor fake the question
 * (SECURITY.md G232).  On yes the session's jails are replaced and the
 * block runs again (chat_run.c).  A dangerous proposal is never asked:
 * it is said, with the %allow line a person may type if they mean it.
 *
 * %allow KIND VALUE asks for one explicitly, %revoke drops every widening,
 * %profile save NAME keeps them as a profile (the supervisor writes it). */
#include <string.h>

#include "chat_int.h"
#include "core/refusals.h"
#include "core/sanitize.h"
#include "warden/util.h"

static const char *kind_word(unsigned kind)
{
	return kind == WK_READ ? "read" : kind == WK_WRITE ? "write" : "host";
}

static void remember(struct chat *c, unsigned kind, const char *value)
{
	char *e = xasprintf("%s %s", kind_word(kind), value);

	json_object_array_add(c->widened, json_object_new_string(e));
	free(e);
}

/* One WIDEN; 1 granted, 0 not, -1 the supervisor is gone. */
static int widen_one(struct chat *c, unsigned kind, const char *value, uint32_t flags)
{
	struct werr err = { 0 };
	_cleanup_free_ char *text = NULL, *shown = NULL;
	uint8_t status = WW_REFUSED;
	uint32_t out = 0;

	ui_newline(&c->ui);
	if (bclient_widen(&c->bc, c->sess.id, kind, value, WVIA_CHAT | flags, &status, &out,
	                  &text, &err) < 0) {
		ui_error(&c->ui, "%s", err.msg);
		if (c->bc.c.eof)
			c->fatal = true;
		return -1;
	}
	shown = wsan_str(text, strlen(text));
	switch (status) {
	case WW_GRANTED:
		if (strstr(text, " is allowed already")) {
			ui_note(&c->ui, "%s", shown);
			return 0;
		}
		remember(c, kind, text);
		ui_good(&c->ui, "✓ %s %s allowed for this session%s", brefusal_verb(kind), shown,
		        out & WWIDENED_ALWAYS ? " (and what else it tries there, without asking)"
		                              : "");
		return 1;
	case WW_DECLINED:
		ui_note(&c->ui, "%s", shown);
		return 0;
	default:
		ui_bad(&c->ui, "%s", shown);
		return 0;
	}
}

int chat_widen_offer(struct chat *c, const char *refusals, const char *lang, struct sbuf *model)
{
	struct brefusals r;
	int granted = 0;

	if (brefusals_parse(refusals, &r) < 0) {
		ui_note(&c->ui, "[warden: the learner's report of this block could not be read]");
		return 0;
	}
	if (!r.complete && r.why_incomplete) {
		_cleanup_free_ char *why = wsan_str(r.why_incomplete, strlen(r.why_incomplete));
		ui_note(&c->ui, "[warden: what this block was refused is not known whole: %s]", why);
	}
	for (size_t i = 0; i < r.n_bad; i++) {
		_cleanup_free_ char *v = wsan_str(r.bad[i].value, strlen(r.bad[i].value));
		_cleanup_free_ char *why = wsan_str(r.bad[i].danger, strlen(r.bad[i].danger));

		ui_bad(&c->ui, "⚠ the code tried to %s %s, which is DANGEROUS (%s): warden does not "
		       "offer it; to allow it anyway for this session, type: %%allow %s %s",
		       brefusal_verb(r.bad[i].kind), v, why, kind_word(r.bad[i].kind), v);
		sbuf_addf(model, "\n[warden: the sandbox refused to let the code %s %s; it is "
		          "dangerous and only the user can allow it]", brefusal_verb(r.bad[i].kind), v);
	}
	if (r.n_ask && !c->ui.tty_in)
		ui_note(&c->ui, "[warden: this block was refused %zu path%s or host%s; warden asks "
		        "about them on a terminal only]", r.n_ask, r.n_ask == 1 ? "" : "s",
		        r.n_ask == 1 ? "" : "s");
	for (size_t i = 0; c->ui.tty_in && i < r.n_ask && !c->fatal; i++) {
		int g = widen_one(c, r.ask[i].kind, r.ask[i].value, 0);

		if (g > 0) {
			_cleanup_free_ char *v = wsan_str(r.ask[i].value, strlen(r.ask[i].value));
			sbuf_addf(model, "\n[warden: the user allowed the code to %s %s for this session]",
			          brefusal_verb(r.ask[i].kind), v);
			granted++;
		}
	}
	if (granted)
		ui_note(&c->ui, "↻ running the block again in a new %s jail (its state restarts)",
		        lang);
	brefusals_free(&r);
	return granted;
}

/* %allow read|write PATH, %allow host HOST[:PORT] */
int chat_allow(struct chat *c, const char *arg)
{
	char kind_s[8];
	const char *value;
	unsigned kind;
	int g;

	value = strchr(arg, ' ');
	if (!value || (size_t)(value - arg) >= sizeof(kind_s)) {
		ui_error(&c->ui, "%%allow: say what: %%allow read PATH, %%allow write PATH, or "
		         "%%allow host HOST[:PORT]");
		return 1;
	}
	snprintf(kind_s, sizeof(kind_s), "%.*s", (int)(value - arg), arg);
	while (*value == ' ')
		value++;
	if (!strcmp(kind_s, "read"))
		kind = WK_READ;
	else if (!strcmp(kind_s, "write"))
		kind = WK_WRITE;
	else if (!strcmp(kind_s, "host"))
		kind = WK_HOST;
	else {
		ui_error(&c->ui, "%%allow: \"%s\" is not read, write or host", kind_s);
		return 1;
	}
	if (!c->ui.tty_in) {
		ui_error(&c->ui, "%%allow: warden asks you on a terminal before it widens a session; "
		         "there is none");
		return 1;
	}
	g = widen_one(c, kind, value, WWIDEN_EXPLICIT);
	if (g > 0)
		ui_note(&c->ui, "the next block runs in a new jail");
	return g < 0 ? 1 : 0;
}

int chat_revoke(struct chat *c)
{
	struct werr err = { 0 };
	_cleanup_free_ char *text = NULL;
	uint8_t status = WW_REFUSED;
	uint32_t out = 0;

	if (!c->sess_open || !json_object_array_length(c->widened)) {
		ui_note(&c->ui, "nothing to revoke: this session was not widened");
		return 0;
	}
	if (bclient_revoke(&c->bc, c->sess.id, &status, &out, &text, &err) < 0) {
		ui_error(&c->ui, "%s", err.msg);
		return 1;
	}
	if (status != WW_GRANTED) {
		ui_error(&c->ui, "%%revoke: %s", text);
		return 1;
	}
	json_object_put(c->widened);
	c->widened = json_object_new_array();
	ui_note(&c->ui, "every widening is gone: %s; the next block runs in a new jail", text);
	return 0;
}

int chat_profile_save(struct chat *c, const char *name)
{
	struct werr err = { 0 };
	_cleanup_free_ char *text = NULL, *shown = NULL;
	uint8_t status = WW_REFUSED;

	if (!*name) {
		ui_error(&c->ui, "%%profile save: name it: %%profile save NAME");
		return 1;
	}
	if (bclient_save(&c->bc, c->sess.id, name, &status, &text, &err) < 0) {
		ui_error(&c->ui, "%s", err.msg);
		return 1;
	}
	shown = wsan_str(text, strlen(text));
	if (status != WW_GRANTED) {
		ui_error(&c->ui, "%%profile save: %s", shown);
		return 1;
	}
	ui_good(&c->ui, "✓ saved the profile %s in %s: the sandbox profile plus what you allowed; "
	        "check it with `warden policy check %s`, use it with --sandbox-profile %s", name,
	        shown, name, name);
	return 0;
}
