/* Flooding the audit: call many distinct syscall numbers the kernel does
 * not have (UNKNOWN of them, 1000 and up, below the x32 bit) and many
 * calls of a few it has but the filter denies (KNOWN rounds of each), so
 * that every call is a seccomp notification the supervisor must answer
 * and count.  The escape it tries is the supervisor's memory and the
 * audit log: both must stay bounded (security.bats and serve.bats judge
 * that from the host).  Every call must fail with EPERM (denied and
 * answered) or ENOSYS; anything that succeeds is an escape.
 *
 * The denied ones are every call the filter can never allow (jail/filter.c's
 * forbidden[], as far as this libc names them), so that KNOWN rounds of
 * them also exceed the per-run cap on denied records.
 *
 *   syscall_flood [UNKNOWN [KNOWN]]    defaults: 200000 and 20 */
#include <sys/syscall.h>

#include "probe.h"

int main(int argc, char **argv)
{
	long unknown = argc > 1 ? atol(argv[1]) : 200000;
	long known = argc > 2 ? atol(argv[2]) : 20;
	static const long denied[] = {
		SYS__sysctl, SYS_acct, SYS_add_key, SYS_adjtimex, SYS_bpf, SYS_chroot, SYS_clock_adjtime,
		SYS_clock_settime, SYS_create_module, SYS_delete_module, SYS_fanotify_init, SYS_finit_module,
		SYS_fsconfig, SYS_fsmount, SYS_fsopen, SYS_fspick, SYS_get_kernel_syms, SYS_init_module,
		SYS_io_uring_enter, SYS_io_uring_register, SYS_io_uring_setup, SYS_ioperm, SYS_iopl,
		SYS_kcmp, SYS_kexec_file_load, SYS_kexec_load, SYS_keyctl, SYS_lookup_dcookie, SYS_mount,
		SYS_mount_setattr, SYS_move_mount, SYS_name_to_handle_at, SYS_nfsservctl,
		SYS_open_by_handle_at, SYS_open_tree, SYS_perf_event_open, SYS_pidfd_getfd, SYS_pivot_root,
		SYS_process_madvise, SYS_process_vm_readv, SYS_process_vm_writev, SYS_ptrace,
		SYS_query_module, SYS_quotactl, SYS_quotactl_fd, SYS_reboot, SYS_request_key, SYS_setns,
		SYS_settimeofday, SYS_swapoff, SYS_swapon, SYS_syslog, SYS_sysfs, SYS_umount2, SYS_uselib,
		SYS_userfaultfd, SYS_vhangup
	};
	unsigned long eperm = 0, enosys = 0;

	for (long n = 0; n < unknown; n++) {
		long r = syscall(1000 + n, 0, 0, 0, 0, 0, 0);
		if (r >= 0)
			ESCAPED("syscall %ld succeeded", 1000 + n);
		if (errno == EPERM)
			eperm++;
		else if (errno == ENOSYS)
			enosys++;
		else
			PROBE_FAIL("syscall %ld: %s", 1000 + n, strerrorname_np(errno));
	}
	for (long k = 0; k < known; k++)
		for (size_t i = 0; i < sizeof(denied) / sizeof(denied[0]); i++)
			/* bad pointers: if the filter let one through, it fails
			 * harmlessly with EFAULT/EINVAL/EBADF, not EPERM */
			if (syscall(denied[i], -1L, -1L, -1L, -1L, -1L, -1L) >= 0)
				ESCAPED("syscall %ld succeeded", denied[i]);
			else if (errno != EPERM)
				ESCAPED("syscall %ld reached the kernel (%s)", denied[i],
				        strerrorname_np(errno));
	note("%ld unknown numbers: %lu EPERM, %lu ENOSYS", unknown, eperm, enosys);
	note("%ld rounds of %zu denied calls: EPERM", known, sizeof(denied) / sizeof(denied[0]));
	BLOCKED("%s", probe_notes);
}
