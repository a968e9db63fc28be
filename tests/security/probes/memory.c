/* Memory exhaustion: allocate and touch 1 MiB at a time.  The memory limit
 * must stop it: the cgroup OOM-kills the jail (no output; the harness reads
 * reason "oom"), or, with the RLIMIT_AS fallback, allocation fails
 * (BLOCKED).  ESCAPED if more than argv[1] MiB (default 4096) were
 * touched. */
#include <stdint.h>
#include <sys/mman.h>

#include "probe.h"

int main(int argc, char **argv)
{
	long max = argc > 1 ? atol(argv[1]) : 4096, mib;

	if (max <= 0)
		PROBE_FAIL("bad limit %s", argv[1]);
	for (mib = 0; mib <= max; mib++) {
		char *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
		               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			BLOCKED("allocation failed after %ld MiB: %s", mib, strerrorname_np(errno));
		for (size_t off = 0; off < (1 << 20); off += 4096)
			p[off] = (char)off | 1;
	}
	ESCAPED("touched %ld MiB without being stopped", mib);
}
