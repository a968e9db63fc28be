/* What the MCP server says about itself (mcp_int.h): the tools, in a fixed
 * order, with their inputSchema; run_code's description written from the
 * facts of the first session the supervisor opened (its effective policy,
 * its languages), so the model knows what the jail allows before it
 * writes code; the server's identity and instructions.
 *
 * The policy JSON comes from the supervisor (trusted); it is still read
 * defensively: a member that is missing or of another type is left out of
 * the text. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/langs.h"
#include "mcp_int.h"
#include "warden/util.h"
#include "warden/version.h"

/* The descriptions are written with stdio into memory (open_memstream). */
struct sb {
	FILE *f;
};

#define sb_add(b, ...) fprintf((b)->f, __VA_ARGS__)

static const char *get_s(json_object *o, const char *key)
{
	json_object *v;

	if (o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	return NULL;
}

static json_object *get_o(json_object *o, const char *key, json_type t)
{
	json_object *v;

	if (o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, t))
		return v;
	return NULL;
}

static bool array_has(json_object *a, const char *s)
{
	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		const char *e = json_object_get_string(json_object_array_get_idx(a, i));
		if (e && !strcmp(e, s))
			return true;
	}
	return false;
}

/* A limit as the policy spells it ("1G", 256, "5m"), or NULL. */
static const char *limit(json_object *limits, const char *key, char buf[32])
{
	json_object *v;

	if (!limits || !json_object_object_get_ex(limits, key, &v))
		return NULL;
	if (json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	if (json_object_is_type(v, json_type_int)) {
		snprintf(buf, 32, "%lld", (long long)json_object_get_int64(v));
		return buf;
	}
	return NULL;
}

static void describe_languages(struct sb *b, json_object *langs)
{
	for (size_t i = 0; langs && i < json_object_array_length(langs); i++) {
		json_object *l = json_object_array_get_idx(langs, i), *al;
		const char *name = get_s(l, "name");
		if (!name)
			continue;
		sb_add(b, "%s%s", i ? ", " : "", name);
		al = get_o(l, "aliases", json_type_array);
		for (size_t j = 0; al && j < json_object_array_length(al); j++)
			sb_add(b, "%s%s", j ? ", " : " (", json_object_get_string(json_object_array_get_idx(al, j)));
		if (al && json_object_array_length(al))
			sb_add(b, ")");
	}
}

static void describe_jail(struct sb *b, struct mcp_server *s)
{
	json_object *fs = get_o(s->policy, "filesystem", json_type_object);
	json_object *net = get_o(s->policy, "network", json_type_object);
	json_object *lim = get_o(s->policy, "limits", json_type_object);
	json_object *tmpfs = get_o(fs, "tmpfs", json_type_object);
	json_object *hide = get_o(fs, "hide", json_type_array);
	json_object *allow = get_o(net, "allow", json_type_array);
	const char *desc = get_s(s->policy, "description"), *mode = get_s(net, "mode");
	const char *ws = s->workspace ? s->workspace : "(none)";
	char buf[32];
	const char *v;

	sb_add(b, " The jail: profile \"%s\"%s%s%s.", s->profile ? s->profile : "?",
	       desc ? " (" : "", desc ? desc : "", desc ? ")" : "");
	if (array_has(get_o(fs, "read_write", json_type_array), "$WORKSPACE"))
		sb_add(b, " Workspace %s: read-write, at the same path.", ws);
	else if (array_has(get_o(fs, "read_only", json_type_array), "$WORKSPACE"))
		sb_add(b, " Workspace %s: read-only, at the same path.", ws);
	else
		sb_add(b, " The workspace %s is not in the jail.", ws);
	if (tmpfs && json_object_object_length(tmpfs)) {
		bool first = true;
		sb_add(b, " Private, empty at start:");
		json_object_object_foreach(tmpfs, path, size) {
			sb_add(b, "%s %s (%s)", first ? "" : ",", path,
			       json_object_is_type(size, json_type_string) ? json_object_get_string(size) : "?");
			first = false;
		}
		sb_add(b, ".");
	}
	sb_add(b, " Everything else is read-only system files (/usr, part of /etc) or absent.");
	if (hide && json_object_array_length(hide)) {
		sb_add(b, " Hidden:");
		for (size_t i = 0; i < json_object_array_length(hide); i++) {
			const char *h = json_object_get_string(json_object_array_get_idx(hide, i));
			if (h && !strncmp(h, "$WORKSPACE", 10) && s->workspace)
				sb_add(b, "%s %s%s", i ? "," : "", s->workspace, h + 10);
			else
				sb_add(b, "%s %s", i ? "," : "", h ? h : "?");
		}
		sb_add(b, ".");
	}
	if (!mode || !strcmp(mode, "none"))
		sb_add(b, " Network: none (no connection leaves the jail).");
	else if (!strcmp(mode, "loopback"))
		sb_add(b, " Network: the jail's own loopback only.");
	else if (!strcmp(mode, "proxy")) {
		sb_add(b, " Network: only through warden's proxy (HTTP_PROXY/HTTPS_PROXY are set) to:");
		for (size_t i = 0; allow && i < json_object_array_length(allow); i++)
			sb_add(b, "%s %s", i ? "," : "", json_object_get_string(json_object_array_get_idx(allow, i)));
		if (!allow || !json_object_array_length(allow))
			sb_add(b, " no host");
		sb_add(b, "; everything else is refused.");
	} else
		sb_add(b, " Network: %s.", mode);
	sb_add(b, " Limits per block:");
	if ((v = limit(lim, "wall_time", buf)))
		sb_add(b, " wall time %s,", v);
	if ((v = limit(lim, "cpu_time", buf)))
		sb_add(b, " cpu time %s,", v);
	if ((v = limit(lim, "memory", buf)))
		sb_add(b, " memory %s,", v);
	if ((v = limit(lim, "pids", buf)))
		sb_add(b, " %s processes,", v);
	if ((v = limit(lim, "output", buf)))
		sb_add(b, " output %s", v);
	sb_add(b, " (a block over its wall time is killed and its session's state in that language "
	       "is lost).");
}

int mtools_facts(struct mcp_server *s, const struct bsession *first, struct werr *err)
{
	struct sb b = { 0 };
	char *text = NULL;
	size_t len = 0;

	b.f = open_memstream(&text, &len);
	if (!b.f)
		return werr_set(err, errno, "open_memstream");
	s->policy = blang_trusted_json(first->policy_json, json_type_object);
	s->limits = blang_trusted_json(first->limits_json, json_type_object);
	s->languages = blang_trusted_json(first->languages_json, json_type_array);
	if (!s->languages)
		s->languages = json_object_new_array();
	s->profile = s->b->default_profile ? xstrdup(s->b->default_profile) : NULL;
	s->workspace = s->b->default_workspace ? xstrdup(s->b->default_workspace) : NULL;

	sb_add(&b, "Run code in a warden jail (a sandbox on the user's machine) and get its "
	       "output: stdout and stderr as text (head and tail when long), figures and images "
	       "as images, then a JSON line with the exit code, the reason it ended, times and "
	       "the system calls the jail denied. Languages: ");
	describe_languages(&b, s->languages);
	sb_add(&b, ". Variables, functions, imports and the working directory persist between "
	       "calls of a session, per language. Without \"session\", calls share this "
	       "connection's session; the result's structuredContent.session is its handle, and "
	       "passing it back keeps the state (open_session makes a fresh one).");
	describe_jail(&b, s);
	sb_add(&b, " A system call the policy denies fails with EPERM and is reported. "
	       "\"timeout\" (seconds) interrupts a block that runs longer, and keeps the state.");
	if (fclose(b.f) != 0 || !text) {
		free(text);
		return werr_set(err, errno, "writing run_code's description");
	}
	s->run_code_desc = text;
	s->instructions = xstrdup(
		"warden runs code in jails (sandboxes with no access to the user's secrets, "
		"limited files and network). Use run_code for computations, data work, plots and "
		"trying code; its description says what the jail allows. Keep one session to build "
		"on earlier results; a failing block returns isError with its output.");
	return 0;
}

json_object *mtools_server_info(const struct mcp_server *s)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "name", json_object_new_string(MCP_SERVER_NAME));
	json_object_object_add(o, "version", json_object_new_string(
		s->o.server_version && strcmp(s->o.server_version, "0") ? s->o.server_version
		                                                         : WARDEN_VERSION));
	return o;
}

json_object *mtools_capabilities(void)
{
	json_object *c = json_object_new_object(), *t = json_object_new_object();

	json_object_object_add(t, "listChanged", json_object_new_boolean(0));
	json_object_object_add(c, "tools", t);
	return c;
}

static json_object *prop(json_object *props, const char *name, const char *type,
                         const char *desc)
{
	json_object *p = json_object_new_object();

	json_object_object_add(p, "type", json_object_new_string(type));
	json_object_object_add(p, "description", json_object_new_string(desc));
	json_object_object_add(props, name, p);
	return p;
}

static json_object *tool(const char *name, const char *title, const char *desc,
                         json_object *props, const char *const *required, size_t n_req,
                         bool read_only, bool destructive, bool idempotent, bool open_world)
{
	json_object *t = json_object_new_object(), *schema = json_object_new_object(),
	            *req = json_object_new_array(), *ann = json_object_new_object();

	json_object_object_add(t, "name", json_object_new_string(name));
	json_object_object_add(t, "title", json_object_new_string(title));
	json_object_object_add(t, "description", json_object_new_string(desc));
	json_object_object_add(schema, "type", json_object_new_string("object"));
	json_object_object_add(schema, "properties", props);
	for (size_t i = 0; i < n_req; i++)
		json_object_array_add(req, json_object_new_string(required[i]));
	json_object_object_add(schema, "required", req);
	json_object_object_add(schema, "additionalProperties", json_object_new_boolean(0));
	json_object_object_add(t, "inputSchema", schema);
	json_object_object_add(ann, "title", json_object_new_string(title));
	json_object_object_add(ann, "readOnlyHint", json_object_new_boolean(read_only));
	json_object_object_add(ann, "destructiveHint", json_object_new_boolean(destructive));
	json_object_object_add(ann, "idempotentHint", json_object_new_boolean(idempotent));
	json_object_object_add(ann, "openWorldHint", json_object_new_boolean(open_world));
	json_object_object_add(t, "annotations", ann);
	return t;
}

json_object *mtools_list(const struct mcp_server *s)
{
	static const char *const run_req[] = { "language", "code" }, *const close_req[] = { "session" };
	json_object *tools = json_object_new_array(), *props, *p, *e;
	const char *mode = get_s(get_o(s->policy, "network", json_type_object), "mode");
	char desc[512];

	/* run_code */
	props = json_object_new_object();
	p = prop(props, "language", "string", "The language: a name or an alias from this "
	         "tool's description (python, javascript, shell, ...).");
	(void)p;
	prop(props, "code", "string", "The code to run, at most 1 MiB. The value of a final "
	     "expression is shown, as in a notebook.");
	prop(props, "session", "string", "A session handle from an earlier result's "
	     "structuredContent.session or from open_session. Leave it out to use this "
	     "connection's session.");
	p = prop(props, "timeout", "number", "Seconds after which the block is interrupted "
	         "(its session keeps its state). The jail's own wall time applies in any case.");
	json_object_object_add(p, "exclusiveMinimum", json_object_new_int(0));
	json_object_object_add(p, "maximum", json_object_new_int(MCP_TIMEOUT_MAX));
	json_object_array_add(tools, tool("run_code", "Run code in a warden jail", s->run_code_desc,
	                                  props, run_req, ARRAY_SIZE(run_req), false, true, false,
	                                  mode && strcmp(mode, "none")));
	/* open_session */
	props = json_object_new_object();
	p = prop(props, "profile", "string", "A profile this server allows; leave it out for "
	         "the server's default.");
	e = json_object_new_array();
	for (uint32_t i = 0; s->b->profiles && i < s->b->n_profiles; i++)
		json_object_array_add(e, json_object_new_string(s->b->profiles[i]));
	json_object_object_add(p, "enum", e);
	prop(props, "workspace", "string", "An absolute directory under the workspaces this "
	     "server allows; leave it out for the server's default.");
	snprintf(desc, sizeof(desc), "Open a new, empty session (fresh jails, no state) and get "
	         "its handle in structuredContent.session; pass it to run_code. Sessions end "
	         "with close_session or when the server stops.");
	json_object_array_add(tools, tool("open_session", "Open a warden session", desc, props,
	                                  NULL, 0, false, false, false, false));
	/* close_session */
	props = json_object_new_object();
	prop(props, "session", "string", "The handle of the session to close.");
	json_object_array_add(tools, tool("close_session", "Close a warden session",
	                                  "Close a session: its jails end and its state is gone.",
	                                  props, close_req, ARRAY_SIZE(close_req), false, true, true,
	                                  false));
	return tools;
}
