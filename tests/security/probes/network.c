/* Network: a private network namespace with nothing but lo.  Checked two
 * ways: /proc/net/dev, and SIOCGIFCONF (configured IPv4 interfaces). */
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "probe.h"

int main(void)
{
	char line[512], names[256] = "";
	struct ifreq ifr[32];
	struct ifconf ifc;
	int n = 0, fd;
	FILE *f = fopen("/proc/net/dev", "re");

	if (!f)
		PROBE_FAIL("/proc/net/dev: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':'), *name = line;

		if (!colon)
			continue;     /* the two header lines */
		*colon = '\0';
		while (*name == ' ')
			name++;
		if (strcmp(name, "lo"))
			ESCAPED("network device %s in /proc/net/dev", name);
		n++;
		snprintf(names + strlen(names), sizeof(names) - strlen(names), " %.32s", name);
	}
	fclose(f);
	note("/proc/net/dev:%s", n ? names : " (none)");

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		PROBE_FAIL("socket(AF_INET): %s", strerror(errno));
	ifc.ifc_len = sizeof(ifr);
	ifc.ifc_req = ifr;
	if (ioctl(fd, SIOCGIFCONF, &ifc) < 0)
		PROBE_FAIL("SIOCGIFCONF: %s", strerror(errno));
	for (size_t i = 0; i < ifc.ifc_len / sizeof(struct ifreq); i++)
		if (strcmp(ifr[i].ifr_name, "lo"))
			ESCAPED("interface %s has an IPv4 address", ifr[i].ifr_name);
	note("SIOCGIFCONF: %zu interface(s), lo only", ifc.ifc_len / sizeof(struct ifreq));
	close(fd);
	BLOCKED("%s", probe_notes);
}
