/* Landlock for the jail and the broker (include/warden/landlock.h).  The
 * structs are the kernel's, declared here because the build machine's
 * headers may predate the network rules (ABI 4) and scopes (ABI 6). */
#include <errno.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "warden/landlock.h"

#define WLL_CREATE_RULESET_VERSION (1U << 0)
#define WLL_RULE_PATH_BENEATH 1
#define WLL_RULE_NET_PORT     2
#define WLL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)   /* ABI 6 */
#define WLL_SCOPE_SIGNAL               (1ULL << 1)   /* ABI 6 */

/* struct landlock_ruleset_attr as of ABI 6; older kernels take a prefix. */
struct wll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;     /* ABI 4 */
	uint64_t scoped;                 /* ABI 6 */
};

struct wll_path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

struct wll_net_port {
	uint64_t allowed_access;
	uint64_t port;
};

int wll_abi(void)
{
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0, WLL_CREATE_RULESET_VERSION);

	if (v >= 0)
		return (int)v;
	if (errno == ENOSYS || errno == EOPNOTSUPP)
		return 0;
	return -1;
}

uint64_t wll_fs_rights(int abi)
{
	uint64_t r = (WLL_FS_MAKE_SYM << 1) - 1;   /* ABI 1: EXECUTE .. MAKE_SYM */

	if (abi >= 2)
		r |= WLL_FS_REFER;
	if (abi >= 3)
		r |= WLL_FS_TRUNCATE;
	if (abi >= 5)
		r |= WLL_FS_IOCTL_DEV;
	return r;
}

int wll_create(struct wll_ruleset *rs, int abi, unsigned flags, struct werr *err)
{
	struct wll_ruleset_attr attr = { 0 };
	size_t size = offsetof(struct wll_ruleset_attr, handled_access_net);

	*rs = (struct wll_ruleset){ .fd = -1, .abi = abi, .fs = wll_fs_rights(abi) };
	attr.handled_access_fs = rs->fs;
	if (abi >= 4 && (flags & WLL_TCP)) {
		rs->net = WLL_NET_BIND_TCP | WLL_NET_CONNECT_TCP;
		attr.handled_access_net = rs->net;
		size = offsetof(struct wll_ruleset_attr, scoped);
	}
	if (abi >= 6) {
		attr.scoped = WLL_SCOPE_ABSTRACT_UNIX_SOCKET | WLL_SCOPE_SIGNAL;
		size = sizeof(attr);
	}
	rs->fd = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (rs->fd < 0)
		return werr_set(err, errno, "landlock: creating a ruleset (ABI %d)", abi);
	return 0;
}

int wll_allow_fd(const struct wll_ruleset *rs, int fd, uint64_t access, const char *what,
                 struct werr *err)
{
	struct wll_path_beneath pb = { .allowed_access = access & rs->fs, .parent_fd = fd };
	struct stat st;

	if (fstat(fd, &st) < 0)
		return werr_set(err, errno, "landlock: %s", what);
	if (!S_ISDIR(st.st_mode))
		pb.allowed_access &= WLL_FS_FILE;   /* else the kernel says EINVAL */
	if (!pb.allowed_access)
		return 0;                           /* an empty rule is ENOMSG */
	if (syscall(SYS_landlock_add_rule, rs->fd, WLL_RULE_PATH_BENEATH, &pb, 0) < 0)
		return werr_set(err, errno, "landlock: adding a rule for %s", what);
	return 0;
}

int wll_allow_port(const struct wll_ruleset *rs, uint16_t port, uint64_t access,
                   struct werr *err)
{
	struct wll_net_port np = { .allowed_access = access & rs->net, .port = port };

	if (!np.allowed_access)
		return 0;
	if (syscall(SYS_landlock_add_rule, rs->fd, WLL_RULE_NET_PORT, &np, 0) < 0)
		return werr_set(err, errno, "landlock: allowing TCP port %u", (unsigned)port);
	return 0;
}

int wll_restrict(const struct wll_ruleset *rs, const char *who, struct werr *err)
{
	if (syscall(SYS_landlock_restrict_self, rs->fd, 0) < 0)
		return werr_set(err, errno, "landlock: restricting %s", who);
	return 0;
}

void wll_close(struct wll_ruleset *rs)
{
	if (rs->fd >= 0)
		close(rs->fd);
	rs->fd = -1;
}
