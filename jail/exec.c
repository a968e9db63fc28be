/* The last steps of a jail's child, shared by the entry order (jail/enter.c)
 * and the jail's init (jail/init.c): report a failure and end, and step 13,
 * execve.  Kept apart so that enter.c and init.c each call down into this
 * file and never into each other's. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "warden/filter.h"

#include "jail_impl.h"

/* write(), not send(): fd is the sync socket or init's exec report pipe.
 * One frame is one SEQPACKET message, or one atomic pipe write. */
void jail_child_fail(int fd, uint8_t type, const struct werr *e)
{
	struct sync_frame f = { .type = type };

	f.err = *e;
	f.err.msg[sizeof(f.err.msg) - 1] = '\0';
	(void)!write(fd, &f, sizeof(f));
	_exit(type == SYNC_EXEC_FAILED ? f.err.exit_code : 125);
}

/* execve marked as warden's own (WFILTER_EXEC_MARK in an argument the
 * kernel ignores): a learning filter lets it through without a
 * notification, since it runs before the program does, from init's
 * non-dumpable memory (include/warden/filter.h).  Any other filter
 * ignores the mark. */
static void own_execve(const char *path, char *const argv[], char *const envp[])
{
	syscall(SYS_execve, path, argv, envp, WFILTER_EXEC_MARK);
}

/* Step 13: execve with a PATH search done against the jail's own PATH (from
 * envp, not warden's environment).  Reports 127 when nothing was found, 126
 * when something was found but could not be executed. */
void jail_exec(const struct jail_spec *spec, int sync)
{
	const char *prog = spec->argv[0];
	const char *path = "/usr/local/bin:/usr/bin:/bin", *searched = path;
	struct werr e = { 0 };
	int saw_eacces = 0, last = ENOENT;
	char buf[PATH_MAX];

	if (strchr(prog, '/')) {
		own_execve(prog, spec->argv, spec->envp);
		last = errno;
	} else {
		for (char *const *ep = spec->envp; *ep; ep++)
			if (!strncmp(*ep, "PATH=", 5))
				path = *ep + 5;
		searched = path;	/* the loop below walks path to its end */
		while (*path) {
			const char *colon = strchrnul(path, ':');
			/* An empty entry means the current directory, as in execvp. */
			int n = colon == path
			        ? snprintf(buf, sizeof(buf), "./%s", prog)
			        : snprintf(buf, sizeof(buf), "%.*s/%s", (int)(colon - path), path, prog);
			if (n > 0 && n < (int)sizeof(buf)) {
				own_execve(buf, spec->argv, spec->envp);
				if (errno == EACCES)
					saw_eacces = 1;
				else if (errno != ENOENT && errno != ENOTDIR)
					last = errno;
			}
			path = *colon ? colon + 1 : colon;
		}
		if (saw_eacces)
			last = EACCES;
	}
	if (last == ENOENT && strchr(prog, '/')) {
		werr_set(&e, 0, "%s: not found in the jail (tried %s%s); is it under a path the "
		         "policy binds?", prog, prog,
		         prog[0] == '/' ? "" : " from the workspace");
		e.exit_code = 127;
	} else if (last == ENOENT) {
		werr_set(&e, 0, "%s: not found in the jail (searched PATH=%s); is it installed "
		         "under a path the policy binds, and is that path on PATH?",
		         prog, searched);
		e.exit_code = 127;
	} else {
		werr_set(&e, last, "%s: cannot execute", prog);
		e.exit_code = 126;
	}
	jail_child_fail(sync, SYNC_EXEC_FAILED, &e);
}
