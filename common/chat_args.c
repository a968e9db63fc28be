/* The broker's chat options, one table (include/warden/chat_args.h). */
#include <stdbool.h>
#include <string.h>

#include "warden/chat_args.h"
#include "warden/util.h"

#define C WCA_CHAT
#define S WCA_SERVE

const struct wchat_arg wchat_args[] = {
	{ "model", required_argument, WCA_MODEL, C | S },
	{ "api-base", required_argument, WCA_API_BASE, C | S },
	{ "api-key", required_argument, WCA_API_KEY, C },   /* serve: from the environment only */
	{ "auto-run", no_argument, WCA_AUTO_RUN, C | S },
	{ "profile", required_argument, WCA_PROFILE, C },
	{ "sandbox-profile", required_argument, WCA_SANDBOX, C },
	{ "no-tools", no_argument, WCA_NO_TOOLS, C | S },
	{ "max-output", required_argument, WCA_MAX_OUTPUT, C | S },
	{ "context-window", required_argument, WCA_CONTEXT, C | S },
	{ "max-tokens", required_argument, WCA_MAX_TOKENS, C | S },
	{ "temperature", required_argument, WCA_TEMP, C | S },
	{ "resume", optional_argument, WCA_RESUME, C },
	{ "export-script", required_argument, WCA_EXPORT, C },
	{ "jupyter", optional_argument, WCA_JUPYTER, C },
	{ "system-message", required_argument, WCA_SYSMSG, C | S },
	{ "system-message-append", required_argument, WCA_SYSMSG_APPEND, C | S },
	{ "conversations", no_argument, WCA_CONVERSATIONS, C },
	{ "verbose", no_argument, WCA_VERBOSE, C },
	{ "connect-timeout", required_argument, WCA_CONNECT, C | S },
	{ "idle-timeout", required_argument, WCA_IDLE, C | S },
	{ "oneshot", no_argument, WCA_ONESHOT, C },
	{ "no-learn", no_argument, WCA_NO_LEARN, C },
	{ "replay-delay", required_argument, WCA_REPLAY_DELAY, C },
	{ "session-idle", required_argument, WCA_SESSION_IDLE, S },   /* serve's own */
	{ "help", no_argument, WCA_HELP, C },
	{ NULL, 0, 0, 0 },
};

#define N_ARGS (ARRAY_SIZE(wchat_args) - 1)

const struct option *wchat_longopts(unsigned mode)
{
	static struct option tables[2][N_ARGS + 1];
	struct option *t = tables[mode == WCA_SERVE];
	size_t n = 0;

	if (t[0].name)
		return t;
	for (const struct wchat_arg *a = wchat_args; a->name; a++)
		if (a->modes & mode)
			t[n++] = (struct option){ a->name, a->has_arg, NULL, (int)a->id };
	return t;
}

/* The long option that "--" + a (klen characters) names as getopt_long
 * would: an exact name, else the only one it is a prefix of. */
static const struct wchat_arg *find_long(const char *a, size_t klen, unsigned mode)
{
	const struct wchat_arg *prefix = NULL;
	size_t n_prefix = 0;

	for (const struct wchat_arg *e = wchat_args; e->name; e++) {
		if (!(e->modes & mode) || strncmp(e->name, a, klen))
			continue;
		if (strlen(e->name) == klen)
			return e;
		prefix = e;
		n_prefix++;
	}
	return n_prefix == 1 ? prefix : NULL;
}

static const struct wchat_arg *find_short(char c, unsigned mode)
{
	for (const struct wchat_arg *e = wchat_args; e->name; e++)
		if ((e->modes & mode) && e->id < 128 && (char)e->id == c)
			return e;
	return NULL;
}

int wchat_arg_span(int argc, char *const argv[], int i, unsigned mode,
                   const struct wchat_arg **which)
{
	const char *a = argv[i];
	const struct wchat_arg *e = NULL;

	if (a[0] != '-' || !a[1] || !strcmp(a, "--"))
		return 0;
	if (a[1] == '-') {
		const char *eq = strchr(a + 2, '=');
		size_t klen = eq ? (size_t)(eq - a - 2) : strlen(a + 2);

		e = find_long(a + 2, klen, mode);
		if (!e)
			return 0;
		*which = e;
		return e->has_arg == required_argument && !eq && i + 1 < argc ? 2 : 1;
	}
	/* a cluster of short options: the first one that takes a value takes
	 * the rest of the word, or the next word */
	for (const char *p = a + 1; *p; p++) {
		e = find_short(*p, mode);
		if (!e)
			return 0;
		*which = e;
		if (e->has_arg == required_argument)
			return !p[1] && i + 1 < argc ? 2 : 1;
	}
	return 1;
}
