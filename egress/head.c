/* The request head parser (head.h).  Every byte here was written by jailed
 * code: nothing is trusted, nothing is read past `end`, and the upstream
 * head is built only from what was checked. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "head.h"
#include "warden/util.h"

size_t ehead_end(const char *buf, size_t from, size_t len)
{
	for (size_t i = from; i < len; i++) {
		if (buf[i] != '\n')
			continue;
		if (i >= 1 && buf[i - 1] == '\n')
			return i + 1;
		if (i >= 2 && buf[i - 1] == '\r' && buf[i - 2] == '\n')
			return i + 1;
	}
	return 0;
}

static bool host_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '.' || ch == '-' || ch == '_';
}

/* "host[:port]" or "[v6][:port]" of length len into out->host and
 * out->port (def when absent; 0: required).  Lower-cased. */
static int parse_authority(struct ehead *out, const char *a, size_t len, uint16_t def)
{
	const char *hs = a, *he, *ps = NULL;
	size_t hl;

	if (len && a[0] == '[') {
		const char *close = memchr(a, ']', len);

		if (!close)
			return -1;
		hs = a + 1;
		he = close;
		for (const char *q = hs; q < he; q++)
			if (!((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'f') ||
			      (*q >= 'A' && *q <= 'F') || *q == ':' || *q == '.'))
				return -1;
		if (close + 1 < a + len) {
			if (close[1] != ':')
				return -1;
			ps = close + 2;
		}
	} else {
		const char *colon = memchr(a, ':', len);

		he = colon ? colon : a + len;
		if (colon)
			ps = colon + 1;
		for (const char *q = hs; q < he; q++)
			if (!host_char(*q))
				return -1;
	}
	hl = (size_t)(he - hs);
	if (hl == 0 || hl > 253)
		return -1;
	for (size_t i = 0; i < hl; i++)
		out->host[i] = (char)(hs[i] >= 'A' && hs[i] <= 'Z' ? hs[i] + 32 : hs[i]);
	out->host[hl] = '\0';
	if (hl > 1 && out->host[hl - 1] == '.')
		out->host[hl - 1] = '\0';
	if (!ps) {
		if (!def)
			return -1;
		out->port = def;
		return 0;
	}
	unsigned long v = 0;
	size_t pl = (size_t)(a + len - ps);
	if (pl == 0 || pl > 5)
		return -1;
	for (size_t i = 0; i < pl; i++) {
		if (ps[i] < '0' || ps[i] > '9')
			return -1;
		v = v * 10 + (unsigned long)(ps[i] - '0');
	}
	if (v < 1 || v > 65535)
		return -1;
	out->port = (uint16_t)v;
	return 0;
}

static bool header_is(const char *line, size_t len, const char *name)
{
	size_t n = strlen(name);

	return len > n && line[n] == ':' && !strncasecmp(line, name, n);
}

/* The request line's bytes: CR only before LF, no control byte but a tab
 * in a header value.  ll: the request line's length. */
static const char *check_bytes(const char *h, size_t end, size_t ll)
{
	for (size_t i = 0; i < end; i++) {
		unsigned char ch = (unsigned char)h[i];

		/* CR only as the first half of a line end: a bare CR ends a line
		 * for some parsers upstream and not for others, so "X-A: 1\rHost:
		 * evil" would be a second Host line there */
		if (ch == '\r' && (i + 1 == end || h[i + 1] != '\n'))
			return "a CR not followed by LF in the request head";
		/* a tab only inside a header value (RFC 9112), never in the
		 * request line, whose fields some servers split at any blank */
		if ((ch < 0x20 && ch != '\r' && ch != '\n' && (ch != '\t' || i < ll)) || ch == 0x7f)
			return "a control byte in the request head";
	}
	return NULL;
}

/* The headers after the request line (from line to the empty one) into
 * up[*len..] (room for them is there: the caller sized it). */
static const char *copy_headers(const char *line, const char *hend, char *up, size_t *len)
{
	size_t i;

	while (line < hend) {
		const char *nl = memchr(line, '\n', (size_t)(hend - line));
		size_t n = (size_t)(nl - line);

		if (n && line[n - 1] == '\r')
			n--;
		if (n == 0)
			break;
		if (line[0] == ' ' || line[0] == '\t' || !memchr(line, ':', n))
			return "a header line is folded or has no ':'";
		/* the name is an HTTP token right up to the ':': "Host : x" is
		 * not dropped as Host here, and a lenient server upstream could
		 * read it as a second Host */
		for (i = 0; line[i] != ':'; i++)
			if (!isalnum((unsigned char)line[i]) && !strchr("!#$%&'*+-.^_`|~", line[i]))
				return "a header name is not an HTTP token (no space before ':')";
		if (i == 0)
			return "a header name is empty";
		if (!header_is(line, n, "Host") && !header_is(line, n, "Connection") &&
		    !header_is(line, n, "Proxy-Connection") && !header_is(line, n, "Keep-Alive") &&
		    !header_is(line, n, "Proxy-Authorization")) {
			memcpy(up + *len, line, n);
			*len += n;
			memcpy(up + *len, "\r\n", 2);
			*len += 2;
		}
		line = nl + 1;
	}
	return NULL;
}

int ehead_parse(const char *h, size_t end, struct ehead *out, const char **why)
{
	const char *eol = memchr(h, '\n', end), *sp1, *sp2, *target, *path, *auth;
	size_t ll, i, ml, tl, auth_len, len, cap;
	char *up;

	memset(out, 0, sizeof(*out));
	*why = NULL;
	if (!eol) {
		*why = "the request head has no line end";
		return -1;
	}
	ll = (size_t)(eol - h);
	if (ll && h[ll - 1] == '\r')
		ll--;
	if ((*why = check_bytes(h, end, ll)))
		return -1;
	sp1 = memchr(h, ' ', ll);
	sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(h + ll - sp1 - 1)) : NULL;
	if (!sp1 || !sp2 || memchr(sp2 + 1, ' ', (size_t)(h + ll - sp2 - 1))) {
		*why = "the request line is not \"METHOD TARGET HTTP/1.1\"";
		return -1;
	}
	ml = (size_t)(sp1 - h);
	if (ml == 0 || ml >= sizeof(out->method)) {
		*why = "the method is empty or too long";
		return -1;
	}
	for (i = 0; i < ml; i++)
		if (h[i] < 'A' || h[i] > 'Z') {
			*why = "the method is not upper-case letters";
			return -1;
		}
	memcpy(out->method, h, ml);
	out->method[ml] = '\0';
	if ((size_t)(h + ll - sp2 - 1) != 8 ||
	    (strncmp(sp2 + 1, "HTTP/1.1", 8) && strncmp(sp2 + 1, "HTTP/1.0", 8))) {
		*why = "the version is not HTTP/1.0 or HTTP/1.1";
		return -1;
	}
	target = sp1 + 1;
	tl = (size_t)(sp2 - target);
	out->connect = !strcmp(out->method, "CONNECT");
	out->request = true;
	if (out->connect) {
		if (parse_authority(out, target, tl, 0) < 0) {
			*why = "CONNECT needs host:port";
			return -1;
		}
		return 0;
	}
	if (tl < 7 || strncasecmp(target, "http://", 7)) {
		*why = "the target is not an absolute http:// URL (for https, the client "
		       "must use CONNECT)";
		return -1;
	}
	auth = target + 7;
	for (auth_len = 0; auth_len < tl - 7; auth_len++)
		if (strchr("/?#", auth[auth_len]))
			break;
	if (memchr(auth, '@', auth_len)) {
		*why = "credentials in the URL";
		return -1;
	}
	if (parse_authority(out, auth, auth_len, 80) < 0) {
		*why = "the URL's host[:port] is not valid";
		return -1;
	}
	path = auth + auth_len;
	cap = 2 * end + auth_len + 128;   /* a "\n" line end becomes "\r\n" */
	up = xmalloc(cap);
	len = (size_t)snprintf(up, cap, "%s %s%.*s %.8s\r\n", out->method,
	                       (path < sp2 && *path == '/') ? "" : "/", (int)(sp2 - path), path,
	                       sp2 + 1);
	if ((*why = copy_headers(eol + 1, h + end, up, &len))) {
		free(up);
		return -1;
	}
	len += (size_t)snprintf(up + len, cap - len, "Host: %.*s\r\nConnection: close\r\n\r\n",
	                        (int)auth_len, auth);
	out->up = up;
	out->up_len = len;
	return 0;
}

void ehead_free(struct ehead *h)
{
	free(h->up);
	h->up = NULL;
	h->up_len = 0;
}
