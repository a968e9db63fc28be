/* Network: a private network namespace with nothing but lo.  Checked two
 * ways: /proc/net/dev, and SIOCGIFCONF (configured IPv4 interfaces).
 * With argv[1], a TCP port the harness listens on at the host's 127.0.0.1:
 * connecting to it must fail (the jail's lo is its own); the harness checks
 * from the host that no connection arrived. */
#include <net/if.h>
#include <sys/ioctl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "probe.h"

static void try_host_port(const char *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port)),
	                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		PROBE_FAIL("socket(AF_INET, SOCK_STREAM): %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		ESCAPED("connected to the host's 127.0.0.1:%s", port);
	note("connect 127.0.0.1:%s: %s", port, strerrorname_np(errno));
	close(fd);
}

int main(int argc, char **argv)
{
	char line[512], names[256] = "";
	struct ifreq ifr[32];
	struct ifconf ifc;
	int n = 0, fd;
	FILE *f;

	if (argc > 1)
		try_host_port(argv[1]);
	f = fopen("/proc/net/dev", "re");
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
