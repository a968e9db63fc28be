/* The language table (supervisor/lang.h).  Each language starts its
 * driver (drivers/<file>, embedded by tools/embed-drivers.sh) with the argv
 * below; "@DRIVER@" becomes the driver's source text, so nothing has to be
 * readable inside the jail but the interpreter itself.  A driver's text must
 * stay under the kernel's limit for one argument (MAX_ARG_STRLEN, 128 KiB).
 *
 * What persists from one block to the next:
 *   python      globals of __main__, imports, functions, classes, cwd;
 *               sys.exit(n) ends the block with status n, not the session.
 *   javascript  var/let/const/function/class at top level, require()d
 *               modules, timers and callbacks (the event loop runs between
 *               blocks), cwd.  A block that uses top-level await runs inside
 *               an async function: its own declarations stay local to it.
 *               A let/const cannot be declared again in a later block.
 *   shell       variables, functions, aliases, options, traps, cwd (bash).
 *               `exit` ends the session.  SIGINT kills the foreground
 *               command; the rest of the block goes on.
 *   perl        package variables (our $x, or $x without strict) and subs,
 *               use'd modules, cwd.  Lexicals (my $x) end with their block.
 *               exit(n) ends the block with status n, not the session.
 *   ruby        local variables of the top-level binding, methods, classes,
 *               require'd libraries, cwd.  exit(n) ends only the block.
 *   r           the global environment, attached packages, cwd; visible
 *               values are printed as the console prints them.  Programs
 *               a block starts get the control socket as their stdin (R
 *               reads its frames there; SECURITY.md, G20, G151): give
 *               them input (system(..., input = ...)) or < /dev/null. */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <json-c/json.h>

#include "lang.h"
#include "warden/util.h"

/* The harness (tests/drivers/harness.py) reads these argv arrays and the
 * table from this file: keep one array per line, one entry per line. */
static const char *const python_argv[] = { "python3", "-u", "-c", "@DRIVER@", NULL };
static const char *const javascript_argv[] = { "node", "-e", "@DRIVER@", NULL };
static const char *const shell_argv[] = { "bash", "--noprofile", "--norc", "-c", "@DRIVER@", NULL };
static const char *const perl_argv[] = { "perl", "-e", "@DRIVER@", NULL };
static const char *const ruby_argv[] = { "ruby", "-e", "@DRIVER@", NULL };
/* R cannot read an inherited socket: sh makes the control socket R's stdin
 * (drivers/r.R); IFS empty and -f, so the driver text is one word. */
static const char *const r_argv[] = { "sh", "-c", "set -f; IFS=; exec Rscript --vanilla -e $0 <&4 4<&-", "@DRIVER@", NULL };

/* The order is the order shown to users. */
const struct wlang wlangs[] = {
	{ "python", "py,python3", "python.py", python_argv, true, NULL, 0 },
	{ "javascript", "js,node,nodejs", "javascript.js", javascript_argv, true, NULL, 0 },
	{ "shell", "bash,sh", "shell.sh", shell_argv, true, NULL, 0 },
	/* the driver's handler dies only inside a block, and a second SIGINT
	 * right after the block is taken for it (drivers/perl.pl): resending
	 * is safe there */
	{ "perl", "pl", "perl.pl", perl_argv, true, NULL, 500 },
	{ "ruby", "rb", "ruby.rb", ruby_argv, true, NULL, 0 },
	{ "r", "R,rscript", "r.R", r_argv, true, "Rscript", 0 },
};
const size_t wlangs_n = ARRAY_SIZE(wlangs);

/* Is name one of the comma-separated words of list (case-insensitive)? */
static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	while (*list) {
		size_t w = strcspn(list, ",");

		if (w == n && strncasecmp(list, name, n) == 0)
			return true;
		list += w;
		if (*list == ',')
			list++;
	}
	return false;
}

const struct wlang *wlang_find(const char *name)
{
	if (!name || !*name)
		return NULL;
	for (size_t i = 0; i < wlangs_n; i++)
		if (strcasecmp(wlangs[i].name, name) == 0 || in_list(wlangs[i].aliases, name))
			return &wlangs[i];
	return NULL;
}

bool wlang_installed(const struct wlang *l)
{
	static const char *const dirs[] = { "/usr/local/bin", "/usr/bin", "/bin" };
	char path[256];

	const char *prog = l && l->program ? l->program : l ? l->argv[0] : NULL;

	if (!prog || strchr(prog, '/'))
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		int n = snprintf(path, sizeof(path), "%s/%s", dirs[i], prog);

		if (n > 0 && (size_t)n < sizeof(path) && access(path, X_OK) == 0)
			return true;
	}
	return false;
}

const char *wdriver_text(const char *file)
{
	for (size_t i = 0; i < wdriver_srcs_n; i++)
		if (strcmp(wdriver_srcs[i].file, file) == 0)
			return wdriver_srcs[i].text;
	return NULL;
}

char **wlang_argv(const struct wlang *l)
{
	const char *text;
	char **argv;
	size_t n = 0;

	if (!l || !(text = wdriver_text(l->driver)))
		return NULL;
	while (l->argv[n])
		n++;
	argv = xcalloc(n + 1, sizeof(*argv));
	for (size_t i = 0; i < n; i++)
		argv[i] = xstrdup(strcmp(l->argv[i], "@DRIVER@") == 0 ? text : l->argv[i]);
	return argv;
}

void wlang_argv_free(char **argv)
{
	if (!argv)
		return;
	for (size_t i = 0; argv[i]; i++)
		free(argv[i]);
	free(argv);
}

char *wlang_json(void)
{
	json_object *arr = json_object_new_array();
	char *s;

	for (size_t i = 0; i < wlangs_n; i++) {
		const struct wlang *l = &wlangs[i];
		json_object *o, *al;
		const char *p = l->aliases;

		if (!wlang_installed(l))
			continue;
		o = json_object_new_object();
		al = json_object_new_array();
		while (*p) {
			size_t w = strcspn(p, ",");

			if (w)
				json_object_array_add(al, json_object_new_string_len(p, (int)w));
			p += w;
			if (*p == ',')
				p++;
		}
		json_object_object_add(o, "name", json_object_new_string(l->name));
		json_object_object_add(o, "aliases", al);
		json_object_object_add(o, "persistent", json_object_new_boolean(l->persistent));
		json_object_array_add(arr, o);
	}
	s = xstrdup(json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PLAIN));
	json_object_put(arr);
	return s;
}

char *wlang_names(void)
{
	size_t len = 1;
	char *s;

	for (size_t i = 0; i < wlangs_n; i++)
		len += strlen(wlangs[i].name) + 2;
	s = xmalloc(len);
	s[0] = '\0';
	for (size_t i = 0; i < wlangs_n; i++) {
		if (!wlang_installed(&wlangs[i]))
			continue;
		if (s[0])
			strcat(s, ", ");
		strcat(s, wlangs[i].name);
	}
	return s;
}
