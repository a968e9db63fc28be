/* warden serve, warden mcp and warden chat: their command line.  The supervisor's own
 * options are taken here; every other one goes to the broker, which parses
 * its own (broker/chat/chat_opts.c); which of those take a value is read
 * from their one table (include/warden/chat_args.h).  supervisor/server.c
 * serves. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "warden/chat_args.h"
#include "warden/supervisor.h"
#include "warden/util.h"

enum { O_PROFILE = 256, O_POLICY, O_ALLOW_PROFILE, O_WORKSPACE, O_ALLOW_WS, O_AUDIT, O_USER,
       O_STDIO, O_SANDBOX, O_HELP, O_MAX_SESSIONS, O_NET, O_ALLOW,
       O_POOL, O_POOL_IDLE, O_LISTEN, O_TOKEN_FILE, O_TLS_CERT, O_TLS_KEY, O_LEARN };

static void serve_usage(FILE *f)
{
	fputs("usage: warden serve --stdio | --listen ADDR [OPTIONS]\n"
	      "The serve protocol: sessions whose code runs in jails, as JSON lines on\n"
	      "stdin/stdout, or over WebSocket (/ws) and MCP (/mcp) for token holders.\n"
	      "  --listen ADDR           HOST:PORT, PORT (loopback), a socket path, systemd\n"
	      "  --token-file FILE       the bearer token (0600); default: a new one in\n"
	      "                          $XDG_RUNTIME_DIR/warden/token\n"
	      "  --tls-cert F --tls-key F  TLS, which an address off loopback needs\n"
	      "  --session-idle SECONDS  sessions unused this long end (default: never)\n"
	      "  --learn                 sessions learn refusals; a client may widen its own\n"
	      "  --model M --api-base URL [-y]  the model of \"chat\" (the key: from the env)\n"
	      "  --profile NAME          the default sandbox profile (default: workspace)\n"
	      "  --policy FILE           a policy file, allowed and made the default\n"
	      "  --allow-profile NAME    also allow this profile in \"open\" (repeatable)\n"
	      "  --workspace DIR         the default workspace (default: .), or one below it\n"
	      "  --allow-workspace DIR   another allowed workspace root (repeatable)\n"
	      "  --net MODE              none, loopback or proxy, for every profile\n"
	      "  --allow HOST[:PORT]     with --net proxy: a host jails may reach\n"
	      "  --audit-log FILE        where audit records go\n"
	      "  --broker-user USER      as root: the broker's user (default: " WBROKER_USER ")\n", f);
	fprintf(f, "  --max-sessions N        sessions open at once at most (default: %d)\n"
	           "  --pool N                ready jails per profile, workspace, language (%u)\n"
	           "  --pool-idle SECONDS     unused pooled jails end after (default: %u)\n"
	           "\n"
	           "The protocol: man warden-serve (and docs/serve.md).\n", SV_MAX_SESSIONS,
	        SV_POOL_DEFAULT, SV_POOL_IDLE_S);
}

/* The two chat options that name a file for the broker to read: the
 * supervisor opens it and hands it over (supervisor/broker.c), since as
 * root the broker's user may not reach it by path.  Only noted here; the
 * broker parses its options itself. */
static void note_broker_file(struct wserve_opts *o, int argc, char **argv, int i)
{
	const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;

	if ((!strcmp(a, "--model") || !strcmp(a, "-m")) && next && !strncmp(next, "replay:", 7))
		o->files[0] = next + 7;
	else if (!strncmp(a, "--model=replay:", 15))
		o->files[0] = a + 15;
	else if (!strncmp(a, "--resume=", 9) && a[9])
		o->files[1] = a + 9;
	else if (!strcmp(a, "--resume") && next && next[0] != '-' && strchr(next, '/'))
		o->files[1] = next;
}

/* The supervisor's own options; everything else goes to the broker. */
static int parse_sv_opts(int argc, char **argv, bool chat, struct wserve_opts *o, char ***rest,
                         int *n_rest)
{
	static const struct option serve_long[] = {
		{ "stdio", no_argument, NULL, O_STDIO },
		{ "profile", required_argument, NULL, O_PROFILE },
		{ "sandbox-profile", required_argument, NULL, O_SANDBOX },
		{ "policy", required_argument, NULL, O_POLICY },
		{ "allow-profile", required_argument, NULL, O_ALLOW_PROFILE },
		{ "workspace", required_argument, NULL, O_WORKSPACE },
		{ "allow-workspace", required_argument, NULL, O_ALLOW_WS },
		{ "audit-log", required_argument, NULL, O_AUDIT },
		{ "broker-user", required_argument, NULL, O_USER },
		{ "max-sessions", required_argument, NULL, O_MAX_SESSIONS },
		{ "net", required_argument, NULL, O_NET },
		{ "allow", required_argument, NULL, O_ALLOW },
		{ "pool", required_argument, NULL, O_POOL },
		{ "pool-idle", required_argument, NULL, O_POOL_IDLE },
		{ "listen", required_argument, NULL, O_LISTEN },
		{ "token-file", required_argument, NULL, O_TOKEN_FILE },
		{ "tls-cert", required_argument, NULL, O_TLS_CERT },
		{ "tls-key", required_argument, NULL, O_TLS_KEY },
		{ "learn", no_argument, NULL, O_LEARN },
		{ "help", no_argument, NULL, O_HELP },
		{ 0 }
	};
	char **out = xcalloc((size_t)argc + 1, sizeof(char *));
	int n = 0;

	memset(o, 0, sizeof(*o));
	o->broker_user = WBROKER_USER;
	o->pool = SV_POOL_DEFAULT;
	o->pool_idle_s = SV_POOL_IDLE_S;
	o->roots[o->n_roots++] = ".";
	/* chat: pull ours out by hand, pass the rest through untouched */
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *eq = strchr(a, '=');
		size_t klen = eq ? (size_t)(eq - a) : strlen(a);
		const struct option *opt = NULL;
		const char *val = NULL;

		if (!strcmp(a, "--")) {
			while (i < argc)
				out[n++] = argv[i++];
			break;
		}
		if (chat)
			note_broker_file(o, argc, argv, i);
		for (const struct option *so = serve_long; so->name; so++)
			if (!strncmp(a, "--", 2) && strlen(so->name) == klen - 2 && !strncmp(a + 2, so->name, klen - 2))
				opt = so;
		/* in chat, --profile is the chat profile (Open Interpreter's) */
		if (chat && opt && (opt->val == O_LISTEN || opt->val == O_TOKEN_FILE ||
		                    opt->val == O_TLS_CERT || opt->val == O_TLS_KEY ||
		                    opt->val == O_LEARN))
			opt = NULL;   /* chat's to refuse */
		/* the broker's options (include/warden/chat_args.h), with their
		 * values, go on as they are: serve's for its "chat" op; in chat,
		 * every one but the few the supervisor takes itself */
		if (!opt || (chat && (opt->val == O_PROFILE || opt->val == O_HELP))) {
			const struct wchat_arg *which = NULL;
			int span;

			if (!chat && (!strcmp(a, "--api-key") || !strncmp(a, "--api-key=", 10))) {
				wlog_error("serve: no --api-key: the key would show in ps to every user; "
				           "set OPENAI_API_KEY or ANTHROPIC_API_KEY in warden's environment");
				free(out);
				return -1;
			}
			span = wchat_arg_span(argc, argv, i, chat ? WCA_CHAT : WCA_SERVE, &which);
			if (span > 0) {
				while (span-- > 0)
					out[n++] = argv[i++];
				i--;
				continue;
			}
		}
		if (!opt || (chat && (opt->val == O_PROFILE || opt->val == O_HELP || opt->val == O_STDIO))) {
			if (!chat) {
				wlog_error("%s: unknown option %s; see `warden %s --help`", argv[0], a,
				           argv[0]);
				free(out);
				return -1;
			}
			out[n++] = argv[i];
			continue;
		}
		if (opt->has_arg) {
			val = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
			if (!val) {
				wlog_error("%s needs a value", a);
				free(out);
				return -1;
			}
		}
		switch (opt->val) {
		case O_STDIO: o->stdio = true; break;
		case O_LISTEN: o->listen = val; break;
		case O_TOKEN_FILE: o->token_file = val; break;
		case O_TLS_CERT: o->tls_cert = val; break;
		case O_TLS_KEY: o->tls_key = val; break;
		case O_LEARN: o->learn = true; break;
		case O_HELP: serve_usage(stdout); free(out); exit(0);
		case O_PROFILE:
		case O_SANDBOX:
			/* the first named profile is the default */
			if (o->n_profiles < ARRAY_SIZE(o->profiles)) {
				memmove(o->profiles + 1, o->profiles, o->n_profiles * sizeof(char *));
				o->profiles[0] = val;
				o->n_profiles++;
				o->named_default = true;
			}
			break;
		case O_ALLOW_PROFILE:
			if (o->n_profiles < ARRAY_SIZE(o->profiles))
				o->profiles[o->n_profiles++] = val;
			break;
		case O_POLICY: o->policy_file = val; break;
		case O_WORKSPACE: o->roots[0] = val; break;
		case O_ALLOW_WS:
			if (o->n_roots < ARRAY_SIZE(o->roots))
				o->roots[o->n_roots++] = val;
			break;
		case O_AUDIT: o->audit_log = val; break;
		case O_USER: o->broker_user = val; break;
		case O_NET: o->net = val; break;
		case O_ALLOW:
			if (o->n_allow >= ARRAY_SIZE(o->allow)) {
				wlog_error("--allow: at most %zu; list more in a policy's "
				           "network.allow", ARRAY_SIZE(o->allow));
				free(out);
				return -1;
			}
			o->allow[o->n_allow++] = (char *)val;
			break;
		case O_MAX_SESSIONS: {
			char *end;
			unsigned long v;

			errno = 0;
			v = strtoul(val, &end, 10);
			if (errno || end == val || *end || val[0] == '-' || v < 1 || v > SV_MAX_SESSIONS_CEIL) {
				wlog_error("--max-sessions: '%s' is not a number from 1 to %u",
				           val, SV_MAX_SESSIONS_CEIL);
				free(out);
				return -1;
			}
			o->max_sessions = v;
			break;
		}
		case O_POOL:
		case O_POOL_IDLE: {
			char *end;
			unsigned long v, lo = opt->val == O_POOL ? 0 : 1;
			unsigned long hi = opt->val == O_POOL ? SV_POOL_MAX : 86400;

			errno = 0;
			v = strtoul(val, &end, 10);
			if (errno || end == val || *end || val[0] == '-' || v < lo || v > hi) {
				wlog_error("--%s: '%s' is not a number from %lu to %lu", opt->name, val,
				           lo, hi);
				free(out);
				return -1;
			}
			if (opt->val == O_POOL)
				o->pool = (unsigned)v;
			else
				o->pool_idle_s = (unsigned)v;
			break;
		}
		}
	}
	*rest = out;
	*n_rest = n;
	return 0;
}

static int serve_main(int argc, char **argv, bool chat)
{
	struct wserve_opts o;
	char **rest = NULL;
	int n_rest = 0, rc;

	if (parse_sv_opts(argc, argv, chat, &o, &rest, &n_rest) < 0)
		return 2;
	rc = sv_serve(&o, rest, n_rest, chat);
	free(rest);
	return rc;
}

static void mcp_usage(FILE *f)
{
	fputs("usage: warden mcp [OPTIONS]\n"
	      "\n"
	      "A Model Context Protocol server on stdin/stdout (both protocol eras): the\n"
	      "tools run_code, open_session and close_session run code in jails.\n"
	      "\n"
	      "  --profile NAME          the default sandbox profile (default: workspace)\n"
	      "  --policy FILE           a policy file, allowed and made the default\n"
	      "  --allow-profile NAME    also allow this profile in open_session (repeatable)\n"
	      "  --workspace DIR         the default workspace (default: .); open_session\n"
	      "                          may name it or a directory below it\n"
	      "  --allow-workspace DIR   another allowed workspace root (repeatable)\n"
	      "  --net MODE              none, loopback or proxy, for every profile\n"
	      "  --allow HOST[:PORT]     with --net proxy: a host jails may reach\n"
	      "  --learn                 ask the person (elicitation) to allow what was refused\n"
	      "  --audit-log FILE        where audit records go\n"
	      "  --broker-user USER      as root: the broker's user (default: " WBROKER_USER ")\n", f);
	fprintf(f, "  --max-sessions N        the most sessions open at once (default: %d, or\n"
	           "                          what the open-files limit has room for)\n"
	           "  --pool N                ready jails kept per profile, workspace and\n"
	           "                          language (default: %u; 0: none)\n"
	           "  --pool-idle SECONDS     unused pooled jails end after (default: %u)\n"
	           "\n"
	           "Closing stdin ends the server and every jail.  Clients: man warden-mcp\n"
	           "(and docs/mcp.md).\n", SV_MAX_SESSIONS, SV_POOL_DEFAULT, SV_POOL_IDLE_S);
}

/* warden mcp: serve's options (not --stdio: stdio is what it speaks), the
 * broker in mcp mode. */
int cmd_mcp(int argc, char **argv)
{
	struct wserve_opts o;
	char **rest = NULL;
	int n_rest = 0, rc;

	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			mcp_usage(stdout);
			return 0;
		}
	if (parse_sv_opts(argc, argv, false, &o, &rest, &n_rest) < 0)
		return 2;
	if (o.stdio || o.listen || o.token_file || o.tls_cert || o.tls_key || n_rest > 0) {
		/* MCP over the network is serve --listen's /mcp */
		wlog_error("mcp: %s: warden mcp always speaks on stdin and stdout (over the network: "
		           "warden serve --listen ADDR, its /mcp); see `warden mcp --help`",
		           o.stdio ? "--stdio" : o.listen ? "--listen" : o.token_file ? "--token-file"
		           : o.tls_cert || o.tls_key ? "--tls-cert/--tls-key" : rest[0]);
		free(rest);
		return 2;
	}
	o.mcp = true;
	rc = sv_serve(&o, rest, n_rest, false);
	free(rest);
	return rc;
}

int cmd_serve(int argc, char **argv)
{
	return serve_main(argc, argv, false);
}

int cmd_chat(int argc, char **argv)
{
	return serve_main(argc, argv, true);
}
