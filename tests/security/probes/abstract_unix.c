/* Abstract unix sockets live in the network namespace, not the
 * filesystem: a jail sharing the host's network namespace could reach
 * any abstract listener on the host (X11, dbus, containerd...).  The
 * harness listens on the host on "\0NAME" (argv[1], default
 * warden-probe-host) before the jail starts; connecting must fail.
 * Run outside a jail, the probe must report ESCAPED (positive control). */
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "probe.h"

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "warden-probe-host";
	struct sockaddr_un sa;
	socklen_t len;
	int fd;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(name) + 1 > sizeof(sa.sun_path))
		PROBE_FAIL("name too long");
	memcpy(sa.sun_path + 1, name, strlen(name));
	len = offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name);

	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0)
		PROBE_FAIL("socket(AF_UNIX): %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&sa, len) == 0)
		ESCAPED("connected to the abstract socket @%s", name);
	note("connect @%s: %s", name, strerrorname_np(errno));
	close(fd);
	/* the name is free in here: binding it must work and be invisible
	 * outside (the harness checks its listener is still the only one) */
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, len) == 0)
		note("bind @%s inside: ok (a separate namespace)", name);
	BLOCKED("%s", probe_notes);
}
