/* Which proposals are dangerous (include/warden/learn.h): left out of the
 * learned policy unless --include names them, and called out.  A hostile
 * program can make the learner propose anything it can name, so these are
 * what a person must decide on purpose (SECURITY.md G223):
 *   - the host's whole filesystem, a home directory or anything holding one;
 *   - anything in the catalogs of "Nothing planted, nothing leaked"
 *     (policy/catalog.c: at or below an entry, in any home; a directory that
 *     holds a hidden entry of a home; a project entry by its name);
 *   - the host's kernel and runtime state (/proc, /sys, /dev, /run), its
 *     credentials (/etc/shadow, the ssh host keys, ...), warden's own log;
 *   - writing where the host runs or trusts code (/usr, /etc, /opt, ...);
 *   - a literal loopback, private or link-local address (the host's own
 *     services, or its network).
 * Pure: no file is looked at (the fuzz and unit tests call it as is). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "warden/catalog.h"
#include "warden/learn.h"
#include "warden/netallow.h"
#include "warden/util.h"

static bool at_or_below(const char *p, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(p, dir, n) && (p[n] == '\0' || p[n] == '/');
}

/* p is dir, or an ancestor of it */
static bool holds(const char *p, const char *dir)
{
	return !strcmp(p, "/") || at_or_below(dir, p);
}

static const char *const host_state[] = { "/proc", "/sys", "/dev", "/run", "/var/run" };
static const char *const host_secrets[] = {
	"/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-", "/etc/sudoers",
	"/etc/sudoers.d", "/etc/ssh", "/etc/ssl/private", "/etc/security/opasswd",
	"/var/log/warden", "/var/lib/sss", "/etc/krb5.keytab",
};
static const char *const host_code[] = {
	"/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot",
	"/opt", "/var/lib", "/var/spool", "/var/log", "/var/cache", "/srv/www",
};

/* The home directory p lies in (or is): the caller's, /root, /home/NAME;
 * its length into *n, or NULL. */
static const char *home_of(const char *p, const char *home, size_t *n)
{
	const char *slash;

	if (home && home[0] == '/' && strcmp(home, "/") && at_or_below(p, home)) {
		*n = strlen(home);
		return home;
	}
	if (at_or_below(p, "/root")) {
		*n = 5;
		return "/root";
	}
	if (!strncmp(p, "/home/", 6) && p[6] && p[6] != '/') {
		slash = strchr(p + 6, '/');
		*n = slash ? (size_t)(slash - p) : strlen(p);
		return p;
	}
	return NULL;
}

static const char *path_danger(const char *key, const char *p, const char *home, char *buf,
                               size_t len)
{
	bool write = !strcmp(key, "filesystem.read_write");
	const char *h, *rest, *comp;
	size_t hn = 0;

	if (p[0] != '/' || !strcmp(p, "/"))
		return "it is the whole filesystem of the host";
	for (size_t i = 0; i < ARRAY_SIZE(host_state); i++)
		if (at_or_below(p, host_state[i]))
			return "it is the host's kernel or runtime state (/proc, /sys, /dev, /run: "
			       "warden builds the jail's own /proc and /dev; /run holds the host's "
			       "services' sockets)";
	for (size_t i = 0; i < ARRAY_SIZE(host_secrets); i++)
		if (at_or_below(p, host_secrets[i]) || holds(p, host_secrets[i])) {
			snprintf(buf, len, "it is or holds %s: the host's credentials or warden's "
			         "audit log", host_secrets[i]);
			return buf;
		}
	if (holds(p, "/home") || holds(p, "/root") ||
	    (home && home[0] == '/' && holds(p, home)))
		return "it is a home directory, or holds one: everything of its owner, "
		       "credentials included";
	if ((h = home_of(p, home, &hn))) {
		if (hn == strlen(p))
			return "it is a home directory: everything of its owner, credentials included";
		rest = p + hn + 1;
		for (size_t i = 0; i < wcat_n; i++) {
			const struct wcat_entry *e = &wcat_entries[i];
			const char *rel = wcat_rel(e);

			if (e->base != WCAT_HOME)
				continue;
			if (at_or_below(rest, rel)) {
				snprintf(buf, len, "it is in the catalog of protected and hidden paths "
				         "(%s, %s: %s; `warden policy show --catalog`)", e->name,
				         e->group, e->why);
				return buf;
			}
			if ((e->what & WCAT_HIDE) && at_or_below(rel, rest)) {
				snprintf(buf, len, "it holds %s (%s: %s), which the catalog hides",
				         e->name, e->group, e->why);
				return buf;
			}
		}
	}
	/* a project entry anywhere: .git, .env, .npmrc ... by name */
	for (rest = p; (comp = strchr(rest, '/')); rest = comp + 1) {
		char name[256];
		const char *end = strchr(comp + 1, '/');
		size_t n = end ? (size_t)(end - comp - 1) : strlen(comp + 1);

		if (!n || n >= sizeof(name))
			continue;
		memcpy(name, comp + 1, n);
		name[n] = '\0';
		for (size_t i = 0; i < wcat_n; i++) {
			const struct wcat_entry *e = &wcat_entries[i];

			if (e->base != WCAT_PROJECT || !wcat_match(e, name))
				continue;
			if (!write && !(e->what & WCAT_HIDE))
				continue;   /* reading a repository's .git is fine */
			snprintf(buf, len, "it is in the catalog of protected and hidden paths "
			         "(%s, %s: %s; `warden policy show --catalog`)", e->name, e->group,
			         e->why);
			return buf;
		}
	}
	if (write)
		for (size_t i = 0; i < ARRAY_SIZE(host_code); i++)
			if (at_or_below(p, host_code[i]) || holds(p, host_code[i])) {
				snprintf(buf, len, "the host runs or trusts what is in %s: a jail "
				         "writing there changes the host", host_code[i]);
				return buf;
			}
	return NULL;
}

static const char *net_danger(const char *v)
{
	char host[300];
	const char *colon;
	size_t n;
	struct sockaddr_in s4 = { .sin_family = AF_INET };
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6 };

	if (v[0] == '[') {
		colon = strchr(v, ']');
		if (!colon)
			return NULL;
		n = (size_t)(colon - v - 1);
		v++;
	} else {
		colon = strrchr(v, ':');
		n = colon ? (size_t)(colon - v) : strlen(v);
	}
	if (n >= sizeof(host))
		return NULL;
	memcpy(host, v, n);
	host[n] = '\0';
	if ((inet_pton(AF_INET, host, &s4.sin_addr) == 1 && wnet_addr_special((struct sockaddr *)&s4)) ||
	    (inet_pton(AF_INET6, host, &s6.sin6_addr) == 1 &&
	     wnet_addr_special((struct sockaddr *)&s6)))
		return "it is a loopback, private, link-local or reserved address: the host's own "
		       "services or its network, which no name can reach";
	return NULL;
}

const char *wl_danger(const char *key, const char *value, const char *home, char *buf, size_t len)
{
	if (!key || !value)
		return NULL;
	if (!strncmp(key, "filesystem.", 11))
		return path_danger(key, value, home, buf, len);
	if (!strcmp(key, "network.allow"))
		return net_danger(value);
	return NULL;
}
