/* Step 11: Landlock, a second wall behind the mount namespace.  Even if a
 * mount were writable by mistake, Landlock only lets the jail write where
 * the policy says (the read-write binds and tmpfs), and on ABI 6+ it also
 * stops the jail from reaching abstract unix sockets and signalling
 * processes outside its domain.  Best effort: the kernel's ABI is probed,
 * rights it does not know are left out, and the caller reports what was
 * applied (doctor and the run summary say when it is missing). */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "jail_impl.h"
#include "warden/landlock.h"
#include "warden/util.h"

int landlock_abi_version(void)
{
	int abi = wll_abi();

	return abi < 0 ? 0 : abi;
}

static int add_path(const struct wll_ruleset *rs, const char *path, uint64_t access,
                    bool optional, struct werr *err)
{
	/* like the mounts, never through a link jailed code could have planted */
	int fd = jail_open_nofollow(AT_FDCWD, path, err), r;

	if (fd < 0) {
		if (optional && (errno == ENOENT || errno == ENOTDIR)) {
			werr_clear(err);
			return 0;
		}
		return werr_wrap(err, "landlock");
	}
	r = wll_allow_fd(rs, fd, access, path, err);
	close(fd);
	return r;
}

int jail_landlock(const struct jail_spec *spec, const struct wplan *plan,
                  int *abi_used, struct werr *err)
{
	static const char *const devs[] = { "/dev/null", "/dev/zero", "/dev/full",
	                                    "/dev/random", "/dev/urandom" };
	/* the ruleset cuts each rule to the rights this ABI knows */
	const uint64_t ro = WLL_FS_READ_FILE | WLL_FS_READ_DIR | WLL_FS_EXECUTE;
	const uint64_t rw_file = WLL_FS_READ_FILE | WLL_FS_WRITE_FILE | WLL_FS_TRUNCATE |
	                         WLL_FS_IOCTL_DEV;
	const uint64_t all = ~0ULL;
	struct wll_ruleset rs;
	int abi = landlock_abi_version(), r = -1;
	size_t i;

	*abi_used = 0;
	if (abi <= 0)
		return 0; /* not available: reported by the caller, not an error */
	if (wll_create(&rs, abi, 0, err) < 0)
		return -1;

	/* Everything mounted is readable (the mounts already chose what is
	 * visible); only the policy's writable places are writable. */
	if (add_path(&rs, "/", ro, false, err) < 0)
		goto out;
	for (i = 0; i < plan->n; i++) {
		const struct wmount *m = &plan->m[i];
		if (m->kind == WM_BIND_RW || m->kind == WM_TMPFS)
			if (add_path(&rs, m->at, all, m->optional, err) < 0)
				goto out;
	}
	if (add_path(&rs, "/dev/shm", all, true, err) < 0)
		goto out;
	for (i = 0; i < ARRAY_SIZE(devs); i++)
		if (add_path(&rs, devs[i], rw_file, true, err) < 0)
			goto out;
	/* /proc/self/... is written by some runtimes (e.g. oom_score_adj, comm) */
	if (add_path(&rs, "/proc", rw_file, false, err) < 0)
		goto out;

	if (wll_restrict(&rs, "the jail", err) < 0)
		goto out;
	*abi_used = abi;
	r = 0;
out:
	wll_close(&rs);
	(void)spec;
	return r;
}
