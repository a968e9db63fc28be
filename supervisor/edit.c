/* EDIT: the user's editor on a block's code, for warden chat (dispatch.c). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "session.h"
#include "warden/util.h"

/* The user's own editor, as the user, on a private copy of the code.  The
 * text comes from the broker (so from the model): it is only ever data in a
 * file, never part of a command line.  Documented in SECURITY.md: an
 * editor that executes modelines would act on that data. */
int sv_edit(struct sv *sv, const char *text, char **out, struct werr *err)
{
	char dir[] = "/tmp/warden-edit-XXXXXX", path[64];
	size_t len = 0;
	int fd, status = 0;
	pid_t pid;

	*out = NULL;
	if (!mkdtemp(dir))
		return werr_set(err, errno, "creating a directory for the editor");
	snprintf(path, sizeof(path), "%s/block.txt", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || write_all(fd, text, strlen(text)) < 0) {
		werr_set(err, errno, "writing %s", path);
		goto out;
	}
	close(fd);
	fd = -1;
	pid = fork();
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		execl("/bin/sh", "sh", "-c", "exec ${VISUAL:-${EDITOR:-vi}} \"$1\"", "sh", path,
		      (char *)NULL);
		_exit(127);
	}
	if (pid < 0) {
		werr_set(err, errno, "starting the editor");
		goto out;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		werr_set(err, 0, "the editor ($VISUAL/$EDITOR) failed; the code was not changed");
		goto out;
	}
	if (read_file_buf(path, WPROTO_CODE_MAX, out, &len, err) < 0)
		goto out;
	if (len > WPROTO_CODE_MAX || memchr(*out, '\0', len)) {
		free(*out);
		*out = NULL;
		werr_set(err, 0, "the edited code is too large or holds a NUL byte");
	}
out:
	if (fd >= 0)
		close(fd);
	unlink(path);
	rmdir(dir);
	(void)sv;
	return *out ? 0 : -1;
}

