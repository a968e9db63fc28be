/* libFuzzer target: what the learner reads from a jailed program's memory
 * (include/warden/learn.h): a DNS query it sent (wl_dns_query_name), an
 * address it connected to (wl_sockaddr_str), and the paths it named, as
 * they reach the danger check (wl_danger).
 *
 * Checks beyond "does not crash":
 *   - a name is 1-253 characters of [a-z0-9._-], no empty label, and the
 *     same input parses to the same name;
 *   - an address is text ending in a NUL inside the buffer; a unix path
 *     holds no NUL before its end;
 *   - a path is judged the same way twice (wl_danger is pure), and "/" and
 *     any home are always dangerous. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "warden/learn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[256], again[256], out[300], path[512], b1[512], b2[512];
	struct sockaddr_storage ss;
	uint16_t port;
	const char *d1, *d2;

	if (wl_dns_query_name(data, size, name, sizeof(name)) == 0) {
		size_t n = strlen(name);

		if (n == 0 || n > 253 || name[0] == '.' || name[n - 1] == '.' || strstr(name, ".."))
			abort();
		for (size_t i = 0; i < n; i++)
			if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789.-_", name[i]))
				abort();
		if (wl_dns_query_name(data, size, again, sizeof(again)) != 0 || strcmp(name, again))
			abort();
	}
	memset(&ss, 0, sizeof(ss));
	memcpy(&ss, data, size < sizeof(ss) ? size : sizeof(ss));
	if (wl_sockaddr_str((struct sockaddr *)&ss, size < sizeof(ss) ? size : sizeof(ss), out,
	                    sizeof(out), &port) >= 0 && !memchr(out, '\0', sizeof(out)))
		abort();
	if (size < sizeof(path) - 1) {
		memcpy(path, data, size);
		path[size] = '\0';
		d1 = wl_danger("filesystem.read_write", path, "/home/fuzz", b1, sizeof(b1));
		d2 = wl_danger("filesystem.read_write", path, "/home/fuzz", b2, sizeof(b2));
		if (!d1 != !d2 || (d1 && strcmp(d1, d2)))
			abort();
		(void)wl_danger("network.allow", path, NULL, b1, sizeof(b1));
	}
	if (!wl_danger("filesystem.read_only", "/", NULL, b1, sizeof(b1)) ||
	    !wl_danger("filesystem.read_only", "/home/fuzz", "/home/fuzz", b1, sizeof(b1)))
		abort();
	return 0;
}
