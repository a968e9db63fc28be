/* warden policy check [--workspace DIR] FILE|NAME... | show [NAME|FILE] | list */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "warden/catalog.h"
#include "warden/log.h"
#include "warden/policy.h"
#include "warden/supervisor.h"
#include "warden/util.h"

static void usage(FILE *f)
{
	fputs("usage: warden policy check [--workspace DIR] FILE|NAME...\n"
	      "       warden policy show [NAME|FILE] [--catalog [--json|--markdown]]\n"
	      "       warden policy list\n"
	      "\n"
	      "  check FILE|NAME every error of a policy file or profile, FILE:LINE:COL,\n"
	      "                  then what a run in the current directory (--workspace DIR)\n"
	      "                  would refuse on this machine (links below writable places)\n"
	      "  show NAME|FILE  print the effective policy (inheritance resolved, defaults\n"
	      "                  filled in) as JSON that `check` accepts; default: workspace.\n"
	      "                  An argument with a '/' or ending in .json is a file.\n"
	      "                  --catalog: the paths inside a writable workspace that every\n"
	      "                  profile protects (read-only, cannot be created) or hides,\n"
	      "                  with why, as this profile leaves them (unprotect, unhide)\n"
	      "  list            the profiles available to --profile, and where each is from\n"
	      "\n"
	      "User profiles live in $XDG_CONFIG_HOME/warden/profiles/NAME.json\n"
	      "(~/.config/warden/profiles) and are found before the built-in ones.\n"
	      "The format: man 5 warden-policy.  More: man warden-policy\n", f);
}

static bool is_help(const char *a)
{
	return !strcmp(a, "--help") || !strcmp(a, "-h") || !strcmp(a, "help");
}

static bool looks_like_file(const char *a)
{
	size_t n = strlen(a);

	return strchr(a, '/') || (n >= 5 && !strcmp(a + n - 5, ".json"));
}

/* A profile name given to check: a file when it has a '/' or ends in
 * .json (as for show), else a profile when one has that name, else a file
 * (the name of an existing file without .json). */
static bool check_as_file(const char *a)
{
	struct wstrv names = { 0 }, sources = { 0 };
	struct werr err = { 0 };
	bool profile;

	if (looks_like_file(a))
		return true;
	if (policy_list(&names, &sources, &err) < 0)
		return access(a, F_OK) == 0;
	profile = wstrv_contains(&names, a);
	wstrv_free(&names);
	wstrv_free(&sources);
	return !profile && access(a, F_OK) == 0;
}

/* One FILE or NAME: the parse (every error) and, when it is valid, the
 * checks a run in the workspace makes against this machine.  0 ok, 1 not. */
static int check_one(const char *what, const char *workspace, const char *ws_why)
{
	struct wstrv errors = { 0 };
	struct wpolicy *p = NULL;
	struct werr err = { 0 };
	char ws[PATH_MAX];
	bool file = check_as_file(what);
	int r;

	r = file ? policy_check_file(what, &errors, &p) : policy_check_profile(what, &errors, &p);
	if (r == 0) {
		r = wcheck_policy(p, workspace, ws, &errors, &err);
		if (r < 0) {
			wlog_error("policy check: %s (--workspace DIR names the directory a run "
			           "would use)", err.msg);
			policy_free(p);
			return 1;
		}
	}
	/* already "FILE:LINE:COL: what; fix", like a compiler */
	for (size_t i = 0; i < errors.n; i++)
		fprintf(stderr, "%s\n", errors.v[i]);
	if (errors.n && r > 0)
		fprintf(stderr, "%s: %zu error%s for a run in %s (%s)\n", what, errors.n,
		        errors.n == 1 ? "" : "s", ws, ws_why);
	else if (errors.n)
		fprintf(stderr, "%s: %zu error%s\n", what, errors.n, errors.n == 1 ? "" : "s");
	else
		printf("%s: ok (profile %s; checked for a run in %s)\n", what, p->name, ws);
	wstrv_free(&errors);
	policy_free(p);
	return r != 0;
}

static int do_check(int argc, char **argv)
{
	const char *workspace = NULL;
	int i, n = 0, rc = 0;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--workspace") || !strncmp(argv[i], "--workspace=", 12)) {
			workspace = argv[i][11] == '=' ? argv[i] + 12 : i + 1 < argc ? argv[++i] : NULL;
			if (!workspace || !*workspace) {
				wlog_error("policy check: --workspace needs a directory");
				return 2;
			}
		} else if (argv[i][0] == '-' && argv[i][1]) {
			wlog_error("policy check: unknown option '%s'; try `warden policy --help`",
			           argv[i]);
			return 2;
		} else {
			n++;
		}
	}
	if (n < 1) {
		fputs("warden policy check: which file or profile?  usage: warden policy check "
		      "[--workspace DIR] FILE|NAME...\n", stderr);
		return 2;
	}
	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--workspace")) {
			i++;
			continue;
		}
		if (!strncmp(argv[i], "--workspace=", 12))
			continue;
		rc |= check_one(argv[i], workspace,
		                workspace ? "--workspace" : "the current directory; --workspace DIR "
		                "for another");
	}
	return rc;
}

enum cat_fmt { CAT_TEXT, CAT_JSON, CAT_MARKDOWN };

/* s as a JSON string, quoted (json-c escapes it). */
static char *json_quote(const char *s)
{
	json_object *o = json_object_new_string(s);
	char *q = xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	                                                    JSON_C_TO_STRING_NOSLASHESCAPE));

	json_object_put(o);
	return q;
}

/* The catalogs (warden/catalog.h) as profile p leaves them. */
static void show_catalog(const struct wpolicy *p, enum cat_fmt fmt)
{
	if (fmt == CAT_MARKDOWN)
		fputs("| path | where | what | group | why |\n|---|---|---|---|---|\n", stdout);
	else if (fmt == CAT_JSON)
		fputs("[", stdout);
	else
		printf("%-34s %-9s %-18s %s\n", "PATH", "WHAT", "GROUP", "WHY");
	for (size_t i = 0; i < wcat_n; i++) {
		const struct wcat_entry *e = &wcat_entries[i];
		bool prot = (e->what & WCAT_PROTECT) && !wstrv_contains(&p->unprotect, e->name);
		bool hid = (e->what & WCAT_HIDE) && !wstrv_contains(&p->unhide, e->name);
		const char *what = prot && hid ? "both" : prot ? "protected" : hid ? "hidden" :
		                   "dropped";
		const char *where = e->base == WCAT_HOME ? "home" : "project";

		if (fmt == CAT_MARKDOWN) {
			printf("| `%s` | %s | %s | %s | %s |\n", e->name, where,
			       (e->what & WCAT_PROTECT) && (e->what & WCAT_HIDE) ? "protected, hidden" :
			       (e->what & WCAT_PROTECT) ? "protected" : "hidden", e->group, e->why);
		} else if (fmt == CAT_JSON) {
			_cleanup_free_ char *n = json_quote(e->name), *g = json_quote(e->group),
			                   *y = json_quote(e->why);
			printf("%s\n {\"name\": %s, \"where\": \"%s\", \"kind\": \"%s\", "
			       "\"protected\": %s, \"hidden\": %s, \"group\": %s, \"why\": %s}",
			       i ? "," : "", n, where, e->kind == WCAT_DIR ? "dir" : "file",
			       prot ? "true" : "false", hid ? "true" : "false", g, y);
		} else {
			printf("%-34s %-9s %-18s %s\n", e->name, what, e->group, e->why);
		}
	}
	if (fmt == CAT_JSON)
		fputs("\n]\n", stdout);
	else if (fmt == CAT_TEXT)
		printf("\n\"~/\" entries apply where your home directory lies in a writable workspace; "
		       "the others at the\nworkspace's root, in your home, and in every repository below "
		       "them.  A profile drops\nan entry by naming it in filesystem.unprotect or "
		       "filesystem.unhide (man 5 warden-policy).\n");
}

static int do_show(int argc, char **argv)
{
	const char *what = NULL;
	struct wpolicy *p = NULL;
	struct werr err = { 0 };
	_cleanup_free_ char *json = NULL;
	bool catalog = false;
	enum cat_fmt fmt = CAT_TEXT;
	int r;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--catalog"))
			catalog = true;
		else if (!strcmp(argv[i], "--json"))
			fmt = CAT_JSON;
		else if (!strcmp(argv[i], "--markdown"))
			fmt = CAT_MARKDOWN;
		else if (argv[i][0] == '-' && argv[i][1]) {
			wlog_error("policy show: unknown option '%s'; try `warden policy --help`",
			           argv[i]);
			return 2;
		} else if (what) {
			fputs("warden policy show: one profile at a time.  usage: warden policy show "
			      "[NAME|FILE] [--catalog]\n", stderr);
			return 2;
		} else {
			what = argv[i];
		}
	}
	if (fmt != CAT_TEXT && !catalog) {
		wlog_error("policy show: --json and --markdown go with --catalog (the policy "
		           "itself is always JSON)");
		return 2;
	}
	if (!what)
		what = "workspace";
	r = looks_like_file(what) ? policy_load_file(what, &p, &err) :
	                            policy_load_profile(what, &p, &err);
	if (r < 0) {
		wlog_error("%s", err.msg);
		return 1;
	}
	if (catalog) {
		show_catalog(p, fmt);
		policy_free(p);
		return 0;
	}
	json = policy_to_json(p);
	policy_free(p);
	if (!json) {
		wlog_error("policy show: out of memory");
		return 125;
	}
	fputs(json, stdout);
	return 0;
}

static int do_list(int argc)
{
	struct wstrv names = { 0 }, sources = { 0 }, descs = { 0 };
	struct werr err = { 0 };
	size_t i, wn = 4, ws = 6;

	if (argc > 0) {
		wlog_error("policy list takes no arguments; try `warden policy --help`");
		return 2;
	}
	if (policy_list(&names, &sources, &err) < 0) {
		wlog_error("%s", err.msg);
		return 1;
	}
	for (i = 0; i < names.n; i++) {
		struct wpolicy *p = NULL;
		struct werr e2 = { 0 };

		if (policy_load_profile(names.v[i], &p, &e2) < 0) {
			_cleanup_free_ char *d = xasprintf("(invalid: run `warden policy check %s`)",
			                                   sources.v[i]);
			wstrv_push(&descs, d);
		} else {
			wstrv_push(&descs, p->description ? p->description : "");
		}
		policy_free(p);
		if (strlen(names.v[i]) > wn)
			wn = strlen(names.v[i]);
		if (strlen(sources.v[i]) > ws)
			ws = strlen(sources.v[i]);
	}
	printf("%-*s  %-*s  %s\n", (int)wn, "NAME", (int)ws, "SOURCE", "DESCRIPTION");
	for (i = 0; i < names.n; i++)
		printf("%-*s  %-*s  %s\n", (int)wn, names.v[i], (int)ws, sources.v[i], descs.v[i]);
	wstrv_free(&names);
	wstrv_free(&sources);
	wstrv_free(&descs);
	return 0;
}

int cmd_policy(int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : NULL;

	if (!sub) {
		usage(stderr);
		return 2;
	}
	if (is_help(sub)) {
		usage(stdout);
		return 0;
	}
	/* `warden policy SUB --help` */
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		}
	}
	if (!strcmp(sub, "check"))
		return do_check(argc - 2, argv + 2);
	if (!strcmp(sub, "show"))
		return do_show(argc - 2, argv + 2);
	if (!strcmp(sub, "list"))
		return do_list(argc - 2);
	fprintf(stderr, "warden: unknown policy command '%s'\n", sub);
	usage(stderr);
	return 2;
}
