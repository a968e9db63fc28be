/* Paths out of the jail: `..` from the workspace, absolute paths, /proc
 * tricks and symlinks/hardlinks made inside the workspace must not reach
 * host files.  argv[1..] are host paths the harness planted or knows
 * (a canary outside the workspace, the host user's ~/.ssh/id_rsa, a
 * symlink it put into the workspace); /etc/shadow and /root are always
 * tried.  ESCAPED if any of them can be written or read (or /root
 * listed with content).  The harness also judges from the host: it watches
 * the canary with inotify (no open, no read, no write may reach it) and
 * checks its content. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include "probe.h"

static void try_read(const char *path, const char *how)
{
	char buf[64];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		note("%s %s: %s", how, path, strerrorname_np(errno));
		return;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n > 0)
		ESCAPED("read %zd bytes of %s (%s)", n, path, how);
	note("%s %s: opened, %s", how, path, n == 0 ? "empty" : strerrorname_np(errno));
}

/* Writing is judged by the harness too: the canary must stay unchanged. */
static void try_write(const char *path, const char *how)
{
	static const char mark[] = "ESCAPED: written by path_escape\n";
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);

	if (fd < 0) {
		note("write %s %s: %s", how, path, strerrorname_np(errno));
		return;
	}
	if (write(fd, mark, sizeof(mark) - 1) > 0) {
		close(fd);
		ESCAPED("wrote to %s (%s)", path, how);
	}
	note("write %s %s: opened, write %s", how, path, strerrorname_np(errno));
	close(fd);
}

static void try_all(const char *target, int i)
{
	char p[PATH_MAX + 64], name[64];

	try_write(target, "open");
	try_read(target, "open");
	if (target[0] == '/') {
		snprintf(p, sizeof(p), "../../../../../../../..%s", target);
		try_read(p, "dotdot");
		snprintf(p, sizeof(p), "/proc/self/root%s", target);
		try_read(p, "proc-root");
		snprintf(p, sizeof(p), "/proc/self/cwd/../../../../../..%s", target);
		try_read(p, "proc-cwd");
	}
	snprintf(name, sizeof(name), "probe-symlink-%d", i);
	unlink(name);
	if (symlink(target, name) == 0) {
		try_read(name, "symlink");
		unlink(name);
	}
	snprintf(name, sizeof(name), "probe-hardlink-%d", i);
	unlink(name);
	/* following a symlink argument: the link must resolve inside the jail */
	if (linkat(AT_FDCWD, target, AT_FDCWD, name, AT_SYMLINK_FOLLOW) == 0) {
		unlink(name);
		ESCAPED("hardlinked %s into the workspace", target);
	}
}

int main(int argc, char **argv)
{
	static const char *const fixed[] = {
		"/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/root/.ssh/id_rsa",
		"/root/.bash_history", "/proc/1/root/etc/shadow",
	};
	struct dirent *de;
	int i, n = 0;
	DIR *d;

	for (i = 1; i < argc; i++)
		try_all(argv[i], i);
	for (i = 0; i < (int)(sizeof(fixed) / sizeof(fixed[0])); i++)
		try_all(fixed[i], 100 + i);

	/* /root: absent, or an empty tmpfs; host content (dotfiles) = escape */
	d = opendir("/root");
	if (d) {
		while ((de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				n++;
		closedir(d);
		if (n)
			ESCAPED("/root lists %d entries", n);
		note("/root: empty");
	} else {
		note("/root: %s", strerrorname_np(errno));
	}
	BLOCKED("%s", probe_notes);
}
