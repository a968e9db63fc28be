/* io_uring: its operations are not syscalls, so the filter cannot see
 * them once a ring exists.  io_uring_setup must fail. */
#include <linux/io_uring.h>
#include <sys/syscall.h>

#include "probe.h"

int main(void)
{
	struct io_uring_params params;

	memset(&params, 0, sizeof(params));
	must_fail(syscall(SYS_io_uring_setup, 4, &params), "io_uring_setup");
	must_fail(syscall(SYS_io_uring_enter, 0, 1, 0, 0, NULL, 0), "io_uring_enter");
	must_fail(syscall(SYS_io_uring_register, 0, 0, NULL, 0), "io_uring_register");
	BLOCKED("%s", probe_notes);
}
