/* Notes said once per user and machine (sv.h, sv_say_once).
 *
 * Without a writable cgroup every `warden run` used to print the same
 * warning about weaker limits: noise that hid the run's own lines.  What a
 * person needs is to learn it once, with where to fix it (`warden
 * doctor`), and to hear it again when it changes.  So the note's text is
 * kept in a stamp under the caller's state directory, one per machine (a
 * home shared between machines has one for each, by host name): a note
 * equal to its stamp is not said again; a different one (a cgroup became
 * writable, or stopped being) is said and becomes the stamp.  Once per
 * terminal session instead would need a place tied to the terminal and
 * would repeat in every new one.  Nothing is lost for programs: `--json`
 * and the audit's run_end name every limit's mechanism on every run, and
 * `warden doctor` always prints the whole picture. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "sv.h"
#include "warden/util.h"

bool sv_say_once(const char *what, const char *note)
{
	struct werr err = { 0 };
	_cleanup_free_ char *dir = sv_xdg_dir("XDG_STATE_HOME", ".local/state", &err);
	_cleanup_free_ char *path = NULL, *tmp = NULL, *old = NULL;
	struct utsname u;
	size_t len = 0;
	int fd;

	if (!dir || uname(&u) < 0 || strchr(u.nodename, '/'))
		return true;   /* nowhere to remember it: say it */
	path = xasprintf("%s/said-%s.%s", dir, what, u.nodename);
	if (read_file_buf(path, 4096, &old, &len, &err) == 0 && len == strlen(note) &&
	    !memcmp(old, note, len))
		return false;
	/* said now; remembered when that is possible (else said next time too) */
	tmp = xasprintf("%s.%d", path, (int)getpid());
	if (mkdir_p(dir, 0700, &err) < 0)
		return true;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return true;
	if (write_all(fd, note, strlen(note)) < 0 || close(fd) < 0 || rename(tmp, path) < 0)
		unlink(tmp);
	return true;
}
