/* UTS namespace: the jail's hostname is its own, not the host's
 * (argv[1]), and cannot be changed: it tries to set "warden-escaped", and
 * the harness checks on the host that the host's name did not change. */
#include <sys/utsname.h>

#include "probe.h"

int main(int argc, char **argv)
{
	struct utsname u;

	if (argc < 2)
		PROBE_FAIL("usage: hostname HOST-HOSTNAME");
	if (uname(&u) < 0)
		PROBE_FAIL("uname: %s", strerror(errno));
	if (strcmp(u.nodename, argv[1]) == 0)
		ESCAPED("the jail's hostname is the host's (%s)", u.nodename);
	note("hostname \"%s\" (host: \"%s\")", u.nodename, argv[1]);
	must_fail(sethostname("warden-escaped", 14), "sethostname");
	must_fail(setdomainname("x", 1), "setdomainname");
	BLOCKED("%s", probe_notes);
}
