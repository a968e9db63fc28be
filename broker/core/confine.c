/* The broker confines itself before it reads any input (broker.h).  Fixed
 * order, seccomp last:
 *
 *   1. one thread only: Landlock binds the calling thread alone, so a
 *      thread started earlier would stay free (fail, do not guess);
 *   2. no_new_privs: nothing exec'd could gain privileges (and Landlock
 *      and seccomp need it without CAP_SYS_ADMIN);
 *   3. Landlock: write-type rights only under the data directory (and
 *      extra_rw), read-only on the config directory and the few files that
 *      name resolution and time zones read, /dev/tty for the terminal UI.
 *      Nothing else on the file system can be opened.  On ABI 6+ the
 *      broker also cannot reach abstract unix sockets or signal processes
 *      outside its domain; on ABI 4+ it connects over TCP only to the ports
 *      it was given (the model's endpoints) and binds none;
 *   4. seccomp (libseccomp, default allow): EPERM for running programs,
 *      tracing, mounting, namespaces, loading code into the kernel, keyrings
 *      and the like; clone3 gives ENOSYS so libc falls back to clone, whose
 *      flags can be checked.  socket() makes only AF_INET and AF_INET6
 *      sockets: Landlock does not cover connect() on pathname unix sockets,
 *      so a broker that could make one would reach ssh-agent, D-Bus or a
 *      container runtime's socket; netlink and packet sockets have no use
 *      here either.  socketpair() keeps AF_UNIX: libcurl's threaded
 *      resolver wakes its caller through one, and a pair reaches nothing
 *      outside the process.  ioctl never TIOCSTI or TIOCLINUX: the broker
 *      may hold the person's terminal, and would type into their shell.
 *
 * A kernel without Landlock is reported once on stderr and the broker goes
 * on (seccomp still stops it from running programs); every other failure
 * is fatal to the caller. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include "broker.h"
#include "warden/forbidden.h"
#include "warden/landlock.h"
#include "warden/util.h"

/* One path-beneath rule.  optional: a missing path is fine.  dir_fd > 2:
 * the directory handed over by the supervisor, used instead of path. */
static int add_at(const struct wll_ruleset *rs, int dir_fd, const char *path, uint64_t access,
                  bool optional, struct werr *err)
{
	int fd = dir_fd > 2 ? dir_fd : open(path, O_PATH | O_CLOEXEC), r;

	if (fd < 0) {
		if (optional && (errno == ENOENT || errno == ENOTDIR))
			return 0;
		return werr_set(err, errno, "landlock: opening %s", path);
	}
	r = wll_allow_fd(rs, fd, access, path, err);
	if (fd != dir_fd)
		close(fd);
	return r;
}

static int add(const struct wll_ruleset *rs, const char *path, uint64_t access, bool optional,
               struct werr *err)
{
	return add_at(rs, -1, path, access, optional, err);
}

int broker_tcp_confined(void)
{
	return wll_abi() >= 4;
}

static int confine_landlock(const struct bdirs *d, const struct bconfine *c, struct werr *err)
{
	const char *extra_rw = c ? c->extra_rw : NULL;
	/* What name resolution (glibc, libcurl's resolver) and local time read.
	 * Each one read-only, and only if it exists. */
	static const char *const ro_files[] = {
		"/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/gai.conf",
		"/etc/host.conf", "/etc/services", "/etc/localtime",
		"/dev/urandom",
	};
	const uint64_t ro = WLL_FS_READ_FILE | WLL_FS_READ_DIR;
	/* write-type rights, no execute, no device or socket nodes */
	const uint64_t rw = WLL_FS_READ_FILE | WLL_FS_READ_DIR | WLL_FS_WRITE_FILE |
	                    WLL_FS_REMOVE_DIR | WLL_FS_REMOVE_FILE | WLL_FS_MAKE_DIR |
	                    WLL_FS_MAKE_REG | WLL_FS_MAKE_SYM | WLL_FS_REFER | WLL_FS_TRUNCATE;
	const uint64_t dev_rw = WLL_FS_READ_FILE | WLL_FS_WRITE_FILE | WLL_FS_IOCTL_DEV;
	static bool warned;
	struct wll_ruleset rs;
	int abi = wll_abi(), r = -1;
	size_t i;

	if (abi < 0)
		return werr_set(err, errno, "landlock: probing the ABI");
	if (abi == 0) {
		if (!warned)
			fputs("warden-broker: this kernel has no Landlock (or it is disabled): the "
			      "broker's file access is not restricted (enable CONFIG_SECURITY_LANDLOCK "
			      "and lsm=landlock)\n", stderr);
		warned = true;
		return 0;
	}
	/* TCP on ABI 4+: connect only to the given ports, bind none */
	if (wll_create(&rs, abi, WLL_TCP, err) < 0)
		return -1;

	if (add_at(&rs, d->data_fd, d->data, rw, false, err) < 0)
		goto out;
	if (extra_rw && add(&rs, extra_rw, rw, false, err) < 0)
		goto out;
	if (add_at(&rs, d->config_fd, d->config, ro, true, err) < 0)
		goto out;
	for (i = 0; i < ARRAY_SIZE(ro_files); i++)
		if (add(&rs, ro_files[i], WLL_FS_READ_FILE, true, err) < 0)
			goto out;
	/* /dev/null: writing to it is harmless, and libraries open it O_RDWR */
	if (add(&rs, "/dev/null", WLL_FS_READ_FILE | WLL_FS_WRITE_FILE, true, err) < 0)
		goto out;
	/* the terminal UI of warden chat (line editing needs its ioctls) */
	if (add(&rs, "/dev/tty", dev_rw, true, err) < 0)
		goto out;
	for (i = 0; c && i < c->n_tcp_ports; i++)
		if (wll_allow_port(&rs, c->tcp_ports[i], WLL_NET_CONNECT_TCP, err) < 0)
			goto out;

	if (wll_restrict(&rs, "the broker", err) < 0)
		goto out;
	r = 0;
out:
	wll_close(&rs);
	return r;
}

/* The calls the broker never makes: every one no confined warden process
 * may make (wfilter_forbidden[], common/forbidden.c: ptrace, the mount
 * API, bpf, keyrings, io_uring, kexec, ...; clone3 and openat2 answered
 * ENOSYS so libc falls back), and these, which it alone never needs: it
 * talks to the supervisor, the LLM and the terminal, and runs nothing. */
static const char *const broker_denied[] = { "execve", "execveat", "personality" };

/* One denial, by name; a name this libseccomp does not know is one it
 * cannot filter anyway (the broker's filter allows by default). */
static int deny_name(scmp_filter_ctx ctx, const char *name, int errnum, struct werr *err)
{
	int nr = seccomp_syscall_resolve_name(name), rc;

	if (nr == __NR_SCMP_ERROR)
		return 0;
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(errnum), nr, 0);
	if (rc < 0)
		return werr_set(err, -rc, "seccomp: denying %s", name);
	return 0;
}

static const unsigned long clone_ns_flags[] = {
	CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID,
	CLONE_NEWNET,
};

/* clone's flags argument: arg 1 on s390 (the stack comes first there),
 * arg 0 everywhere else. */
#if defined(__s390__) || defined(__s390x__)
#define CLONE_FLAGS_ARG 1
#else
#define CLONE_FLAGS_ARG 0
#endif

/* EPERM for every address family of socket() (or socketpair()) but the
 * kept ones.  The family is an int: the rules compare its low 32 bits, as
 * the kernel reads it, so a value with high bits set cannot slip past.
 * Families from 64 up do not exist (the kernel's AF_MAX is below 64) and
 * get EAFNOSUPPORT from the kernel itself. */
static int deny_families(scmp_filter_ctx ctx, int call, const int *keep, size_t n_keep,
                         struct werr *err)
{
	for (int fam = 0; fam < 64; fam++) {
		struct scmp_arg_cmp cmp = { .arg = 0, .op = SCMP_CMP_MASKED_EQ,
		                            .datum_a = 0xffffffffULL, .datum_b = (uint64_t)fam };
		bool kept = false;
		int rc;

		for (size_t i = 0; i < n_keep; i++)
			kept |= keep[i] == fam;
		if (kept)
			continue;
		rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), call, 1, &cmp);
		if (rc < 0)
			return werr_set(err, -rc, "seccomp: denying address family %d", fam);
	}
	return 0;
}

static int confine_seccomp(struct werr *err)
{
	static const int socket_keep[] = { AF_INET, AF_INET6 };
	static const int pair_keep[] = { AF_UNIX };
	static const unsigned long tty_inject[] = { TIOCSTI, TIOCLINUX };

	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int r = -1, rc;
	size_t i;

	if (!ctx)
		return werr_set(err, ENOMEM, "seccomp: creating the filter");
	for (i = 0; i < wfilter_forbidden_n; i++)
		if (deny_name(ctx, wfilter_forbidden[i].name,
		              wfilter_forbidden[i].enosys ? ENOSYS : EPERM, err) < 0)
			goto out;
	for (i = 0; i < ARRAY_SIZE(broker_denied); i++)
		if (deny_name(ctx, broker_denied[i], EPERM, err) < 0)
			goto out;
	/* clone with any namespace flag: one rule per flag, since a rule can only
	 * test (arg & mask) == value */
	for (i = 0; i < ARRAY_SIZE(clone_ns_flags); i++) {
		struct scmp_arg_cmp cmp = {
			.arg = CLONE_FLAGS_ARG, .op = SCMP_CMP_MASKED_EQ,
			.datum_a = clone_ns_flags[i], .datum_b = clone_ns_flags[i],
		};
		rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, &cmp);
		if (rc < 0) {
			werr_set(err, -rc, "seccomp: checking clone's flags");
			goto out;
		}
	}
	/* No process of its own: threads only (clone with CLONE_THREAD), no
	 * fork or vfork.  It runs nothing anyway (no execve), and the
	 * supervisor stops the broker while it asks the person a question on
	 * chat's terminal (supervisor/ask.c): that stops all of it. */
	{
		struct scmp_arg_cmp cmp = { .arg = CLONE_FLAGS_ARG, .op = SCMP_CMP_MASKED_EQ,
		                            .datum_a = CLONE_THREAD, .datum_b = 0 };

		if (deny_name(ctx, "fork", EPERM, err) < 0 || deny_name(ctx, "vfork", EPERM, err) < 0)
			goto out;
		rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, &cmp);
		if (rc < 0) {
			werr_set(err, -rc, "seccomp: clone for threads only");
			goto out;
		}
	}
	if (deny_families(ctx, SCMP_SYS(socket), socket_keep, ARRAY_SIZE(socket_keep), err) < 0 ||
	    deny_families(ctx, SCMP_SYS(socketpair), pair_keep, ARRAY_SIZE(pair_keep), err) < 0)
		goto out;
	/* No typing into the terminal: the broker of `warden chat` holds the
	 * person's terminal as its controlling one (and serve's or mcp's can
	 * open /dev/tty), so TIOCSTI would put a command into the shell that
	 * reads it after warden ends, outside any jail; TIOCLINUX can do the
	 * same on a console.  The command is an int: compared under a 32-bit
	 * mask, as the kernel reads it (G7 closes both to the jail). */
	for (i = 0; i < ARRAY_SIZE(tty_inject); i++) {
		struct scmp_arg_cmp cmp = { .arg = 1, .op = SCMP_CMP_MASKED_EQ,
		                            .datum_a = 0xffffffffULL, .datum_b = tty_inject[i] };
		rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1, &cmp);
		if (rc < 0) {
			werr_set(err, -rc, "seccomp: denying the terminal's input ioctls");
			goto out;
		}
	}
	rc = seccomp_load(ctx);
	if (rc < 0) {
		werr_set(err, -rc, "seccomp: loading the filter");
		goto out;
	}
	r = 0;
out:
	seccomp_release(ctx);
	return r;
}

/* Landlock restricts the calling thread only. */
static int count_threads(struct werr *err)
{
	DIR *dir = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!dir)
		return werr_set(err, errno, "counting threads: /proc/self/task");
	while ((e = readdir(dir)))
		if (e->d_name[0] != '.')
			n++;
	closedir(dir);
	return n;
}

int broker_confine(const struct bdirs *d, const struct bconfine *c, struct werr *err)
{
	int n = count_threads(err);

	if (n < 0)
		return -1;
	if (n != 1)
		return werr_set(err, 0, "confining the broker: %d threads already run; it must "
		                "happen before any thread starts", n);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return werr_set(err, errno, "setting no_new_privs");
	if (confine_landlock(d, c, err) < 0)
		return werr_wrap(err, "confining the broker");
	if (confine_seccomp(err) < 0)
		return werr_wrap(err, "confining the broker");
	return 0;
}
