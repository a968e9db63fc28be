/* Starting the broker (warden-broker) for warden serve and warden chat
 * (design.md "Two executables", include/warden/broker_start.h).
 *
 * Before the fork, with the caller's privileges:
 *   1. open the broker binary (O_PATH): as root the broker's own user may not
 *      reach it by path (a checkout in /root/src), so it is started from
 *      this fd, never by path after the drop;
 *   2. open the caller's config and data directories of warden (their XDG
 *      directories), creating them when missing -- as root, with the
 *      broker's group, setgid, so that its user can use them;
 *   3. open the files the command line names for the broker to read
 *      (--model replay:FILE, --resume FILE);
 *   4. build its environment from an allowlist: nothing that leads to the
 *      caller's other services (SSH_AUTH_SOCK, DBUS_SESSION_BUS_ADDRESS,
 *      XDG_RUNTIME_DIR, DISPLAY, ...) reaches it.
 * In the child: put the fds in place (3 socket, 4 config, 5 data, 6 and 7
 * the files, 8 to 11 serve --listen's), as root switch to the broker's user for good, execveat the fd. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sv.h"
#include "warden/broker_start.h"
#include "warden/util.h"

extern char **environ;

static int broker_identity(const char *user, uid_t *uid, gid_t *gid, struct werr *err)
{
	struct passwd *pw = getpwnam(user);

	if (!pw)
		return werr_set(err, 0, "the broker's user \"%s\" does not exist: as root, warden runs "
		                "its broker as that user; create it with `useradd --system "
		                "--no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin %s` "
		                "(or name another with --broker-user USER)", user, user);
	if (pw->pw_uid == 0 || pw->pw_gid == 0)
		return werr_set(err, 0, "--broker-user %s: the broker never runs as root or with "
		                "group root", user);
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	return 0;
}

static bool path_below(const char *path, const char *base)
{
	size_t n = strlen(base);
	return !strncmp(path, base, n) && (path[n] == '\0' || path[n] == '/');
}

/* Walk path (absolute) from the trusted base, creating what is missing
 * (0700), following no link: jailed code whose workspace holds these
 * directories could have made any component below the caller's home a
 * symlink to somewhere else of the person's (~/.ssh), which the broker's
 * Landlock rules would then open to it.  The base is the caller's home
 * (realpath: the system's own layout above it is trusted) when path lies
 * below it, else /.  Returns an O_RDONLY|O_DIRECTORY fd; *created tells
 * whether the last component was made here. */
static int walk_user_dir(const char *path, bool *created, struct werr *err)
{
	char home[PATH_MAX], buf[PATH_MAX], sofar[PATH_MAX];
	const char *rest = path;
	char *comp, *next;
	int dir;

	*created = false;
	if (realpath(sv_caller_home(), home) && path_below(path, sv_caller_home()) &&
	    strcmp(home, "/")) {
		rest = path + strlen(sv_caller_home());
		snprintf(sofar, sizeof(sofar), "%s", sv_caller_home());
		dir = open(home, O_PATH | O_DIRECTORY | O_CLOEXEC);
	} else {
		sofar[0] = '\0';
		dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	if (dir < 0)
		return werr_set(err, errno, "opening %s", sofar[0] ? sofar : "/");
	if (snprintf(buf, sizeof(buf), "%s", rest) >= (int)sizeof(buf)) {
		close(dir);
		return werr_set(err, ENAMETOOLONG, "%s", path);
	}
	for (comp = buf; comp; comp = next) {
		struct stat st;
		int fd;

		while (*comp == '/')
			comp++;
		next = strchr(comp, '/');
		if (next)
			*next++ = '\0';
		if (!*comp)
			continue;
		if (strlen(sofar) + strlen(comp) + 2 > sizeof(sofar)) {
			close(dir);
			return werr_set(err, ENAMETOOLONG, "%s", path);
		}
		strcat(sofar, "/");
		strcat(sofar, comp);
		fd = openat(dir, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT) {
			if (mkdirat(dir, comp, 0700) < 0 && errno != EEXIST) {
				int e = errno;
				close(dir);
				return werr_set(err, e, "creating %s", sofar);
			}
			*created = !next || !*next;
			fd = openat(dir, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		}
		close(dir);
		if (fd < 0)
			return werr_set(err, errno, "opening %s", sofar);
		if (fstat(fd, &st) < 0) {
			close(fd);
			return werr_set(err, errno, "opening %s", sofar);
		}
		if (S_ISLNK(st.st_mode)) {
			close(fd);
			return werr_set(err, 0, "%s is a symlink; warden does not follow one on the way "
			                "to its own directories (jailed code whose workspace holds them "
			                "could have made it): remove it, or set XDG_CONFIG_HOME and "
			                "XDG_DATA_HOME to paths without one", sofar);
		}
		if (!S_ISDIR(st.st_mode)) {
			close(fd);
			return werr_set(err, ENOTDIR, "%s", sofar);
		}
		dir = fd;
	}
	{
		int d = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		int e = errno;
		close(dir);
		if (d < 0)
			return werr_set(err, e, "opening %s", path);
		return d;
	}
}

/* One of the caller's warden directories, opened for the broker; created
 * when missing, reached without following a link (walk_user_dir), and
 * owned by the caller.  As root a directory made here gets the broker's
 * group, setgid (what the broker creates inside keeps the group) and mode.
 * An existing directory is never changed: the broker reports one it cannot
 * use, naming it and the fix. */
static int open_user_dir(const char *path, bool drop, gid_t gid, mode_t mode, struct werr *err)
{
	bool created;
	struct stat st;
	int fd = walk_user_dir(path, &created, err);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return werr_set(err, e, "opening %s", path);
	}
	if (st.st_uid != getuid()) {
		struct passwd *pw = getpwuid(st.st_uid);
		close(fd);
		return werr_set(err, 0, "%s is owned by %s, not by you: warden uses only directories "
		                "of its caller; remove it or set XDG_CONFIG_HOME and XDG_DATA_HOME",
		                path, pw ? pw->pw_name : "another user");
	}
	if (created && drop) {
		/* Privileged step: give the broker's group a directory root has just
		 * made, checked to be a real directory owned by root (above). */
		if (fchown(fd, 0, gid) < 0 || fchmod(fd, mode) < 0) {
			int e = errno;
			close(fd);
			return werr_set(err, e, "giving the broker's group %s", path);
		}
	}
	return fd;
}

/* What the broker reads from the environment, and the libraries it uses
 * (locale, terminal, libcurl, OpenSSL).  Anything else stays behind.
 * TERM_PROGRAM and KITTY_WINDOW_ID only name the terminal (the chat draws
 * images inline where it can: broker/chat/chat_run.c); they lead nowhere. */
static bool env_kept(const char *kv)
{
	static const char *const keep[] = {
		"HOME", "LANG", "LANGUAGE", "TERM", "TERMINFO", "TERMINFO_DIRS", "COLUMNS", "LINES",
		"TERM_PROGRAM", "KITTY_WINDOW_ID",
		"TZ", "NO_COLOR", "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
		"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
		"no_proxy", "NO_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR", "CURL_CA_BUNDLE",
		"WARDEN_TIMING", "ASAN_OPTIONS", "UBSAN_OPTIONS",
	};
	const char *eq = strchr(kv, '=');
	size_t n = eq ? (size_t)(eq - kv) : strlen(kv);

	if (!eq)
		return false;
	if (!strncmp(kv, "LC_", 3))
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(keep); i++)
		if (strlen(keep[i]) == n && !strncmp(kv, keep[i], n))
			return true;
	return false;
}

/* The recording `make demo` replays, from the broker binary's path:
 * PREFIX/share/doc/warden/examples/ when it is PREFIX/libexec/warden/
 * warden-broker, the checkout's examples/ when it runs from a build
 * directory next to it; NULL when neither is there.  Looked up as the
 * caller, who can reach it (chat's hint names it for the caller to use). */
static char *demo_recording(const char *broker)
{
	static const char libexec[] = "/libexec/warden/";
	const char *slash = strrchr(broker, '/');
	const char *lx = strstr(broker, libexec);
	_cleanup_free_ char *installed = NULL, *tree = NULL;
	char real[PATH_MAX];

	if (!slash)
		return NULL;
	if (lx && lx + strlen(libexec) == slash + 1)
		installed = xasprintf("%.*s/share/doc/warden/examples/demo.json",
		                      (int)(lx - broker), broker);
	tree = xasprintf("%.*s/../examples/demo.json", (int)(slash - broker), broker);
	if (installed && realpath(installed, real))
		return xstrdup(real);
	if (realpath(tree, real))
		return xstrdup(real);
	return NULL;
}

static char **broker_env(const char *config, const char *data, const char *const *files,
                         const char *demo)
{
	size_t n = 0, cap = 8;
	char **env;

	for (char **e = environ; *e; e++)
		cap++;
	env = xcalloc(cap, sizeof(char *));
	for (char **e = environ; *e; e++)
		if (env_kept(*e))
			env[n++] = xstrdup(*e);
	env[n++] = xasprintf("%s=%s", WBROKER_ENV_CONFIG, config);
	env[n++] = xasprintf("%s=%s", WBROKER_ENV_DATA, data);
	for (int i = 0; i < WBROKER_FILES_MAX; i++)
		if (files[i])
			env[n++] = xasprintf("%s%d=%s", WBROKER_ENV_FILE, WBROKER_FILE_FD + i, files[i]);
	if (demo)
		env[n++] = xasprintf("%s=%s", WBROKER_ENV_DEMO, demo);
	return env;
}

/* A file the command line names for the broker to read; -1 when it cannot
 * be opened (the broker then tries by itself and says why it failed). */
static int open_named_file(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	return fd;
}

pid_t sv_start_broker(const struct sv_broker_start *bs, struct werr *err)
{
	_cleanup_free_ char *path = sv_helper_path("WARDEN_BROKER", "warden-broker"), *config = NULL, *data = NULL, *demo = NULL;
	const char *files[WBROKER_FILES_MAX] = { 0 };
	/* the fds the broker gets, in order from fd 3 */
	int fds[3 + WBROKER_FILES_MAX + WBROKER_EXTRA_FDS], exe = -1, n_fds = ARRAY_SIZE(fds);
	const int own = 3 + WBROKER_FILES_MAX;   /* fds[own..]: the caller's (serve --listen) */
	char **env = NULL;
	uid_t uid = 0;
	gid_t gid = 0;
	bool drop = geteuid() == 0;
	pid_t pid = -1;

	for (int i = 0; i < n_fds; i++)
		fds[i] = -1;
	if (drop && broker_identity(bs->user, &uid, &gid, err) < 0)
		return -1;
	exe = open(path, O_PATH | O_CLOEXEC);
	if (exe < 0) {
		werr_set(err, errno, "cannot find the broker %s: reinstall warden or set WARDEN_BROKER",
		         path);
		goto out;
	}
	config = sv_xdg_dir("XDG_CONFIG_HOME", ".config", err);
	data = config ? sv_xdg_dir("XDG_DATA_HOME", ".local/share", err) : NULL;
	if (!data)
		goto out;
	fds[0] = bs->sock;
	if ((fds[1] = open_user_dir(config, drop, gid, 02750, err)) < 0 ||
	    (fds[2] = open_user_dir(data, drop, gid, 02770, err)) < 0) {
		werr_wrap(err, "the broker's directories");
		goto out;
	}
	for (int i = 0; i < WBROKER_FILES_MAX; i++)
		if (bs->files[i] && (fds[3 + i] = open_named_file(bs->files[i])) >= 0)
			files[i] = bs->files[i];
	for (int i = 0; i < WBROKER_EXTRA_FDS; i++)
		fds[own + i] = bs->listen_fds ? bs->listen_fds[i] : -1;
	demo = demo_recording(path);
	env = broker_env(config, data, files, demo);

	pid = fork();
	if (pid < 0) {
		werr_set(err, errno, "starting the broker");
		goto out;
	}
	if (pid == 0) {
		int tmp[ARRAY_SIZE(fds)];
		sigset_t none;

		/* above every target first, so that no dup2 below clobbers a source.
		 * The binary's fd stays open across execveat (no CLOEXEC): a broker
		 * that is a script (WARDEN_BROKER, the tests' hostile broker) is run
		 * by its interpreter through /dev/fd/N, which a close-on-exec fd
		 * would have closed.  warden-broker closes it first thing (every fd
		 * above WBROKER_LAST_FD); it names only the broker's own binary. */
		exe = fcntl(exe, F_DUPFD, 16);
		for (int i = 0; i < n_fds; i++)
			tmp[i] = fds[i] >= 0 ? fcntl(fds[i], F_DUPFD_CLOEXEC, 16) : -1;
		for (int i = 0; i < n_fds; i++) {
			if (tmp[i] < 0)
				close(WBROKER_SUP_FD + i);
			else if (dup2(tmp[i], WBROKER_SUP_FD + i) < 0)
				_exit(125);
		}
		if (exe < 0)
			_exit(125);
		/* Privileged step: give up root for good before the broker runs.
		 * setgroups, then gid, then uid; read back, since a half-dropped
		 * broker must never run. */
		if (drop) {
			if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
			    setresuid(uid, uid, uid) < 0 || getuid() != uid || geteuid() != uid ||
			    getegid() != gid || setuid(0) == 0) {
				fprintf(stderr, "warden: could not switch the broker to user %s\n", bs->user);
				_exit(125);
			}
		}
		/* after the uid change, which clears it */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(125);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		syscall(SYS_execveat, exe, "", bs->argv, env, AT_EMPTY_PATH);
		fprintf(stderr, "warden: cannot run the broker %s: %s; reinstall warden or set "
		        "WARDEN_BROKER\n", path, strerror(errno));
		_exit(125);
	}
out:
	for (int i = 1; i < own; i++)
		closep(&fds[i]);
	closep(&exe);
	sv_free_env(env);
	return pid;
}
