/* The wire protocol between the broker (unprivileged, talks to the LLM and
 * the person) and the supervisor (creates jails), over a SOCK_STREAM
 * socketpair.
 *
 * Frame:  u32 big-endian length of what follows (type + body)
 *         u8  type
 *         body: typed fields (u8, u32, u64 big-endian; strings and byte
 *               strings as u32 length + bytes) in the order listed below.
 *
 * Every frame is at most WPROTO_FRAME_MAX bytes, checked on both sides; a
 * field longer than its own bound, a string with a NUL byte, a truncated
 * field or trailing bytes make the frame malformed.  The supervisor treats
 * a malformed or unpermitted frame as a hostile broker: it kills every jail
 * of that broker and ends the connection (supervisor/dispatch.c).
 *
 *   broker -> supervisor                      supervisor -> broker
 *   HELLO      version                        WELCOME  version, default profile,
 *                                                      default workspace,
 *                                                      allowed profiles (list)
 *   OPEN       req, profile, workspace, flags OPENED   req, session, audit id,
 *                                                      policy JSON, languages JSON,
 *                                                      limits JSON, jail JSON
 *   RUN        session, block, language, code, OUTPUT   session, block, stream, data
 *              approval
 *   INTERRUPT  session                        RESULT   (struct wresult)
 *   CLOSE      session                        AUDIT    session, block, syscall, count
 *   LANGS      req                            CLOSED   session
 *   EDIT       req, text                      LANGLIST req, languages JSON
 *   WIDEN      req, session, kind, value,     EDITED   req, text
 *              flags                          WIDENED  req, session, status, flags,
 *   REVOKE     req, session                            text
 *   SAVE       req, session, name             REFUSALS session, block, JSON
 *                                             ERROR    req, session, block, message
 *                                             DISPLAY  session, block, format, data
 *                                             LINE     session, block, line
 *
 * DISPLAY is rich output a block produced (a figure, an image, HTML): its
 * format is one of WDISPLAY_FORMATS ("png", "jpeg", "html"), its data the
 * raw bytes (the image file, the HTML text), at most WPROTO_DISPLAY_MAX and
 * never more than the policy's output limit (the supervisor drops a larger
 * one and says so on stderr).  LINE is the line of the block that runs now
 * (1-based); the block's end implies "no line" (serve's active_line null).
 * Both come from the jail's driver (supervisor/lang.h): they are the
 * block's own word, as its stdout is, and carry nothing the block could
 * not print.
 *
 * EDIT asks the supervisor to open text in the user's $VISUAL/$EDITOR on the
 * terminal (warden chat's `e` at the approval prompt: the broker cannot run
 * programs).  It is permitted only when the supervisor runs `chat` on a
 * terminal.
 *
 * OPENED's limits JSON names what enforces each limit of the session's
 * policy on this machine, e.g. {"memory":"rlimit","cpus":"unavailable",
 * "wall_time":"timerfd",...}: "cgroup-v2", "cgroup-v1", "rlimit",
 * "timerfd", "supervisor", "unavailable" (requested, enforced by nothing)
 * or "none" (not requested).  Interfaces use it to say which limits are
 * weaker (docs/serve.md, issue 13).
 *
 * OPENED's jail JSON is what else the supervisor knows of the session's
 * jail on this machine, for people (chat's %info, issue 12):
 * {"policy_source":"built-in:workspace.json" or the policy file's path,
 *  "landlock_abi":N (0: no Landlock, so the mount namespace is the only
 *  file boundary), "home_in_workspace":B (the caller's home lies in the
 *  workspace: its startup files and credentials are protected and hidden,
 *  warden/catalog.h)}.  Clients ignore members they do not know.
 *
 * WIDEN, REVOKE and SAVE (issue 23, docs/learn.md "In a session"): a
 * session's policy widened for one path or host (kind WK_*, value the
 * path or "host[:port]"), the widenings dropped, or saved as a profile of
 * the caller's.  The supervisor decides each on its own facts
 * (supervisor/widen.c): the broker only asks.  Each is answered by one
 * WIDENED (status WW_*, text what was done or why not).  REFUSALS is a
 * learning session's report of a block (OPEN flag WOPEN_LEARN): the
 * learner's JSON list (include/warden/learn.h, wl_to_json), copied byte
 * for byte by the supervisor, which never parses it (SECURITY.md G222):
 * to the broker it is as hostile as the jail.  It comes before the
 * block's RESULT.
 *
 * The JSON strings in OPENED and LANGLIST go from the trusted side to the
 * untrusted one; the supervisor never parses JSON from the broker.
 */
#ifndef WARDEN_PROTO_H
#define WARDEN_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "warden/buf.h"
#include "warden/err.h"
#include "warden/reason.h"

#define WPROTO_VERSION 4   /* 2: OPENED carries the limits JSON; 3: and the jail JSON; DISPLAY,
                            * LINE; 4: WIDEN, REVOKE, SAVE, WIDENED, REFUSALS, WOPEN_LEARN */
#define WPROTO_FRAME_MAX (4u * 1024 * 1024)  /* whole frame, header included */
#define WPROTO_CODE_MAX (1u * 1024 * 1024)   /* one code block */
#define WPROTO_OUTPUT_CHUNK (64u * 1024)     /* one OUTPUT frame's data */
#define WPROTO_NAME_MAX 64                   /* profile, language, syscall names */
#define WPROTO_PATH_MAX 4096
#define WPROTO_TEXT_MAX (256u * 1024)        /* messages, JSON documents */
#define WPROTO_DENIED_MAX 64                 /* denied syscall entries in a RESULT */
#define WPROTO_DISPLAY_MAX (3u * 1024 * 1024) /* one DISPLAY frame's data */
#define WDISPLAY_FORMATS "png jpeg html"     /* DISPLAY's closed set of formats */

enum wmsg_type {
	/* broker -> supervisor */
	WM_HELLO = 1,
	WM_OPEN = 2,
	WM_RUN = 3,
	WM_INTERRUPT = 4,
	WM_CLOSE = 5,
	WM_LANGS = 6,
	WM_EDIT = 7,
	WM_WIDEN = 8,
	WM_REVOKE = 9,
	WM_SAVE = 10,
	/* supervisor -> broker */
	WM_WELCOME = 64,
	WM_OPENED = 65,
	WM_OUTPUT = 66,
	WM_RESULT = 67,
	WM_AUDIT = 68,
	WM_CLOSED = 69,
	WM_LANGLIST = 70,
	WM_ERROR = 71,
	WM_EDITED = 72,
	WM_DISPLAY = 73,
	WM_LINE = 74,
	WM_WIDENED = 75,
	WM_REFUSALS = 76,
};
/* "png", "jpeg" or "html" (WDISPLAY_FORMATS): true; anything else false. */
bool wdisplay_format_ok(const char *format);
const char *wmsg_type_name(uint8_t type);   /* "RUN", or "unknown" */

/* OPEN flags */
#define WOPEN_ONESHOT 0x1u        /* every block in a fresh jail */
#define WOPEN_LEARN 0x2u          /* its jails learn: REFUSALS before each RESULT */

/* WIDEN kinds: what a session's policy gains */
enum wwiden_kind { WK_READ = 0, WK_WRITE = 1, WK_HOST = 2, WK__N };
const char *wwiden_kind_name(unsigned k);   /* "read", "write", "host" */
/* WIDEN flags: the low byte says how the broker asked (its word, for the
 * audit log: enum wwiden_via); WWIDEN_EXPLICIT: a person typed it
 * (chat's %allow), not a one-key answer to a proposal */
enum wwiden_via { WVIA_CHAT = 0, WVIA_SERVE = 1, WVIA_MCP = 2, WVIA__N };
const char *wwiden_via_name(unsigned v);    /* "chat", "serve client", "mcp elicitation" */
#define WWIDEN_VIA_MASK 0xffu
#define WWIDEN_EXPLICIT 0x100u
/* WIDENED status */
enum wwiden_status { WW_GRANTED = 0, WW_REFUSED = 1, WW_DECLINED = 2, WW__N };
/* WIDENED flags */
#define WWIDENED_ALWAYS 0x1u      /* the person answered "always" */
#define WWIDENED_NEW_JAIL 0x2u    /* the session's jails were replaced */

/* RUN approval: how the code came to run, as the broker reports it (the
 * audit log records it as the broker's word, not as a fact). */
enum wapproval { WAPPROVE_API = 0, WAPPROVE_AUTO = 1, WAPPROVE_USER = 2, WAPPROVE_EDITED = 3,
                 WAPPROVE__N };
const char *wapproval_name(unsigned a);   /* "api", "auto", "user", "edited" */

/* OUTPUT streams */
enum { WSTREAM_STDOUT = 1, WSTREAM_STDERR = 2 };

/* Why a block ended: enum wblock_reason, in warden/reason.h */

/* RESULT flags */
#define WRES_STATE_LOST 0x1u      /* the jail ended: the next block starts fresh */
#define WRES_TRUNCATED 0x2u       /* output passed the limit: head and tail kept */
#define WRES_FRESH 0x4u           /* this block started a new jail */
#define WRES_NO_PEAK 0x8u         /* no memory counter: peak_memory is unknown, not 0 */

struct wdenied_count {
	char *name;
	uint64_t count;
};

struct wresult {
	uint32_t session, block;
	int32_t exit_code;            /* -1 when killed by a signal */
	uint32_t signal;
	uint8_t reason;               /* enum wblock_reason */
	uint8_t flags;                /* WRES_* */
	uint64_t wall_ms, cpu_ms, peak_memory, output_bytes;
	struct wdenied_count *denied; /* n_denied entries, owned */
	uint32_t n_denied;
	char *message;                /* one human line, may be "" */
};

/* A decoded frame.  Only the fields of its type are set (WELCOME: version,
 * profile, workspace, list; OPENED: req, session, audit_id, json = policy,
 * langs, limits, jail; RUN: language, data = code, flags = approval; EDIT/EDITED/ERROR:
 * text; AUDIT: syscall, count; DISPLAY: format, data; LINE: line); strings are
 * malloc'd and owned (wmsg_free), `data` points into the frame buffer and
 * is valid until the next read on the same connection. */
struct wmsg {
	uint8_t type;
	uint32_t version, req, session, block, flags;
	uint8_t stream;
	uint64_t count;
	char *profile, *workspace, *language, *text, *audit_id, *json;
	char *langs;                           /* OPENED/LANGLIST: languages JSON */
	char *limits;                          /* OPENED: limits JSON */
	char *jail;                            /* OPENED: jail JSON */
	char *syscall;                         /* AUDIT */
	char *format;                          /* DISPLAY */
	uint32_t line;                         /* LINE */
	uint8_t kind;                          /* WIDEN: WK_*; WIDENED: WW_* */
	char *value;                           /* WIDEN: the path or host */
	char **list; uint32_t n_list;          /* WELCOME's allowed profiles */
	const uint8_t *data; size_t data_len;  /* RUN code, OUTPUT/DISPLAY data */
	struct wresult res;                    /* RESULT */
};
void wmsg_free(struct wmsg *m);   /* frees owned fields, zeroes m */

/* --- encoders: each appends one whole frame to out ----------------------
 * They fail (-1, err set) only when a field is over its bound or the frame
 * over WPROTO_FRAME_MAX; out is then unchanged. */
int wproto_hello(struct wbuf *out, uint32_t version, struct werr *err);
int wproto_open(struct wbuf *out, uint32_t req, const char *profile, const char *workspace,
                uint32_t flags, struct werr *err);
int wproto_run(struct wbuf *out, uint32_t session, uint32_t block, const char *language,
               const void *code, size_t len, struct werr *err);
/* wproto_run with an approval (wproto_run sends WAPPROVE_API). */
int wproto_run_approved(struct wbuf *out, uint32_t session, uint32_t block, const char *language,
                        const void *code, size_t len, uint32_t approval, struct werr *err);
int wproto_interrupt(struct wbuf *out, uint32_t session, struct werr *err);
int wproto_close(struct wbuf *out, uint32_t session, struct werr *err);
int wproto_langs(struct wbuf *out, uint32_t req, struct werr *err);
int wproto_edit(struct wbuf *out, uint32_t req, const char *text, struct werr *err);
int wproto_widen(struct wbuf *out, uint32_t req, uint32_t session, uint8_t kind,
                 const char *value, uint32_t flags, struct werr *err);
int wproto_revoke(struct wbuf *out, uint32_t req, uint32_t session, struct werr *err);
int wproto_save(struct wbuf *out, uint32_t req, uint32_t session, const char *name,
                struct werr *err);
int wproto_widened(struct wbuf *out, uint32_t req, uint32_t session, uint8_t status,
                   uint32_t flags, const char *text, struct werr *err);
int wproto_refusals(struct wbuf *out, uint32_t session, uint32_t block, const char *json,
                    struct werr *err);

int wproto_welcome(struct wbuf *out, uint32_t version, const char *default_profile,
                   const char *default_workspace, char *const *profiles, uint32_t n,
                   struct werr *err);
int wproto_opened(struct wbuf *out, uint32_t req, uint32_t session, const char *audit_id,
                  const char *policy_json, const char *languages_json,
                  const char *limits_json, const char *jail_json, struct werr *err);
int wproto_output(struct wbuf *out, uint32_t session, uint32_t block, uint8_t stream,
                  const void *data, size_t len, struct werr *err);
int wproto_result(struct wbuf *out, const struct wresult *r, struct werr *err);
int wproto_audit(struct wbuf *out, uint32_t session, uint32_t block, const char *syscall,
                 uint64_t count, struct werr *err);
int wproto_closed(struct wbuf *out, uint32_t session, struct werr *err);
int wproto_langlist(struct wbuf *out, uint32_t req, const char *languages_json,
                    struct werr *err);
int wproto_edited(struct wbuf *out, uint32_t req, const char *text, struct werr *err);
int wproto_error(struct wbuf *out, uint32_t req, uint32_t session, uint32_t block,
                 const char *message, struct werr *err);
/* format must pass wdisplay_format_ok (else -1), len <= WPROTO_DISPLAY_MAX. */
int wproto_display(struct wbuf *out, uint32_t session, uint32_t block, const char *format,
                   const void *data, size_t len, struct werr *err);
int wproto_line(struct wbuf *out, uint32_t session, uint32_t block, uint32_t line,
                struct werr *err);

/* --- decoding -----------------------------------------------------------
 * wproto_frame_len: how many bytes the first frame in buf[0..len) needs.
 *   Returns 0 when fewer than 4 bytes are there yet, the frame's total size
 *   otherwise, or -1 (err set) when the announced length is 0 or over
 *   WPROTO_FRAME_MAX.
 * wproto_decode: one whole frame (header included) into *m.  Every check of
 *   the header comment applies; on failure m is zeroed and err names the
 *   type and the field. */
long wproto_frame_len(const uint8_t *buf, size_t len, struct werr *err);
int wproto_decode(const uint8_t *frame, size_t len, struct wmsg *m, struct werr *err);

/* --- a connection: buffered, non-blocking-friendly frame I/O -------------- */
struct wconn {
	int fd;
	struct wbuf in, out;
	size_t taken;      /* bytes of the frame handed out last, dropped on the next take */
	bool eof;
};
void wconn_init(struct wconn *c, int fd);
void wconn_free(struct wconn *c);   /* closes fd */
/* Read what is available (one read(2)).  0 ok (maybe nothing), -1 error or
 * EOF (c->eof set on EOF).  Input beyond one frame's maximum is never held. */
int wconn_fill(struct wconn *c, struct werr *err);
/* Take the next whole frame out of the input: 1 and *m filled, 0 when none
 * is complete yet, -1 malformed (err set).  m->data points into c->in and
 * stays valid until the next wconn_next/wconn_fill. */
int wconn_next(struct wconn *c, struct wmsg *m, struct werr *err);
/* Write out what is queued in c->out (one or more write(2)s, stops at
 * EAGAIN).  0 ok (check c->out.len for the rest), -1 error. */
int wconn_flush(struct wconn *c, struct werr *err);
/* Blocking helpers for simple clients (the broker): flush everything;
 * wait for and return the next frame (1), or -1 at EOF/error. */
int wconn_flush_all(struct wconn *c, struct werr *err);
int wconn_read_msg(struct wconn *c, struct wmsg *m, struct werr *err);

#endif
