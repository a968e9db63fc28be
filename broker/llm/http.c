/* Streaming POST with timeouts, cancellation and retries (http.h). */
#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "http.h"
#include "warden/util.h"

#define ERR_BODY_MAX (64u << 10)
#define RETRY_WAIT_MAX_MS 60000L

static char *ca_blob;
static size_t ca_blob_len;

void http_set_ca_blob(char *pem, size_t len)
{
	free(ca_blob);
	ca_blob = pem;
	ca_blob_len = len;
}

struct xfer {
	const struct http_req *r;
	CURL *h;
	long status;
	char reason[64];
	long retry_after_ms;         /* -1: none */
	bool delivered;              /* bytes of a 2xx body went to on_data */
	bool cb_failed, cancelled, idle;
	struct werr cb_err;
	char *ebody;
	size_t elen;
	struct timespec last;        /* when the last byte arrived */
	long os_errno;               /* the connect's errno (CURLINFO_OS_ERRNO) */
};

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void touch(struct xfer *x)
{
	clock_gettime(CLOCK_MONOTONIC, &x->last);
}

static const char *reason_for(long status)
{
	switch (status) {
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 408: return "Request Timeout";
	case 413: return "Payload Too Large";
	case 422: return "Unprocessable Entity";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	case 529: return "Overloaded";
	default: return "";
	}
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *ud)
{
	struct xfer *x = ud;
	size_t n = size * nmemb;

	touch(x);
	if (n >= 5 && memcmp(p, "HTTP/", 5) == 0) {
		/* a new response (after 100 Continue, or the real one) */
		const char *sp = memchr(p, ' ', n), *end = p + n;
		x->retry_after_ms = -1;
		x->reason[0] = '\0';
		x->status = 0;
		if (sp) {
			const char *q = sp + 1;
			long st = 0;
			while (q < end && isdigit((unsigned char)*q) && st < 1000)
				st = st * 10 + (*q++ - '0');
			x->status = st;
			if (q < end && *q == ' ') {
				size_t k = 0;
				q++;
				while (q < end && *q != '\r' && *q != '\n' && k + 1 < sizeof(x->reason)) {
					x->reason[k++] = isprint((unsigned char)*q) ? *q : '?';
					q++;
				}
				x->reason[k] = '\0';
			}
		}
	} else if (n > 12 && strncasecmp(p, "retry-after:", 12) == 0) {
		const char *q = p + 12, *end = p + n;
		long s = 0;
		bool digits = false;
		while (q < end && (*q == ' ' || *q == '\t'))
			q++;
		while (q < end && isdigit((unsigned char)*q) && s < 100000) {
			s = s * 10 + (*q++ - '0');
			digits = true;
		}
		/* an HTTP date is not honoured: the backoff applies */
		if (digits)
			x->retry_after_ms = s * 1000;
	}
	return n;
}

static size_t on_write(char *p, size_t size, size_t nmemb, void *ud)
{
	struct xfer *x = ud;
	size_t n = size * nmemb;

	touch(x);
	if (!x->status)
		curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &x->status);
	if (x->status >= 200 && x->status < 300) {
		x->delivered = true;
		if (x->r->on_data && x->r->on_data(x->r->ctx, p, n, &x->cb_err) < 0) {
			x->cb_failed = true;
			return 0;   /* aborts the transfer: CURLE_WRITE_ERROR */
		}
		return n;
	}
	/* an error body: keep the start, enough for the provider's message */
	if (x->elen < ERR_BODY_MAX) {
		size_t k = n < ERR_BODY_MAX - x->elen ? n : ERR_BODY_MAX - x->elen;
		if (!x->ebody)
			x->ebody = xmalloc(ERR_BODY_MAX + 1);
		memcpy(x->ebody + x->elen, p, k);
		x->elen += k;
		x->ebody[x->elen] = '\0';
	}
	return n;
}

static int on_progress(void *ud, curl_off_t dlt, curl_off_t dln, curl_off_t ult, curl_off_t uln)
{
	struct xfer *x = ud;
	struct timespec ts;
	long idle = x->r->idle_timeout_ms > 0 ? x->r->idle_timeout_ms : 120000;

	if (x->r->cancel && *x->r->cancel) {
		x->cancelled = true;
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if ((ts.tv_sec - x->last.tv_sec) * 1000L + (ts.tv_nsec - x->last.tv_nsec) / 1000000L > idle) {
		x->idle = true;
		return 1;
	}
	return 0;
}

/* One line, printable, at most max bytes (on a UTF-8 boundary). */
static char *one_line(const char *s, size_t len, size_t max)
{
	char *o = xmalloc(max + 4);
	size_t k = 0, i;

	while (len > 0 && isspace((unsigned char)*s)) {
		s++;
		len--;
	}
	for (i = 0; i < len && k < max; i++) {
		unsigned char c = (unsigned char)s[i];
		o[k++] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
	}
	if (i < len) {
		while (k > 0 && ((unsigned char)o[k - 1] & 0xc0) == 0x80)
			k--;
		if (k > 0 && ((unsigned char)o[k - 1] & 0xc0) == 0xc0)
			k--;
		memcpy(o + k, "...", 3);
		k += 3;
	}
	while (k > 0 && o[k - 1] == ' ')
		k--;
	o[k] = '\0';
	return o;
}

char *http_error_message(const char *body, size_t len)
{
	json_tokener *tok;
	json_object *j, *e, *m;
	char *res = NULL;

	if (!body || len == 0)
		return xstrdup("");
	tok = json_tokener_new();
	j = json_tokener_parse_ex(tok, body, (int)(len > ERR_BODY_MAX ? ERR_BODY_MAX : len));
	json_tokener_free(tok);
	if (j && json_object_is_type(j, json_type_object)) {
		const char *s = NULL;
		if (json_object_object_get_ex(j, "error", &e)) {
			if (json_object_is_type(e, json_type_string))
				s = json_object_get_string(e);
			else if (json_object_is_type(e, json_type_object) &&
			         json_object_object_get_ex(e, "message", &m) &&
			         json_object_is_type(m, json_type_string))
				s = json_object_get_string(m);
		}
		if (!s && json_object_object_get_ex(j, "message", &m) &&
		    json_object_is_type(m, json_type_string))
			s = json_object_get_string(m);
		if (!s && json_object_object_get_ex(j, "detail", &m) &&
		    json_object_is_type(m, json_type_string))
			s = json_object_get_string(m);
		if (s)
			res = one_line(s, strlen(s), 300);
	}
	json_object_put(j);
	if (!res)
		res = one_line(body, strnlen(body, len), 200);
	return res;
}

void http_redact(char *msg, size_t cap, const char *secret)
{
	static const char rep[] = "[REDACTED]";
	size_t sl, k = 0;
	const char *p;
	char *o;

	if (!msg || !secret || !*secret || cap == 0)
		return;
	sl = strlen(secret);
	o = xmalloc(cap);
	for (p = msg; *p && k + 1 < cap;) {
		size_t rest = strlen(p);
		/* the whole secret, or its start cut off at the end of a
		 * truncated message */
		if (strncmp(p, secret, rest < sl ? rest : sl) == 0 && (rest >= sl || rest >= 4)) {
			for (size_t i = 0; i < sizeof(rep) - 1 && k + 1 < cap; i++)
				o[k++] = rep[i];
			p += rest < sl ? rest : sl;
		} else {
			o[k++] = *p++;
		}
	}
	o[k] = '\0';
	memcpy(msg, o, k + 1);
	free(o);
}

static bool sleep_cancellable(long ms, volatile sig_atomic_t *cancel)
{
	long end = now_ms() + ms;

	for (;;) {
		long left = end - now_ms();
		struct timespec ts;

		if (cancel && *cancel)
			return false;
		if (left <= 0)
			return true;
		if (left > 50)
			left = 50;
		ts.tv_sec = 0;
		ts.tv_nsec = left * 1000000L;
		nanosleep(&ts, NULL);
	}
}

static long backoff(const struct http_req *r, int attempt)
{
	long base = r->backoff_ms > 0 ? r->backoff_ms : 1000;
	long w = base;
	struct timespec ts;

	for (int i = 0; i < attempt && w < RETRY_WAIT_MAX_MS; i++)
		w *= 2;
	if (w > RETRY_WAIT_MAX_MS)
		w = RETRY_WAIT_MAX_MS;
	/* up to +25% jitter, so that many clients do not retry in step */
	clock_gettime(CLOCK_REALTIME, &ts);
	w += (long)((unsigned long)(ts.tv_nsec ^ getpid()) % (unsigned long)(w / 4 + 1));
	return w;
}

static bool retryable_curl(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_SSL_CONNECT_ERROR:
		return true;
	default:
		return false;
	}
}

static void status_text(const struct xfer *x, char *buf, size_t len)
{
	const char *reason = x->reason[0] ? x->reason : reason_for(x->status);
	snprintf(buf, len, "%ld%s%s", x->status, *reason ? " " : "", reason);
}

static int one_attempt(const struct http_req *r, struct curl_slist *hdrs, struct xfer *x,
                       char *errbuf, CURLcode *rc)
{
	CURL *h = curl_easy_init();
	long cto = r->connect_timeout_ms > 0 ? r->connect_timeout_ms : 30000;

	if (!h)
		return -1;
	x->h = h;
	curl_easy_setopt(h, CURLOPT_URL, r->url);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_POST, 1L);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, r->body);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, cto);
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#endif
	curl_easy_setopt(h, CURLOPT_USERAGENT, "warden");
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, x);
	if (ca_blob) {
		struct curl_blob blob = { .data = ca_blob, .len = ca_blob_len,
		                          .flags = CURL_BLOB_NOCOPY };
		curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
	}
	touch(x);
	errbuf[0] = '\0';
	*rc = curl_easy_perform(h);
	if (!x->status)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &x->status);
	curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &x->os_errno);
	curl_easy_cleanup(h);
	x->h = NULL;
	return 0;
}

int http_stream_post(const struct http_req *r, struct werr *err)
{
	struct curl_slist *hdrs = NULL;
	int attempts = (r->max_retries > 0 ? r->max_retries : 0) + 1;
	int ret = -1;
	const char *who = r->who ? r->who : "http";

	for (const char *const *h = r->headers; h && *h; h++)
		hdrs = curl_slist_append(hdrs, *h);
	hdrs = curl_slist_append(hdrs, "Expect:");

	for (int attempt = 0; attempt < attempts; attempt++) {
		struct xfer x = { .r = r, .retry_after_ms = -1 };
		char errbuf[CURL_ERROR_SIZE];
		char why[96];
		CURLcode rc = CURLE_OK;
		bool retry = false;
		long wait;

		if (r->cancel && *r->cancel) {
			werr_set(err, 0, "interrupted");
			goto out;
		}
		if (one_attempt(r, hdrs, &x, errbuf, &rc) < 0) {
			werr_set(err, 0, "%s: cannot create a curl handle", who);
			goto out;
		}
		if (x.cancelled) {
			free(x.ebody);
			werr_set(err, 0, "interrupted");
			goto out;
		}
		if (x.cb_failed) {
			free(x.ebody);
			*err = x.cb_err;
			goto out;
		}
		if (x.idle) {
			free(x.ebody);
			long s = (r->idle_timeout_ms > 0 ? r->idle_timeout_ms : 120000);
			werr_set(err, 0, "%s: no data from the server for %ld.%lds (idle timeout)%s",
			         who, s / 1000, (s % 1000) / 100,
			         x.delivered ? ", reply cut off" : "");
			goto out;
		}
		if (rc != CURLE_OK) {
			free(x.ebody);
			const char *m = errbuf[0] ? errbuf : curl_easy_strerror(rc);
			if (x.delivered) {
				werr_set(err, 0, "%s: connection lost in the middle of the reply: %s", who, m);
				goto out;
			}
			/* Refused: the host answered that nothing listens on that
			 * port.  Waiting will not start a server: fail at once. */
			if (rc == CURLE_COULDNT_CONNECT && x.os_errno == ECONNREFUSED) {
				werr_set(err, 0, "%s: %s: connection refused (nothing listens there)",
				         who, r->url);
				goto out;
			}
			if (!retryable_curl(rc) || x.status) {
				werr_set(err, 0, "%s: %s: %s", who, r->url, m);
				goto out;
			}
			snprintf(why, sizeof(why), "%s", curl_easy_strerror(rc));
			if (attempt + 1 == attempts) {
				werr_set(err, 0, "%s: %s: %s (gave up after %d attempt%s)", who, r->url, m,
				         attempts, attempts == 1 ? "" : "s");
				goto out;
			}
			retry = true;
		} else if (x.status >= 200 && x.status < 300) {
			free(x.ebody);
			ret = 0;
			goto out;
		} else {
			char st[96];
			_cleanup_free_ char *msg = http_error_message(x.ebody, x.elen);
			free(x.ebody);
			status_text(&x, st, sizeof(st));
			retry = x.status == 429 || x.status >= 500;
			if (!retry || attempt + 1 == attempts) {
				char tail[48] = "";
				if (retry && attempts > 1)
					snprintf(tail, sizeof(tail), " (gave up after %d attempts)", attempts);
				werr_set(err, 0, "%s: %s%s%s%s", who, st, *msg ? ": " : "", msg, tail);
				goto out;
			}
			snprintf(why, sizeof(why), "%s", st);
		}
		if (!retry)
			break;
		wait = x.retry_after_ms >= 0 ? x.retry_after_ms : backoff(r, attempt);
		if (wait > RETRY_WAIT_MAX_MS)
			wait = RETRY_WAIT_MAX_MS;
		if (r->on_retry)
			r->on_retry(r->ctx, attempt + 1, wait, why);
		if (!sleep_cancellable(wait, r->cancel)) {
			werr_set(err, 0, "interrupted");
			goto out;
		}
	}
	werr_set(err, 0, "%s: request failed", who);
out:
	curl_slist_free_all(hdrs);
	if (ret < 0)
		http_redact(err->msg, sizeof(err->msg), r->secret);
	return ret;
}
