/* Kernel knobs in /proc: core_pattern (runs a program as host root on the
 * next crash), sysrq-trigger, modprobe path, and every other sysctl must
 * not be writable, even by a uid that is root on the host. */
#include <fcntl.h>
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

	/* opened, never written: opening for write is already the escape */
	no_write("/proc/sys/kernel/core_pattern");
	no_write("/proc/sys/kernel/modprobe");
	no_write("/proc/sys/kernel/hostname");
	no_write("/proc/sys/vm/drop_caches");
	no_write("/proc/sysrq-trigger");
	no_write("/proc/kcore");
	no_write("/proc/kmsg");
	if (statvfs("/proc/sys", &sv) == 0 && !(sv.f_flag & ST_RDONLY))
		ESCAPED("/proc/sys is mounted read-write");
	BLOCKED("%s", probe_notes);
}
