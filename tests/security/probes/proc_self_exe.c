/* /proc/self/exe overwrite (runc CVE-2019-5736): a jailed process must not
 * be able to open for writing the binary of any process it can see, least
 * of all one belonging to the runtime.  Also checks that pid 1 of the jail
 * is not a host binary (warden itself). */
#include <fcntl.h>
#include <limits.h>

#include "probe.h"

static void try_write(const char *path)
{
	char what[PATH_MAX + 32];
	int fd;

	snprintf(what, sizeof(what), "open %s O_WRONLY", path);
	fd = open(path, O_WRONLY);
	if (fd >= 0)
		ESCAPED("%s worked", what);
	note("%s: %s", what, strerrorname_np(errno));
	snprintf(what, sizeof(what), "open %s O_RDWR", path);
	must_fail(open(path, O_RDWR), what);
}

int main(void)
{
	char target[PATH_MAX];
	ssize_t n;

	try_write("/proc/self/exe");
	try_write("/proc/1/exe");
	n = readlink("/proc/1/exe", target, sizeof(target) - 1);
	if (n > 0) {
		target[n] = '\0';
		const char *base = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;

		/* warden's own binaries must never run inside a jail */
		if (!strcmp(base, "warden") || !strcmp(base, "warden-broker"))
			ESCAPED("pid 1 of the jail is %s", target);
		note("/proc/1/exe -> %s", target);
	}
	BLOCKED("%s", probe_notes);
}
