/* See egress/hosts.h.  The file is trusted (the host's own), read once. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hosts.h"
#include "warden/util.h"

#define HOSTS_MAX (1u << 20)

static void add(struct ehosts *h, const char *addr, const char *name)
{
	struct sockaddr_storage ss = { 0 };

	if (strchr(addr, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		s6->sin6_family = AF_INET6;
		if (inet_pton(AF_INET6, addr, &s6->sin6_addr) != 1)
			return;
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_family = AF_INET;
		if (inet_pton(AF_INET, addr, &s4->sin_addr) != 1)
			return;
	}
	if (h->n == h->cap) {
		struct ehost *v = realloc(h->v, (h->cap ? h->cap * 2 : 16) * sizeof(*v));
		if (!v)
			abort();
		h->v = v;
		h->cap = h->cap ? h->cap * 2 : 16;
	}
	h->v[h->n].name = xstrdup(name);
	h->v[h->n].addr = ss;
	h->n++;
}

int ehosts_load(struct ehosts *h, const char *path, struct werr *err)
{
	char *buf = NULL, *line, *next, *save;
	size_t len;

	memset(h, 0, sizeof(*h));
	if (read_file_buf(path, HOSTS_MAX, &buf, &len, err) < 0) {
		if (err->errnum == ENOENT) {
			werr_clear(err);
			return 0;
		}
		return -1;
	}
	if (len > HOSTS_MAX) {
		free(buf);
		return werr_set(err, 0, "%s is larger than %u bytes", path, HOSTS_MAX);
	}
	for (line = buf; line; line = next) {
		char *hash, *addr, *name;

		next = memchr(line, '\n', (size_t)(buf + len - line));
		if (next)
			*next++ = '\0';
		if ((hash = strchr(line, '#')))
			*hash = '\0';
		addr = strtok_r(line, " \t\r\f\v", &save);
		if (!addr)
			continue;
		while ((name = strtok_r(NULL, " \t\r\f\v", &save)))
			add(h, addr, name);
	}
	free(buf);
	return 0;
}

/* a and b equal without case, a trailing dot on either ignored */
static bool same_name(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	if (la > 1 && a[la - 1] == '.')
		la--;
	if (lb > 1 && b[lb - 1] == '.')
		lb--;
	return la == lb && !strncasecmp(a, b, la);
}

size_t ehosts_find(const struct ehosts *h, const char *name, struct sockaddr_storage *out,
                   size_t max)
{
	size_t k = 0;

	for (size_t i = 0; i < h->n && k < max; i++)
		if (same_name(h->v[i].name, name))
			out[k++] = h->v[i].addr;
	return k;
}

void ehosts_free(struct ehosts *h)
{
	for (size_t i = 0; i < h->n; i++)
		free(h->v[i].name);
	free(h->v);
	memset(h, 0, sizeof(*h));
}
