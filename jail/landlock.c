/* Step 11: Landlock, a second wall behind the mount namespace.  Even if a
 * mount were writable by mistake, Landlock only lets the jail write where
 * the policy says (the read-write binds and tmpfs), and on ABI 6+ it also
 * stops the jail from reaching abstract unix sockets and signalling
 * processes outside its domain.  Best effort: the kernel's ABI is probed,
 * rights it does not know are left out, and the caller reports what was
 * applied (doctor and the run summary say when it is missing). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/landlock.h>

#include "jail_impl.h"
#include "warden/util.h"

/* Debian 12's headers stop at ABI 3; these are the kernel's ABI values. */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#define WLL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define WLL_SCOPE_SIGNAL (1ULL << 1)

/* struct landlock_ruleset_attr as of ABI 6; older kernels take a prefix. */
struct wll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

#define FS_READ  (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define FS_ABI1  ((1ULL << 13) - 1)  /* EXECUTE .. MAKE_SYM */

int landlock_abi_version(void)
{
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	return v < 0 ? 0 : (int)v;
}

static uint64_t fs_rights_for_abi(int abi)
{
	uint64_t r = FS_ABI1;
	if (abi >= 2)
		r |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		r |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		r |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return r;
}

static int add_path(int ruleset, const char *path, uint64_t access, bool optional,
                    struct werr *err)
{
	struct landlock_path_beneath_attr pb = { .allowed_access = access };
	/* like the mounts, never through a link jailed code could have planted */
	int fd = jail_open_nofollow(AT_FDCWD, path, err);

	if (fd < 0) {
		if (optional && (errno == ENOENT || errno == ENOTDIR)) {
			werr_clear(err);
			return 0;
		}
		return werr_wrap(err, "landlock");
	}
	pb.parent_fd = fd;
	if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0) {
		int e = errno;
		close(fd);
		return werr_set(err, e, "landlock: adding a rule for %s", path);
	}
	close(fd);
	return 0;
}

int jail_landlock(const struct jail_spec *spec, const struct wplan *plan,
                  int *abi_used, struct werr *err)
{
	static const char *const devs[] = { "/dev/null", "/dev/zero", "/dev/full",
	                                    "/dev/random", "/dev/urandom" };
	struct wll_ruleset_attr attr = { 0 };
	size_t attr_size = sizeof(attr.handled_access_fs);
	int abi = landlock_abi_version();
	uint64_t all, rw_file, ro;
	int rs, r = -1;
	size_t i;

	*abi_used = 0;
	if (abi <= 0)
		return 0; /* not available: reported by the caller, not an error */
	all = fs_rights_for_abi(abi);
	attr.handled_access_fs = all;
	if (abi >= 6) {
		attr.scoped = WLL_SCOPE_ABSTRACT_UNIX_SOCKET | WLL_SCOPE_SIGNAL;
		attr_size = sizeof(attr);
	}
	ro = FS_READ | LANDLOCK_ACCESS_FS_EXECUTE;
	rw_file = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE |
	          (all & (LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV));

	rs = (int)syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0);
	if (rs < 0)
		return werr_set(err, errno, "landlock: creating a ruleset (ABI %d)", abi);

	/* Everything mounted is readable (the mounts already chose what is
	 * visible); only the policy's writable places are writable. */
	if (add_path(rs, "/", ro, false, err) < 0)
		goto out;
	for (i = 0; i < plan->n; i++) {
		const struct wmount *m = &plan->m[i];
		if (m->kind == WM_BIND_RW || m->kind == WM_TMPFS)
			if (add_path(rs, m->path, all, m->optional, err) < 0)
				goto out;
	}
	if (add_path(rs, "/dev/shm", all, true, err) < 0)
		goto out;
	for (i = 0; i < ARRAY_SIZE(devs); i++)
		if (add_path(rs, devs[i], rw_file, true, err) < 0)
			goto out;
	/* /proc/self/... is written by some runtimes (e.g. oom_score_adj, comm) */
	if (add_path(rs, "/proc", rw_file, false, err) < 0)
		goto out;

	if (syscall(SYS_landlock_restrict_self, rs, 0) < 0) {
		werr_set(err, errno, "landlock: restricting the jail");
		goto out;
	}
	*abi_used = abi;
	r = 0;
out:
	close(rs);
	(void)spec;
	return r;
}
