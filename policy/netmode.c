/* The network section's values outside a policy file: the mode's names
 * (shared by the parser, `policy show` and --net) and --allow entries added
 * to a loaded policy (`warden run/serve/chat --allow`). */
#include <string.h>

#include "warden/netallow.h"
#include "warden/policy.h"

static const char *const mode_names[] = {
	[WNET_NONE] = "none", [WNET_LOOPBACK] = "loopback", [WNET_PROXY] = "proxy",
};

const char *policy_net_mode_name(enum wnet_mode m)
{
	if ((size_t)m < sizeof(mode_names) / sizeof(mode_names[0]) && mode_names[m])
		return mode_names[m];
	return "none";
}

int policy_net_mode_parse(const char *s, enum wnet_mode *m)
{
	for (size_t i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++)
		if (mode_names[i] && !strcmp(s, mode_names[i])) {
			*m = (enum wnet_mode)i;
			return 0;
		}
	return -1;
}

int policy_allow_check(const char *s, struct werr *why)
{
	struct wnet_entry e;

	/* the parser's message for a URL would be about IPv6 brackets */
	if (strstr(s, "://") || strchr(s, '/'))
		return werr_set(why, 0, "\"%s\" is a URL, not an allow entry; write the host and "
		                "port alone, e.g. \"pypi.org\" or \"pypi.org:443\"", s);
	return wnet_entry_parse(s, &e, why);
}

int policy_add_allow(struct wpolicy *p, char *const *entries, size_t n, struct werr *err)
{
	for (size_t i = 0; i < n; i++) {
		struct werr why = { 0 };

		if (policy_allow_check(entries[i], &why) < 0)
			return werr_set(err, 0, "--allow: %s", why.msg);
		if (!wstrv_contains(&p->net_allow, entries[i]))
			wstrv_push(&p->net_allow, entries[i]);
	}
	return 0;
}
