/* What a run or a block ends with when its program tried the network and
 * found no route (sv.h, sv_net_note): the kernel's count of such attempts
 * in the jail's namespace (jail_net_unreachable), the policy's network
 * mode, and what lets the program out.  Where it tried to go is not known:
 * the supervisor never reads the jail's memory (SECURITY.md G4), so the
 * address a connect() named, or the name a lookup asked for, stays in the
 * jail; what is known is where a name lookup goes in this jail. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sv.h"

/* The jail has /etc/resolv.conf when the policy binds it (or /etc). */
static bool has_resolv_conf(const struct wpolicy *p)
{
	return wstrv_contains(&p->read_only, "/etc/resolv.conf") ||
	       wstrv_contains(&p->read_write, "/etc/resolv.conf") ||
	       wstrv_contains(&p->read_only, "/etc") || wstrv_contains(&p->read_write, "/etc");
}

void sv_net_note(const struct wpolicy *p, uint64_t n, const char *who, const char *allow,
                 char *buf, size_t len)
{
	const char *s = n == 1 ? "" : "s";
	const char *unknown = "warden does not record where it tried to go (it never reads "
	                      "the jail's memory); `warden policy learn --net proxy -- PROGRAM` "
	                      "shows the hosts it asks for";

	buf[0] = '\0';
	if (!n)
		return;
	switch (p->net) {
	case WNET_NONE:
		snprintf(buf, len, "%s tried to reach the network %" PRIu64 " time%s, but the "
		         "network is off under profile %s (network mode none): %s lets it out. %s; "
		         "a name lookup goes to %s", who, n, s, p->name, allow, unknown,
		         has_resolv_conf(p) ? "the name servers of the host's /etc/resolv.conf, "
		         "which it cannot reach" : "127.0.0.1:53 here (the jail has no "
		         "/etc/resolv.conf), where nothing answers");
		break;
	case WNET_LOOPBACK:
		snprintf(buf, len, "%s tried to reach the network %" PRIu64 " time%s, but only the "
		         "jail's own 127.0.0.1 is there (network mode loopback): --net proxy "
		         "--allow HOST lets it out through warden's proxy. %s", who, n, s, unknown);
		break;
	case WNET_PROXY:
		snprintf(buf, len, "%s tried %" PRIu64 " time%s to connect past warden's proxy, "
		         "the only way out under network mode proxy: the program must use the "
		         "proxy the jail's HTTP_PROXY and HTTPS_PROXY name. %s", who, n, s, unknown);
		break;
	}
}
