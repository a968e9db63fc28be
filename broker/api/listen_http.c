/* The listener's plain HTTP answers (listen_int.h): below listen.c and
 * listen_mcp.c, which both answer through it. */
#include <libwebsockets.h>
#include <stdlib.h>
#include <string.h>

#include "listen_int.h"
#include "warden/util.h"

/* status, a plain-text body, and for 401 the scheme it wants.  0, or -1
 * when the connection is to be dropped. */
int listen_respond(struct lws *wsi, unsigned status, const char *body)
{
	unsigned char buf[LWS_PRE + 1024], *start = buf + LWS_PRE, *p = start,
	              *end = buf + sizeof(buf) - 1;
	size_t n = strlen(body);

	if (lws_add_http_common_headers(wsi, status, "text/plain; charset=utf-8", n, &p, end))
		return -1;
	if (status == 401 &&
	    lws_add_http_header_by_name(wsi, (const unsigned char *)"www-authenticate:",
	                                (const unsigned char *)"Bearer realm=\"warden\"", 21,
	                                &p, end))
		return -1;
	if (lws_finalize_write_http_header(wsi, start, &p, end))
		return -1;
	if (!n)
		return 0;
	if (n > sizeof(buf) - LWS_PRE)
		n = sizeof(buf) - LWS_PRE;
	memcpy(start, body, n);
	if (lws_write(wsi, start, n, LWS_WRITE_HTTP_FINAL) != (int)n)
		return -1;
	return 0;
}


void listen_take(struct conn *cn, const char *in, size_t n)
{
	if (cn->in_len + n > cn->in_cap) {
		size_t cap = cn->in_cap ? cn->in_cap : 4096;

		while (cap < cn->in_len + n)
			cap *= 2;
		cn->in = realloc(cn->in, cap);
		if (!cn->in)
			abort();
		cn->in_cap = cap;
	}
	memcpy(cn->in + cn->in_len, in, n);
	cn->in_len += n;
}
