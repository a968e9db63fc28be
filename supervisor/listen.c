/* warden serve --listen: what the supervisor does for the listener
 * (docs/serve.md "Listening"), before the broker starts.  Everything here
 * comes from the trusted command line and the caller's own files; nothing
 * a client sends is read by this process: the broker accepts, speaks
 * HTTP, WebSocket and TLS, and checks the token (SECURITY.md G210).
 *
 *   1. the listening socket: TCP on ADDR (loopback when no host is given),
 *      a Unix socket (ADDR with a '/', made 0600), or the one systemd
 *      passed (--listen systemd: LISTEN_FDS, LISTEN_PID);
 *   2. a TCP address that is not loopback is refused without --tls-cert
 *      and --tls-key (SECURITY.md G214): the token would cross the network
 *      in clear, to anyone who can reach the port;
 *   3. the token: read from --token-file (a 0600 file of the caller's), or
 *      256 random bits written 0600 to $XDG_RUNTIME_DIR/warden/token; the
 *      broker gets the token itself through a pipe, never the file
 *      (SECURITY.md G212);
 *   4. the TLS files, opened here: as root the broker's own user may not
 *      read them.
 * The fds go to the broker as 8 to 11 (include/warden/broker_start.h); the
 * supervisor closes its copies once the broker has them: it holds no
 * listener while it serves. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "sv.h"
#include "warden/broker_start.h"
#include "warden/log.h"
#include "warden/supervisor.h"
#include "warden/token.h"
#include "warden/util.h"

#define SD_LISTEN_FDS_START 3

static bool loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	}
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		if (IN6_IS_ADDR_LOOPBACK(a))
			return true;
		return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
	}
	return sa->sa_family == AF_UNIX;
}

static void describe(const struct sockaddr *sa, socklen_t len, char *buf, size_t n)
{
	char host[INET6_ADDRSTRLEN] = "?", port[16] = "?";

	if (sa->sa_family == AF_UNIX) {
		const struct sockaddr_un *un = (const struct sockaddr_un *)sa;
		snprintf(buf, n, "%.*s", (int)(len > offsetof(struct sockaddr_un, sun_path)
		                               ? len - offsetof(struct sockaddr_un, sun_path) : 0),
		         un->sun_path);
		return;
	}
	getnameinfo(sa, len, host, sizeof(host), port, sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV);
	snprintf(buf, n, sa->sa_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, port);
}

/* The address's listener must be loopback, a Unix socket, or have TLS. */
static int tls_rule(const struct sockaddr *sa, const char *spelled, bool tls, struct werr *err)
{
	if (tls || loopback(sa))
		return 0;
	return werr_set(err, 0, "--listen %s: not a loopback address, and without TLS the token "
	                "and everything after it would cross the network in clear, to anyone "
	                "who can reach the port; give --tls-cert FILE and --tls-key FILE, or "
	                "listen on 127.0.0.1:PORT or a Unix socket path", spelled);
}

/* HOST:PORT, [V6]:PORT, or PORT alone (loopback). */
static int tcp_listener(const char *spec, bool tls, struct sv_listen *l, struct werr *err)
{
	char host[256], *port;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
	                          .ai_flags = AI_PASSIVE | AI_NUMERICSERV }, *ai = NULL;
	const char *colon = strrchr(spec, ':');
	int fd = -1, one = 1, r;

	if (!colon && strspn(spec, "0123456789") == strlen(spec) && *spec) {
		snprintf(host, sizeof(host), "127.0.0.1:%s", spec);
	} else if (snprintf(host, sizeof(host), "%s", spec) >= (int)sizeof(host)) {
		return werr_set(err, 0, "--listen %s: too long", spec);
	}
	port = strrchr(host, ':');
	if (!port || !port[1] || strspn(port + 1, "0123456789") != strlen(port + 1))
		return werr_set(err, 0, "--listen %s: give HOST:PORT (127.0.0.1:8765, [::1]:8765), "
		                "a port alone (loopback), a Unix socket path, or systemd", spec);
	*port++ = '\0';
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	if (!host[0])
		snprintf(host, sizeof(host), "127.0.0.1");
	r = getaddrinfo(host, port, &hints, &ai);
	if (r)
		return werr_set(err, 0, "--listen %s: %s", spec, gai_strerror(r));
	if (tls_rule(ai->ai_addr, spec, tls, err) < 0)
		goto out;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		werr_set(err, errno, "--listen %s: socket", spec);
		goto out;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ai->ai_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, SOMAXCONN) < 0) {
		werr_set(err, errno, "--listen %s", spec);
		closep(&fd);
		goto out;
	}
	l->fds[0] = fd;
out:
	freeaddrinfo(ai);
	return fd >= 0 ? 0 : -1;
}

/* What the listener holds (its Unix socket's directory, the token, the TLS
 * key) must not lie in a workspace warden serves: every jail there could
 * read the secrets, and replace the socket with its own, which the next
 * client would tell its token.  Judged by the opened file's own path
 * (/proc/self/fd), so a symlink to it is no way around; roots are
 * canonical (load_roots). */
static int not_served(int fd, const char *opt, const char *path, char *const *roots,
                      size_t n_roots, const char *fix, struct werr *err)
{
	char proc[64], real[PATH_MAX];
	ssize_t k;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	k = readlink(proc, real, sizeof(real) - 1);
	if (k <= 0)
		return werr_set(err, errno, "%s %s: reading where it lies (%s)", opt, path, proc);
	real[k] = '\0';
	for (size_t i = 0; i < n_roots; i++) {
		size_t r = strlen(roots[i]);

		if (!strcmp(roots[i], "/") ||
		    (!strncmp(real, roots[i], r) && (real[r] == '/' || real[r] == '\0')))
			return werr_set(err, 0, "%s %s lies in %s, a workspace warden serves: %s", opt,
			                path, roots[i], fix);
	}
	return 0;
}

/* A path: a Unix socket only the caller can connect to (0600).  A stale
 * socket left by an earlier warden is replaced; anything else is not.
 * Its directory is held from here to the end, and the socket file is
 * removed from it only while it is the very inode made here: the
 * directory may lie in a workspace, where jailed code can swap it for a
 * symlink to another one holding a file of the same name (root's, as
 * root), which a removal by path would delete.  (A workspace is refused,
 * not_served; a directory others may write is the person's choice.) */
static int unix_listener(const char *path, char *const *roots, size_t n_roots,
                         struct sv_listen *l, struct werr *err)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	_cleanup_free_ char *dir = slash ? xasprintf("%.*s", (int)(slash - path + (slash == path)),
	                                             path) : xstrdup(".");
	_cleanup_close_ int dfd = -1;
	struct stat st;
	mode_t old;
	int fd;

	if (strlen(path) >= sizeof(un.sun_path))
		return werr_set(err, ENAMETOOLONG, "--listen %s: a Unix socket path has at most %zu "
		                "bytes", path, sizeof(un.sun_path) - 1);
	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return werr_set(err, EINVAL, "--listen %s: name the socket file, not a directory",
		                path);
	memcpy(un.sun_path, path, strlen(path));
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return werr_set(err, errno, "--listen %s: its directory %s", path, dir);
	if (not_served(dfd, "--listen", path, roots, n_roots, "jailed code there could replace "
	               "the socket with its own and take the next client's token; put it outside "
	               "every workspace (in $XDG_RUNTIME_DIR, say)", err) < 0)
		return -1;
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		int probe;

		if (!S_ISSOCK(st.st_mode) || st.st_uid != getuid())
			return werr_set(err, EEXIST, "--listen %s: it exists and is not a socket of "
			                "yours; remove it or pick another path", path);
		probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (probe >= 0 && connect(probe, (struct sockaddr *)&un, sizeof(un)) == 0) {
			close(probe);
			return werr_set(err, EADDRINUSE, "--listen %s: another server listens there",
			                path);
		}
		closep(&probe);
		unlinkat(dfd, base, 0);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return werr_set(err, errno, "--listen %s: socket", path);
	old = umask(0177);   /* the socket file 0600: the caller's alone */
	if (bind(fd, (struct sockaddr *)&un, sizeof(un)) < 0) {
		int e = errno;
		umask(old);
		close(fd);
		return werr_set(err, e, "--listen %s", path);
	}
	umask(old);
	if (listen(fd, SOMAXCONN) < 0) {
		int e = errno;
		close(fd);
		return werr_set(err, e, "--listen %s", path);
	}
	l->fds[0] = fd;
	l->unix_path = xstrdup(path);
	/* what bind made, seen from the held directory (nothing, if the
	 * path was swapped in between: then nothing is removed) */
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(st.st_mode)) {
		l->unix_dir = steal_fd(&dfd);
		l->unix_name = xstrdup(base);
		l->unix_dev = st.st_dev;
		l->unix_ino = st.st_ino;
	}
	return 0;
}

/* --listen systemd: the one stream socket systemd's socket activation
 * passed (sd_listen_fds(3)'s protocol: LISTEN_PID is us, LISTEN_FDS
 * counts the fds from 3). */
static int systemd_listener(bool tls, struct sv_listen *l, struct werr *err)
{
	const char *pid = getenv("LISTEN_PID"), *n = getenv("LISTEN_FDS");
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int type = 0, acc = 0, fd;
	socklen_t ol = sizeof(int);
	struct stat st;
	char where[128];

	if (!pid || !n || strtol(pid, NULL, 10) != (long)getpid())
		return werr_set(err, 0, "--listen systemd: no socket from systemd (LISTEN_PID and "
		                "LISTEN_FDS are not set for this process); start warden through its "
		                "socket unit (systemctl --user start warden.socket)");
	if (strcmp(n, "1"))
		return werr_set(err, 0, "--listen systemd: systemd passed %s sockets; the unit must "
		                "have exactly one ListenStream=", n);
	if (fstat(SD_LISTEN_FDS_START, &st) < 0 || !S_ISSOCK(st.st_mode) ||
	    getsockopt(SD_LISTEN_FDS_START, SOL_SOCKET, SO_TYPE, &type, &ol) < 0 ||
	    type != SOCK_STREAM ||
	    getsockopt(SD_LISTEN_FDS_START, SOL_SOCKET, SO_ACCEPTCONN, &acc, &ol) < 0 || !acc ||
	    getsockname(SD_LISTEN_FDS_START, (struct sockaddr *)&ss, &len) < 0)
		return werr_set(err, 0, "--listen systemd: fd 3 is not a listening stream socket; "
		                "the socket unit needs ListenStream= (and Accept=no)");
	if (ss.ss_family != AF_UNIX && ss.ss_family != AF_INET && ss.ss_family != AF_INET6)
		return werr_set(err, 0, "--listen systemd: the socket is of family %d; warden "
		                "listens on TCP or a Unix socket", ss.ss_family);
	describe((struct sockaddr *)&ss, len, where, sizeof(where));
	if (tls_rule((struct sockaddr *)&ss, where, tls, err) < 0)
		return -1;
	fd = fcntl(SD_LISTEN_FDS_START, F_DUPFD_CLOEXEC, 16);
	if (fd < 0)
		return werr_set(err, errno, "--listen systemd: dup");
	close(SD_LISTEN_FDS_START);
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	l->fds[0] = fd;
	return 0;
}

/* --token-file: the caller's own file, 0600 (nobody else may have read it),
 * holding one token (one trailing newline allowed), outside the workspaces. */
static int read_token_file(const char *path, char *const *roots, size_t n_roots, char *tok,
                           size_t *len, struct werr *err)
{
	struct stat st;
	char buf[WTOKEN_MAX + 3];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);

	if (fd < 0)
		return werr_set(err, errno, "--token-file %s", path);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return werr_set(err, 0, "--token-file %s: not a regular file", path);
	}
	if (st.st_uid != getuid()) {
		close(fd);
		return werr_set(err, 0, "--token-file %s: it belongs to uid %u, not to you (uid %u): "
		                "the token must be a file of yours (chown it, or write your own)",
		                path, (unsigned)st.st_uid, (unsigned)getuid());
	}
	if (st.st_mode & 077) {
		close(fd);
		return werr_set(err, 0, "--token-file %s: mode %03o lets others read it; make it "
		                "yours alone: chmod 600 %s", path, (unsigned)(st.st_mode & 0777), path);
	}
	if (not_served(fd, "--token-file", path, roots, n_roots, "every jail there could read it; "
	               "keep it outside every workspace (in $XDG_RUNTIME_DIR, say), or leave "
	               "--token-file out and warden makes one",
	               err) < 0) {
		close(fd);
		return -1;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return werr_set(err, errno, "--token-file %s", path);
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if (n > 0 && buf[n - 1] == '\r')
		n--;
	if (!wtoken_ok(buf, (size_t)n))
		return werr_set(err, 0, "--token-file %s: a token is %d to %d characters of "
		                "letters, digits and - . _ ~ + / (= at the end), on one line; make one "
		                "with: head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \\n' > %s",
		                path, WTOKEN_MIN, WTOKEN_MAX, path);
	memcpy(tok, buf, (size_t)n);
	tok[n] = '\0';
	*len = (size_t)n;
	explicit_bzero(buf, sizeof(buf));
	return 0;
}

/* No --token-file: 256 random bits, hex, in $XDG_RUNTIME_DIR/warden/token
 * (0600, in a 0700 directory of the caller's), replaced atomically.  Both
 * directories must be the caller's alone (XDG_RUNTIME_DIR as the XDG spec
 * defines it: one kept from another user by su or sudo -E is not), and
 * the file is made and renamed through the held directory: nobody else
 * can swap a directory between its check and the write. */
static int new_token(char *tok, size_t *len, char **where, struct werr *err)
{
	const char *rt = getenv("XDG_RUNTIME_DIR");
	uint8_t raw[32];
	_cleanup_free_ char *dir = NULL, *tmp = NULL, *path = NULL;
	_cleanup_close_ int rtfd = -1, dfd = -1;
	struct stat st;
	int fd;

	if (!rt || rt[0] != '/')
		return werr_set(err, 0, "--listen needs a token: give --token-file FILE (a 0600 file "
		                "of yours holding it), or set XDG_RUNTIME_DIR so that warden can make "
		                "one there");
	rtfd = open(rt, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rtfd < 0 || fstat(rtfd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 077))
		return werr_set(err, 0, "XDG_RUNTIME_DIR=%s is not a directory of yours that only you "
		                "can use (0700; one kept from another user by su or sudo is not): "
		                "warden will not put the listener's token there; give --token-file "
		                "FILE (a 0600 file of yours holding it), or set XDG_RUNTIME_DIR to "
		                "your own", rt);
	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return werr_set(err, errno, "getrandom");
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(tok + 2 * i, 3, "%02x", raw[i]);
	*len = 2 * sizeof(raw);
	explicit_bzero(raw, sizeof(raw));
	dir = xasprintf("%s/warden", rt);
	if (mkdirat(rtfd, "warden", 0700) < 0 && errno != EEXIST)
		return werr_set(err, errno, "creating %s", dir);
	dfd = openat(rtfd, "warden", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 077))
		return werr_set(err, 0, "%s must be a directory of yours that only you can use "
		                "(chmod 700 %s), or give --token-file FILE", dir, dir);
	path = xasprintf("%s/token", dir);
	tmp = xasprintf(".token.%d", (int)getpid());
	unlinkat(dfd, tmp, 0);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return werr_set(err, errno, "creating %s/%s", dir, tmp);
	if (write_all(fd, tok, *len) < 0 || write_all(fd, "\n", 1) < 0 || fsync(fd) < 0 ||
	    close(fd) < 0 || renameat(dfd, tmp, dfd, "token") < 0) {
		int e = errno;
		unlinkat(dfd, tmp, 0);
		return werr_set(err, e, "writing %s", path);
	}
	*where = steal_pointer(&path);
	return 0;
}

static int open_tls_file(const char *opt, const char *path, char *const *roots, size_t n_roots,
                         int *fd, struct werr *err)
{
	struct stat st;

	*fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (*fd < 0)
		return werr_set(err, errno, "%s %s", opt, path);
	if (fstat(*fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		closep(fd);
		return werr_set(err, 0, "%s %s: not a regular file", opt, path);
	}
	/* the certificate is public; the key is not */
	if (roots && not_served(*fd, opt, path, roots, n_roots, "every jail there could read it; "
	                        "move it outside every workspace",
	                        err) < 0) {
		closep(fd);
		*fd = -1;
		return -1;
	}
	return 0;
}

int sv_listen_prepare(const struct wserve_opts *o, char *const *roots, size_t n_roots,
                      struct sv_listen *l, struct werr *err)
{
	char tok[WTOKEN_MAX + 1];
	size_t tlen = 0;
	_cleanup_free_ char *made = NULL;
	bool tls = o->tls_cert || o->tls_key;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int p[2];

	if (!o->tls_cert != !o->tls_key)
		return werr_set(err, 0, "--tls-cert and --tls-key go together: give both");
	if (tls && (open_tls_file("--tls-cert", o->tls_cert, NULL, 0, &l->fds[2], err) < 0 ||
	            open_tls_file("--tls-key", o->tls_key, roots, n_roots, &l->fds[3], err) < 0))
		goto fail;
	if (!strcmp(o->listen, "systemd")) {
		if (systemd_listener(tls, l, err) < 0)
			goto fail;
	} else if (strchr(o->listen, '/')) {
		if (unix_listener(o->listen, roots, n_roots, l, err) < 0)
			goto fail;
	} else if (tcp_listener(o->listen, tls, l, err) < 0) {
		goto fail;
	}
	if (o->token_file ? read_token_file(o->token_file, roots, n_roots, tok, &tlen, err)
	                  : new_token(tok, &tlen, &made, err))
		goto fail;
	/* the token goes to the broker through a pipe: it never opens a file */
	if (pipe2(p, O_CLOEXEC) < 0) {
		werr_set(err, errno, "pipe");
		goto fail;
	}
	if (write_all(p[1], tok, tlen) < 0) {
		werr_set(err, errno, "handing the token over");
		close(p[0]);
		close(p[1]);
		goto fail;
	}
	close(p[1]);
	explicit_bzero(tok, sizeof(tok));
	l->fds[1] = p[0];
	if (getsockname(l->fds[0], (struct sockaddr *)&ss, &sl) == 0)
		describe((struct sockaddr *)&ss, sl, l->where, sizeof(l->where));
	if (made)
		wlog_info("the listener's token is in %s (clients send it as "
		          "\"Authorization: Bearer TOKEN\")", made);
	wlog_info("listening on %s%s: /ws (the serve protocol over WebSocket), /mcp (MCP over "
	          "HTTP)", tls ? "TLS " : "", l->where);
	return 0;
fail:
	explicit_bzero(tok, sizeof(tok));
	sv_listen_close(l);
	return -1;
}

void sv_listen_handed(struct sv_listen *l)
{
	for (int i = 0; i < WBROKER_EXTRA_FDS; i++) {
		closep(&l->fds[i]);
		l->fds[i] = -1;
	}
}

void sv_listen_close(struct sv_listen *l)
{
	struct stat st;

	sv_listen_handed(l);
	if (l->unix_dir >= 0 && fstatat(l->unix_dir, l->unix_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISSOCK(st.st_mode) && st.st_dev == l->unix_dev && st.st_ino == l->unix_ino)
		unlinkat(l->unix_dir, l->unix_name, 0);
	closep(&l->unix_dir);
	l->unix_dir = -1;
	free(l->unix_name);
	l->unix_name = NULL;
	free(l->unix_path);
	l->unix_path = NULL;
}
