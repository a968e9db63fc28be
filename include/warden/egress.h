/* The wire between the supervisor and its egress proxy process
 * (warden-egress, egress/; common/egress_wire.c; docs/design.md "Network:
 * the egress proxy's process").
 *
 * One SOCK_SEQPACKET socketpair: every frame is one datagram, so the
 * kernel keeps the boundaries and no length prefix is needed.
 *
 * Frame:  u8 type
 *         body: typed fields (u8, u32, u64 big-endian; strings as u32
 *               length + bytes, no NUL) in the order listed below.
 *
 * Every frame is at most WEGRESS_FRAME_MAX bytes, checked on both sides; a
 * field over its own bound, a string with a NUL or a byte its field does
 * not admit, a truncated field, trailing bytes, a type of the other
 * direction or an unknown type make the frame malformed.  The supervisor
 * decodes what the egress process sends as hostile (it parses what jailed
 * code and the network send): a malformed or unexpected frame ends that
 * process (it is restarted), never the supervisor.
 *
 *   supervisor -> egress                   egress -> supervisor
 *   CONFIG  version, fd reserve, audit     READY    version (confined now)
 *           cap, head/dial/idle ms (0:     AUDIT    jail, one connection's
 *           the defaults)                           record (struct wegress_rec)
 *   ADD     jail, policy name, policy      REMOVED  jail, audit records the
 *           source, allow entries; the              cap dropped
 *           jail's listener (SCM_RIGHTS)   LOG      one line (printable ASCII)
 *   REMOVE  jail
 *
 * A jail is a number the supervisor chooses, never reused while its
 * process lives.  After REMOVE the egress sends the jail's last AUDITs
 * (the connections it closes), then REMOVED; nothing names the jail after
 * that.  A jail's allow entries are the policy's (policy/netallow.c checks
 * their form); an AUDIT names the entry that matched by its index, so the
 * supervisor writes the entry it sent, never text the egress chose. */
#ifndef WARDEN_EGRESS_H
#define WARDEN_EGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "warden/buf.h"
#include "warden/err.h"

#define WEGRESS_VERSION 1
#define WEGRESS_FD 3                       /* the socket's fd in the egress process */
#define WEGRESS_FRAME_MAX (64u * 1024)     /* one datagram */
#define WEGRESS_NAME_MAX 256               /* a policy's name */
#define WEGRESS_PATH_MAX 4096              /* a policy's source */
#define WEGRESS_ENTRY_MAX 300              /* one allow entry ("host:port") */
#define WEGRESS_ENTRIES_MAX 4096           /* allow entries of one jail */
#define WEGRESS_METHOD_MAX 16              /* "CONNECT", "GET", "?" */
#define WEGRESS_HOST_MAX 253               /* a name, or an address without brackets */
#define WEGRESS_ADDR_MAX 45                /* INET6_ADDRSTRLEN - 1 */
#define WEGRESS_REASON_MAX 511
#define WEGRESS_LOG_MAX 512
#define WEGRESS_NO_RULE 0xffffffffu        /* AUDIT: no entry matched */

enum wegress_type {
	/* supervisor -> egress */
	WE_CONFIG = 1,
	WE_ADD = 2,
	WE_REMOVE = 3,
	/* egress -> supervisor */
	WE_READY = 64,
	WE_AUDIT = 65,
	WE_REMOVED = 66,
	WE_LOG = 67,
};
const char *wegress_type_name(uint8_t type);   /* "AUDIT", or "unknown" */

/* One connection, as the audit log's "net" record holds it (docs/design.md
 * "The audit log").  method: "CONNECT", "GET", ..., or "?" when no request
 * line was read; host: "" when none; address: "" when none was reached or
 * refused; rule: the index of the allow entry that matched, or -1. */
struct wegress_rec {
	char method[WEGRESS_METHOD_MAX + 1];
	char host[WEGRESS_HOST_MAX + 1];
	uint16_t port;
	char address[WEGRESS_ADDR_MAX + 1];
	bool allowed;
	int32_t rule;
	uint16_t status;               /* 200, 400, 403, 408, 431, 502, 503, 504 */
	char reason[WEGRESS_REASON_MAX + 1];
	uint64_t bytes_up, bytes_down, duration_ms;
};

struct wegress_conf {
	uint32_t fd_reserve;           /* fds the process keeps besides its jails' (64) */
	uint32_t audit_max;            /* "net" records per jail (4096) */
	uint32_t head_ms, dial_ms, idle_ms;   /* 0: the defaults */
};

/* A decoded frame: the fields of its type only.  Strings are malloc'd
 * (wegress_msg_free); fd is not part of the bytes (the caller's SCM_RIGHTS). */
struct wegress_msg {
	uint8_t type;
	uint32_t version, jail;
	struct wegress_conf conf;                   /* CONFIG */
	char *name, *source;                        /* ADD */
	char **allow; uint32_t n_allow;             /* ADD */
	struct wegress_rec rec;                     /* AUDIT */
	uint64_t dropped;                           /* REMOVED */
	char *text;                                 /* LOG */
};
void wegress_msg_free(struct wegress_msg *m);   /* frees owned fields, zeroes m */

/* --- encoders: each appends one whole frame to out (reset it first) -----
 * -1 (err set) when a field is over its bound or not of its form (the
 * same checks the decoder makes); out is then unchanged. */
int wegress_config(struct wbuf *out, const struct wegress_conf *c, struct werr *err);
int wegress_add(struct wbuf *out, uint32_t jail, const char *name, const char *source,
                char *const *allow, size_t n_allow, struct werr *err);
int wegress_remove(struct wbuf *out, uint32_t jail, struct werr *err);
int wegress_ready(struct wbuf *out, struct werr *err);
int wegress_audit(struct wbuf *out, uint32_t jail, const struct wegress_rec *r,
                  struct werr *err);
int wegress_removed(struct wbuf *out, uint32_t jail, uint64_t dropped, struct werr *err);
int wegress_log(struct wbuf *out, const char *text, struct werr *err);

/* --- decoding ---------------------------------------------------------
 * One whole datagram into *m.  from_egress: the frame came from the egress
 * process (only READY, AUDIT, REMOVED, LOG are allowed), else from the
 * supervisor (CONFIG, ADD, REMOVE).  On failure m is zeroed and err names
 * the type and the field. */
int wegress_decode(const uint8_t *frame, size_t len, bool from_egress, struct wegress_msg *m,
                   struct werr *err);

/* The forms the decoder admits, for the encoders' callers too. */
bool wegress_text_ok(const char *s);      /* printable ASCII only (0x20..0x7e) */
bool wegress_status_ok(unsigned status);  /* one of the statuses above */

#endif
