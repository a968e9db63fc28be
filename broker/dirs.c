/* The broker's two directories (broker.h).  Only the environment decides:
 * when warden runs as root and starts the broker as an unprivileged user,
 * the supervisor sets HOME and the XDG variables for it.  The audit log
 * lives under $XDG_STATE_HOME, which the broker is never given. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "broker.h"
#include "warden/util.h"

/* $VAR/warden when VAR is an absolute path (the XDG rule: relative values
 * are ignored), else $HOME/fallback/warden. */
static int dir_from_env(const char *var, const char *fallback, char **out, struct werr *err)
{
	const char *x = getenv(var), *home = getenv("HOME");

	*out = NULL;
	if (x && x[0] == '/') {
		*out = xasprintf("%s/warden", x);
		return 0;
	}
	if (!home || home[0] != '/')
		return werr_set(err, 0, "neither $%s nor $HOME is an absolute path: set one of them",
		                var);
	*out = xasprintf("%s/%s/warden", home, fallback);
	return 0;
}

int bdirs_init(struct bdirs *d, struct werr *err)
{
	struct stat st;

	memset(d, 0, sizeof(*d));
	if (dir_from_env("XDG_CONFIG_HOME", ".config", &d->config, err) < 0 ||
	    dir_from_env("XDG_DATA_HOME", ".local/share", &d->data, err) < 0)
		goto fail;
	if (mkdir_p(d->data, 0700, err) < 0) {
		werr_wrap(err, "creating the broker's data directory");
		goto fail;
	}
	if (stat(d->data, &st) < 0) {
		werr_set(err, errno, "%s", d->data);
		goto fail;
	}
	if (!S_ISDIR(st.st_mode)) {
		werr_set(err, 0, "%s is not a directory", d->data);
		goto fail;
	}
	return 0;
fail:
	bdirs_free(d);
	return -1;
}

void bdirs_free(struct bdirs *d)
{
	if (!d)
		return;
	free(d->config);
	free(d->data);
	d->config = d->data = NULL;
}
