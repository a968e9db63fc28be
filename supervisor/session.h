/* The session server (warden serve / warden chat): one broker, many
 * sessions, one epoll loop.  Private to supervisor/.
 *
 *   server.c    command line, starting the broker, serving it
 *   dispatch.c  the broker's frames: a table of handlers per state
 *   session.c   sessions and their jails: drivers, output, limits, results
 *   edit.c      EDIT: the user's editor on a block's code
 *   loop.c      the event loop all of them call down into (loop.h)
 */
#ifndef WARDEN_SESSION_H
#define WARDEN_SESSION_H

#include <limits.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "audit.h"
#include "warden/cgroup.h"
#include "warden/jail.h"
#include "lang.h"
#include "notify.h"
#include "warden/policy.h"
#include "warden/proto.h"
#include "warden/reaper.h"
#include "jailrun.h"
#include "loop.h"
#include "rich.h"

/* One jail running one language's driver, for one session. */
struct sv_jail {
	struct sv_sess *s;
	const struct wlang *lang;
	struct jailrun jr;              /* limits, filter, init (jr.jl); pidfd shared
	                                 * with pid_src, which owns it; sync_fd
	                                 * owned by sync_src; jr.killed_for: the
	                                 * WB_* the supervisor killed it for */
	struct wsrc pid_src, ctl_src, out_src, err_src, notify_src, tick_src;
	struct wsrc sync_src;           /* init's reports (jail_read) */
	bool sweeping;                  /* JAIL_SIG_SWEEP sent, no SWEPT yet */
	bool done_pending;              /* "D" read: the RESULT waits for SWEPT */
	int done_status;
	uint64_t sweep_at_ms;
	uint64_t idle0_ns, idle_cpu_ns; /* cpu between blocks: since the last
	                                   block ended, and summed before it */
	uint64_t bg_deadline_ms;        /* background: sweep when idle past it */
	struct wnotify notify;
	struct wbuf ctl_out;            /* the block's frame, while the driver reads it */
	char ctl_in[32];                /* "D <n>\n" being read */
	size_t ctl_in_len;
	struct sv_rich rich;            /* "M"/"A" from the driver (rich.h) */
	bool paused;                    /* output not polled: the broker is behind */
	/* the running block */
	bool busy, fresh, interrupted;
	uint32_t block;
	uint64_t t0_ms, cpu0_ns, grace_at_ms;
	uint64_t out_total, idle_out;
	uint8_t *tail;                  /* last half of the output limit, once past the head */
	size_t tail_cap, tail_pos;
	bool tail_full;
	struct sv_jail *grave_next;     /* destroyed, to be freed after this batch */
};

struct sv_sess {
	struct sv_sess *next;
	uint32_t id;
	char audit_id[16];
	const struct wpolicy *pol;
	char ws[PATH_MAX];
	int ws_fd;                      /* O_PATH of ws, held from OPEN on */
	struct wstrv hide_extra;        /* the roots' hides inside ws (dispatch.c);
	                                 * v is NULL-terminated (or NULL) */
	char **env;
	bool oneshot, lost_idle;
	struct sv_jail *jails[16];      /* by index in wlangs[] */
	struct sv_jail *busy;
	uint64_t blocks;
	struct wnotify_budget budget;   /* denied records, shared by its jails */
};

struct sv {
	struct wloop loop;              /* first: sv_of() */
	struct wconn broker;            /* the loop's peer */
	struct wsrc broker_src, broker_pid_src, sig_src;
	pid_t broker_pid;
	int state;                      /* dispatch.c */
	struct waudit *audit;
	struct wpolicy **pols;          /* the allowed profiles, loaded at start; [0] default */
	size_t n_pols;
	char **roots;                   /* allowed workspace roots; [0] default */
	size_t n_roots;
	struct sv_sess *sessions;
	size_t n_sessions;
	size_t max_sessions;            /* server.c: --max-sessions, within the fds */
	bool max_by_nofile;             /* the open-files limit set it, not the option */
	uint64_t nofile;                /* RLIMIT_NOFILE's soft limit, for messages */
	struct sv_jail *grave;
	uint32_t next_session;
	unsigned jail_counter;
	bool chat, edit_ok;
	uint8_t buf[64 * 1024];
};

/* The most sessions by default (--max-sessions), and the most it accepts.
 * Each session's first jail holds about 13 of the supervisor's fds (its
 * pidfd, sync socket, control socket, stdout/stderr pipes, seccomp
 * listener, timer, cgroup files, uid slot lock, workspace O_PATH; measured
 * 2,613 fds for 200 Python sessions): SV_FDS_PER_SESSION leaves a margin,
 * SV_FDS_RESERVE is the server's own.  A second language in a session
 * starts another jail beyond this budget. */
#define SV_MAX_SESSIONS       1000
#define SV_MAX_SESSIONS_CEIL  65536u
#define SV_FDS_PER_SESSION    16
#define SV_FDS_RESERVE        64

/* The server of a loop callback's loop. */
#define sv_of(l) ((struct sv *)((char *)(l) - offsetof(struct sv, loop)))

/* edit.c */
int sv_edit(struct sv *sv, const char *text, char **out, struct werr *err);

/* dispatch.c: -1 when the broker is hostile or broken */
int sv_dispatch(struct sv *sv, const struct wmsg *m);

/* session.c */
struct sv_sess *sess_find(struct sv *sv, uint32_t id);
int sess_open(struct sv *sv, const struct wpolicy *pol, const char *ws,
              const struct wstrv *hide_extra, bool oneshot, struct sv_sess **out,
              struct werr *err);
/* Start a block; problems with the block itself are answered as its RESULT
 * (reason "error"), so -1 means only "not even that" (busy, unknown). */
int sess_run(struct sv *sv, struct sv_sess *s, uint32_t block, const char *language,
             const uint8_t *code, size_t len, uint32_t approval, struct werr *err);
void sess_interrupt(struct sv *sv, struct sv_sess *s);
void sess_close(struct sv *sv, struct sv_sess *s, const char *why);
void sess_close_all(struct sv *sv, const char *why);
void sess_resume_output(struct sv *sv);

#endif
