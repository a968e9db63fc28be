/* One streaming HTTP POST over libcurl, with the retry policy of the LLM
 * clients:
 *   - connect timeout, and an idle timeout (no byte for idle_timeout_ms);
 *   - *cancel checked while waiting: "interrupted";
 *   - 429, 5xx and a connection that fails before any byte are retried up
 *     to max_retries times, with exponential backoff plus jitter, or after
 *     the response's Retry-After (seconds); never once a byte of a
 *     successful response has been handed to on_data;
 *   - other HTTP errors: "<who>: 401 Unauthorized: <the provider's message>".
 * The body of a 2xx response goes to on_data as it arrives.  Error bodies
 * are collected (bounded) only to find the provider's message.  Headers may
 * carry secrets: they are never put into an error. */
#ifndef BROKER_HTTP_H
#define BROKER_HTTP_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "warden/err.h"

struct http_req {
	const char *who;                 /* "openai": the error prefix */
	const char *url;
	const char *const *headers;      /* "Name: value", NULL-terminated */
	const char *body;
	size_t body_len;
	long connect_timeout_ms, idle_timeout_ms;   /* <= 0: 30 s, 120 s */
	int max_retries;                 /* < 0: 0 */
	long backoff_ms;                 /* first backoff; <= 0: 1000 */
	const char *secret;              /* redacted from any error (the API key); may be NULL */
	volatile sig_atomic_t *cancel;   /* may be NULL */
	/* Bytes of a 2xx body.  Negative: stop, err filled in. */
	int (*on_data)(void *ctx, const char *p, size_t n, struct werr *err);
	void (*on_retry)(void *ctx, int attempt, long wait_ms, const char *why);  /* may be NULL */
	void *ctx;
};

/* Streams one POST.  0 when a 2xx response was fully received, else -1
 * with a one-line error.  "interrupted" exactly when *cancel stopped it. */
int http_stream_post(const struct http_req *r, struct werr *err);

/* The provider's message in an error body: {"error":{"message":..}},
 * {"error":"..."}, {"message":..}, or the first line of the text.  Never
 * NULL; malloc'd; one line, at most ~300 bytes. */
char *http_error_message(const char *body, size_t len);

/* Replaces every occurrence of secret in msg (NUL-terminated, in place,
 * capacity cap) by "[REDACTED]". */
void http_redact(char *msg, size_t cap, const char *secret);

/* The CA bundle read by llm_global_init (NULL: libcurl's default). */
void http_set_ca_blob(char *pem, size_t len);

#endif
