/* warden policy check FILE... | show [NAME|FILE] | list */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "warden/log.h"
#include "warden/policy.h"
#include "warden/util.h"

static void usage(FILE *f)
{
	fputs("usage: warden policy check FILE...\n"
	      "       warden policy show [NAME|FILE]\n"
	      "       warden policy list\n"
	      "\n"
	      "  check FILE...   validate policy files; errors are printed as FILE:LINE:COL\n"
	      "  show NAME|FILE  print the effective policy (inheritance resolved, defaults\n"
	      "                  filled in) as JSON that `check` accepts; default: workspace.\n"
	      "                  An argument with a '/' or ending in .json is a file\n"
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

static int do_check(int argc, char **argv)
{
	int i, rc = 0;

	if (argc < 1) {
		fputs("warden policy check: which file?  usage: warden policy check FILE...\n", stderr);
		return 2;
	}
	for (i = 0; i < argc; i++) {
		struct wpolicy *p = NULL;
		struct werr err = { 0 };

		if (argv[i][0] == '-' && argv[i][1]) {
			wlog_error("policy check: unknown option '%s'; try `warden policy --help`",
			           argv[i]);
			return 2;
		}
		if (policy_load_file(argv[i], &p, &err) < 0) {
			/* already "FILE:LINE:COL: what; fix", like a compiler */
			fprintf(stderr, "%s\n", err.msg);
			rc = 1;
			continue;
		}
		printf("%s: ok (profile %s)\n", argv[i], p->name);
		policy_free(p);
	}
	return rc;
}

static int do_show(int argc, char **argv)
{
	const char *what = argc > 0 ? argv[0] : "workspace";
	struct wpolicy *p = NULL;
	struct werr err = { 0 };
	_cleanup_free_ char *json = NULL;
	int r;

	if (argc > 1) {
		fputs("warden policy show: one profile at a time.  usage: warden policy show "
		      "[NAME|FILE]\n", stderr);
		return 2;
	}
	if (what[0] == '-' && what[1]) {
		wlog_error("policy show: unknown option '%s'; try `warden policy --help`", what);
		return 2;
	}
	r = looks_like_file(what) ? policy_load_file(what, &p, &err) :
	                            policy_load_profile(what, &p, &err);
	if (r < 0) {
		wlog_error("%s", err.msg);
		return 1;
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
