/* Terminal injection: TIOCSTI pushes bytes into a terminal's input queue,
 * to be run by whatever shell reads it after the jail ends.  The jail must
 * have no terminal at all: fds 0-2 are pipes or /dev/null, /dev/tty cannot
 * be opened, and TIOCSTI/TIOCLINUX are refused by the filter anyway. */
#include <fcntl.h>
#include <sys/ioctl.h>

#include "probe.h"

#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif

int main(void)
{
	char c = '#', what[64];
	char sel[8] = { 2 };   /* TIOCL_SETSEL */
	int fd;

	for (fd = 0; fd <= 2; fd++) {
		if (isatty(fd))
			ESCAPED("fd %d is a terminal", fd);
		snprintf(what, sizeof(what), "TIOCSTI on fd %d", fd);
		must_fail(ioctl(fd, TIOCSTI, &c), what);
		snprintf(what, sizeof(what), "TIOCLINUX on fd %d", fd);
		must_fail(ioctl(fd, TIOCLINUX, sel), what);
	}
	fd = open("/dev/tty", O_RDWR | O_NOCTTY);
	if (fd >= 0) {
		if (ioctl(fd, TIOCSTI, &c) == 0)
			ESCAPED("/dev/tty opened and TIOCSTI worked");
		ESCAPED("/dev/tty opened (a terminal is reachable)");
	}
	note("open /dev/tty: %s", strerrorname_np(errno));
	fd = open("/dev/console", O_RDWR | O_NOCTTY);
	if (fd >= 0)
		ESCAPED("/dev/console opened");
	note("open /dev/console: %s", strerrorname_np(errno));
	BLOCKED("%s", probe_notes);
}
