/* What a run or a block ends with when its program tried the network
 * (sv.h, sv_net_note): where it tried to go, as the jail's init saw it in
 * the packets the network watch caught (jail/netseen.c: the supervisor
 * never reads the jail's memory, SECURITY.md G4), or else the kernel's
 * count of attempts that found no route (jail_net_unreachable); the
 * policy's network mode; and what lets the program out. */
#include <inttypes.h>
#include <stdio.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <string.h>

#include "sv.h"
#include "warden/netallow.h"

/* The jail has /etc/resolv.conf when the policy binds it (or /etc). */
static bool has_resolv_conf(const struct wpolicy *p)
{
	return wstrv_contains(&p->read_only, "/etc/resolv.conf") ||
	       wstrv_contains(&p->read_write, "/etc/resolv.conf") ||
	       wstrv_contains(&p->read_only, "/etc") || wstrv_contains(&p->read_write, "/etc");
}

/* "pypi.org (a name lookup), 203.0.113.9 port 443 and 3 more places" */
static void places(const struct jail_net_seen *seen, char *buf, size_t len)
{
	buf[0] = '\0';
	for (uint32_t i = 0; i < seen->kept; i++) {
		char one[300];
		size_t l = strlen(buf);

		jail_net_try_text(&seen->t[i], one, sizeof(one));
		snprintf(buf + l, len - l, "%s%s", !i ? "" : i + 1 == seen->n ? " and " : ", ", one);
	}
	if (seen->n > seen->kept) {
		size_t l = strlen(buf);
		snprintf(buf + l, len - l, " and %" PRIu32 " more place%s", seen->n - seen->kept,
		         seen->n - seen->kept == 1 ? "" : "s");
	}
}

/* allow, with its "--allow HOST" made the places a proxy could let the
 * program reach: the names it looked up, else the public addresses it
 * went to (never a loopback, private or other special one: G114 would
 * refuse it by name, and suggesting it by number would open the host). */
static void concrete_allow(const char *allow, const struct jail_net_seen *seen, char *buf,
                           size_t len)
{
	const char *h = strstr(allow, "--allow HOST");
	char hosts[600] = "";
	int shown = 0;

	for (int pass = 0; pass < 2 && !shown; pass++)
		for (uint32_t i = 0; i < seen->kept && shown < 3; i++) {
			const struct jail_net_try *t = &seen->t[i];
			struct sockaddr_storage ss = { 0 };
			char a[INET6_ADDRSTRLEN], one[300];
			size_t l = strlen(hosts);

			if (pass == 0 && !t->name[0])
				continue;
			if (pass == 0) {
				snprintf(one, sizeof(one), "%s", t->name);
			} else {
				ss.ss_family = t->family;
				if (t->family == AF_INET)
					memcpy(&((struct sockaddr_in *)&ss)->sin_addr, t->addr, 4);
				else
					memcpy(&((struct sockaddr_in6 *)&ss)->sin6_addr, t->addr, 16);
				if (wnet_addr_special((struct sockaddr *)&ss))
					continue;
				inet_ntop(t->family, t->addr, a, sizeof(a));
				snprintf(one, sizeof(one), t->family == AF_INET6 ? "[%s]:%u" : "%s:%u", a,
				         (unsigned)t->port);
			}
			if (strstr(hosts, one))
				continue;
			snprintf(hosts + l, sizeof(hosts) - l, "%s--allow %s", shown ? " " : "", one);
			shown++;
		}
	if (!h || !shown) {
		snprintf(buf, len, "%s", allow);
		return;
	}
	snprintf(buf, len, "%.*s%s%s", (int)(h - allow), allow, hosts, h + strlen("--allow HOST"));
}

void sv_net_note(const struct wpolicy *p, uint64_t n, const struct jail_net_seen *seen,
                 const char *who, const char *allow_in, char *buf, size_t len)
{
	char allow[1024];
	const char *s = n == 1 ? "" : "s";
	const char *unknown = "where it tried to go is not known: this jail had no network "
	                      "watch (`warden doctor` says why; warden never reads the jail's "
	                      "memory), and `warden policy learn --net proxy -- PROGRAM` shows "
	                      "the hosts it asks for";
	char where[1024];

	buf[0] = '\0';
	if (seen && seen->n) {
		/* where it went, from the packets that left for there */
		places(seen, where, sizeof(where));
		switch (p->net) {
		case WNET_NONE:
			concrete_allow(allow_in, seen, allow, sizeof(allow));
			snprintf(buf, len, "%s tried to reach %s, but the network is off under profile "
			         "%s (network mode none): %s lets it out", who, where, p->name, allow);
			break;
		case WNET_LOOPBACK:
			concrete_allow("--net proxy --allow HOST", seen, allow, sizeof(allow));
			snprintf(buf, len, "%s tried to reach %s, but only the jail's own 127.0.0.1 is "
			         "there (network mode loopback): %s lets it out through warden's proxy",
			         who, where, allow);
			break;
		case WNET_PROXY:
			concrete_allow("--allow HOST", seen, allow, sizeof(allow));
			snprintf(buf, len, "%s tried to reach %s past warden's proxy, the only way out "
			         "under network mode proxy: the program must use the proxy the jail's "
			         "HTTP_PROXY and HTTPS_PROXY name (%s%s)", who, where, allow,
			         strstr(allow, "HOST") ? " for each host" : " to let it through");
			break;
		}
		return;
	}
	if (!n)
		return;
	switch (p->net) {
	case WNET_NONE:
		snprintf(buf, len, "%s tried to reach the network %" PRIu64 " time%s, but the "
		         "network is off under profile %s (network mode none): %s lets it out. %s; "
		         "a name lookup goes to %s", who, n, s, p->name, allow_in, unknown,
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

json_object *sv_net_tried_json(const struct jail_net_seen *seen)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();

	json_object_object_add(o, "count", json_object_new_int64((int64_t)seen->n));
	for (uint32_t i = 0; i < seen->kept; i++) {
		const struct jail_net_try *t = &seen->t[i];
		json_object *e = json_object_new_object();
		char addr[INET6_ADDRSTRLEN];

		inet_ntop(t->family, t->addr, addr, sizeof(addr));
		if (t->name[0])
			json_object_object_add(e, "name", json_object_new_string(t->name));
		json_object_object_add(e, "address", json_object_new_string(addr));
		json_object_object_add(e, "port", json_object_new_int(t->port));
		json_object_object_add(e, "protocol", json_object_new_string(
		                       t->proto == IPPROTO_TCP ? "tcp" : "udp"));
		json_object_array_add(a, e);
	}
	json_object_object_add(o, "first", a);
	return o;
}
