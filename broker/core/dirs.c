/* The broker's two directories and the files handed to it (broker.h).
 *
 * The supervisor opens the caller's config and data directories of warden
 * and hands them over as fds 4 and 5, with their paths in the environment
 * for messages (include/warden/broker_start.h).  As root the broker runs as
 * its own user, which may not reach those paths (/root is 0700): it then
 * works through /proc/self/fd/N, which reaches the directory from the fd
 * without walking the path.  Landlock's rules are made from the fds
 * themselves (broker/core/confine.c). */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker.h"
#include "warden/broker_start.h"
#include "warden/sanitize.h"
#include "warden/util.h"

static const char *broker_user(void)
{
	static char buf[64];
	struct passwd *pw = getpwuid(getuid());

	if (pw && strlen(pw->pw_name) < sizeof(buf))
		snprintf(buf, sizeof(buf), "%s", pw->pw_name);
	else
		snprintf(buf, sizeof(buf), "%u", (unsigned)getuid());
	return buf;
}

/* The path to work with: the directory's own when it leads to the fd's
 * directory, else /proc/self/fd/N. */
static int one_dir(int fd, const char *env, char **shown, char **path, struct werr *err)
{
	const char *p = getenv(env);
	struct stat fst, pst;

	if (fstat(fd, &fst) < 0 || !S_ISDIR(fst.st_mode))
		return werr_set(err, 0, "fd %d is not a directory: warden-broker is started by "
		                "`warden serve` or `warden chat`, not directly", fd);
	if (!p || p[0] != '/')
		return werr_set(err, 0, "$%s is not set: warden-broker is started by `warden serve` "
		                "or `warden chat`, not directly", env);
	*shown = xstrdup(p);
	if (stat(p, &pst) == 0 && pst.st_dev == fst.st_dev && pst.st_ino == fst.st_ino)
		*path = xstrdup(p);
	else
		*path = xasprintf("/proc/self/fd/%d", fd);
	return 0;
}

int bdirs_init(struct bdirs *d, struct werr *err)
{
	memset(d, 0, sizeof(*d));
	d->config_fd = WBROKER_CONFIG_FD;
	d->data_fd = WBROKER_DATA_FD;
	if (one_dir(d->config_fd, WBROKER_ENV_CONFIG, &d->config_shown, &d->config, err) < 0 ||
	    one_dir(d->data_fd, WBROKER_ENV_DATA, &d->data_shown, &d->data, err) < 0)
		goto fail;
	/* DAC still applies to the broker's user: say what to do about it */
	if (faccessat(d->data_fd, ".", W_OK | X_OK, 0) < 0) {
		werr_set(err, errno, "the broker (user %s) cannot write its data directory %s: "
		         "give it the directory with `chgrp %s %s && chmod 2770 %s`", broker_user(),
		         d->data_shown, broker_user(), d->data_shown, d->data_shown);
		goto fail;
	}
	if (faccessat(d->config_fd, ".", R_OK | X_OK, 0) < 0) {
		werr_set(err, errno, "the broker (user %s) cannot read its config directory %s: "
		         "`chgrp %s %s && chmod 2750 %s`", broker_user(), d->config_shown,
		         broker_user(), d->config_shown, d->config_shown);
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
	free(d->config_shown);
	free(d->data_shown);
	d->config = d->data = d->config_shown = d->data_shown = NULL;
}

/* text with every use of from (a path, ending there or at a '/') replaced
 * by to; text is used up */
static char *replace_prefix(char *text, const char *from, const char *to)
{
	size_t n = from ? strlen(from) : 0;
	struct sbuf b = { 0 };
	const char *p = text, *at;

	if (!n || !to || !strcmp(from, to))
		return text;
	while ((at = strstr(p, from))) {
		bool whole = !at[n] || at[n] == '/';

		sbuf_add(&b, p, (size_t)(at - p));
		sbuf_adds(&b, whole ? to : from);
		p = at + n;
	}
	sbuf_adds(&b, p);
	free(text);
	return sbuf_steal(&b);
}

char *bdirs_shown(const struct bdirs *d, const char *text)
{
	char *r = xstrdup(text ? text : "");

	if (!d)
		return r;
	r = replace_prefix(r, d->data, d->data_shown);
	return replace_prefix(r, d->config, d->config_shown);
}

char *bdirs_real(const struct bdirs *d, const char *path)
{
	size_t n;

	if (!path || !d)
		return xstrdup(path ? path : "");
	if (d->data_shown && strcmp(d->data, d->data_shown)) {
		n = strlen(d->data_shown);
		if (!strncmp(path, d->data_shown, n) && (!path[n] || path[n] == '/'))
			return xasprintf("%s%s", d->data, path + n);
	}
	if (d->config_shown && strcmp(d->config, d->config_shown)) {
		n = strlen(d->config_shown);
		if (!strncmp(path, d->config_shown, n) && (!path[n] || path[n] == '/'))
			return xasprintf("%s%s", d->config, path + n);
	}
	return xstrdup(path);
}

/* ---- files named on the command line ---- */

static struct { int fd; char *path; } handed[WBROKER_FILES_MAX];

void bfiles_init(void)
{
	for (int i = 0; i < WBROKER_FILES_MAX; i++) {
		int fd = WBROKER_FILE_FD + i;
		char name[32];
		const char *p;
		struct stat st;

		handed[i].fd = -1;
		snprintf(name, sizeof(name), "%s%d", WBROKER_ENV_FILE, fd);
		p = getenv(name);
		if (p && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
			handed[i].fd = fd;
			handed[i].path = xstrdup(p);
		} else {
			close(fd);   /* not ours: nothing inherited outlives confinement */
		}
		unsetenv(name);
	}
}

int bfile_read(const char *path, size_t max, char **out, size_t *len, struct werr *err)
{
	for (int i = 0; i < WBROKER_FILES_MAX; i++) {
		if (!handed[i].path || strcmp(handed[i].path, path))
			continue;
		/* from the start: the fd is this path as the caller opened it */
		if (lseek(handed[i].fd, 0, SEEK_SET) < 0)
			return werr_set(err, errno, "%s", path);
		return read_fd_buf(handed[i].fd, path, max, out, len, err);
	}
	return read_file_buf(path, max, out, len, err);
}
