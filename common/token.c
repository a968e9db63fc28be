/* serve --listen's bearer token (warden/token.h). */
#include "warden/token.h"

static bool token68_char(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/';
}

bool wtoken_ok(const char *s, size_t len)
{
	size_t i = 0;

	if (len < WTOKEN_MIN || len > WTOKEN_MAX)
		return false;
	while (i < len && token68_char((unsigned char)s[i]))
		i++;
	if (i == 0)
		return false;
	while (i < len && s[i] == '=')   /* token68 may end in padding */
		i++;
	return i == len;
}
