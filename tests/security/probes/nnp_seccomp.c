/* no_new_privs and seccomp: NoNewPrivs 1 (setuid binaries and file
 * capabilities give nothing) and Seccomp 2 (a filter is loaded) in
 * /proc/self/status; and PR_SET_NO_NEW_PRIVS cannot be undone. */
#include <sys/prctl.h>

#include "probe.h"

int main(void)
{
	char line[256];
	int nnp = -1, sec = -1;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		PROBE_FAIL("/proc/self/status: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "NoNewPrivs:", 11))
			nnp = atoi(line + 11);
		else if (!strncmp(line, "Seccomp:", 8))
			sec = atoi(line + 8);
	}
	fclose(f);
	if (nnp < 0 || sec < 0)
		PROBE_FAIL("NoNewPrivs/Seccomp missing from /proc/self/status");
	if (nnp != 1)
		ESCAPED("NoNewPrivs: %d", nnp);
	if (sec != 2)
		ESCAPED("Seccomp: %d", sec);
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		ESCAPED("PR_GET_NO_NEW_PRIVS is not 1");
	must_fail(prctl(PR_SET_NO_NEW_PRIVS, 0, 0, 0, 0), "PR_SET_NO_NEW_PRIVS 0");
	BLOCKED("NoNewPrivs: 1, Seccomp: 2; %s", probe_notes);
}
