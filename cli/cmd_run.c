/* `warden run [OPTIONS] -- PROGRAM [ARG...]`: the command line of a one-shot
 * run.  The run itself (jail, event loop, result) is wrun() in run.c. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "warden/log.h"
#include "warden/policy.h"
#include "warden/supervisor.h"
#include "warden/util.h"

enum { OPT_PROFILE = 256, OPT_POLICY, OPT_WORKSPACE, OPT_MEMORY, OPT_PIDS, OPT_CPUS,
       OPT_TIMEOUT, OPT_NET, OPT_AUDIT, OPT_JSON, OPT_OUTPUT, OPT_CPU_TIME, OPT_NO_STDIN,
       OPT_QUIET, OPT_HELP, OPT_SETENV, OPT_RAW, OPT_STRICT_LIMITS, OPT_ALLOW };

static const struct option run_opts[] = {
	{ "profile", required_argument, NULL, OPT_PROFILE },
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "workspace", required_argument, NULL, OPT_WORKSPACE },
	{ "memory", required_argument, NULL, OPT_MEMORY },
	{ "pids", required_argument, NULL, OPT_PIDS },
	{ "cpus", required_argument, NULL, OPT_CPUS },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "cpu-time", required_argument, NULL, OPT_CPU_TIME },
	{ "output", required_argument, NULL, OPT_OUTPUT },
	{ "net", required_argument, NULL, OPT_NET },
	{ "allow", required_argument, NULL, OPT_ALLOW },
	{ "audit-log", required_argument, NULL, OPT_AUDIT },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "env", required_argument, NULL, OPT_SETENV },
	{ "no-stdin", no_argument, NULL, OPT_NO_STDIN },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "raw", no_argument, NULL, OPT_RAW },
	{ "strict-limits", no_argument, NULL, OPT_STRICT_LIMITS },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static void run_usage(FILE *f)
{
	fputs("usage: warden run [OPTIONS] [--] PROGRAM [ARG...]\n"
	      "Runs PROGRAM in a fresh jail under a policy and relays its output.\n"
	      "\n"
	      "  --profile NAME      built-in or user profile (default: workspace)\n"
	      "  --policy FILE       a policy file instead of a profile\n"
	      "  --workspace DIR     the directory the program works in (default: .)\n"
	      "  --memory SIZE       memory limit, e.g. 512M (\"unlimited\" for none)\n"
	      "  --pids N            process and thread limit\n"
	      "  --cpus N            CPU bandwidth, e.g. 0.5 or 2\n"
	      "  --timeout DURATION  wall time, e.g. 30s, 5m (exit status 124)\n"
	      "  --cpu-time DURATION total CPU time\n"
	      "  --output SIZE       stdout+stderr limit (\"unlimited\" for none)\n"
	      "  --strict-limits     refuse a limit nothing here enforces (see doctor)\n"
	      "  --net MODE          none, loopback (the jail's own lo) or proxy\n"
	      "  --allow HOST[:PORT] with --net proxy: a host the jail may reach\n"
	      "  --env NAME=VALUE    set a variable in the jail (NAME alone: pass it)\n"
	      "  --audit-log FILE    where to append the audit records\n"
	      "  --json FILE         write a JSON summary of the run to FILE\n"
	      "  --no-stdin, --quiet /dev/null as stdin; no summary lines on stderr\n"
	      "  --raw               pass escape sequences to a terminal unchanged (else\n"
	      "                      shown inert, ESC as ^[, on a terminal stdout/stderr)\n"
	      "Exit status: the program's; 128+N if killed by signal N; 124 on timeout;\n"
	      "125 if warden failed; 126/127 if PROGRAM cannot run or is not found.\n"
	      "More: man warden-run\n", f);
}

static int limit_arg(const char *opt, const char *v, bool size, uint64_t *out)
{
	struct werr e;

	if (!strcmp(v, "unlimited") || !strcmp(v, "none")) {
		*out = 0;
		return 0;
	}
	if ((size ? parse_size(v, out, &e) : parse_duration_ms(v, out, &e)) < 0) {
		wlog_error("--%s: %s", opt, e.msg);
		return -1;
	}
	return 0;
}

/* Parse options into opts; returns index of PROGRAM in argv, or -1/-2. */
static int parse_run_args(int argc, char **argv, struct wrun_opts *o)
{
	int c;
	struct werr e;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+h", run_opts, NULL)) != -1) {
		switch (c) {
		case OPT_PROFILE: o->profile = optarg; break;
		case OPT_POLICY: o->policy_file = optarg; break;
		case OPT_WORKSPACE: o->workspace = optarg; break;
		case OPT_MEMORY:
			if (limit_arg("memory", optarg, true, &o->memory) < 0)
				return -1;
			o->set_memory = true;
			break;
		case OPT_OUTPUT:
			if (limit_arg("output", optarg, true, &o->output) < 0)
				return -1;
			o->set_output = true;
			break;
		case OPT_TIMEOUT:
			if (limit_arg("timeout", optarg, false, &o->timeout_ms) < 0)
				return -1;
			o->set_timeout = true;
			break;
		case OPT_CPU_TIME:
			if (limit_arg("cpu-time", optarg, false, &o->cpu_ms) < 0)
				return -1;
			o->set_cpu_time = true;
			break;
		case OPT_PIDS:
			if (!strcmp(optarg, "unlimited"))
				o->pids = 0;
			else if (parse_u64(optarg, &o->pids, &e) < 0) {
				wlog_error("--pids: %s", e.msg);
				return -1;
			}
			o->set_pids = true;
			break;
		case OPT_CPUS: {
			char *end;
			errno = 0;
			o->cpus = strtod(optarg, &end);
			if (errno || *end || o->cpus < 0 || o->cpus > 4096) {
				wlog_error("--cpus: '%s' is not a number of CPUs, e.g. 0.5 or 2", optarg);
				return -1;
			}
			o->set_cpus = true;
			break;
		}
		case OPT_NET: {
			enum wnet_mode m;
			if (policy_net_mode_parse(optarg, &m) < 0) {
				wlog_error("--net: unknown mode '%s'; use none, loopback or proxy", optarg);
				return -1;
			}
			o->net = optarg;
			break;
		}
		case OPT_ALLOW:
			if (o->n_allow >= ARRAY_SIZE(o->allow)) {
				wlog_error("--allow: at most %zu; list more in a policy's "
				           "network.allow", ARRAY_SIZE(o->allow));
				return -1;
			}
			o->allow[o->n_allow++] = optarg;
			break;
		case OPT_AUDIT: o->audit_log = optarg; break;
		case OPT_JSON: o->json_file = optarg; break;
		case OPT_NO_STDIN: o->no_stdin = true; break;
		case OPT_QUIET: o->quiet = true; break;
		case OPT_RAW: o->raw = true; break;
		case OPT_STRICT_LIMITS: o->strict_limits = true; break;
		case OPT_SETENV:
			if (o->n_env >= ARRAY_SIZE(o->env)) {
				wlog_error("--env: at most %zu", ARRAY_SIZE(o->env));
				return -1;
			}
			if (!policy_env_name_ok(optarg, strcspn(optarg, "="))) {
				wlog_error("--env '%s': \"%.*s\" is not a valid environment variable "
				           "name; use letters, digits and '_', not starting with a "
				           "digit, as in --env NAME=VALUE", optarg,
				           (int)strcspn(optarg, "="), optarg);
				return -1;
			}
			o->env[o->n_env++] = optarg;
			break;
		case 'h':
		case OPT_HELP:
			run_usage(stdout);
			return -2;
		default:
			wlog_error("run: unknown or incomplete option '%s'; see `warden run --help`",
			           argv[optind - 1]);
			return -1;
		}
	}
	if (optind >= argc) {
		wlog_error("run: no program given; usage: warden run [OPTIONS] -- PROGRAM [ARG...]");
		return -1;
	}
	return optind;
}

int cmd_run(int argc, char **argv)
{
	struct wrun_opts o = { 0 };
	struct wrun_result res;
	struct werr err = { 0 };
	int idx, rc;

	idx = parse_run_args(argc, argv, &o);
	if (idx == -2)
		return 0;
	if (idx < 0)
		return 125;
	o.argv = argv + idx;
	rc = wrun(&o, &res, &err);
	if (rc < 0) {
		wlog_error("%s", err.msg);
		return werr_exit_code(&err);
	}
	return res.exit_status;
}
