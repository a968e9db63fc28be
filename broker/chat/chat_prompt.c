/* warden chat: the system message, which tells the model what the jail
 * allows (the profile's policy) and which languages run. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "chat_int.h"
#include "conv.h"
#include "core/lmc.h"
#include "core/sanitize.h"
#include "warden/util.h"

/* ---- the system message ---- */

static void join_array(struct sbuf *b, json_object *a, size_t max)
{
	size_t n = json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;

	for (size_t i = 0; i < n && i < max; i++)
		sbuf_addf(b, "%s%s", i ? ", " : "",
		          json_object_get_string(json_object_array_get_idx(a, i)));
	if (n > max)
		sbuf_addf(b, ", and %zu more", n - max);
}

static json_object *jget(json_object *o, const char *a, const char *b)
{
	json_object *v = NULL;

	if (!o || !json_object_object_get_ex(o, a, &v))
		return NULL;
	if (b && (!json_object_is_type(v, json_type_object) || !json_object_object_get_ex(v, b, &v)))
		return NULL;
	return v;
}

const char *chat_profile_name(const struct chat *c)
{
	return c->profile ? c->profile : c->bc.default_profile ? c->bc.default_profile : "workspace";
}

static void describe_policy(struct chat *c, struct sbuf *b)
{
	const char *prof = chat_profile_name(c);
	const char *ws = c->bc.default_workspace ? c->bc.default_workspace : "the current directory";
	json_object *pol = NULL, *v;

	if (c->sess_open && c->sess.policy_json)
		pol = json_tokener_parse(c->sess.policy_json);
	sbuf_addf(b, "The jail's policy is the sandbox profile \"%s\"", prof);
	if ((v = jget(pol, "description", NULL)))
		sbuf_addf(b, " (%s)", json_object_get_string(v));
	sbuf_adds(b, ":\n");
	sbuf_addf(b, "- The working directory is the workspace %s.", ws);
	if (pol) {
		json_object *rw = jget(pol, "filesystem", "read_write");
		bool ws_rw = false;

		for (size_t i = 0; rw && json_object_is_type(rw, json_type_array) &&
		                   i < json_object_array_length(rw); i++) {
			const char *p = json_object_get_string(json_object_array_get_idx(rw, i));

			if (p && (!strcmp(p, "$WORKSPACE") || !strcmp(p, ws)))
				ws_rw = true;
		}
		sbuf_adds(b, ws_rw ? " It is writable: files you write there stay, and the user "
		                     "sees them.\n"
		                   : " It is READ-ONLY in this profile.\n");
		if (rw && json_object_array_length(rw)) {
			sbuf_adds(b, "- Writable: ");
			join_array(b, rw, 12);
			sbuf_adds(b, "\n");
		}
		if ((v = jget(pol, "filesystem", "read_only"))) {
			sbuf_adds(b, "- Read-only: ");
			join_array(b, v, 12);
			sbuf_adds(b, ". Nothing else of the user's files is visible (HOME and /tmp are "
			             "empty, private and size-limited).\n");
		}
		if ((v = jget(pol, "filesystem", "hide")) && json_object_array_length(v)) {
			sbuf_adds(b, "- Hidden: ");
			join_array(b, v, 8);
			sbuf_adds(b, "\n");
		}
		v = jget(pol, "network", "mode");
		if (v && !strcmp(json_object_get_string(v), "proxy")) {
			json_object *allow = jget(pol, "network", "allow");

			sbuf_adds(b, "- Network: only through warden's proxy (HTTP_PROXY/HTTPS_PROXY are "
			             "set; curl, pip, npm, git, Python and Node's fetch use it), to these "
			             "hosts only (no port: 443 and 80): ");
			if (allow && json_object_is_type(allow, json_type_array) &&
			    json_object_array_length(allow))
				join_array(b, allow, 32);
			else
				sbuf_adds(b, "none");
			sbuf_adds(b, ". Everything else is refused (HTTP 403); there is no DNS in the "
			             "jail, the proxy resolves names. The jail's own 127.0.0.1 works for "
			             "local servers.\n");
		} else if (v && !strcmp(json_object_get_string(v), "loopback")) {
			sbuf_adds(b, "- Network: only the jail's own loopback (127.0.0.1): a server you "
			             "start in the jail can be reached from the jail, nothing outside "
			             "can (no pip install, no downloads).\n");
		} else {
			sbuf_adds(b, "- Network: none. There is no network access at all (no pip "
			             "install, no downloads, not even 127.0.0.1).\n");
		}
		if ((v = jget(pol, "limits", NULL)) && json_object_is_type(v, json_type_object)) {
			bool first = true;

			sbuf_adds(b, "- Limits:");
			json_object_object_foreach(v, k, lv) {
				sbuf_addf(b, "%s %s %s", first ? "" : ",", k, json_object_get_string(lv));
				first = false;
			}
			sbuf_adds(b, ".\n");
		}
	} else if (!strcmp(prof, "strict")) {
		sbuf_adds(b, " It is READ-ONLY in this profile.\n- Network: none.\n");
	} else if (!strcmp(prof, "network")) {
		sbuf_adds(b, " It is writable.\n- Network: only HTTPS to package indexes (PyPI, "
		             "npm, crates.io, Go, RubyGems) through warden's proxy.\n");
	} else {
		sbuf_adds(b, " It is writable: files you write there stay, and the user sees them.\n"
		             "- Network: none, unless the profile says otherwise.\n"
		             "- Only system directories (/usr) are visible read-only; HOME and /tmp "
		             "are empty and private.\n");
	}
	json_object_put(pol);
}

static void describe_languages(struct chat *c, struct sbuf *b)
{
	json_object *langs = NULL;

	if (c->sess_open && c->sess.languages_json)
		langs = json_tokener_parse(c->sess.languages_json);
	if (!langs || !json_object_is_type(langs, json_type_array) ||
	    !json_object_array_length(langs)) {
		sbuf_adds(b, "Languages: python, javascript and shell keep their state (variables, "
		             "imports, the working directory) from one block to the next.\n");
		json_object_put(langs);
		return;
	}
	sbuf_adds(b, "Languages:");
	for (size_t i = 0; i < json_object_array_length(langs); i++) {
		json_object *l = json_object_array_get_idx(langs, i), *p;
		const char *name = mstr(l, "name");

		if (!name)
			continue;
		p = jget(l, "persistent", NULL);
		sbuf_addf(b, "%s %s (%s)", i ? "," : "", name,
		          p && json_object_get_boolean(p) ? "keeps state between blocks"
		                                           : "each block starts fresh");
	}
	sbuf_adds(b, ".\n");
	json_object_put(langs);
}

/* Two parts.  Warden's instructions (who the model is, how to work) are
 * the person's to replace: --system-message / "system_message".  The facts
 * about where the code runs (how to run it, the jail, its policy and
 * limits, the languages, that a denial is the policy working) are always
 * there, replaced or not: without them a model takes EPERM for a bug and
 * tries to get around it, or does not know that its fences run.  They are
 * not what keeps the person safe (the jail is), so keeping them costs the
 * person nothing they could want.  --system-message-append /
 * "system_message_append" comes last. */
char *chat_system_message(struct chat *c)
{
	struct sbuf b = { 0 };

	if (c->system_base && *c->system_base)
		sbuf_addf(&b, "%s\n\n", c->system_base);
	else
		sbuf_adds(&b,
		          "You are Warden Interpreter, a world-class programmer who can complete any "
		          "goal by writing and running code.\n");
	if (c->llm.tools)
		sbuf_adds(&b, "To run code, call the `execute` tool with a language and the code. "
		              "You see its output in the result. A reply that calls no tool but "
		              "has a fenced block in one of the languages below (```python ... "
		              "```) runs that block the same way; write examples that must not "
		              "run in a ```text block.\n");
	else
		sbuf_adds(&b, "To run code, write it in a fenced block with its language, for "
		              "example ```python ... ```. Each block runs, and its output comes back "
		              "to you in the next message.\n");
	sbuf_adds(&b,
	          "The code does not run directly on the user's machine: every block runs inside a "
	          "jail (warden) with namespaces, a syscall filter and resource limits. The user "
	          "approves each block unless they turned on auto-run.\n");
	describe_policy(c, &b);
	describe_languages(c, &b);
	sbuf_addf(&b,
	          "Long output is cut to its first and last characters (about %ld in all), with the "
	          "total size.\n"
	          "When something is denied (permission denied, EPERM, read-only file system, no "
	          "network, a limit reached), that is the jail's policy working, not a bug: do not "
	          "try to get around it. Tell the user what was blocked; they can choose another "
	          "sandbox profile (%%profile NAME) if they trust the task.\n",
	          c->max_output);
	if (!c->system_base || !*c->system_base)
		sbuf_adds(&b,
		          "Work in small steps: run a little code, read the output, then continue. "
		          "Write files into the workspace. When the task is done, reply without code "
		          "and summarise the result.\n");
	if (c->system_extra && *c->system_extra)
		sbuf_addf(&b, "\n%s\n", c->system_extra);
	return sbuf_steal(&b);
}
