/* The jail's environment, workspaces and ids (supervisor/sv.h). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include "lang.h"
#include "sv.h"
#include "warden/jail.h"
#include "warden/util.h"

uint64_t sv_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

char *sv_helper_path(const char *env_var, const char *name)
{
	char self[PATH_MAX], *slash, *p;
	const char *env = getenv(env_var);
	ssize_t n;

	if (env && env[0] == '/')
		return xstrdup(env);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return xasprintf("/usr/local/libexec/warden/%s", name);
	self[n] = '\0';
	slash = strrchr(self, '/');
	*slash = '\0';
	p = xasprintf("%s/%s", self, name);
	if (access(p, X_OK) == 0)
		return p;
	free(p);
	return xasprintf("%s/../libexec/warden/%s", self, name);
}

const char *sv_caller_home(void)
{
	const char *h = getenv("HOME");
	struct passwd *pw;

	if (h && h[0] == '/' && strcmp(h, "/"))
		return h;
	pw = getpwuid(getuid());
	return (pw && pw->pw_dir[0] == '/' && strcmp(pw->pw_dir, "/")) ? pw->pw_dir : "/home/user";
}

/* Set NAME=VAL, replacing an earlier NAME. */
static void env_put(char **env, size_t *n, const char *name, size_t name_len, const char *val)
{
	for (size_t j = 0; j < *n; j++)
		if (!strncmp(env[j], name, name_len) && env[j][name_len] == '=') {
			free(env[j]);
			env[j] = env[--*n];
			break;
		}
	env[(*n)++] = xasprintf("%.*s=%s", (int)name_len, name, val);
}

int sv_apply_net(struct wpolicy *p, const char *net, char *const *allow, size_t n_allow,
                 struct werr *err)
{
	if (net && policy_net_mode_parse(net, &p->net) < 0)
		return werr_set(err, 0, "--net: unknown mode '%s'; use none, loopback or proxy", net);
	if (n_allow && p->net != WNET_PROXY)
		return werr_set(err, 0, "--allow needs network mode proxy, and profile %s has "
		                "\"%s\"; add --net proxy", p->name, policy_net_mode_name(p->net));
	return policy_add_allow(p, allow, n_allow, err);
}

/* Network mode proxy: what makes clients use the proxy on the jail's
 * 127.0.0.1:JAIL_PROXY_PORT.  curl, wget, git (libcurl), pip and Python's
 * urllib/requests, npm and yarn read the *_PROXY variables (npm also its
 * npm_config_ names); NO_PROXY keeps the jail's own lo direct.  Node's fetch
 * and http/https modules ignore them: drivers/node-proxy.mjs, loaded by
 * NODE_OPTIONS, routes them (as a data: URL, so no file need exist in the
 * jail; Node 18.18 and later). */
#define PROXY_URL(port) "http://127.0.0.1:" #port
#define PROXY_URL_(port) PROXY_URL(port)
static const char *const proxy_env[][2] = {
	{ "HTTP_PROXY", PROXY_URL_(JAIL_PROXY_PORT) },
	{ "HTTPS_PROXY", PROXY_URL_(JAIL_PROXY_PORT) },
	{ "http_proxy", PROXY_URL_(JAIL_PROXY_PORT) },
	{ "https_proxy", PROXY_URL_(JAIL_PROXY_PORT) },
	{ "ALL_PROXY", PROXY_URL_(JAIL_PROXY_PORT) },
	{ "all_proxy", PROXY_URL_(JAIL_PROXY_PORT) },
	{ "NO_PROXY", "localhost,127.0.0.1,::1" },
	{ "no_proxy", "localhost,127.0.0.1,::1" },
	{ "npm_config_proxy", PROXY_URL_(JAIL_PROXY_PORT) },
	{ "npm_config_https_proxy", PROXY_URL_(JAIL_PROXY_PORT) },
};
#define PROXY_ENV_N (sizeof(proxy_env) / sizeof(proxy_env[0]) + 1)   /* + NODE_OPTIONS */

static void put_proxy_env(char **env, size_t *n)
{
	const char *js = wdriver_text("node-proxy.mjs");

	for (size_t i = 0; i < sizeof(proxy_env) / sizeof(proxy_env[0]); i++)
		env_put(env, n, proxy_env[i][0], strlen(proxy_env[i][0]), proxy_env[i][1]);
	if (js) {
		/* base64: NODE_OPTIONS splits on spaces */
		static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
		static const char pre[] = "--import data:text/javascript;base64,";
		size_t len = strlen(js), o = sizeof(pre) - 1;
		char *v = xcalloc(sizeof(pre) + (len + 2) / 3 * 4, 1);

		memcpy(v, pre, o);
		for (size_t i = 0; i < len; i += 3) {
			uint32_t w = (uint32_t)(unsigned char)js[i] << 16 |
			             (i + 1 < len ? (uint32_t)(unsigned char)js[i + 1] << 8 : 0) |
			             (i + 2 < len ? (uint32_t)(unsigned char)js[i + 2] : 0);
			v[o++] = b64[w >> 18 & 63];
			v[o++] = b64[w >> 12 & 63];
			v[o++] = i + 1 < len ? b64[w >> 6 & 63] : '=';
			v[o++] = i + 2 < len ? b64[w & 63] : '=';
		}
		/* after the policy's own NODE_OPTIONS, if it passes or sets one */
		for (size_t j = 0; j < *n; j++)
			if (!strncmp(env[j], "NODE_OPTIONS=", 13) && env[j][13]) {
				char *both = xasprintf("%s %s", env[j] + 13, v);
				free(v);
				v = both;
				break;
			}
		env_put(env, n, "NODE_OPTIONS", strlen("NODE_OPTIONS"), v);
		free(v);
	}
}

/* Only the policy's env.pass and env.set (and the caller's extras) reach
 * the jail: secrets in warden's own environment never do. */
char **sv_build_env(const struct wpolicy *p, const char *const *extra, size_t n_extra,
                    const char *ws, const char *home, struct werr *err)
{
	size_t cap = p->env_pass.n + p->env_set_keys.n + n_extra + PROXY_ENV_N + 2, n = 0, i;
	char **env = xcalloc(cap, sizeof(char *));

	/* The program starts in the workspace.  A shell shows this $PWD
	 * rather than what getcwd() says, which differs when the workspace is
	 * a read-only bind relocated out from under a tmpfs (jail/plan.c);
	 * the policy's env may still set its own. */
	if (ws)
		env_put(env, &n, "PWD", 3, ws);

	for (i = 0; i < p->env_pass.n; i++) {
		const char *v = getenv(p->env_pass.v[i]);
		if (v)
			env_put(env, &n, p->env_pass.v[i], strlen(p->env_pass.v[i]), v);
	}
	for (i = 0; i < p->env_set_keys.n; i++) {
		const char *raw = p->env_set_vals.v[i];
		char *val = NULL;
		if (strchr(raw, '$')) {
			if (policy_expand(raw, ws, home, &val, err) < 0)
				goto fail;
		} else {
			val = xstrdup(raw);
		}
		env_put(env, &n, p->env_set_keys.v[i], strlen(p->env_set_keys.v[i]), val);
		free(val);
	}
	if (p->net == WNET_PROXY)
		put_proxy_env(env, &n);
	for (i = 0; i < n_extra; i++) {
		const char *eq = strchr(extra[i], '=');
		size_t l = eq ? (size_t)(eq - extra[i]) : strlen(extra[i]);
		char name[256];

		if (l == 0 || l >= sizeof(name)) {
			werr_set(err, 0, "--env '%s': write NAME=VALUE or NAME", extra[i]);
			goto fail;
		}
		memcpy(name, extra[i], l);
		name[l] = '\0';
		if (eq)
			env_put(env, &n, name, l, eq + 1);
		else if (getenv(name))
			env_put(env, &n, name, l, getenv(name));
	}
	env[n] = NULL;
	return env;
fail:
	env[n] = NULL;
	sv_free_env(env);
	return NULL;
}

/* warden's directory under $VAR, or under HOME/fallback. */
char *sv_xdg_dir(const char *var, const char *fallback, struct werr *err)
{
	const char *x = getenv(var), *home = sv_caller_home();

	if (x && x[0] == '/')
		return xasprintf("%s/warden", x);
	if (!home || home[0] != '/') {
		werr_set(err, 0, "neither $%s nor $HOME is an absolute path: set one of them", var);
		return NULL;
	}
	return xasprintf("%s/%s/warden", home, fallback);
}

static bool path_within(const char *path, const char *base)
{
	size_t n = strlen(base);
	return !strncmp(path, base, n) && (path[n] == '\0' || path[n] == '/');
}

/* A workspace that holds HOME holds warden's own files too: the jail must
 * not read the API keys in config.json (G22), the conversations, or write
 * the audit log (G19).  Hidden like the profile's hides (jail/plan.c);
 * a path that does not exist when the jail starts is skipped there. */
void sv_own_hides(const char *ws, const char *audit_path, struct wstrv *out)
{
	struct werr ignored = { 0 };
	char *d[3] = { sv_xdg_dir("XDG_CONFIG_HOME", ".config", &ignored),
	               sv_xdg_dir("XDG_DATA_HOME", ".local/share", &ignored),
	               audit_path ? xstrdup(audit_path) : NULL };
	char *slash = d[2] ? strrchr(d[2], '/') : NULL;

	/* the log's directory (nothing else of warden's is there), unless it
	 * holds the workspace: then the log alone */
	if (slash && slash != d[2]) {
		*slash = '\0';
		if (path_within(ws, d[2]))
			*slash = '/';
	}
	for (size_t i = 0; i < ARRAY_SIZE(d); i++) {
		if (d[i] && d[i][0] == '/' && path_within(d[i], ws))
			wstrv_push(out, d[i]);
		free(d[i]);
	}
}

int sv_open_reg(struct wprotect_reg *reg, struct werr *err)
{
	_cleanup_free_ char *dir = wprotect_reg_default_dir(sv_caller_home());

	reg->dir_fd = reg->lock_fd = -1;
	if (!dir)
		return werr_set(err, 0, "no place for the placeholders' registry: set "
		                "XDG_RUNTIME_DIR or HOME to an absolute path");
	return wprotect_reg_open(reg, dir, err);
}

void sv_free_env(char **env)
{
	if (!env)
		return;
	for (char **e = env; *e; e++)
		free(*e);
	free(env);
}

void sv_new_session_id(char *buf, size_t len)
{
	unsigned char r[6] = { 0 };
	(void)!getrandom(r, sizeof(r), 0);
	snprintf(buf, len, "%02x%02x%02x%02x%02x%02x", r[0], r[1], r[2], r[3], r[4], r[5]);
}

int sv_resolve_workspace(const char *in, char out[PATH_MAX], struct werr *err)
{
	struct stat sb;

	if (!realpath(in ? in : ".", out))
		return werr_set(err, errno, "workspace %s", in ? in : ".");
	if (stat(out, &sb) < 0 || !S_ISDIR(sb.st_mode))
		return werr_set(err, ENOTDIR, "workspace %s", out);
	if (!strcmp(out, "/"))
		return werr_set(err, 0, "the workspace cannot be /; pass --workspace DIR with a project directory");
	return 0;
}

int sv_open_workspace(const char *ws, struct werr *err)
{
	struct stat st;
	int fd = jail_open_nofollow(AT_FDCWD, ws, err);

	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
		return fd;
	if (fd >= 0) {
		close(fd);
		werr_set(err, ENOTDIR, "%s", ws);
	}
	return werr_wrap(err, "workspace %s changed while it was being opened", ws);
}

void sv_sha256_hex(const void *data, size_t len, char out[65])
{
	sha256_hex(data, len, out);
}

/* One /proc/PID/stat: ppid and utime+stime+cutime+cstime in ticks.  The
 * comm field is chosen by the jail and may hold spaces or ')': parse from
 * the last ')'. */
static bool read_stat(int procfd, const char *name, pid_t *ppid, uint64_t *ticks)
{
	char buf[1024];
	unsigned long long v[4];
	const char *f = proc_stat_fields(procfd, name, buf, sizeof(buf));
	int pp;

	/* state ppid pgrp session tty tpgid flags minflt cminflt majflt
	 * cmajflt, then utime stime cutime cstime */
	if (!f || sscanf(f, "%*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu",
	                 &pp, &v[0], &v[1], &v[2], &v[3]) != 5)
		return false;
	*ppid = pp;
	*ticks = v[0] + v[1] + v[2] + v[3];
	return true;
}

/* The jail's tree from init down, through every thread's
 * /proc/PID/task/TID/children (CONFIG_PROC_CHILDREN): a few reads for a
 * jail of a few processes, where the scan below reads every process on
 * the machine (measured: 4.7 ms of an unprivileged warm round trip of
 * print(1), twice per block).  Every process of the jail descends from
 * init, its pid namespace's reaper.  A process gone meanwhile is skipped
 * (its time goes to whoever reaps it), as the scan skips it.  At most
 * TREE_MAX processes: a larger tree is summed by the scan.  -1 when the
 * kernel has no children files or init is gone. */
#define TREE_MAX 65536
static int tree_ticks(int procfd, pid_t init, uint64_t *total)
{
	pid_t *q = xcalloc(64, sizeof(*q));
	size_t n = 0, cap = 64, head = 0;
	int rc = -1;

	q[n++] = init;
	while (head < n) {
		char name[64];
		pid_t pp;
		uint64_t t;
		int tfd;
		DIR *d;
		struct dirent *de;

		snprintf(name, sizeof(name), "%d", (int)q[head]);
		if (!read_stat(procfd, name, &pp, &t)) {
			if (head == 0)
				goto out;   /* init itself: let the scan say */
			head++;
			continue;
		}
		*total += t;
		snprintf(name, sizeof(name), "%d/task", (int)q[head++]);
		tfd = openat(procfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		d = tfd >= 0 ? fdopendir(tfd) : NULL;
		if (!d) {
			if (tfd >= 0)
				close(tfd);
			continue;   /* gone meanwhile */
		}
		while ((de = readdir(d))) {
			char buf[4096], path[300];
			ssize_t k;
			long v = 0;
			bool in = false;
			int fd;

			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/children", de->d_name);
			fd = openat(dirfd(d), path, O_RDONLY | O_CLOEXEC);
			if (fd < 0) {
				if (errno == ENOENT && faccessat(dirfd(d), de->d_name, F_OK, 0) == 0) {
					closedir(d);   /* the thread is there, the file is not */
					goto out;
				}
				continue;
			}
			/* "PID PID ... ": numbers across reads */
			while ((k = read(fd, buf, sizeof(buf))) > 0) {
				for (ssize_t i = 0; i < k; i++) {
					if (buf[i] >= '0' && buf[i] <= '9') {
						if (v < (1L << 30))   /* a pid is far smaller */
							v = v * 10 + (buf[i] - '0');
						in = true;
						continue;
					}
					if (in && v < (1L << 30)) {
						if (n == TREE_MAX) {
							close(fd);
							closedir(d);
							goto out;
						}
						if (n == cap) {
							pid_t *bigger = xcalloc(cap * 2, sizeof(*q));
							memcpy(bigger, q, n * sizeof(*q));
							free(q);
							q = bigger;
							cap *= 2;
						}
						q[n++] = (pid_t)v;
					}
					v = 0;
					in = false;
				}
			}
			close(fd);
		}
		closedir(d);
	}
	rc = 0;
out:
	free(q);
	return rc;
}

/* CPU of a jail without a cgroup: its init (pid, in our namespace) and
 * every live descendant, each with the children it has reaped (cutime and
 * cstime hold a reaped child's own reaped children, so nothing counts
 * twice).  From init down where the kernel lists children (tree_ticks);
 * else /proc is scanned once and the tree followed by ppid.  The fallback
 * only: a cgroup counts the group directly; RLIMIT_CPU also stops each
 * process. */
bool sv_jail_cpu_ns(pid_t pid, uint64_t *ns)
{
	struct ent { pid_t pid, ppid; uint64_t ticks; bool in; } *e = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	bool found = false, more = true;
	int procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = procfd >= 0 ? fdopendir(procfd) : NULL;
	struct dirent *de;

	if (!d) {
		if (procfd >= 0)
			close(procfd);
		return false;
	}
	if (tree_ticks(procfd, pid, &total) == 0) {
		closedir(d);
		*ns = total * (1000000000ULL / (uint64_t)sysconf(_SC_CLK_TCK));
		return true;
	}
	total = 0;
	while ((de = readdir(d))) {
		char *end;
		long v = strtol(de->d_name, &end, 10);
		pid_t pp;
		uint64_t t;
		if (*end || v <= 0 || !read_stat(dirfd(d), de->d_name, &pp, &t))
			continue;
		if (n == cap) {
			struct ent *bigger = xcalloc(cap ? 2 * cap : 256, sizeof(*e));
			if (n)
				memcpy(bigger, e, n * sizeof(*e));
			free(e);
			e = bigger;
			cap = cap ? 2 * cap : 256;
		}
		e[n++] = (struct ent){ (pid_t)v, pp, t, v == pid };
		found |= v == pid;
	}
	closedir(d);
	while (found && more) {   /* mark descendants, one generation per pass */
		more = false;
		for (size_t i = 0; i < n; i++)
			if (!e[i].in)
				for (size_t k = 0; k < n; k++)
					if (e[k].in && e[k].pid == e[i].ppid) {
						e[i].in = more = true;
						break;
					}
	}
	for (size_t i = 0; i < n; i++)
		if (e[i].in)
			total += e[i].ticks;
	free(e);
	if (!found)
		return false;
	*ns = total * (1000000000ULL / (uint64_t)sysconf(_SC_CLK_TCK));
	return true;
}
