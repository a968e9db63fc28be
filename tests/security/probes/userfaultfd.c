/* userfaultfd lets a process stall the kernel on a page fault of its
 * choosing, the classic way to win kernel races.  It must fail, and so
 * must the /dev/userfaultfd route. */
#include <fcntl.h>
#include <sys/syscall.h>

#include "probe.h"

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

int main(void)
{
	must_fail(syscall(SYS_userfaultfd, O_CLOEXEC), "userfaultfd");
	must_fail(syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY),
	          "userfaultfd(USER_MODE_ONLY)");
	must_fail(open("/dev/userfaultfd", O_RDWR | O_CLOEXEC), "open /dev/userfaultfd");
	BLOCKED("%s", probe_notes);
}
