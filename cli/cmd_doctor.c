/* `warden doctor`: what this kernel and user can use, what falls back, and
 * a real jail started end to end. */
#include <errno.h>
#include <pwd.h>
#include <sched.h>
#include <stdarg.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "warden/broker_start.h"
#include "warden/cgroup.h"
#include "cmd.h"
#include "warden/idmap.h"
#include "warden/jail.h"
#include "warden/supervisor.h"
#include "warden/util.h"

static int bad_count;

static void row(const char *what, bool ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void row(const char *what, bool ok, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	printf("  %-18s %-5s %s\n", what, ok ? "ok" : "NO", buf);
	if (!ok)
		bad_count++;
}

static bool userns_works(void)
{
	pid_t pid = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, 0);
	int st;

	if (pid < 0)
		return false;
	if (pid == 0)
		_exit(0);
	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static const char *find_prog(const char *name, char *buf, size_t len)
{
	static const char *const dirs[] = { "/usr/local/bin", "/usr/bin", "/bin" };
	struct stat sb;

	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		snprintf(buf, len, "%s/%s", dirs[i], name);
		if (stat(buf, &sb) == 0 && (sb.st_mode & 0111))
			return buf;
	}
	return NULL;
}

/* warden-egress, network mode proxy's process (supervisor/egress_start.c):
 * where warden looks for it, that it is an executable file, and that it
 * starts, confines itself and says READY, as a session's would.  Each
 * failure with its fix. */
static void egress_check(void)
{
	_cleanup_free_ char *path = wegress_exe_path();
	struct werr e = { 0 };
	struct stat sb;

	if (stat(path, &sb) < 0)
		row("egress proxy", false, "%s: %s%s; network mode proxy cannot start: reinstall "
		    "warden (make install puts it in PREFIX/libexec/warden; a build has it beside "
		    "warden) or set WARDEN_EGRESS to its absolute path", path, strerror(errno),
		    getenv("WARDEN_EGRESS") ? " (WARDEN_EGRESS)"
		                            : " (nor is warden-egress beside warden)");
	else if (!S_ISREG(sb.st_mode) || access(path, X_OK) < 0)
		row("egress proxy", false, "%s is not an executable file; network mode proxy cannot "
		    "start: chmod 0755 %s, or reinstall warden", path, path);
	else if (wegress_probe(WBROKER_USER, &e) < 0)
		row("egress proxy", false, "%s does not run: %s; network mode proxy cannot start: "
		    "reinstall warden (ldd %s names a missing library)", path, e.msg, path);
	else
		row("egress proxy", true, "%s (started, confined itself, ready)", path);
}

/* The exact commands that would give every limit a cgroup here, only for
 * the hierarchies that are missing one (issue 13).  Printed, never run:
 * they need root and change the machine. */
static void full_limits_commands(const struct wcg_probe *pr)
{
	const char *v1[WLIM__N];
	size_t n1 = 0;
	bool v2 = false;
	struct passwd *pw = getpwuid(getuid());
	char who[64];

	for (int k = 0; k < WLIM__N; k++) {
		bool seen = false;

		if (pr->mech[k] == WMECH_CGROUP_V1 || pr->mech[k] == WMECH_CGROUP_V2)
			continue;
		if (pr->fix_version[k] == 2)
			v2 = true;
		if (pr->fix_version[k] != 1)
			continue;
		for (size_t i = 0; i < n1; i++)
			seen = seen || !strcmp(v1[i], pr->fix_path[k]);
		if (!seen)
			v1[n1++] = pr->fix_path[k];
	}
	if (!n1 && !v2)
		return;
	if (pw)
		snprintf(who, sizeof(who), "%s", pw->pw_name);
	else
		snprintf(who, sizeof(who), "%u", getuid());
	puts("\nfor full limits on this machine");
	if (n1) {
		/* v1 has no delegation protocol: a directory root hands over is
		 * one the user may create groups in and move its processes to */
		printf("  as root (cgroup v1: warden's parent groups, handed to %s; until reboot):\n", who);
		printf("    mkdir -p");
		for (size_t i = 0; i < n1; i++)
			printf(" %s", v1[i]);
		printf("\n    chown -R %s", who);
		for (size_t i = 0; i < n1; i++)
			printf(" %s", v1[i]);
		puts("");
	}
	if (v2 && getuid() != 0) {
		puts("  cgroup v2, one run in a delegated scope:");
		puts("    systemd-run --user --scope -p Delegate=yes warden run ...");
		puts("  cgroup v2, every login (as root, then log in again):");
		puts("    mkdir -p /etc/systemd/system/user@.service.d");
		puts("    printf '[Service]\\nDelegate=cpu cpuset io memory pids\\n' \\");
		puts("      > /etc/systemd/system/user@.service.d/delegate.conf");
		puts("    systemctl daemon-reload");
	} else if (v2) {
		printf("  as root (cgroup v2: enable the controllers above warden's group):\n");
		for (int k = 0; k < WLIM__N; k++)
			if (pr->fix_version[k] == 2) {
				printf("    echo '+memory +pids +cpu' > %s/cgroup.subtree_control\n",
				       pr->fix_path[k]);
				break;
			}
	}
}

int cmd_doctor(int argc, char **argv)
{
	static const char *const langs[][2] = {
		{ "python", "python3" }, { "javascript", "node" }, { "shell", "bash" },
		{ "sh", "sh" }, { "ruby", "ruby" }, { "perl", "perl" }, { "r", "Rscript" },
	};
	struct utsname u;
	struct wcg_probe pr;
	int abi = landlock_abi_version();
	unsigned api = (unsigned)seccomp_api_get();
	char buf[256];

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		puts("usage: warden doctor\n\nShows what this kernel and user can use, what falls back (with the\n"
		     "commands that give full limits), and starts one jail.\nMore: man warden-doctor");
		return 0;
	}
	uname(&u);
	printf("warden %s on Linux %s (%s), uid %u%s\n\n", WARDEN_VERSION, u.release, u.machine,
	       getuid(), getuid() == 0 ? " (root)" : "");
	puts("isolation");
	row("user namespaces", userns_works(), "%s", userns_works() ? "can create them"
	    : "cannot create them: enable kernel.unprivileged_userns_clone or run as root");
	row("seccomp notify", api >= 5, "libseccomp API level %u%s", api,
	    api >= 5 ? "; denied syscalls are audited" : "; needs >= 5 to audit denied calls");
	if (abi > 0)
		row("landlock", true, "ABI %d%s%s", abi, abi >= 4 ? ", network rules" : "",
		    abi >= 6 ? ", abstract-socket and signal scoping" : "");
	else
		row("landlock", false, "unavailable: mounts alone confine the filesystem (boot with lsm=landlock,...)");
	/* the broker's own confinement (broker/core/confine.c, SECURITY.md G46) */
	row("broker tcp", abi >= 4, "%s", abi >= 4 ? "connects only to the model's ports"
	    : "may connect to any TCP port: Landlock ABI 4 (Linux 6.7) limits it to the model's");
	if (getuid() == 0) {
		struct passwd *pw = getpwnam(WBROKER_USER);
		row("broker user", pw != NULL, "%s", pw ? WBROKER_USER " (the broker runs as it)"
		    : "missing: useradd --system --no-create-home --home-dir /nonexistent "
		      "--shell /usr/sbin/nologin " WBROKER_USER);
	}

	egress_check();

	if (getuid() == 0) {
		struct widrange r;
		struct werr e = { 0 };
		if (widmap_range(&r, &e) < 0)
			row("identity", false, "%s", e.msg);
		else
			row("identity", true, "as root, each jail gets its own host uid/gid: %u-%u "
			    "(gids from %u), range %s; writable binds are idmapped to their owner",
			    r.uid_base, r.uid_base + r.count - 1, r.gid_base, r.source);
	} else {
		printf("  %-18s %-5s %s\n", "identity", "ok", "each jail maps to the caller "
		       "(its files belong to you); as root each jail would get its own host uid");
	}

	puts("\nlimits");
	wcg_probe(&pr);
	for (int k = 0; k < WLIM__N; k++) {
		enum wmech m = pr.mech[k];
		bool strong = m == WMECH_CGROUP_V1 || m == WMECH_CGROUP_V2;
		row(wlimit_kind_name((enum wlimit_kind)k), strong, "%s%s%s%s", wmech_name(m),
		    pr.where[k][0] ? " (" : "", pr.where[k], pr.where[k][0] ? ")" : "");
	}
	printf("  %-18s %-5s %s%s%s\n", "cgroup v2", pr.v2_mounted ? "info" : "-",
	       pr.v2_mounted ? pr.v2_path : "not mounted",
	       pr.v2_mounted ? ", controllers: " : "",
	       pr.v2_mounted ? (pr.v2_controllers[0] ? pr.v2_controllers : "none") : "");
	printf("  %-18s %-5s %s\n", "always", "ok", "wall time (timerfd), file size and open files (rlimit), tmpfs sizes, output");
	full_limits_commands(&pr);

	puts("\nlanguages (as the jail sees /usr)");
	for (size_t i = 0; i < ARRAY_SIZE(langs); i++) {
		const char *p = find_prog(langs[i][1], buf, sizeof(buf));
		printf("  %-18s %-5s %s\n", langs[i][0], p ? "ok" : "-", p ? p : "not installed");
	}

	puts("\na jail, end to end");
	{
		char *args[] = { "/bin/true", NULL };
		struct wrun_opts o = { .argv = args, .workspace = "/tmp", .audit_log = "/dev/null",
		                       .quiet = true, .no_stdin = true };
		struct wrun_result r;
		struct werr e = { 0 };
		int rc = wrun(&o, &r, &e);
		row("warden run true", rc == 0 && r.exit_status == 0, "%s",
		    rc < 0 ? e.msg : r.exit_status == 0 ? "started and exited cleanly" : "exited non-zero");
		if (rc == 0)
			row("network watch", r.net_watch, "%s", r.net_watch
			    ? "where a jailed program tries to go is seen (a veth pair in its namespace)"
			    : getenv("WARDEN_NO_NET_WATCH")
			    ? "off: WARDEN_NO_NET_WATCH is set; warden counts a program's attempts to "
			      "use the network, but cannot say where"
			    : "this kernel cannot make a veth pair in a jail's namespace: warden counts "
			      "a program's attempts to use the network, but cannot say where");
	}
	printf("\n%s\n", bad_count ? "some protections are weaker here; see the lines marked NO"
	                           : "every protection is active");
	return 0;
}
