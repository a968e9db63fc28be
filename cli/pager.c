/* A pager for long output (cli/cmd.h), as journalctl and git use one:
 * only when stdout is a terminal; $PAGER (run by /bin/sh, as those tools
 * do), else `less -FRX` when less is on PATH (-F: one screen is printed
 * and less quits; -R: colours pass; -X: the screen is not cleared).
 * PAGER="" or "cat" means none.
 *
 * Under sudo (root, with SUDO_UID set) the pager is less in its secure
 * mode (LESSSECURE=1: no shell escapes, no other files), and $PAGER is
 * used only when it is less: the person is not root, only this command
 * is, and a pager's commands must not hand them a root shell (systemd's
 * pager makes the same rule). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "warden/util.h"

/* Is an executable called name on $PATH? */
static bool on_path(const char *name)
{
	const char *path = getenv("PATH");

	for (const char *p = path && *path ? path : "/usr/bin:/bin"; p;) {
		const char *e = strchr(p, ':');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		_cleanup_free_ char *f = xasprintf("%.*s/%s", (int)l, p, name);

		if (l && access(f, X_OK) == 0)
			return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}

static bool is_less(const char *cmd)
{
	const char *b = strrchr(cmd, '/');

	b = b ? b + 1 : cmd;
	return !strcmp(b, "less") || !strncmp(b, "less ", 5);
}

pid_t wpager_start(void)
{
	const char *pager = getenv("PAGER");
	bool secure = geteuid() == 0 && getenv("SUDO_UID");
	int p[2];
	pid_t pid;

	if (!isatty(STDOUT_FILENO))
		return 0;
	if (pager && (!*pager || !strcmp(pager, "cat")))
		return 0;
	if (pager && secure && !is_less(pager))
		pager = NULL;
	if (!pager && !on_path("less"))
		return 0;
	fflush(stdout);
	if (pipe2(p, O_CLOEXEC) < 0)
		return 0;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return 0;
	}
	if (pid == 0) {
		dup2(p[0], STDIN_FILENO);
		if (secure)
			setenv("LESSSECURE", "1", 1);
		if (pager)
			execl("/bin/sh", "sh", "-c", pager, (char *)NULL);
		else
			execlp("less", "less", "-FRX", (char *)NULL);
		fprintf(stderr, "warden: cannot start the pager %s: %s\n", pager ? pager : "less",
		        strerror(errno));
		_exit(127);
	}
	/* a pager quit early: the rest of the output is dropped, quietly */
	signal(SIGPIPE, SIG_IGN);
	dup2(p[1], STDOUT_FILENO);
	close(p[0]);
	close(p[1]);
	return pid;
}

void wpager_end(pid_t pid)
{
	if (pid <= 0)
		return;
	fflush(stdout);
	fclose(stdout);   /* the pager sees the end, shows it and waits */
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}
