/* The broker <-> supervisor protocol: one table says which fields each
 * message carries, in order; one encoder and one decoder walk it.  Every
 * read goes through the checked reader of buf.h, so a bound is enforced on
 * every field and nothing is read past the frame. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "warden/proto.h"
#include "warden/util.h"

/* Field codes:
 *   v version  q req  s session  b block  f flags  (u32)
 *   m stream (u8)  k kind (u8, WIDEN: < WK__N; WIDENED: < WW__N)  c count (u64)
 *   n line (u32)
 *   P profile  L language  A audit id  Y syscall   (str, WPROTO_NAME_MAX)
 *   F display format (str, WPROTO_NAME_MAX, one of WDISPLAY_FORMATS)
 *   W workspace  V value (str, WPROTO_PATH_MAX)
 *   T text  J json  K langs  M limits  G jail facts  (str, WPROTO_TEXT_MAX)
 *   X text, code-sized (str, WPROTO_CODE_MAX)
 *   D data: code (RUN, WPROTO_CODE_MAX), output (OUTPUT, WPROTO_OUTPUT_CHUNK)
 *     or rich output (DISPLAY, WPROTO_DISPLAY_MAX)
 *   l list of names (u32 n <= WPROTO_DENIED_MAX, n x str)
 * RESULT has its own layout (see put_result/get_result). */
struct wmsg_desc {
	uint8_t type;
	const char *name;
	const char *fields;
};

static const struct wmsg_desc descs[] = {
	{ WM_HELLO, "HELLO", "v" },
	{ WM_OPEN, "OPEN", "qPWf" },
	{ WM_RUN, "RUN", "sbLDf" },
	{ WM_INTERRUPT, "INTERRUPT", "s" },
	{ WM_CLOSE, "CLOSE", "s" },
	{ WM_LANGS, "LANGS", "q" },
	{ WM_EDIT, "EDIT", "qX" },
	{ WM_WIDEN, "WIDEN", "qskVf" },
	{ WM_REVOKE, "REVOKE", "qs" },
	{ WM_SAVE, "SAVE", "qsP" },
	{ WM_WELCOME, "WELCOME", "vPWl" },
	{ WM_OPENED, "OPENED", "qsAJKMG" },
	{ WM_OUTPUT, "OUTPUT", "sbmD" },
	{ WM_RESULT, "RESULT", NULL },
	{ WM_AUDIT, "AUDIT", "sbYc" },
	{ WM_CLOSED, "CLOSED", "s" },
	{ WM_LANGLIST, "LANGLIST", "qK" },
	{ WM_ERROR, "ERROR", "qsbT" },
	{ WM_EDITED, "EDITED", "qX" },
	{ WM_DISPLAY, "DISPLAY", "sbFD" },
	{ WM_LINE, "LINE", "sbn" },
	{ WM_WIDENED, "WIDENED", "qskfT" },
	{ WM_REFUSALS, "REFUSALS", "sbT" },
};

static const struct wmsg_desc *desc_of(uint8_t type)
{
	for (size_t i = 0; i < ARRAY_SIZE(descs); i++)
		if (descs[i].type == type)
			return &descs[i];
	return NULL;
}

const char *wmsg_type_name(uint8_t type)
{
	const struct wmsg_desc *d = desc_of(type);
	return d ? d->name : "unknown";
}

const char *wblock_reason_name(unsigned r)
{
	static const char *const n[WB__N] = { "exited", "signaled", "timeout", "oom", "pids",
	                                      "cpu_time", "output", "error", "interrupted" };
	return r < WB__N ? n[r] : "error";
}

const char *wapproval_name(unsigned a)
{
	static const char *const n[WAPPROVE__N] = { "api", "auto", "user", "edited" };
	return a < WAPPROVE__N ? n[a] : "unknown";
}

const char *wwiden_kind_name(unsigned k)
{
	static const char *const n[WK__N] = { "read", "write", "host" };
	return k < WK__N ? n[k] : "unknown";
}

const char *wwiden_via_name(unsigned v)
{
	static const char *const n[WVIA__N] = { "chat", "serve client", "mcp elicitation" };
	return v < WVIA__N ? n[v] : "unknown";
}

/* the kind byte's bound for a message type */
static unsigned kind_max(uint8_t type)
{
	return type == WM_WIDEN ? WK__N : WW__N;
}

static size_t str_max(char code)
{
	switch (code) {
	case 'P': case 'L': case 'A': case 'Y': case 'F': return WPROTO_NAME_MAX;
	case 'W': case 'V': return WPROTO_PATH_MAX;
	case 'X': return WPROTO_CODE_MAX;
	default: return WPROTO_TEXT_MAX;
	}
}

static size_t data_max(uint8_t type)
{
	return type == WM_OUTPUT ? WPROTO_OUTPUT_CHUNK
	       : type == WM_DISPLAY ? WPROTO_DISPLAY_MAX : WPROTO_CODE_MAX;
}

bool wdisplay_format_ok(const char *format)
{
	static const char *const ok[] = { "png", "jpeg", "html" };

	for (size_t i = 0; format && i < ARRAY_SIZE(ok); i++)
		if (strcmp(format, ok[i]) == 0)
			return true;
	return false;
}

static int frame_begin(struct wbuf *out, uint8_t type, size_t *start)
{
	*start = out->len;
	return wbuf_put_u32(out, 0) < 0 || wbuf_put_u8(out, type) < 0 ? -1 : 0;
}

static int frame_end(struct wbuf *out, size_t start, uint8_t type, struct werr *err)
{
	size_t n = out->len - start;

	if (n > WPROTO_FRAME_MAX) {
		out->len = start;
		return werr_set(err, 0, "%s frame of %zu bytes is over the limit of %u",
		                wmsg_type_name(type), n, WPROTO_FRAME_MAX);
	}
	wbuf_poke_u32(out, start, (uint32_t)(n - 4));
	return 0;
}

/* Encode one message from a field list and matching varargs:
 * u32 for vqsbf, int (u8) for m, uint64_t for c, const char * for strings,
 * (const void *, size_t) for D, (char *const *, uint32_t) for l. */
static int encode(struct wbuf *out, uint8_t type, struct werr *err, ...)
{
	const struct wmsg_desc *d = desc_of(type);
	size_t start;
	va_list ap;
	int rc = 0;

	if (frame_begin(out, type, &start) < 0)
		return werr_set(err, 0, "%s frame: buffer full", wmsg_type_name(type));
	va_start(ap, err);
	for (const char *f = d->fields; *f && rc == 0; f++) {
		switch (*f) {
		case 'v': case 'q': case 's': case 'b': case 'f': case 'n':
			rc = wbuf_put_u32(out, va_arg(ap, uint32_t));
			break;
		case 'm':
			rc = wbuf_put_u8(out, (uint8_t)va_arg(ap, int));
			break;
		case 'k': {
			unsigned k = (unsigned)va_arg(ap, int);
			rc = k >= kind_max(type) ? -1 : wbuf_put_u8(out, (uint8_t)k);
			break;
		}
		case 'c':
			rc = wbuf_put_u64(out, va_arg(ap, uint64_t));
			break;
		case 'D': {
			const void *p = va_arg(ap, const void *);
			size_t n = va_arg(ap, size_t);
			rc = n > data_max(type) ? -1 : wbuf_put_bytes(out, p, n);
			break;
		}
		case 'l': {
			char *const *v = va_arg(ap, char *const *);
			uint32_t n = va_arg(ap, uint32_t);
			rc = n > WPROTO_DENIED_MAX ? -1 : wbuf_put_u32(out, n);
			for (uint32_t i = 0; i < n && rc == 0; i++)
				rc = strlen(v[i]) > WPROTO_NAME_MAX ? -1 : wbuf_put_str(out, v[i]);
			break;
		}
		default: {
			const char *s = va_arg(ap, const char *);
			rc = s && strlen(s) > str_max(*f) ? -1 : wbuf_put_str(out, s);
			if (*f == 'F' && !wdisplay_format_ok(s))
				rc = -1;
			break;
		}
		}
	}
	va_end(ap);
	if (rc < 0) {
		out->len = start;
		return werr_set(err, 0, "%s frame: a field is over its limit", wmsg_type_name(type));
	}
	return frame_end(out, start, type, err);
}

int wproto_hello(struct wbuf *o, uint32_t version, struct werr *err)
{ return encode(o, WM_HELLO, err, version); }
int wproto_open(struct wbuf *o, uint32_t req, const char *profile, const char *workspace,
                uint32_t flags, struct werr *err)
{ return encode(o, WM_OPEN, err, req, profile, workspace, flags); }
int wproto_run(struct wbuf *o, uint32_t session, uint32_t block, const char *language,
               const void *code, size_t len, struct werr *err)
{ return encode(o, WM_RUN, err, session, block, language, code, len, (uint32_t)WAPPROVE_API); }
int wproto_run_approved(struct wbuf *o, uint32_t session, uint32_t block, const char *language,
                        const void *code, size_t len, uint32_t approval, struct werr *err)
{ return encode(o, WM_RUN, err, session, block, language, code, len, approval); }
int wproto_interrupt(struct wbuf *o, uint32_t session, struct werr *err)
{ return encode(o, WM_INTERRUPT, err, session); }
int wproto_close(struct wbuf *o, uint32_t session, struct werr *err)
{ return encode(o, WM_CLOSE, err, session); }
int wproto_langs(struct wbuf *o, uint32_t req, struct werr *err)
{ return encode(o, WM_LANGS, err, req); }
int wproto_edit(struct wbuf *o, uint32_t req, const char *text, struct werr *err)
{ return encode(o, WM_EDIT, err, req, text); }
int wproto_widen(struct wbuf *o, uint32_t req, uint32_t session, uint8_t kind,
                 const char *value, uint32_t flags, struct werr *err)
{ return encode(o, WM_WIDEN, err, req, session, (int)kind, value, flags); }
int wproto_revoke(struct wbuf *o, uint32_t req, uint32_t session, struct werr *err)
{ return encode(o, WM_REVOKE, err, req, session); }
int wproto_save(struct wbuf *o, uint32_t req, uint32_t session, const char *name,
                struct werr *err)
{ return encode(o, WM_SAVE, err, req, session, name); }
int wproto_widened(struct wbuf *o, uint32_t req, uint32_t session, uint8_t status,
                   uint32_t flags, const char *text, struct werr *err)
{ return encode(o, WM_WIDENED, err, req, session, (int)status, flags, text); }
int wproto_refusals(struct wbuf *o, uint32_t session, uint32_t block, const char *json,
                    struct werr *err)
{ return encode(o, WM_REFUSALS, err, session, block, json); }
int wproto_welcome(struct wbuf *o, uint32_t version, const char *default_profile,
                   const char *default_workspace, char *const *profiles, uint32_t n,
                   struct werr *err)
{ return encode(o, WM_WELCOME, err, version, default_profile, default_workspace, profiles, n); }
int wproto_opened(struct wbuf *o, uint32_t req, uint32_t session, const char *audit_id,
                  const char *policy_json, const char *languages_json,
                  const char *limits_json, const char *jail_json, struct werr *err)
{ return encode(o, WM_OPENED, err, req, session, audit_id, policy_json, languages_json,
                limits_json, jail_json); }
int wproto_output(struct wbuf *o, uint32_t session, uint32_t block, uint8_t stream,
                  const void *data, size_t len, struct werr *err)
{ return encode(o, WM_OUTPUT, err, session, block, (int)stream, data, len); }
int wproto_audit(struct wbuf *o, uint32_t session, uint32_t block, const char *syscall,
                 uint64_t count, struct werr *err)
{ return encode(o, WM_AUDIT, err, session, block, syscall, count); }
int wproto_closed(struct wbuf *o, uint32_t session, struct werr *err)
{ return encode(o, WM_CLOSED, err, session); }
int wproto_langlist(struct wbuf *o, uint32_t req, const char *languages_json, struct werr *err)
{ return encode(o, WM_LANGLIST, err, req, languages_json); }
int wproto_error(struct wbuf *o, uint32_t req, uint32_t session, uint32_t block,
                 const char *message, struct werr *err)
{ return encode(o, WM_ERROR, err, req, session, block, message); }
int wproto_edited(struct wbuf *o, uint32_t req, const char *text, struct werr *err)
{ return encode(o, WM_EDITED, err, req, text); }
int wproto_display(struct wbuf *o, uint32_t session, uint32_t block, const char *format,
                   const void *data, size_t len, struct werr *err)
{ return encode(o, WM_DISPLAY, err, session, block, format, data, len); }
int wproto_line(struct wbuf *o, uint32_t session, uint32_t block, uint32_t line,
                struct werr *err)
{ return encode(o, WM_LINE, err, session, block, line); }

int wproto_result(struct wbuf *o, const struct wresult *r, struct werr *err)
{
	size_t start;
	int rc;

	if (r->n_denied > WPROTO_DENIED_MAX || r->reason >= WB__N ||
	    (r->message && strlen(r->message) > WPROTO_TEXT_MAX))
		return werr_set(err, 0, "RESULT frame: a field is over its limit");
	if (frame_begin(o, WM_RESULT, &start) < 0)
		return werr_set(err, 0, "RESULT frame: buffer full");
	rc = wbuf_put_u32(o, r->session) | wbuf_put_u32(o, r->block) |
	     wbuf_put_u32(o, (uint32_t)r->exit_code) | wbuf_put_u32(o, r->signal) |
	     wbuf_put_u8(o, r->reason) | wbuf_put_u8(o, r->flags) |
	     wbuf_put_u64(o, r->wall_ms) | wbuf_put_u64(o, r->cpu_ms) |
	     wbuf_put_u64(o, r->peak_memory) | wbuf_put_u64(o, r->output_bytes) |
	     wbuf_put_u32(o, r->n_denied);
	for (uint32_t i = 0; i < r->n_denied && rc == 0; i++)
		rc = strlen(r->denied[i].name) > WPROTO_NAME_MAX ? -1
		     : wbuf_put_str(o, r->denied[i].name) | wbuf_put_u64(o, r->denied[i].count);
	if (rc == 0)
		rc = wbuf_put_str(o, r->message);
	if (rc < 0) {
		o->len = start;
		return werr_set(err, 0, "RESULT frame: a field is over its limit");
	}
	return frame_end(o, start, WM_RESULT, err);
}

/* --- decoding ------------------------------------------------------------ */

void wmsg_free(struct wmsg *m)
{
	free(m->profile);
	free(m->workspace);
	free(m->language);
	free(m->text);
	free(m->audit_id);
	free(m->json);
	free(m->langs);
	free(m->limits);
	free(m->jail);
	free(m->syscall);
	free(m->format);
	free(m->value);
	for (uint32_t i = 0; i < m->n_list; i++)
		free(m->list[i]);
	free(m->list);
	for (uint32_t i = 0; i < m->res.n_denied; i++)
		free(m->res.denied[i].name);
	free(m->res.denied);
	free(m->res.message);
	memset(m, 0, sizeof(*m));
}

static char **str_slot(struct wmsg *m, char code)
{
	switch (code) {
	case 'P': return &m->profile;
	case 'W': return &m->workspace;
	case 'L': return &m->language;
	case 'A': return &m->audit_id;
	case 'Y': return &m->syscall;
	case 'F': return &m->format;
	case 'J': return &m->json;
	case 'K': return &m->langs;
	case 'M': return &m->limits;
	case 'G': return &m->jail;
	case 'V': return &m->value;
	default: return &m->text;   /* T, X */
	}
}

static int get_result(struct wrd *r, struct wmsg *m)
{
	struct wresult *res = &m->res;
	uint32_t ec, n;

	if (wrd_u32(r, &res->session) || wrd_u32(r, &res->block) || wrd_u32(r, &ec) ||
	    wrd_u32(r, &res->signal) || wrd_u8(r, &res->reason) || wrd_u8(r, &res->flags) ||
	    wrd_u64(r, &res->wall_ms) || wrd_u64(r, &res->cpu_ms) ||
	    wrd_u64(r, &res->peak_memory) || wrd_u64(r, &res->output_bytes) || wrd_u32(r, &n))
		return -1;
	res->exit_code = (int32_t)ec;
	m->session = res->session;
	m->block = res->block;
	if (res->reason >= WB__N || n > WPROTO_DENIED_MAX)
		return -1;
	res->denied = xcalloc(n ? n : 1, sizeof(*res->denied));
	for (uint32_t i = 0; i < n; i++) {
		if (wrd_str(r, &res->denied[i].name, WPROTO_NAME_MAX))
			return -1;
		res->n_denied = i + 1;   /* owned from here, even if the count is cut off */
		if (wrd_u64(r, &res->denied[i].count))
			return -1;
	}
	return wrd_str(r, &res->message, WPROTO_TEXT_MAX);
}

long wproto_frame_len(const uint8_t *buf, size_t len, struct werr *err)
{
	struct wrd r;
	uint32_t n;

	if (len < 4)
		return 0;
	wrd_init(&r, buf, 4);
	(void)wrd_u32(&r, &n);
	if (n == 0 || n > WPROTO_FRAME_MAX - 4)
		return werr_set(err, 0, "frame length %u is out of range (1..%u)", n,
		                WPROTO_FRAME_MAX - 4);
	return (long)n + 4;
}

int wproto_decode(const uint8_t *frame, size_t len, struct wmsg *m, struct werr *err)
{
	const struct wmsg_desc *d;
	struct wrd r;
	uint32_t n;
	uint8_t type;
	char bad = 0;
	int rc = 0;

	memset(m, 0, sizeof(*m));
	wrd_init(&r, frame, len);
	if (wrd_u32(&r, &n) < 0 || n != len - 4 || wrd_u8(&r, &type) < 0)
		return werr_set(err, 0, "malformed frame header");
	d = desc_of(type);
	if (!d)
		return werr_set(err, 0, "unknown message type %u", type);
	m->type = type;
	if (!d->fields) {
		rc = get_result(&r, m);
		bad = 'R';
	}
	for (const char *f = d->fields; f && *f && rc == 0; f++) {
		bad = *f;
		switch (*f) {
		case 'v': rc = wrd_u32(&r, &m->version); break;
		case 'q': rc = wrd_u32(&r, &m->req); break;
		case 's': rc = wrd_u32(&r, &m->session); break;
		case 'b': rc = wrd_u32(&r, &m->block); break;
		case 'f': rc = wrd_u32(&r, &m->flags); break;
		case 'm': rc = wrd_u8(&r, &m->stream); break;
		case 'k':
			rc = wrd_u8(&r, &m->kind);
			if (rc == 0 && m->kind >= kind_max(type))
				rc = -1;
			break;
		case 'c': rc = wrd_u64(&r, &m->count); break;
		case 'n': rc = wrd_u32(&r, &m->line); break;
		case 'D': rc = wrd_bytes(&r, &m->data, &m->data_len, data_max(type)); break;
		case 'l':
			rc = wrd_u32(&r, &n);
			if (rc == 0 && n > WPROTO_DENIED_MAX)
				rc = -1;
			if (rc == 0)
				m->list = xcalloc(n ? n : 1, sizeof(char *));
			for (uint32_t i = 0; i < n && rc == 0; i++) {
				rc = wrd_str(&r, &m->list[i], WPROTO_NAME_MAX);
				if (rc == 0)
					m->n_list = i + 1;
			}
			break;
		default:
			rc = wrd_str(&r, str_slot(m, *f), str_max(*f));
			if (rc == 0 && *f == 'F' && !wdisplay_format_ok(m->format))
				rc = -1;
			break;
		}
	}
	if (rc == 0 && wrd_end(&r) < 0) {
		rc = -1;
		bad = '$';
	}
	if (rc < 0) {
		wmsg_free(m);
		if (bad == '$')
			return werr_set(err, 0, "%s frame has trailing bytes", d->name);
		return werr_set(err, 0, "%s frame: field '%c' is truncated, too long or holds a NUL byte",
		                d->name, bad);
	}
	return 0;
}

/* --- a buffered connection ------------------------------------------------ */

#define CONN_IN_MAX (WPROTO_FRAME_MAX + 64 * 1024)
#define CONN_OUT_MAX (256u * 1024 * 1024)

void wconn_init(struct wconn *c, int fd)
{
	c->fd = fd;
	c->eof = false;
	c->taken = 0;
	wbuf_init(&c->in, CONN_IN_MAX);
	wbuf_init(&c->out, CONN_OUT_MAX);
}

void wconn_free(struct wconn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	wbuf_free(&c->in);
	wbuf_free(&c->out);
}

/* The frame handed out last is dropped only when the next one is taken
 * (or more is read), so that m->data stays valid until then. */
static void drop_taken(struct wconn *c)
{
	if (c->taken) {
		wbuf_consume(&c->in, c->taken);
		c->taken = 0;
	}
}

int wconn_fill(struct wconn *c, struct werr *err)
{
	uint8_t tmp[64 * 1024];
	size_t room;
	ssize_t n;

	drop_taken(c);
	room = c->in.max - c->in.len;
	if (room == 0)
		return 0;   /* a whole frame is waiting to be taken */
	n = read(c->fd, tmp, room < sizeof(tmp) ? room : sizeof(tmp));
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n < 0)
		return werr_set(err, errno, "reading from the peer");
	if (n == 0) {
		c->eof = true;
		return werr_set(err, 0, "the peer closed the connection");
	}
	return wbuf_put_raw(&c->in, tmp, (size_t)n);
}

int wconn_next(struct wconn *c, struct wmsg *m, struct werr *err)
{
	long n;

	memset(m, 0, sizeof(*m));
	drop_taken(c);
	n = wproto_frame_len(c->in.d, c->in.len, err);
	if (n < 0)
		return -1;
	if (n == 0 || (size_t)n > c->in.len)
		return 0;
	if (wproto_decode(c->in.d, (size_t)n, m, err) < 0)
		return -1;
	c->taken = (size_t)n;
	return 1;
}

int wconn_flush(struct wconn *c, struct werr *err)
{
	while (c->out.len) {
		ssize_t n = write(c->fd, c->out.d, c->out.len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n < 0)
			return werr_set(err, errno, "writing to the peer");
		wbuf_consume(&c->out, (size_t)n);
	}
	return 0;
}

int wconn_flush_all(struct wconn *c, struct werr *err)
{
	struct pollfd p = { .fd = c->fd, .events = POLLOUT };

	for (;;) {
		if (wconn_flush(c, err) < 0)
			return -1;
		if (!c->out.len)
			return 0;
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			return werr_set(err, errno, "waiting to write to the peer");
	}
}

int wconn_read_msg(struct wconn *c, struct wmsg *m, struct werr *err)
{
	struct pollfd p = { .fd = c->fd, .events = POLLIN };

	for (;;) {
		int rc = wconn_next(c, m, err);
		if (rc != 0)
			return rc;
		if (c->eof)
			return werr_set(err, 0, "the peer closed the connection");
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			return werr_set(err, errno, "waiting for the peer");
		if (wconn_fill(c, err) < 0)
			return -1;
	}
}
