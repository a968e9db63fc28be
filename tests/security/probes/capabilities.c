/* Capabilities: every set empty (effective, permitted, inheritable,
 * bounding, ambient), so nothing can be regained by exec either.  Read
 * from /proc/self/status. */
#include <stdint.h>

#include "probe.h"

int main(void)
{
	static const char *const keys[] = { "CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:" };
	char line[256];
	int found = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		PROBE_FAIL("/proc/self/status: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			size_t k = strlen(keys[i]);
			unsigned long long v;

			if (strncmp(line, keys[i], k))
				continue;
			found++;
			v = strtoull(line + k, NULL, 16);
			if (v)
				ESCAPED("%.*s %016llx", (int)k - 1, keys[i], v);
		}
	}
	fclose(f);
	if (found != 5)
		PROBE_FAIL("found %d of 5 capability lines", found);
	BLOCKED("CapInh, CapPrm, CapEff, CapBnd, CapAmb all 0");
}
