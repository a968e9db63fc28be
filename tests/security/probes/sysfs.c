/* /sys: absent, or mounted read-only, so that no kernel or device knob
 * (uevent_helper, cgroupfs, device attributes) can be written. */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "probe.h"

static void no_write(const char *path)
{
	char what[128];

	snprintf(what, sizeof(what), "open %s O_WRONLY", path);
	must_fail(open(path, O_WRONLY | O_CLOEXEC), what);
}

int main(void)
{
	struct statvfs sv;

	if (statvfs("/sys", &sv) < 0) {
		if (errno != ENOENT)
			PROBE_FAIL("statvfs /sys: %s", strerror(errno));
		note("/sys absent");
	} else {
		if (!(sv.f_flag & ST_RDONLY))
			ESCAPED("/sys is mounted read-write");
		note("/sys read-only");
	}
	no_write("/sys/kernel/uevent_helper");
	no_write("/sys/kernel/mm/transparent_hugepage/enabled");
	no_write("/sys/power/state");
	no_write("/sys/fs/cgroup/cgroup.procs");
	must_fail(mkdir("/sys/fs/cgroup/warden-probe", 0755), "mkdir in /sys/fs/cgroup");
	BLOCKED("%s", probe_notes);
}
