/* A DNS query's name (include/warden/dnsq.h).  The bytes are the jail's:
 * every length is bounded, nothing is followed (no compression pointer),
 * and the result is text checked character by character
 * (tests/fuzz/fuzz_learn.c, tests/unit/test_netseen.c). */
#include "warden/dnsq.h"

bool wdns_host_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

int wdns_query_name(const uint8_t *msg, size_t len, char *name, size_t cap)
{
	size_t off = 12, out = 0;
	unsigned labels = 0;

	if (cap < 256 || len < 12 + 5)
		return -1;
	/* a query (QR 0, opcode 0) with one question */
	if ((msg[2] & 0xf8) != 0 || msg[4] != 0 || msg[5] != 1)
		return -1;
	for (;;) {
		size_t n;

		if (off >= len)
			return -1;
		n = msg[off++];
		if (n == 0)
			break;
		if (n > 63 || off + n > len || out + n + 1 >= 254 || ++labels > 127)
			return -1;   /* a pointer (0xc0), or longer than a name may be */
		if (out)
			name[out++] = '.';
		for (size_t i = 0; i < n; i++) {
			char ch = (char)msg[off + i];

			if (ch >= 'A' && ch <= 'Z')
				ch = (char)(ch - 'A' + 'a');
			if (!wdns_host_char(ch))
				return -1;   /* not a host name */
			name[out++] = ch;
		}
		off += n;
	}
	if (!out || off + 4 > len)
		return -1;   /* the root, or no type and class */
	name[out] = '\0';
	return (int)(off + 4);
}
