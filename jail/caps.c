/* Step 9: drop every capability.  The jail's process holds all capabilities
 * of its own user namespace until here; afterwards it holds none, cannot get
 * any back through execve (the bounding set is empty and securebits forbid
 * root's implicit grant), and the ambient set is empty. */
#include <errno.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <linux/securebits.h>

#include "jail_impl.h"

int jail_drop_caps(struct werr *err)
{
	cap_t empty;
	cap_value_t c, n;

	/* Lock out the "root gets all caps on exec" rule first (needs
	 * CAP_SETPCAP, which we still hold).  With uid 0 inside the jail, this
	 * is what keeps exec of any program capability-free. */
	if (prctl(PR_SET_SECUREBITS,
	          SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
	          SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
	          SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
	          SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED) < 0)
		return werr_set(err, errno, "setting securebits");
	/* One call (libcap's cap_reset_ambient asks about each capability
	 * first: 41 more syscalls). */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return werr_set(err, errno, "clearing the ambient capabilities");
	/* Every capability the kernel has, beyond what libcap knows too: the
	 * kernel answers EINVAL from its last capability + 1 on, for every
	 * number above, so the first EINVAL ends the list. */
	for (c = 0; c < 64; c++) {
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) == 0)
			continue;
		if (errno == EINVAL)
			break;
		return werr_set(err, errno, "dropping capability %d from the bounding set", c);
	}
	n = c;   /* the kernel's capabilities: 0 .. n-1 */
	empty = cap_init();
	if (!empty)
		return werr_set(err, errno, "cap_init");
	if (cap_set_proc(empty) < 0) {
		cap_free(empty);
		return werr_set(err, errno, "dropping capabilities");
	}
	cap_free(empty);
	/* Read the state back: a silent failure here would be a hole. */
	{
		cap_t now = cap_get_proc();
		cap_flag_value_t v = CAP_CLEAR;
		int bad = 0;
		if (!now)
			return werr_set(err, errno, "cap_get_proc");
		for (c = 0; c < n || c < (cap_value_t)cap_max_bits(); c++) {
			cap_get_flag(now, c, CAP_EFFECTIVE, &v);
			bad |= v == CAP_SET;
			cap_get_flag(now, c, CAP_PERMITTED, &v);
			bad |= v == CAP_SET;
			bad |= prctl(PR_CAPBSET_READ, c, 0, 0, 0) > 0;
		}
		cap_free(now);
		if (bad)
			return werr_set(err, 0, "capabilities are still held after dropping them");
	}
	return 0;
}
