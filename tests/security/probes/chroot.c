/* chroot: with it (and a kept directory fd) the classic escape walks `..`
 * past the new root.  It must fail, whatever the directory. */
#include <sys/stat.h>

#include "probe.h"

int main(void)
{
	mkdir("probe-chroot", 0755);
	must_fail(chroot("probe-chroot"), "chroot(workspace dir)");
	must_fail(chroot("/"), "chroot(/)");
	must_fail(chroot("/tmp"), "chroot(/tmp)");
	rmdir("probe-chroot");
	BLOCKED("%s", probe_notes);
}
