/* warden-broker serve's command line (serve_opts.h).  The supervisor
 * passes: --stdio or --listen [--tls], then serve's options that are the
 * broker's (cli/cmd_serve.c: --session-idle and the model's). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/client.h"
#include "llm/llm.h"
#include "listen.h"
#include "serve.h"
#include "serve_chat.h"
#include "serve_opts.h"
#include "warden/sanitize.h"
#include "warden/chat_args.h"
#include "warden/util.h"

static int usage_err(struct werr *err, const char *fmt, const char *a)
	__attribute__((format(printf, 2, 0)));

/* A wrong command line: exit status 2. */
static int usage_err(struct werr *err, const char *fmt, const char *a)
{
	char msg[512];

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	snprintf(msg, sizeof(msg), fmt, a);
#pragma GCC diagnostic pop
	werr_set(err, 0, "%s", msg);
	err->errnum = 2;
	return -1;
}

int serve_preload(int argc, char **argv, const struct bdirs *d, struct serve_opts *o,
                  uint16_t *ports, size_t *n_ports, struct werr *err)
{
	char **cargv = xcalloc((size_t)argc + 1, sizeof(char *));
	int cargc = 0, r = -1;
	bool stdio = false, model = false;
	struct chat_opts co = { .export_fd = -1 };

	memset(o, 0, sizeof(*o));
	o->sup_fd = BROKER_SUP_FD;
	*n_ports = 0;
	cargv[cargc++] = "serve";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--stdio")) {
			stdio = true;
		} else if (!strcmp(a, "--listen")) {
			o->listen = true;
		} else if (!strcmp(a, "--tls")) {
			o->tls = true;
		} else if (!strcmp(a, "--help")) {
			o->help = true;
		} else if (!strcmp(a, "--session-idle") || !strncmp(a, "--session-idle=", 15)) {
			const char *v = a[14] == '=' ? a + 15 : i + 1 < argc ? argv[++i] : NULL;
			uint64_t n;
			struct werr e = { 0 };

			if (!v || parse_u64(v, &n, &e) < 0 || n < 1 || n > 7 * 86400) {
				usage_err(err, "--session-idle needs a number of seconds from 1 to 604800, "
				          "not '%s'", v ? v : "");
				goto out;
			}
			o->session_idle_s = (unsigned)n;
		} else {
			if (!strcmp(a, "--model") || !strcmp(a, "-m") || !strncmp(a, "--model=", 8))
				model = true;
			cargv[cargc++] = argv[i];
		}
	}
	if (o->help) {
		r = 0;
		goto out;
	}
	if (stdio == o->listen) {
		usage_err(err, "%sserve needs --stdio or --listen, one of them", "");
		goto out;
	}
	if (cargc > 1 && !model) {
		usage_err(err, "%s: the model's options go with --model (the model of the \"chat\" "
		          "op)", cargv[1]);
		goto out;
	}
	if (model) {
		/* what warden chat does before confinement: the CA bundle and
		 * the resolver's modules, config.json, the model's ports */
		if (llm_global_init(err) < 0)
			goto out;
		chat_load_opts(cargc, cargv, d, &co, ports, n_ports);
		if (co.bad) {
			werr_set(err, 0, "the model's options are wrong (said above)");
			err->errnum = 2;
			goto out;
		}
		if (co.config_bad) {
			*err = co.config_err;
			goto out;
		}
		if (co.message || co.resume_set || co.export_script || co.conversations ||
		    co.profile || co.s.sandbox_profile || co.oneshot || co.verbose) {
			struct sbuf names = { 0 };

			for (const struct wchat_arg *w = wchat_args; w->name; w++)
				if ((w->modes & WCA_SERVE) && (w->modes & WCA_CHAT))
					sbuf_addf(&names, "%s--%s", names.len ? ", " : "", w->name);
			usage_err(err, "serve takes the model's options of warden chat (%s), not its "
			          "others", names.d);
			sbuf_free(&names);
			goto out;
		}
		o->chat = serve_chat_cfg_new(&co, err);
		if (!o->chat) {
			err->errnum = 2;
			goto out;
		}
	}
	if (o->listen && blisten_preload(o->tls, &o->ls, err) < 0)
		goto out;
	r = 0;
out:
	chat_opts_free(&co);
	free(cargv);
	return r;
}

int serve_main(struct serve_opts *o)
{
	if (o->help) {
		fputs("usage: warden-broker serve --stdio | --listen [--tls] [--session-idle S] "
		      "[--model M ...]\nstarted by `warden serve`; see docs/serve.md.\n", stdout);
		return 0;
	}
	if (o->listen)
		return blisten_main(o->ls, o);
	return serve_stdio_main(o);
}

void serve_opts_free(struct serve_opts *o)
{
	blisten_free(o->ls);
	serve_chat_cfg_free(o->chat);
	memset(o, 0, sizeof(*o));
}
