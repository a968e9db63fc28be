/* The jail's host identity when warden runs as root (include/warden/idmap.h):
 * a uid/gid slot per jail, the idmapped trees of its writable binds, and the
 * clone done by a helper that holds only the jail's ids.
 *
 * Why each privileged step is safe:
 *   - the range's ids are never 0: a built-in range far above users, or an
 *     /etc/subuid entry that must start at 65536 or above;
 *   - the slot's lock lives in /run/warden, a root-owned 0700 directory that
 *     is opened without following symlinks; a lock file is never read or
 *     written, only flock()ed, so its content cannot matter;
 *   - the helper user namespace of an idmap maps exactly one uid and one gid
 *     and runs nothing: its only process (a CLONE_VM child of warden) exits
 *     at once, and the maps are written while it waits to be reaped;
 *   - open_tree(OPEN_TREE_CLONE) makes a private detached copy; the host's
 *     mounts are never changed;
 *   - the jail's namespaces are created by a helper process that has already
 *     dropped every supplementary group and set all its uids and gids to the
 *     slot's, so its capabilities are gone (no keepcaps) before clone3: the
 *     jail's user namespace is owned by the slot's uid, and nothing in the
 *     jail ever held host uid 0.  The helper shares warden's memory
 *     (CLONE_VM | CLONE_VFORK) but not its credentials: the raw set*id
 *     calls change the helper's alone, and the jail, a copy made by clone3,
 *     is born with them. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/mount.h>
#include <linux/sched.h>

#include "jail_impl.h"
#include "warden/idmap.h"
#include "warden/util.h"

#ifndef MOUNT_ATTR_IDMAP
#define MOUNT_ATTR_IDMAP 0x00100000
#endif
#ifndef MOUNT_ATTR_NOSUID
#define MOUNT_ATTR_NOSUID 0x00000002
#define MOUNT_ATTR_NODEV  0x00000004
#endif
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef OPEN_TREE_CLOEXEC
#define OPEN_TREE_CLOEXEC O_CLOEXEC
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

#define MIN_BASE 65536u

/* --- the range ------------------------------------------------------------ */

/* "warden:START:COUNT" in /etc/subuid or /etc/subgid.  0 when there is no
 * such entry (or no file), -1 when there is a bad one. */
static int sub_entry(const char *file, uint32_t *start, uint32_t *count, struct werr *err)
{
	FILE *f = fopen(file, "re");
	char line[256];
	int lineno = 0, found = 0;

	if (!f)
		return errno == ENOENT ? 0 : werr_set(err, errno, "reading %s", file);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, c;
		char name[64], *end;

		lineno++;
		if (sscanf(line, "%63[^:]:", name) != 1 || strcmp(name, WIDMAP_USER))
			continue;
		end = line + strlen(WIDMAP_USER) + 1;
		errno = 0;
		s = strtoull(end, &end, 10);
		if (*end++ != ':' || errno)
			goto bad;
		c = strtoull(end, &end, 10);
		if ((*end != '\n' && *end != '\0') || errno || c == 0)
			goto bad;
		if (s < MIN_BASE || s + c > 0xfffffffeULL) {
			fclose(f);
			return werr_set(err, 0, "%s:%d: the range of \"%s\" (%llu, %llu ids) must lie "
			                "between %u and 4294967294: a jail must never map to a user's "
			                "or root's id; fix the entry or remove it to use the built-in "
			                "range", file, lineno, WIDMAP_USER, s, c, MIN_BASE);
		}
		*start = (uint32_t)s;
		*count = (uint32_t)c;
		found = 1;
		break;
	}
	fclose(f);
	return found;
bad:
	fclose(f);
	return werr_set(err, 0, "%s:%d: malformed entry for \"%s\"; expected %s:START:COUNT",
	                file, lineno, WIDMAP_USER, WIDMAP_USER);
}

int widmap_range(struct widrange *r, struct werr *err)
{
	uint32_t us = 0, uc = 0, gs = 0, gc = 0;
	int hu, hg;

	memset(r, 0, sizeof(*r));
	if ((hu = sub_entry("/etc/subuid", &us, &uc, err)) < 0 ||
	    (hg = sub_entry("/etc/subgid", &gs, &gc, err)) < 0)
		return -1;
	if (hu != hg)
		return werr_set(err, 0, "/etc/%s has an entry for \"%s\" but /etc/%s has none; "
		                "add both (the jail's uid and gid come from them) or neither",
		                hu ? "subuid" : "subgid", WIDMAP_USER, hu ? "subgid" : "subuid");
	if (!hu) {
		r->uid_base = r->gid_base = WIDMAP_DEFAULT_BASE;
		r->count = WIDMAP_DEFAULT_COUNT;
		snprintf(r->source, sizeof(r->source), "built-in (no \"%s\" in /etc/subuid)",
		         WIDMAP_USER);
		return 0;
	}
	r->uid_base = us;
	r->gid_base = gs;
	r->count = uc < gc ? uc : gc;
	snprintf(r->source, sizeof(r->source), "/etc/subuid and /etc/subgid (\"%s\")", WIDMAP_USER);
	return 0;
}

/* --- slots ---------------------------------------------------------------- */

/* /run/warden, created root-owned 0700 if missing; refused if it is
 * anything else (a symlink, or owned by someone who could swap the locks). */
static int lock_dir(struct werr *err)
{
	struct stat st;
	int fd;

	if (mkdir(WIDMAP_LOCK_DIR, 0700) < 0 && errno != EEXIST)
		return werr_set(err, errno, "creating %s (the jails' uid locks)", WIDMAP_LOCK_DIR);
	fd = open(WIDMAP_LOCK_DIR, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return werr_set(err, errno, "opening %s (must be a directory, not a symlink)",
		                WIDMAP_LOCK_DIR);
	if (fstat(fd, &st) < 0 || st.st_uid != 0 || (st.st_mode & 022)) {
		close(fd);
		return werr_set(err, EPERM, "%s must be a directory owned by root and writable "
		                "only by root; remove it and warden recreates it", WIDMAP_LOCK_DIR);
	}
	return fd;
}

int widmap_slot_get(struct widslot *s, struct werr *err)
{
	struct widrange r;
	_cleanup_close_ int dir = -1;
	char name[32];

	s->lock_fd = -1;
	s->uid = (uid_t)-1;
	s->gid = (gid_t)-1;
	if (widmap_range(&r, err) < 0 || (dir = lock_dir(err)) < 0)
		return -1;
	for (uint32_t i = 0; i < r.count; i++) {
		int fd;

		snprintf(name, sizeof(name), "slot-%u", i);
		fd = openat(dir, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			return werr_set(err, errno, "opening %s/%s", WIDMAP_LOCK_DIR, name);
		/* held by the supervisor until the jail is reaped; the kernel
		 * drops it if warden dies, when the jail dies too (PDEATHSIG) */
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			s->lock_fd = fd;
			s->uid = r.uid_base + i;
			s->gid = r.gid_base + i;
			return 0;
		}
		close(fd);
		if (errno != EWOULDBLOCK)
			return werr_set(err, errno, "locking %s/%s", WIDMAP_LOCK_DIR, name);
	}
	return werr_set(err, EAGAIN, "all %u jail uids of the range %s are in use; wait for "
	                "jails to end or give \"%s\" a larger range in /etc/subuid and /etc/subgid",
	                r.count, r.source, WIDMAP_USER);
}

/* --- idmapped trees ---------------------------------------------------------- */

static int write_map(pid_t pid, const char *file, unsigned from, unsigned to, struct werr *err)
{
	char path[64], line[64];

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	snprintf(line, sizeof(line), "%u %u 1\n", from, to);
	return write_file_str(path, line, err);
}

/* The namespace's only process does nothing: it shares warden's memory
 * (CLONE_VM, so making it copies no page table) and exits at once, running
 * only the libc clone trampoline on its own stack.  The namespace exists
 * from clone on, and until warden reaps the process its /proc entry leads
 * to the namespace through its credentials, whether it has run yet or
 * not: the maps are written and the namespace opened meanwhile.  Nothing
 * ever runs in the namespace.  (A fork that waited on a pipe cost ~0.5 ms
 * with warden's pages to copy, this ~0.1: docs/design.md, "The root path".) */
static char holder_stack[4096] __attribute__((aligned(16)));

static int userns_holder(void *p)
{
	return 0;
}

int widmap_userns(uid_t from_uid, gid_t from_gid, uid_t to_uid, gid_t to_gid,
                  struct werr *err)
{
	int fd = -1, e;
	char path[64];
	sigset_t all, old;
	pid_t pid;

	/* no handler of warden's may run in it: every signal blocked */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = clone(userns_holder, holder_stack + sizeof(holder_stack),
	            CLONE_NEWUSER | CLONE_VM, NULL);
	e = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (pid < 0)
		return werr_set(err, e, "creating the user namespace of an idmapped mount");
	if (write_map(pid, "uid_map", from_uid, to_uid, err) == 0 &&
	    write_map(pid, "gid_map", from_gid, to_gid, err) == 0) {
		snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			werr_set(err, errno, "opening %s", path);
	}
	/* exit signal 0: __WALL.  Reaped before returning, so the next
	 * holder never shares its stack with a running one. */
	while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
		;
	return fd;
}

/* The kernel refuses with EINVAL what it cannot idmap; name the filesystem */
static const char *fs_name(int fd)
{
	struct statfs sf;

	if (fstatfs(fd, &sf) < 0)
		return "?";
	switch ((unsigned long)sf.f_type) {
	case 0xEF53:     return "ext2/3/4";
	case 0x58465342: return "xfs";
	case 0x9123683E: return "btrfs";
	case 0x01021994: return "tmpfs";
	case 0x794c7630: return "overlayfs";
	case 0x62656572: return "sysfs";
	case 0x9fa0:     return "proc";
	case 0x6969:     return "nfs";
	case 0x65735546: return "fuse";
	case 0x01021997: return "9p";
	default:         return "this filesystem";
	}
}

int widmap_tree(int fd, const char *path, int userns_fd, struct werr *err)
{
	struct mount_attr_w { uint64_t attr_set, attr_clr, propagation, userns_fd; } a = {
		.attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
		.userns_fd = (uint64_t)userns_fd,
	};
	int tree = (int)syscall(SYS_open_tree, fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
	                        AT_EMPTY_PATH | AT_RECURSIVE);

	if (tree < 0)
		return werr_set(err, errno, "copying the mount of %s (open_tree)", path);
	if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof(a)) < 0) {
		int e = errno;
		const char *fs = fs_name(fd);
		close(tree);
		if (e == EINVAL || e == EPERM || e == ENOSYS)
			return werr_set(err, e, "%s cannot be idmapped (%s, or a mount below it, does "
			                "not support idmapped mounts): as root the jail's writes there "
			                "would come from its own host uid, not the owner's. Bind a "
			                "directory on a filesystem that does (ext4, xfs, btrfs, tmpfs), "
			                "make it read-only in the policy, or run warden as an ordinary "
			                "user", path, fs);
		return werr_set(err, e, "idmapping the mount of %s", path);
	}
	return tree;
}

/* --- the jail's side --------------------------------------------------------- */

/* As root: the jail's slot, and an idmapped tree for the workspace and every
 * read-write bind (owner -> the slot's ids).  Read-only binds stay as they
 * are, so root's files there are foreign to the jail (0600 unreadable). */
int jail_idmap_prepare(struct wplan *plan, const struct jail_spec *spec, struct werr *err)
{
	struct widslot slot;

	if (widmap_slot_get(&slot, err) < 0)
		return -1;
	plan->slot_fd = slot.lock_fd;
	plan->host_uid = slot.uid;
	plan->host_gid = slot.gid;
	for (size_t i = 0; i < plan->n; i++) {
		struct wmount *m = &plan->m[i];
		struct stat st;
		int fd, ns;

		if (m->kind != WM_BIND_RW && strcmp(m->path, spec->workspace))
			continue;
		/* the source the plan resolved and holds (jail/plan.c), never
		 * the path again */
		fd = m->src_fd;
		if (fd < 0)
			continue;   /* optional and missing */
		if (fstat(fd, &st) < 0)
			return werr_set(err, errno, "stat %s", m->path);
		/* as the child does for plain binds (jail/mounts.c): the path must
		 * still lead to the held object, without a symlink on the way */
		{
			struct stat now;
			int cur = jail_open_nofollow(AT_FDCWD, m->src, err);
			bool same = cur >= 0 && fstat(cur, &now) == 0 &&
			            now.st_dev == st.st_dev && now.st_ino == st.st_ino;
			if (cur >= 0)
				close(cur);
			if (!same)
				return werr_set(err, 0, "%s changed since it was opened (%s); refusing "
				                "to bind it", m->src, cur < 0 ? "it cannot be reached "
				                "the same way" : "another file is at its path now");
		}
		ns = widmap_userns(st.st_uid, st.st_gid, slot.uid, slot.gid, err);
		if (ns < 0)
			return -1;
		m->tree_fd = widmap_tree(fd, m->path, ns, err);
		close(ns);
		if (m->tree_fd < 0)
			return -1;
	}
	return 0;
}

/* --- the jail's creator ------------------------------------------------------ */

/* The helper shares warden's memory (CLONE_VM) and runs while warden is
 * suspended in clone (CLONE_VFORK), so it copies no page table and warden's
 * pages stay unshared.  Sharing memory binds it: raw system calls only (the
 * libc set*id wrappers would signal warden's threads to change theirs too),
 * no malloc, no stdio, and the stack below.  The jail it makes is a normal
 * copy (no CLONE_VM) of that memory, so it starts on a copy of the helper's
 * stack and must never return through it: it calls its entry directly.
 * That stack is also the jail's (setup and init run on it), hence a main
 * thread's size, mapped once per process and touched only where used.
 * (The kernel gives a CLONE_VM child no rseq registration, so neither has
 * the jail until its program's exec: libc uses it only for sched_getcpu,
 * which warden's code never calls.) */
#define HELPER_STACK (8u << 20)

struct clone_as {
	const struct clone_args *ca;
	uid_t uid;
	gid_t gid;
	const int *join;        /* v1 "tasks" files to write "0" to */
	size_t n_join;
	void (*entry)(void *);
	void *arg;
	long pid;               /* out: the jail's pid, or -errno */
	bool joined;            /* out: the -errno is from joining a group */
};

static int clone_as_helper(void *p)
{
	struct clone_as *c = p;
	struct clone_args ca = *c->ca;  /* changed below: the helper's own copy */
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	long pid;

	/* Into the jail's v1 groups first, so that the jail is born there
	 * (wcg_join_fds): moving oneself takes no global lock.  The files
	 * were opened by warden, whose credentials the kernel checks. */
	for (size_t i = 0; i < c->n_join; i++)
		if (syscall(SYS_write, c->join[i], "0", 1) != 1) {
			c->pid = -(errno ? errno : EIO);
			c->joined = true;
			return 0;
		}
	/* and the jail does not inherit them (this fd table is the helper's
	 * own copy; warden closes its own) */
	for (size_t i = 0; i < c->n_join; i++)
		(void)syscall(SYS_close, c->join[i]);
	/* every id the slot's, no groups, checked back: from here the
	 * process holds no capability on the host (no keepcaps) */
	if (syscall(SYS_setgroups, 0, NULL) < 0 ||
	    syscall(SYS_setresgid, c->gid, c->gid, c->gid) < 0 ||
	    syscall(SYS_setresuid, c->uid, c->uid, c->uid) < 0 ||
	    syscall(SYS_getresuid, &ru, &eu, &su) < 0 || syscall(SYS_getresgid, &rg, &eg, &sg) < 0 ||
	    ru != c->uid || eu != c->uid || su != c->uid ||
	    rg != c->gid || eg != c->gid || sg != c->gid ||
	    syscall(SYS_getgroups, 0, NULL) != 0) {
		c->pid = -(errno ? errno : EPERM);
		return 0;
	}
	/* the jail's parent is the supervisor; clone3 wants no exit signal
	 * with CLONE_PARENT and gives the jail the helper's: SIGCHLD (below),
	 * so that waitid() without __WALL reaps it (jailrun.c, session.c) */
	ca.flags |= CLONE_PARENT;
	ca.exit_signal = 0;
	pid = syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid == 0) {
		c->entry(c->arg);       /* the jail: never returns */
		_exit(127);
	}
	c->pid = pid < 0 ? -errno : pid;
	return 0;
}

long jail_clone_as(const struct clone_args *ca, uid_t uid, gid_t gid, const int *join, size_t n_join,
                   void (*entry)(void *), void *arg, int *pidfd, struct werr *err)
{
	/* reused: the helper has exited when we return, and jails are only
	 * started from warden's one thread */
	static char *stack;
	struct clone_as c = { .ca = ca, .uid = uid, .gid = gid, .join = join, .n_join = n_join,
	                      .entry = entry, .arg = arg, .pid = -EPERM };
	sigset_t all, old;
	pid_t helper;
	int e;

	*pidfd = -1;
	if (!stack) {
		/* a guard page below: an overflow faults instead of writing
		 * into whatever is mapped there */
		char *s = mmap(NULL, HELPER_STACK, PROT_READ | PROT_WRITE,
		               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
		if (s == MAP_FAILED)
			return werr_set(err, errno, "mapping the stack of the helper that creates the jail");
		if (mprotect(s, 4096, PROT_NONE) < 0) {
			e = errno;
			munmap(s, HELPER_STACK);
			return werr_set(err, e, "mapping the stack of the helper that creates the jail");
		}
		stack = s;
	}
	/* No handler of warden's may run in the helper (on its stack, in
	 * warden's memory): it starts with every signal blocked.  The jail
	 * inherits that mask and resets it first thing (jail_child). */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	helper = clone(clone_as_helper, stack + HELPER_STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, &c);
	e = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (helper < 0)
		return werr_set(err, e, "starting the helper that creates the jail (clone)");
	/* CLONE_VFORK: it has left warden's memory */
	while (waitpid(helper, NULL, 0) < 0 && errno == EINTR)
		;
	if (c.pid < 0) {
		errno = (int)-c.pid;
		if (c.joined)
			return werr_set(err, (int)-c.pid, "joining the jail's cgroups (writing 0 to "
			                "their tasks files) before creating it");
		if (c.pid == -EAGAIN && n_join > 0)
			return werr_set(err, EAGAIN, "creating the jail as uid %u (in its cgroups: a "
			                "pids limit below 2 leaves no room for init and the program)",
			                (unsigned)uid);
		return werr_set(err, (int)-c.pid, "creating the jail as uid %u", (unsigned)uid);
	}
	/* the jail is our child (CLONE_PARENT) and not reaped: its pid cannot
	 * have been reused */
	*pidfd = (int)syscall(SYS_pidfd_open, (pid_t)c.pid, 0);
	if (*pidfd < 0) {
		e = errno;
		kill((pid_t)c.pid, SIGKILL);
		waitpid((pid_t)c.pid, NULL, __WALL);
		return werr_set(err, e, "pidfd_open");
	}
	return c.pid;
}
