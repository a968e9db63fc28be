/* libFuzzer target: the egress proxy's request head parser (egress/head.c),
 * which reads what jailed code sends to its proxy.
 *
 * The input is a head (cut at its end, as the engine cuts it, or taken
 * whole with an empty line appended).  Checks beyond "does not crash":
 *   - a head that parses has a method of upper-case letters, a host of
 *     lower-case name or address characters (1..253 bytes; one trailing dot
 *     is dropped, a second stays: "a.." is "a.", which matches no entry
 *     but "a", as "a." does: tests/fuzz/regress/fuzz_head-two-trailing-dots),
 *     a port from 1 to 65535;
 *   - CONNECT has no upstream head; any other request has one, and it ends
 *     in an empty line, has every line ending in CRLF and no other CR or
 *     LF, starts with "METHOD /", and carries exactly one Host line (the
 *     last but the Connection one) and no Proxy-Authorization,
 *     Proxy-Connection or Keep-Alive line: what was checked is all that
 *     can reach upstream;
 *   - a refused head says why, and holds nothing (no upstream head). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "head.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_up(const struct ehead *h)
{
	const char *p = h->up, *end = h->up + h->up_len;
	size_t hosts = 0, lines = 0;

	if (h->up_len < 4 || memcmp(end - 4, "\r\n\r\n", 4))
		abort();
	if (strncmp(p, h->method, strlen(h->method)) || p[strlen(h->method)] != ' ' ||
	    p[strlen(h->method) + 1] != '/')
		abort();
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n;

		if (!nl || nl == p || nl[-1] != '\r')
			abort();
		n = (size_t)(nl - p) - 1;
		if (memchr(p, '\r', n) || memchr(p, '\0', n))
			abort();
		if (n >= 5 && !strncasecmp(p, "Host:", 5))
			hosts++;
		if ((n >= 20 && !strncasecmp(p, "Proxy-Authorization:", 20)) ||
		    (n >= 17 && !strncasecmp(p, "Proxy-Connection:", 17)) ||
		    (n >= 11 && !strncasecmp(p, "Keep-Alive:", 11)))
			abort();
		lines++;
		p = nl + 1;
	}
	if (hosts != 1 || lines < 3)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf;
	size_t end, len = size;
	struct ehead h;
	const char *why = NULL;

	if (size > EHEAD_MAX)
		return 0;
	buf = malloc(size + 3);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	end = ehead_end(buf, 0, size);
	if (!end) {
		memcpy(buf + size, "\n\n", 2);
		len = size + 2;
		end = ehead_end(buf, size > 3 ? size - 3 : 0, len);
		if (!end)
			end = len;
	}
	if (ehead_parse(buf, end, &h, &why) < 0) {
		if (!why || h.up)
			abort();
		free(buf);
		return 0;
	}
	if (!h.method[0] || strspn(h.method, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != strlen(h.method))
		abort();
	if (!h.host[0] || strlen(h.host) > 253 ||
	    strspn(h.host, "abcdefghijklmnopqrstuvwxyz0123456789.-_:") != strlen(h.host))
		abort();
	if (!h.port)
		abort();
	if (h.connect != !strcmp(h.method, "CONNECT") || (h.connect && h.up))
		abort();
	if (!h.connect)
		check_up(&h);
	ehead_free(&h);
	free(buf);
	return 0;
}
