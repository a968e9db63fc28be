/* The supervisor <-> egress wire (include/warden/egress.h).  Each message
 * has one encoder and one decoder case, side by side, and both apply the
 * same form checks (put_rec/get_rec): what the encoder refuses, the decoder
 * refuses.  Every read goes through the checked reader of buf.h. */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "warden/egress.h"
#include "warden/util.h"

#define MS_MAX 86400000u          /* a deadline of a day is already absurd */
#define RESERVE_MAX (1u << 20)

static const struct { uint8_t type; const char *name; bool from_egress; } types[] = {
	{ WE_CONFIG, "CONFIG", false }, { WE_ADD, "ADD", false }, { WE_REMOVE, "REMOVE", false },
	{ WE_READY, "READY", true },    { WE_AUDIT, "AUDIT", true }, { WE_REMOVED, "REMOVED", true },
	{ WE_LOG, "LOG", true },
};

const char *wegress_type_name(uint8_t type)
{
	for (size_t i = 0; i < ARRAY_SIZE(types); i++)
		if (types[i].type == type)
			return types[i].name;
	return "unknown";
}

bool wegress_text_ok(const char *s)
{
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			return false;
	return true;
}

bool wegress_status_ok(unsigned status)
{
	static const unsigned ok[] = { 200, 400, 403, 408, 431, 502, 503, 504 };

	for (size_t i = 0; i < ARRAY_SIZE(ok); i++)
		if (status == ok[i])
			return true;
	return false;
}

/* "?" or upper-case letters: what the proxy's head parser admits */
static bool method_ok(const char *s)
{
	if (!strcmp(s, "?"))
		return true;
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < 'A' || *s > 'Z')
			return false;
	return true;
}

/* "" or a lower-case name or address as the head parser leaves it */
static bool host_ok(const char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '.' || *s == '-' ||
		      *s == '_' || *s == ':'))
			return false;
	return true;
}

/* "" or an address inet_ntop could have written */
static bool address_ok(const char *s)
{
	unsigned char b[16];

	return !*s || inet_pton(strchr(s, ':') ? AF_INET6 : AF_INET, s, b) == 1;
}

/* --- the record: one description of its form for both directions ------- */

static const char *rec_bad(const struct wegress_rec *r)
{
	if (strlen(r->method) > WEGRESS_METHOD_MAX || !method_ok(r->method))
		return "method";
	if (strlen(r->host) > WEGRESS_HOST_MAX || !host_ok(r->host))
		return "host";
	if (strlen(r->address) > WEGRESS_ADDR_MAX || !address_ok(r->address))
		return "address";
	if (r->rule < -1 || r->rule >= (int32_t)WEGRESS_ENTRIES_MAX)
		return "rule";
	if (!wegress_status_ok(r->status))
		return "status";
	if (strlen(r->reason) > WEGRESS_REASON_MAX || !wegress_text_ok(r->reason))
		return "reason";
	return NULL;
}

static int put_rec(struct wbuf *o, const struct wegress_rec *r)
{
	return wbuf_put_str(o, r->method) < 0 || wbuf_put_str(o, r->host) < 0 ||
	       wbuf_put_u32(o, r->port) < 0 || wbuf_put_str(o, r->address) < 0 ||
	       wbuf_put_u8(o, r->allowed) < 0 ||
	       wbuf_put_u32(o, r->rule < 0 ? WEGRESS_NO_RULE : (uint32_t)r->rule) < 0 ||
	       wbuf_put_u32(o, r->status) < 0 || wbuf_put_str(o, r->reason) < 0 ||
	       wbuf_put_u64(o, r->bytes_up) < 0 || wbuf_put_u64(o, r->bytes_down) < 0 ||
	       wbuf_put_u64(o, r->duration_ms) < 0 ? -1 : 0;
}

/* A string field into a fixed array (bounded by its size less one). */
static int get_fixed(struct wrd *rd, char *out, size_t size)
{
	const uint8_t *p;
	size_t n;

	out[0] = '\0';
	if (wrd_bytes(rd, &p, &n, size - 1) < 0 || memchr(p, '\0', n))
		return -1;
	memcpy(out, p, n);
	out[n] = '\0';
	return 0;
}

static const char *get_rec(struct wrd *rd, struct wegress_rec *r)
{
	uint32_t port, rule, status;
	uint8_t allowed;

	if (get_fixed(rd, r->method, sizeof(r->method)) < 0)
		return "method";
	if (get_fixed(rd, r->host, sizeof(r->host)) < 0)
		return "host";
	if (wrd_u32(rd, &port) < 0 || port > 65535)
		return "port";
	r->port = (uint16_t)port;
	if (get_fixed(rd, r->address, sizeof(r->address)) < 0)
		return "address";
	if (wrd_u8(rd, &allowed) < 0 || allowed > 1)
		return "allowed";
	r->allowed = allowed;
	if (wrd_u32(rd, &rule) < 0 || (rule != WEGRESS_NO_RULE && rule >= WEGRESS_ENTRIES_MAX))
		return "rule";
	r->rule = rule == WEGRESS_NO_RULE ? -1 : (int32_t)rule;
	if (wrd_u32(rd, &status) < 0 || status > 999)
		return "status";
	r->status = (uint16_t)status;
	if (get_fixed(rd, r->reason, sizeof(r->reason)) < 0)
		return "reason";
	if (wrd_u64(rd, &r->bytes_up) < 0)
		return "bytes_up";
	if (wrd_u64(rd, &r->bytes_down) < 0)
		return "bytes_down";
	if (wrd_u64(rd, &r->duration_ms) < 0)
		return "duration_ms";
	return rec_bad(r);
}

/* --- encoders ------------------------------------------------------------ */

static int done(struct wbuf *o, size_t start, int rc, uint8_t type, struct werr *err)
{
	if (rc < 0 || o->len - start > WEGRESS_FRAME_MAX) {
		o->len = start;
		return werr_set(err, 0, "egress %s frame: a field is over its limit or not of its "
		                "form", wegress_type_name(type));
	}
	return 0;
}

int wegress_config(struct wbuf *o, const struct wegress_conf *c, struct werr *err)
{
	size_t start = o->len;
	int rc = c->fd_reserve > RESERVE_MAX || c->head_ms > MS_MAX || c->dial_ms > MS_MAX ||
	         c->idle_ms > MS_MAX ? -1 : 0;

	if (rc == 0)
		rc = wbuf_put_u8(o, WE_CONFIG) < 0 || wbuf_put_u32(o, WEGRESS_VERSION) < 0 ||
		     wbuf_put_u32(o, c->fd_reserve) < 0 || wbuf_put_u32(o, c->audit_max) < 0 ||
		     wbuf_put_u32(o, c->head_ms) < 0 || wbuf_put_u32(o, c->dial_ms) < 0 ||
		     wbuf_put_u32(o, c->idle_ms) < 0 ? -1 : 0;
	return done(o, start, rc, WE_CONFIG, err);
}

int wegress_add(struct wbuf *o, uint32_t jail, const char *name, const char *source,
                char *const *allow, size_t n_allow, struct werr *err)
{
	size_t start = o->len;
	int rc = !name || !source || strlen(name) > WEGRESS_NAME_MAX ||
	         strlen(source) > WEGRESS_PATH_MAX || n_allow > WEGRESS_ENTRIES_MAX ? -1 : 0;

	if (rc == 0)
		rc = wbuf_put_u8(o, WE_ADD) < 0 || wbuf_put_u32(o, jail) < 0 ||
		     wbuf_put_str(o, name) < 0 || wbuf_put_str(o, source) < 0 ||
		     wbuf_put_u32(o, (uint32_t)n_allow) < 0 ? -1 : 0;
	for (size_t i = 0; i < n_allow && rc == 0; i++)
		rc = strlen(allow[i]) > WEGRESS_ENTRY_MAX ? -1 : wbuf_put_str(o, allow[i]);
	return done(o, start, rc, WE_ADD, err);
}

int wegress_remove(struct wbuf *o, uint32_t jail, struct werr *err)
{
	size_t start = o->len;
	int rc = wbuf_put_u8(o, WE_REMOVE) < 0 || wbuf_put_u32(o, jail) < 0 ? -1 : 0;

	return done(o, start, rc, WE_REMOVE, err);
}

int wegress_ready(struct wbuf *o, struct werr *err)
{
	size_t start = o->len;
	int rc = wbuf_put_u8(o, WE_READY) < 0 || wbuf_put_u32(o, WEGRESS_VERSION) < 0 ? -1 : 0;

	return done(o, start, rc, WE_READY, err);
}

int wegress_audit(struct wbuf *o, uint32_t jail, const struct wegress_rec *r, struct werr *err)
{
	size_t start = o->len;
	int rc = rec_bad(r) ? -1 : 0;

	if (rc == 0)
		rc = wbuf_put_u8(o, WE_AUDIT) < 0 || wbuf_put_u32(o, jail) < 0 || put_rec(o, r) < 0
		         ? -1 : 0;
	return done(o, start, rc, WE_AUDIT, err);
}

int wegress_removed(struct wbuf *o, uint32_t jail, uint64_t dropped, struct werr *err)
{
	size_t start = o->len;
	int rc = wbuf_put_u8(o, WE_REMOVED) < 0 || wbuf_put_u32(o, jail) < 0 ||
	         wbuf_put_u64(o, dropped) < 0 ? -1 : 0;

	return done(o, start, rc, WE_REMOVED, err);
}

int wegress_log(struct wbuf *o, const char *text, struct werr *err)
{
	size_t start = o->len;
	int rc = strlen(text) > WEGRESS_LOG_MAX || !wegress_text_ok(text) ? -1 : 0;

	if (rc == 0)
		rc = wbuf_put_u8(o, WE_LOG) < 0 || wbuf_put_str(o, text) < 0 ? -1 : 0;
	return done(o, start, rc, WE_LOG, err);
}

/* --- decoding ------------------------------------------------------------ */

void wegress_msg_free(struct wegress_msg *m)
{
	free(m->name);
	free(m->source);
	for (uint32_t i = 0; m->allow && i < m->n_allow; i++)
		free(m->allow[i]);
	free(m->allow);
	free(m->text);
	memset(m, 0, sizeof(*m));
}

/* The body of an ADD after the jail: name, source, the entries. */
static const char *get_add(struct wrd *rd, struct wegress_msg *m)
{
	uint32_t n;

	if (wrd_str(rd, &m->name, WEGRESS_NAME_MAX) < 0)
		return "policy name";
	if (wrd_str(rd, &m->source, WEGRESS_PATH_MAX) < 0)
		return "policy source";
	/* each entry takes at least its 4-byte length: n is bounded by what
	 * is left before anything is allocated for it */
	if (wrd_u32(rd, &n) < 0 || n > WEGRESS_ENTRIES_MAX || n > (rd->len - rd->off) / 4)
		return "number of allow entries";
	m->allow = xcalloc(n ? n : 1, sizeof(char *));
	for (; m->n_allow < n; m->n_allow++)
		if (wrd_str(rd, &m->allow[m->n_allow], WEGRESS_ENTRY_MAX) < 0)
			return "allow entry";
	return NULL;
}

int wegress_decode(const uint8_t *p, size_t len, bool from_egress, struct wegress_msg *m,
                   struct werr *err)
{
	struct wrd rd;
	const char *bad = NULL;
	const char *name;
	uint8_t type;
	size_t i;

	memset(m, 0, sizeof(*m));
	if (len > WEGRESS_FRAME_MAX)
		return werr_set(err, 0, "egress frame of %zu bytes is over the limit of %u", len,
		                WEGRESS_FRAME_MAX);
	wrd_init(&rd, p, len);
	if (wrd_u8(&rd, &type) < 0)
		return werr_set(err, 0, "an empty egress frame");
	for (i = 0; i < ARRAY_SIZE(types) && types[i].type != type; i++)
		;
	if (i == ARRAY_SIZE(types))
		return werr_set(err, 0, "an egress frame of unknown type %u", type);
	name = types[i].name;
	if (types[i].from_egress != from_egress)
		return werr_set(err, 0, "an egress %s frame sent by the %s", name,
		                from_egress ? "egress process" : "supervisor");
	m->type = type;
	switch ((enum wegress_type)type) {
	case WE_CONFIG:
		if (wrd_u32(&rd, &m->version) < 0)
			bad = "version";
		else if (wrd_u32(&rd, &m->conf.fd_reserve) < 0 || m->conf.fd_reserve > RESERVE_MAX)
			bad = "fd reserve";
		else if (wrd_u32(&rd, &m->conf.audit_max) < 0)
			bad = "audit cap";
		else if (wrd_u32(&rd, &m->conf.head_ms) < 0 || m->conf.head_ms > MS_MAX ||
		         wrd_u32(&rd, &m->conf.dial_ms) < 0 || m->conf.dial_ms > MS_MAX ||
		         wrd_u32(&rd, &m->conf.idle_ms) < 0 || m->conf.idle_ms > MS_MAX)
			bad = "deadline";
		break;
	case WE_ADD:
		if (wrd_u32(&rd, &m->jail) < 0)
			bad = "jail";
		else
			bad = get_add(&rd, m);
		break;
	case WE_REMOVE:
		if (wrd_u32(&rd, &m->jail) < 0)
			bad = "jail";
		break;
	case WE_READY:
		if (wrd_u32(&rd, &m->version) < 0)
			bad = "version";
		break;
	case WE_AUDIT:
		if (wrd_u32(&rd, &m->jail) < 0)
			bad = "jail";
		else
			bad = get_rec(&rd, &m->rec);
		break;
	case WE_REMOVED:
		if (wrd_u32(&rd, &m->jail) < 0)
			bad = "jail";
		else if (wrd_u64(&rd, &m->dropped) < 0)
			bad = "dropped";
		break;
	case WE_LOG:
		if (wrd_str(&rd, &m->text, WEGRESS_LOG_MAX) < 0 || !wegress_text_ok(m->text))
			bad = "text";
		break;
	}
	if (!bad && wrd_end(&rd) < 0)
		bad = "trailing bytes";
	if (bad) {
		wegress_msg_free(m);
		return werr_set(err, 0, "a malformed egress %s frame: %s", name, bad);
	}
	return 0;
}
