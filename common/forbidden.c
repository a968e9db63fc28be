/* The syscalls no policy may allow, each with the reason a person reads
 * when allow_extra names it (include/warden/filter.h).  This table is the
 * one list: the filter (jail/filter.c) gives none of them an ALLOW rule and
 * answers the `enosys` ones ENOSYS, and the policy parser (policy/parse.c)
 * and wfilter_build reject allow_extra entries naming any of them with the
 * reason below ("ptrace can never be allowed: <why>").
 *
 * It lives in common/ because two processes read it: the supervisor's
 * policy parser and jail filter (what a policy may never allow), and the
 * broker's own filter (broker/core/confine.c: what it never makes).
 *
 * Sorted by name (test_filter checks it).  A reason is a clause that reads
 * after "can never be allowed: ". */
#include <string.h>

#include "warden/forbidden.h"
#include "warden/util.h"

#define VIEW   "it changes the jail's view of the filesystem"
#define CLOCK  "the clock is shared with the host"
#define KEYS   "the kernel keyrings are shared with the host"
#define MODS   "it loads kernel modules"
#define URING  "io_uring runs file and network operations the syscall filter never sees"
#define MOUNTS "it reveals the host's mounts"
#define OLD    "it is an obsolete interface nothing needs"

const struct wfilter_forbidden wfilter_forbidden[] = {
	{ "_sysctl",            "it changes kernel tunables", false },
	{ "acct",               "it changes host-wide process accounting", false },
	{ "add_key",            KEYS, false },
	{ "adjtimex",           CLOCK, false },
	{ "bpf",                "it loads programs into the kernel", false },
	{ "chroot",             VIEW, false },
	{ "clock_adjtime",      CLOCK, false },
	{ "clock_settime",      CLOCK, false },
	{ "clone3",             "its flags are in memory, out of the filter's sight (it is answered "
	                        "ENOSYS, and libc falls back to clone, whose flags are checked)", true },
	{ "create_module",      MODS, false },
	{ "delete_module",      "it unloads kernel modules", false },
	{ "fanotify_init",      "it watches the file access of other processes", false },
	{ "finit_module",       MODS, false },
	{ "fsconfig",           VIEW, false },
	{ "fsmount",            VIEW, false },
	{ "fsopen",             VIEW, false },
	{ "fspick",             VIEW, false },
	{ "get_kernel_syms",    "it inspects kernel modules", false },
	{ "init_module",        MODS, false },
	{ "io_uring_enter",     URING, false },
	{ "io_uring_register",  URING, false },
	{ "io_uring_setup",     URING, false },
	{ "ioperm",             "it gives direct hardware access", false },
	{ "iopl",               "it gives direct hardware access", false },
	{ "kcmp",               "it compares the kernel objects of other processes", false },
	{ "kexec_file_load",    "it replaces the running kernel", false },
	{ "kexec_load",         "it replaces the running kernel", false },
	{ "keyctl",             KEYS, false },
	{ "listmount",          MOUNTS, false },
	{ "lookup_dcookie",     "it is a kernel profiling interface", false },
	{ "lsm_set_self_attr",  "it changes security module state", false },
	{ "mount",              VIEW, false },
	{ "mount_setattr",      VIEW, false },
	{ "move_mount",         VIEW, false },
	{ "name_to_handle_at",  "it exposes file handles usable outside the jail", false },
	{ "nfsservctl",         "it controls the kernel NFS server", false },
	{ "open_by_handle_at",  "it opens files by handle, around the jail's mounts (the "
	                        "\"shocker\" escape)", false },
	{ "open_tree",          VIEW, false },
	{ "open_tree_attr",     VIEW, false },
	{ "openat2",            "its mode is in memory, out of the filter's sight (it is answered "
	                        "ENOSYS, and callers fall back to openat, whose mode is checked)", true },
	{ "perf_event_open",    "it exposes kernel and hardware events that leak information", false },
	{ "pidfd_getfd",        "it steals file descriptors from other processes", false },
	{ "pivot_root",         VIEW, false },
	{ "process_madvise",    "it acts on the memory of other processes", false },
	{ "process_vm_readv",   "it reads the memory of other processes", false },
	{ "process_vm_writev",  "it writes the memory of other processes", false },
	{ "ptrace",             "it lets code inspect and control other processes, including ones "
	                        "outside the jail", false },
	{ "query_module",       "it inspects kernel modules", false },
	{ "quotactl",           "it changes host-wide disk quotas", false },
	{ "quotactl_fd",        "it changes host-wide disk quotas", false },
	{ "reboot",             "it reboots the host", false },
	{ "request_key",        KEYS, false },
	{ "setns",              "it joins other namespaces, undoing the jail's isolation", false },
	{ "settimeofday",       CLOCK, false },
	{ "statmount",          MOUNTS, false },
	{ "stime",              CLOCK, false },
	{ "swapoff",            "it changes the host's swap", false },
	{ "swapon",             "it changes the host's swap", false },
	{ "sysfs",              OLD, false },
	{ "syslog",             "it reads the kernel log", false },
	{ "umount2",            VIEW, false },
	{ "unshare",            "it creates new namespaces, undoing the jail's isolation", false },
	{ "uselib",             OLD, false },
	{ "userfaultfd",        "it is a common tool for exploiting kernel races", false },
	{ "vhangup",            "it acts on terminals", false },
};
const size_t wfilter_forbidden_n = ARRAY_SIZE(wfilter_forbidden);

const char *wfilter_forbidden_why(const char *name)
{
	size_t i;

	for (i = 0; name && i < wfilter_forbidden_n; i++)
		if (strcmp(wfilter_forbidden[i].name, name) == 0)
			return wfilter_forbidden[i].why;
	return NULL;
}

bool wfilter_is_forbidden(const char *name)
{
	return wfilter_forbidden_why(name) != NULL;
}
