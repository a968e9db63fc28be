/* bench/jail_floor.c: the kernel's floor under `warden run -- /bin/true`.
 *
 * The same kernel work warden's one-shot jail does for
 *   warden run --no-stdin --audit-log /dev/null --workspace DIR -- /bin/true
 * under the default profile, found with `strace -f` of warden as root and
 * as an unprivileged user (docs/design.md, "The floor"), done as cheaply as
 * a program can: raw syscalls, no policy, no audit log, no error recovery.
 * It links build/filters.o to load warden's own seccomp program.
 *
 *   jail_floor [--upto ns|mounts|cgroups|confine|all] WORKSPACE PROGRAM
 *
 * Stages are cumulative, in warden's order:
 *   ns       as root: the slot's lock, then a helper with the "slot" uid
 *            clone3s the jail (so that uid owns its user namespace); else
 *            clone3 directly;
 *            user, mount, pid, net, ipc, uts namespaces, uid/gid maps
 *            (setgroups deny when unprivileged), hostname; pid 1 forks the
 *            program, the program execs, pid 1 exits with its status, the
 *            outer process waits
 *   mounts   as root the idmapped workspace tree (a helper user namespace);
 *            tmpfs root, pivot_root, /etc files, the read-only binds
 *            (open_tree + mount_setattr + move_mount), home and /tmp
 *            tmpfs, the workspace, /dev and its nodes, /proc and its masks,
 *            the old root detached, / read-only
 *   cgroups  the v1 (memory, pids, cpu, cpuacct) or v2 groups: mkdir, the
 *            limits, attach while the child mounts, cgroup namespace,
 *            rmdir after exit; skipped (one line on stderr) where mkdir is
 *            not permitted, as warden does
 *   confine  stdio pipes drained by the parent, fds closed, rlimits,
 *            securebits, capabilities (ambient, bounding, sets), not
 *            dumpable, no_new_privs, Landlock (warden's rules)
 *   all      warden's prebuilt seccomp program with a user-notification
 *            listener, handed to the parent
 *
 * FLOOR_TIMING=1 prints each step's wall time.
 *
 * Errors end the program with a line naming the step; it is a benchmark,
 * not a sandbox (it checks nothing it does not need to). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "warden/filter.h"   /* struct wfilter_prog, wfilter_prebuilt (build/filters.o) */

#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef MOUNT_ATTR_IDMAP
#define MOUNT_ATTR_IDMAP 0x00100000
#endif

enum { S_NS, S_MOUNTS, S_CGROUPS, S_CONFINE, S_ALL };
static int upto = S_ALL;
static int root;                  /* running as host root: the slot path */
static const char *ws, *home;
static char home_buf[256];

/* FLOOR_TIMING=1: each step's wall time on stderr, named like warden's
 * WARDEN_TIMING=1 phases where they match (docs/design.md compares them). */
static int timing;
static struct timespec last;

static void tmark(const char *what)
{
	struct timespec now;

	if (!timing)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	fprintf(stderr, "floor: timing: [%d] %-22s %.3f ms\n", (int)getpid(), what,
	        (double)(now.tv_sec - last.tv_sec) * 1e3 + (double)(now.tv_nsec - last.tv_nsec) / 1e6);
	last = now;
}

static void die(const char *what)
{
	fprintf(stderr, "jail_floor: %s: %s\n", what, strerror(errno));
	_exit(125);
}

/* --- small syscall wrappers ------------------------------------------------ */
static int open_tree_(int dfd, const char *p, unsigned f) { return (int)syscall(SYS_open_tree, dfd, p, f); }
static int move_mount_(int f, int t)
{
	return (int)syscall(SYS_move_mount, f, "", t, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
}
static int setattr_(int dfd, const char *p, unsigned fl, uint64_t set, int userns)
{
	struct mount_attr a = { .attr_set = set, .userns_fd = (uint64_t)userns };
	return (int)syscall(SYS_mount_setattr, dfd, p, fl, &a, sizeof a);
}

static void writefile(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, s, strlen(s)) < 0)
		die(path);
	close(fd);
}

static void newfile(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0 || (s && write(fd, s, strlen(s)) < 0))
		die(path);
	close(fd);
}

static void mkdirs(const char *path)   /* mkdir -p in the new root */
{
	char b[512];
	size_t i;

	snprintf(b, sizeof b, "%s", path);
	for (i = 1; b[i]; i++)
		if (b[i] == '/') {
			b[i] = 0;
			mkdir(b, 0755);
			b[i] = '/';
		}
	mkdir(b, 0755);
}

/* The sync socket: one byte messages, one fd message. */
static void send1(int s, char c) { if (write(s, &c, 1) != 1) die("sync write"); }
static void recv1(int s, char want)
{
	char c = 0;
	if (read(s, &c, 1) != 1 || c != want) {
		errno = EPROTO;
		die("sync read");
	}
}

static void send_fd(int s, int fd)
{
	char c = 'R', cb[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cb, .msg_controllen = sizeof cb };
	struct cmsghdr *h = CMSG_FIRSTHDR(&m);

	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(h), &fd, sizeof fd);
	if (sendmsg(s, &m, 0) != 1)
		die("sending the listener");
}

static int recv_fd(int s)
{
	char c, cb[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cb, .msg_controllen = sizeof cb };
	struct cmsghdr *h;
	int fd;

	if (recvmsg(s, &m, MSG_CMSG_CLOEXEC) != 1 || !(h = CMSG_FIRSTHDR(&m)))
		die("receiving the listener");
	memcpy(&fd, CMSG_DATA(h), sizeof fd);
	return fd;
}

/* --- cgroups (parent) ----------------------------------------------------- */
static char cg[4][700];           /* the jail's groups */
static int ncg;

static int cg_make(const char *dir, const char *const *kv)
{
	char p[760];

	if (mkdir(dir, 0755) < 0) {
		if (errno == EACCES || errno == EPERM || errno == EROFS)
			return -1;
		die(dir);
	}
	snprintf(cg[ncg++], sizeof cg[0], "%s", dir);
	for (; kv && kv[0]; kv += 2) {
		int fd;
		snprintf(p, sizeof p, "%s/%s", dir, kv[0]);
		fd = open(p, O_WRONLY | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT && strstr(kv[0], "sw"))
			continue;   /* memsw/swap.max without swap accounting */
		if (fd < 0 || write(fd, kv[1], strlen(kv[1])) < 0)
			die(p);
		close(fd);
	}
	return 0;
}

/* v2: the parent hands the controllers down (the limits' files exist only
 * then).  Untested here (this VM has v1); and where warden attaches with
 * CLONE_INTO_CGROUP, the floor writes cgroup.procs: on v2 its cgroups step
 * is an upper bound. */
static int subtree(const char *dir)
{
	char p[760];
	int fd, r;

	snprintf(p, sizeof p, "%s/cgroup.subtree_control", dir);
	if ((fd = open(p, O_WRONLY | O_CLOEXEC)) < 0)
		return -1;
	r = write(fd, "+memory +pids +cpu", 18) < 0 ? -1 : 0;
	close(fd);
	return r;
}

/* The group each hierarchy puts us in (/proc/self/cgroup), then a parent
 * "warden-floor" below it (made once) and this run's group below that. */
static void cgroups_create(void)
{
	static const char *const mem[] = { "memory.limit_in_bytes", "1073741824",
	                                   "memory.memsw.limit_in_bytes", "1073741824", NULL };
	static const char *const pids[] = { "pids.max", "256", NULL };
	static const char *const cpu[] = { "cpu.cfs_period_us", "100000", "cpu.cfs_quota_us", "100000", NULL };
	static const char *const v2[] = { "memory.max", "1073741824", "memory.swap.max", "0",
	                                  "pids.max", "256", "cpu.max", "100000 100000", NULL };
	static const struct { const char *c; const char *const *kv; } v1[] = {
		{ "cpu", cpu }, { "cpuacct", NULL }, { "memory", mem }, { "pids", pids } };
	char line[600], dir[700], own[4][512] = { { 0 } }, v2own[512] = "", *t, *sp;
	FILE *f = fopen("/proc/self/cgroup", "re");
	int i, is_v2 = access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0;

	if (!f)
		die("/proc/self/cgroup");
	while (fgets(line, sizeof line, f)) {
		char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
		if (!b)
			continue;
		b[strcspn(b, "\n")] = 0;
		*b = 0;
		if (!strcmp(a + 1, ""))
			snprintf(v2own, sizeof v2own, "%s", b + 1);
		for (t = strtok_r(a + 1, ",", &sp); t; t = strtok_r(NULL, ",", &sp))
			for (i = 0; i < 4; i++)
				if (!strcmp(t, v1[i].c))
					snprintf(own[i], sizeof own[i], "%s", b + 1);
	}
	fclose(f);
	for (i = 0; i < (is_v2 ? 1 : 4); i++) {
		if (is_v2)
			snprintf(dir, sizeof dir, "/sys/fs/cgroup%s/warden-floor", strcmp(v2own, "/") ? v2own : "");
		else
			snprintf(dir, sizeof dir, "/sys/fs/cgroup/%s%s/warden-floor", v1[i].c,
			         strcmp(own[i], "/") ? own[i] : "");
		if ((mkdir(dir, 0755) < 0 && errno != EEXIST) ||
		    (is_v2 && subtree(dir) < 0) ||
		    (snprintf(dir + strlen(dir), sizeof dir - strlen(dir), "/j%d", (int)getpid()),
		     cg_make(dir, is_v2 ? v2 : v1[i].kv) < 0)) {
			/* unprivileged without delegation: warden runs without limits */
			fprintf(stderr, "jail_floor: no cgroups (%s: %s), as warden falls back\n", dir,
			        strerror(errno));
			while (ncg > 0)
				rmdir(cg[--ncg]);
			return;
		}
	}
}

static void cgroups_attach(pid_t pid)
{
	char p[720], s[16];
	int i;

	snprintf(s, sizeof s, "%d", (int)pid);
	for (i = 0; i < ncg; i++) {
		snprintf(p, sizeof p, "%.690s/cgroup.procs", cg[i]);
		writefile(p, s);
	}
}

/* --- the jail's root (child) ----------------------------------------------- */
static void ro_bind(const char *host_path, const char *target)
{
	char src[600];
	struct stat st;
	int fd, t, dst;

	snprintf(src, sizeof src, "/oldroot%s", host_path);
	fd = open(src, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;   /* optional in the profile */
	if (fstat(fd, &st) < 0 || (t = open_tree_(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
	                                               AT_EMPTY_PATH | AT_RECURSIVE)) < 0)
		die(src);
	close(fd);
	if (S_ISDIR(st.st_mode))
		mkdirs(target);
	else {
		char d[512];
		snprintf(d, sizeof d, "%s", target);
		*strrchr(d, '/') = 0;
		mkdirs(d);
		newfile(target, NULL);
	}
	dst = open(target, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (dst < 0 || setattr_(t, "", AT_EMPTY_PATH | AT_RECURSIVE,
	                        MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0) < 0 ||
	    move_mount_(t, dst) < 0)
		die(target);
	close(dst);
	close(t);
}

static void tmpfs_at(const char *path, const char *size, const char *mode)
{
	int fs, m, dst;

	mkdirs(path);
	fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0 || syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "size", size, 0) < 0 ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", mode, 0) < 0 ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0 ||
	    (m = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)) < 0 ||
	    (dst = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC)) < 0 || move_mount_(m, dst) < 0)
		die(path);
	close(dst);
	close(m);
	close(fs);
}

static void build_root(int ws_tree)
{
	static const char *const etc[] = {   /* the default profile's, sorted as warden mounts them */
		"/etc/R", "/etc/alternatives", "/etc/ca-certificates", "/etc/fonts", "/etc/ld.so.cache",
		"/etc/localtime", "/etc/matplotlibrc", "/etc/mime.types", "/etc/nsswitch.conf",
		"/etc/protocols", "/etc/services", "/etc/ssl" };
	static const char *const links[] = { "bin", "sbin", "lib", "lib32", "lib64" };
	static const char *const devs[] = { "null", "zero", "full", "random", "urandom" };
	static const char *const pfiles[] = { "keys", "key-users", "timer_list", "kallsyms", "kpagecount",
		"kpageflags", "kpagecgroup", "config.gz", "vmallocinfo", "slabinfo", "pagetypeinfo",
		"zoneinfo", "buddyinfo", "iomem", "ioports", "cmdline", "sys/kernel/random/boot_id" };
	static const char *const pdirs[] = { "acpi", "driver", "tty", "pressure" };
	static const char *const pro[] = { "sys", "irq", "bus", "fs" };
	static const char *const secrets[] = { ".aws", ".env", ".git-credentials", ".gnupg", ".netrc", ".ssh" };
	char a[600], b[600];
	size_t i;
	ssize_t n;
	int fd;

	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755") < 0 ||
	    chdir("/tmp") < 0 || mkdir("oldroot", 0700) < 0 ||
	    syscall(SYS_pivot_root, ".", "oldroot") < 0 || chdir("/") < 0)
		die("new root");
	tmark("mounts: tmpfs root");
	mkdir("/etc", 0755);
	newfile("/etc/passwd", "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
	newfile("/etc/group", "root:x:0:\nnogroup:x:65534:\n");
	newfile("/etc/hostname", "warden\n");
	newfile("/etc/hosts", "127.0.0.1\tlocalhost\n::1\tlocalhost\n");
	for (i = 0; i < sizeof links / sizeof *links; i++) {
		snprintf(a, sizeof a, "/oldroot/%s", links[i]);
		n = readlink(a, b, sizeof b - 1);
		if (n > 0) {
			b[n] = 0;
			snprintf(a, sizeof a, "/%s", links[i]);
			if (symlink(b, a) < 0)
				die(a);
		}
	}
	for (i = 0; i < sizeof etc / sizeof *etc; i++) {
		if (!strcmp(etc[i], "/etc/localtime")) {   /* the link's target, at the link's place */
			n = readlink("/oldroot/etc/localtime", b, sizeof b - 1);
			if (n > 0 && b[0] == '/') {
				b[n] = 0;
				ro_bind(b, "/etc/localtime");
			}
			continue;
		}
		ro_bind(etc[i], etc[i]);
	}
	tmark("mounts: /etc");
	tmpfs_at(home, "67108864", "0700");
	tmpfs_at("/tmp", "536870912", "1777");
	if (ws_tree < 0) {   /* unprivileged: the workspace tree is cloned here */
		snprintf(a, sizeof a, "/oldroot%s", ws);
		if ((fd = open(a, O_PATH | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
		    (ws_tree = open_tree_(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH |
		                                  AT_RECURSIVE)) < 0)
			die(a);
		close(fd);
	}
	mkdirs(ws);
	if ((fd = open(ws, O_PATH | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    setattr_(ws_tree, "", AT_EMPTY_PATH | AT_RECURSIVE, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0) < 0 ||
	    move_mount_(ws_tree, fd) < 0)
		die("workspace");
	close(fd);
	close(ws_tree);
	ro_bind("/usr", "/usr");
	ro_bind("/var/cache/fontconfig", "/var/cache/fontconfig");

	tmark("mounts: tmpfs, binds");
	if (mkdir("/dev", 0755) < 0 ||
	    mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NODEV, "size=65536,mode=0755") < 0)
		die("/dev");
	for (i = 0; i < sizeof devs / sizeof *devs; i++) {
		snprintf(a, sizeof a, "/dev/%s", devs[i]);
		snprintf(b, sizeof b, "/oldroot/dev/%s", devs[i]);
		newfile(a, NULL);
		if (mount(b, a, NULL, MS_BIND, NULL) < 0)
			die(a);
	}
	if (symlink("/proc/self/fd", "/dev/fd") < 0 || symlink("/proc/self/fd/0", "/dev/stdin") < 0 ||
	    symlink("/proc/self/fd/1", "/dev/stdout") < 0 || symlink("/proc/self/fd/2", "/dev/stderr") < 0 ||
	    mkdir("/dev/shm", 0755) < 0 ||
	    mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=67108864,mode=1777") < 0 ||
	    mount(NULL, "/dev", NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, "size=65536,mode=0755") < 0)
		die("/dev");

	tmark("mounts: /dev");
	if (mkdir("/proc", 0555) < 0 ||
	    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=invisible") < 0)
		die("/proc");
	for (i = 0; i < sizeof pfiles / sizeof *pfiles; i++) {
		snprintf(a, sizeof a, "/proc/%s", pfiles[i]);
		if (mount("/dev/null", a, NULL, MS_BIND, NULL) < 0) {
			if (errno == ENOENT)
				continue;
			die(a);
		}
		if (setattr_(AT_FDCWD, a, AT_RECURSIVE, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0) < 0)
			die(a);
	}
	for (i = 0; i < sizeof pdirs / sizeof *pdirs; i++) {
		snprintf(a, sizeof a, "/proc/%s", pdirs[i]);
		if (mount("tmpfs", a, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=0,mode=0555") < 0 &&
		    errno != ENOENT)
			die(a);
	}
	for (i = 0; i < sizeof pro / sizeof *pro; i++) {
		snprintf(a, sizeof a, "/proc/%s", pro[i]);
		if (mount(a, a, NULL, MS_BIND | MS_REC, NULL) < 0) {
			if (errno == ENOENT)
				continue;
			die(a);
		}
		if (setattr_(AT_FDCWD, a, AT_RECURSIVE, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0) < 0)
			die(a);
	}
	/* secrets in the workspace are masked when present: look for each */
	for (i = 0; i < sizeof secrets / sizeof *secrets; i++) {
		snprintf(a, sizeof a, "%s/%s", ws, secrets[i]);
		if ((fd = open(a, O_PATH | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
			close(fd);
			if (mount("tmpfs", a, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=0,mode=0") < 0)
				die(a);
		}
	}
	tmark("mounts: /proc, masks");
	if (umount2("/oldroot", MNT_DETACH) < 0 || rmdir("/oldroot") < 0 ||
	    mount(NULL, "/", NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, "size=1m,mode=0755") < 0 ||
	    chdir(ws) < 0)
		die("detaching the old root");
}

/* --- confinement (child) ---------------------------------------------------- */
struct ll_attr { uint64_t fs, net, scoped; };
struct ll_beneath { uint64_t access; int32_t fd; } __attribute__((packed));

static void landlock(void)
{
	static const char *const files[] = { "/dev/null", "/dev/zero", "/dev/full", "/dev/random",
	                                     "/dev/urandom", "/proc" };
	struct ll_attr attr = { .fs = 0xffff, .scoped = 3 };   /* ABI 6+: abstract unix, signals */
	const uint64_t ro = 1 | 4 | 8, file_rw = 2 | 4 | (1 << 14) | (1 << 15);
	int abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, 1 /* VERSION */), rs;
	size_t i;

	if (abi < 6) {
		fprintf(stderr, "jail_floor: Landlock ABI %d < 6: not measured\n", abi);
		return;
	}
	rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
	if (rs < 0)
		die("landlock ruleset");
#define RULE(path, acc) do { \
		struct ll_beneath pb = { (acc), open((path), O_PATH | O_NOFOLLOW | O_CLOEXEC) }; \
		if (pb.fd < 0 || syscall(SYS_landlock_add_rule, rs, 1, &pb, 0) < 0) \
			die(path); \
		close(pb.fd); } while (0)
	RULE("/", ro);
	RULE(home, 0xffff);   /* the writable places, sorted as warden adds them */
	RULE("/tmp", 0xffff);
	RULE(ws, 0xffff);
	RULE("/dev/shm", 0xffff);
	for (i = 0; i < sizeof files / sizeof *files; i++)
		RULE(files[i], file_rw);
#undef RULE
	if (syscall(SYS_landlock_restrict_self, rs, 0) < 0)
		die("landlock_restrict_self");
	close(rs);
}

static void confine(int sock, int out, int err)
{
	static const struct { int r; rlim_t cur, max; } lim[] = {
		{ RLIMIT_CORE, 0, 0 }, { RLIMIT_FSIZE, 1ULL << 30, 1ULL << 30 },
		{ RLIMIT_NOFILE, 1024, 1024 }, { RLIMIT_CPU, 300, 301 } };
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = { { 0 } };
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC), c;
	size_t i;

	/* stdio: /dev/null in, the parent's pipes out; the socket at 3 */
	if (fd < 0 || dup2(fd, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0 ||
	    dup3(sock, 3, O_CLOEXEC) < 0 || syscall(SYS_close_range, 4, ~0U, 0) < 0)
		die("stdio");
	for (i = 0; i < sizeof lim / sizeof *lim; i++) {
		struct rlimit rl = { lim[i].cur, lim[i].max };
		if (setrlimit(lim[i].r, &rl) < 0)
			die("setrlimit");
	}
	if (prctl(PR_SET_SECUREBITS, 0xef, 0, 0, 0) < 0 ||
	    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		die("securebits");
	for (c = 0; c < 64; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0) {
			if (errno == EINVAL)
				break;   /* past the kernel's last capability */
			die("PR_CAPBSET_DROP");
		}
	if (syscall(SYS_capset, &h, d) < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		die("capabilities");
	tmark("fds+rlimits+caps+nnp");
	landlock();
	tmark("landlock");
}

static void load_filter(void)
{
	const struct wfilter_prog *p = &wfilter_prebuilt[0];   /* errno + audit: notify */
	struct sock_fprog fp = { .len = p->len, .filter = (struct sock_filter *)p->insns };
	int l;

	if (!p->notify) {
		errno = EINVAL;
		die("build/filters.o: the first program is not the notify one");
	}
	l = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fp);
	if (l < 0)
		die("seccomp");
	send_fd(3, l);
	close(l);
}

/* --- the jail's pid 1 --------------------------------------------------------- */
static int jail(int sock, int ws_tree, int out, int err, char **argv)
{
	char *envp[] = { "PATH=/usr/local/bin:/usr/bin:/bin", NULL };
	int st;
	pid_t p;

	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	recv1(sock, 'G');   /* the id maps are written */
	tmark("released");
	if (setsid() < 0)
		die("setsid");
	if (upto >= S_MOUNTS) {
		if (root && setgroups(0, NULL) < 0)
			die("setgroups");
		build_root(ws_tree);
		tmark("mounts: old root detached");
	}
	if (sethostname("warden", 6) < 0 || setdomainname("", 0) < 0)
		die("hostname");
	if (upto >= S_CGROUPS) {
		recv1(sock, 'A');   /* attached */
		tmark("attached (wait)");
		if (unshare(CLONE_NEWCGROUP) < 0)
			die("cgroup namespace");
	}
	if (upto >= S_CONFINE)
		confine(sock, out, err);
	if (upto >= S_ALL) {
		load_filter();
		tmark("seccomp load");
	}
	p = fork();
	if (p < 0)
		die("fork");
	if (p == 0) {
		tmark("fork");
		setpgid(0, 0);
		execve(argv[0], argv, envp);
		die(argv[0]);
	}
	while (waitpid(-1, &st, 0) != p)
		;
	tmark("program ran (init)");
	if (timing) {   /* when init exits: the parent times the namespaces' end */
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (write(upto >= S_CONFINE ? 3 : sock, &now, sizeof now) < 0)
			die("sync write");
	}
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}

/* --- the outer process ----------------------------------------------------------- */
#define SLOT_UID 0x7c000000u   /* outside warden's slot range (0x78000000 + n) */

static void idmap_write(pid_t pid, int deny)
{
	char p[64], m[64];

	if (deny) {
		snprintf(p, sizeof p, "/proc/%d/setgroups", (int)pid);
		writefile(p, "deny");
	}
	snprintf(p, sizeof p, "/proc/%d/uid_map", (int)pid);
	if (root)
		snprintf(m, sizeof m, "0 %u 1\n", SLOT_UID);
	else
		snprintf(m, sizeof m, "%u %u 1\n", (unsigned)getuid(), (unsigned)getuid());
	writefile(p, m);
	snprintf(p, sizeof p, "/proc/%d/gid_map", (int)pid);
	if (!root)
		snprintf(m, sizeof m, "%u %u 1\n", (unsigned)getgid(), (unsigned)getgid());
	writefile(p, m);
}

/* As root: the workspace as an idmapped tree (what the caller owns appears
 * owned by the slot uid, the jail's root, and what the jail creates is the
 * caller's), whose mapping needs a user namespace of its own: a helper that
 * waits on a pipe while the maps are written. */
static int idmapped_workspace(void)
{
	int pp[2], ns, fd, t;
	char p[64];
	pid_t pid;

	if (pipe2(pp, O_CLOEXEC) < 0)
		die("pipe");
	pid = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, NULL);
	if (pid < 0)
		die("clone(CLONE_NEWUSER)");
	if (pid == 0) {
		char c;
		close(pp[1]);
		_exit(read(pp[0], &c, 1) < 0);
	}
	close(pp[0]);
	idmap_write(pid, 0);
	snprintf(p, sizeof p, "/proc/%d/ns/user", (int)pid);
	ns = open(p, O_RDONLY | O_CLOEXEC);
	close(pp[1]);
	waitpid(pid, NULL, 0);
	if (ns < 0 || (fd = open(ws, O_PATH | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    (t = open_tree_(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE)) < 0 ||
	    setattr_(t, "", AT_EMPTY_PATH | AT_RECURSIVE,
	             MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_IDMAP, ns) < 0)
		die("idmapped workspace");
	close(fd);
	close(ns);
	return t;
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "ns", "mounts", "cgroups", "confine", "all" };
	const uint64_t nsflags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET |
	                         CLONE_NEWIPC | CLONE_NEWUTS;
	struct clone_args ca = { .flags = nsflags, .exit_signal = SIGCHLD };
	int sv[2], out[2] = { -1, -1 }, err[2] = { -1, -1 }, ws_tree = -1, listener = -1, st, i;
	char buf[4096];
	pid_t pid;

	if (argc > 2 && !strcmp(argv[1], "--upto")) {
		for (upto = -1, i = 0; i < 5; i++)
			if (!strcmp(argv[2], names[i]))
				upto = i;
		argv += 2;
		argc -= 2;
	}
	if (argc < 3 || upto < 0 || argv[1][0] != '/' || argv[2][0] != '/') {
		fprintf(stderr, "usage: jail_floor [--upto ns|mounts|cgroups|confine|all] /WORKSPACE /PROGRAM [ARG...]\n");
		return 2;
	}
	ws = argv[1];
	root = getuid() == 0;
	timing = getenv("FLOOR_TIMING") != NULL;
	clock_gettime(CLOCK_MONOTONIC, &last);
	home = root ? "/root" : getenv("HOME");
	if (!home || home[0] != '/' || !strcmp(home, "/"))
		home = "/root";
	snprintf(home_buf, sizeof home_buf, "%s", home);
	home = home_buf;

	if (upto >= S_CGROUPS) {
		cgroups_create();
		tmark("cgroup create");
	}
	if (upto >= S_CONFINE && (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0))
		die("pipe");
	if (root) {
		/* The slot is this run's alone while the lock is held (two jails
		 * must never share a host uid): warden's guarantee, three calls
		 * (one slot: concurrent floors wait for each other). */
		int lk;

		if ((mkdir("/run/warden-floor", 0700) < 0 && errno != EEXIST) ||
		    (lk = open("/run/warden-floor/slot-0", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0 ||
		    flock(lk, LOCK_EX) < 0)
			die("/run/warden-floor/slot-0");
	}
	if (root && upto >= S_MOUNTS) {
		ws_tree = idmapped_workspace();
		tmark("idmapped tree");
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		die("socketpair");

	if (root) {
		/* A helper with the slot's ids creates the jail (so the slot uid
		 * owns its user namespace), as the outer process's child
		 * (CLONE_PARENT), and says its pid. */
		int pp[2];
		pid_t h;

		if (pipe2(pp, O_CLOEXEC) < 0)
			die("pipe");
		h = fork();
		if (h < 0)
			die("fork");
		if (h == 0) {
			ca.flags |= CLONE_PARENT;
			ca.exit_signal = 0;
			if (setgroups(0, NULL) < 0 || setresgid(SLOT_UID, SLOT_UID, SLOT_UID) < 0 ||
			    setresuid(SLOT_UID, SLOT_UID, SLOT_UID) < 0)
				die("slot ids");
			pid = (pid_t)syscall(SYS_clone3, &ca, sizeof ca);
			if (pid == 0)
				jail(sv[1], ws_tree, out[1], err[1], argv + 2);
			_exit(pid < 0 || write(pp[1], &pid, sizeof pid) != sizeof pid);
		}
		close(pp[1]);
		if (read(pp[0], &pid, sizeof pid) != sizeof pid)
			die("the slot helper");
		close(pp[0]);
		waitpid(h, NULL, 0);
	} else {
		pid = (pid_t)syscall(SYS_clone3, &ca, sizeof ca);
		if (pid < 0)
			die("clone3");
		if (pid == 0)
			jail(sv[1], ws_tree, out[1], err[1], argv + 2);
	}
	close(sv[1]);
	if (ws_tree >= 0)
		close(ws_tree);
	if (out[1] >= 0) {
		close(out[1]);
		close(err[1]);
	}
	idmap_write(pid, !root);
	send1(sv[0], 'G');
	tmark("clone+maps");
	if (upto >= S_CGROUPS) {
		cgroups_attach(pid);   /* while the child builds its root */
		send1(sv[0], 'A');
		tmark("cgroup attach");
	}
	if (upto >= S_ALL) {
		listener = recv_fd(sv[0]);   /* kept until the jail is gone */
		tmark("listener received");
	}
	if (out[0] >= 0) {
		ssize_t n;
		while ((n = read(out[0], buf, sizeof buf)) > 0)
			if (write(1, buf, (size_t)n) < 0)
				break;
		while ((n = read(err[0], buf, sizeof buf)) > 0)
			if (write(2, buf, (size_t)n) < 0)
				break;
	}
	if (waitpid(pid, &st, __WALL) != pid)
		die("waitpid");
	tmark("program ran (exit seen)");
	if (timing) {   /* init's exit -> its exit seen: the namespaces' teardown */
		struct timespec t0, now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (read(sv[0], &t0, sizeof t0) == sizeof t0)
			fprintf(stderr, "floor: timing: [%d] %-22s %.3f ms\n", (int)getpid(),
			        "init exit -> exit seen", (double)(now.tv_sec - t0.tv_sec) * 1e3 +
			        (double)(now.tv_nsec - t0.tv_nsec) / 1e6);
	}
	if (listener >= 0)
		close(listener);
	for (i = 0; i < ncg; i++)
		if (rmdir(cg[i]) < 0)
			die(cg[i]);
	tmark("cgroup rmdir");
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
