/* The egress proxy's HTTP request head parser (egress/head.c): the one piece
 * of the proxy that reads what jailed code wrote, kept apart so that it is
 * small, pure (no fd, no clock, no global) and fuzzed alone
 * (tests/fuzz/fuzz_head.c).  Private to egress/ (and its fuzzer). */
#ifndef WARDEN_EGRESS_HEAD_H
#define WARDEN_EGRESS_HEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EHEAD_MAX 16384   /* the request head's bound: beyond it, 431 */

struct ehead {
	bool request;             /* a request line with a method and a version was read:
	                             the connection is audited with method */
	bool connect;             /* CONNECT host:port */
	char method[17];          /* upper-case letters */
	char host[256];           /* lower case, no trailing dot; an IPv6 address
	                             without its brackets */
	uint16_t port;
	char *up;                 /* absolute-URI requests: the head sent upstream
	                             (malloc'd; NULL for CONNECT and on failure) */
	size_t up_len;
};

/* Where the head in buf[0..len) ends (the offset just past its empty line),
 * looking for it from `from` (what was scanned before, less 3); 0 while it
 * has not ended. */
size_t ehead_end(const char *buf, size_t from, size_t len);

/* Parse the head h[0..end) (ehead_end's end): a request line and header
 * lines, each ending in "\r\n" or "\n", then an empty line.  0 and *out
 * filled; -1 with *why (a static phrase for the 400's body).  A CR anywhere
 * but right before LF, a control byte other than a tab in a header value,
 * a folded header, a header name that is not an HTTP token, a target that
 * is neither "host:port" (CONNECT) nor an absolute http:// URL without
 * credentials: -1.  For absolute-URI requests, out->up is the request line
 * in origin form, the client's headers less Host, Connection,
 * Proxy-Connection, Keep-Alive and Proxy-Authorization, then Host (the
 * URL's: what was checked) and "Connection: close", every line ending in
 * CRLF.  out->request may be true on failure (the request line was read). */
int ehead_parse(const char *h, size_t end, struct ehead *out, const char **why);
void ehead_free(struct ehead *h);   /* frees up; h stays valid */

#endif
