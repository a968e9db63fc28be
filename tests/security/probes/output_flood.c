/* Output flood: write to stdout forever.  The supervisor's output limit
 * must stop it (the harness reads reason "output" from the summary).  A
 * write error (the pipe closed) also counts as stopped.  ESCAPED if more
 * than argv[1] bytes (default 256 MiB) went out.  The verdict goes to
 * stderr, stdout being the flood. */
#include <signal.h>

#include "probe.h"

int main(int argc, char **argv)
{
	long long max = argc > 1 ? atoll(argv[1]) : 256LL << 20, total = 0;
	static char buf[1 << 16];

	signal(SIGPIPE, SIG_IGN);
	memset(buf, 'o', sizeof(buf));
	buf[sizeof(buf) - 1] = '\n';
	while (total <= max) {
		ssize_t n = write(1, buf, sizeof(buf));

		if (n <= 0) {
			dprintf(2, "output_flood: BLOCKED: stdout failed after %lld bytes: %s\n",
			        total, strerrorname_np(errno));
			_exit(PROBE_OK);
		}
		total += n;
	}
	dprintf(2, "output_flood: ESCAPED: %lld bytes written unhindered\n", total);
	_exit(PROBE_ESCAPED);
}
