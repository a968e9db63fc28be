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
#include "warden/supervisor.h"
#include "warden/cgroup.h"
#include "warden/jail.h"
#include "lang.h"
#include "notify.h"
#include "warden/policy.h"
#include "warden/proto.h"
#include "warden/reaper.h"
#include "attach.h"
#include "jailrun.h"
#include "warden/loop.h"
#include "rich.h"
#include "learn.h"

/* One jail running one language's driver, for one session. */
struct sv_jail {
	struct sv_sess *s;
	const struct wlang *lang;
	struct jailrun jr;              /* limits, filter, init (jr.jl); pidfd shared
	                                 * with pid_src, which owns it; sync_fd
	                                 * owned by sync_src; jr.killed_for: the
	                                 * WB_* the supervisor killed it for */
	struct wsrc pid_src, ctl_src, out_src, err_src, notify_src, tick_src;
	struct wsrc sync_src;           /* the start's reports (jail_finish), then
	                                 * init's (jail_read) */
	bool starting;                  /* released, STARTED not yet reported */
	bool started;                   /* the driver was exec'ed */
	bool used;                      /* a block ran (or was sent) in it */
	bool pooled;                    /* it waited in the pool before its session */
	bool cpu_low;                   /* warming at the least CPU weight (pool) */
	/* while in the pool (s == NULL): what it was started for */
	struct sv_jail *pool_next;
	char *pool_ws;
	dev_t ws_dev;
	ino_t ws_ino;
	uint64_t pool_until_ms;         /* emptied when still unused then */
	uint64_t hide_sum;              /* what its hide paths were before it
	                                 * started (session.c: hide_sum) */
	uint64_t protect_sum;           /* its protected paths after its plan
	                                 * (session.c: protect_sum) */
	/* its cgroup attach, asked of the attacher (attach.h) */
	bool attaching;                 /* asked, not answered: not reaped before */
	bool doomed;                    /* destroyed meanwhile: finished at the answer */
	uint32_t attach_tag;
	struct sv_jail *attach_next;
	bool sweeping;                  /* JAIL_SIG_FREEZE sent, no SWEPT yet */
	bool frozen;                    /* JAIL_SIG_FREEZE sent: the driver stays
	                                 * stopped until a block thaws it */
	bool sweep_late;                /* killed because init never acked it */
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
	/* a learning session's jail (sess_learn.c): its learner, and the
	 * block's end while its report is awaited */
	bool learning;
	bool notify_armed;              /* its listener is watched (sj_arm_notify) */
	bool learn_began;               /* the running block's code began (sl_block_began) */
	struct wlearn learn;            /* in the jail's own memory: see
	                                 * wlearn's on_report */
	bool finishing;                 /* the RESULT waits for the report */
	bool fin_lost;                  /* ... and the jail is to go after it */
	struct wbuf fin;                /* that RESULT, encoded */
	void (*fin_done)(struct sv *sv, struct sv_jail *j);
	bool paused;                    /* output not polled: the broker is behind */
	bool ctl_paused;                /* control socket not read: the broker is behind */
	/* the running block */
	bool busy, fresh, interrupted;
	uint32_t block;
	uint64_t t0_ms, cpu0_ns, grace_at_ms;
	uint64_t sigint_again_ms;       /* when the interrupt is sent again (lang) */
	uint64_t net0;                  /* jail_net_unreachable at the block's start */
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
	struct wstrv own;               /* warden's own directories in ws
	                                 * (sv_own_hides), NULL-terminated */
	char **env;
	bool oneshot, lost_idle;
	struct sv_jail *jails[16];      /* by index in wlangs[] */
	struct sv_jail *busy;
	uint32_t want;                  /* by language bit: its jail to start when
	                                 * the loop is idle (sess_idle) */
	uint32_t refill;                /* by language bit: the pool to top up */
	uint32_t refill_later;          /* by language bit: the pool to top up at a
	                                 * pool tick past refill_at_ms that finds
	                                 * the session between blocks (session.c,
	                                 * REFILL_IDLE_MS), or at its close */
	uint64_t refill_at_ms;
	uint64_t blocks;
	struct wnotify_budget budget;   /* denied records, shared by its jails */
	/* issue 23 (widen.c): its jails learn (WOPEN_LEARN, or --learn); its
	 * policy widened for paths and hosts, apart from the allowed profile
	 * it opened with (base) */
	bool learn;
	const struct wpolicy *base;     /* the allowed profile; pol is base, or wpol */
	struct wpolicy *wpol;           /* base plus the widenings, or NULL */
	struct wstrv w_read, w_write, w_host;   /* the widenings, as granted */
	struct wstrv w_always_scope;    /* where the person answered "always":
	                                 * "read:DIR", "write:DIR", "host:NAME" */
};

struct sv {
	struct wloop loop;              /* first: sv_of() */
	struct wconn broker;            /* the loop's peer */
	struct wsrc broker_src, broker_pid_src, sig_src;
	pid_t broker_pid;
	int state;                      /* dispatch.c */
	struct waudit *audit;
	struct wprotect_reg reg;        /* placeholders (warden/protect.h) */
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
	/* the warm pool (session.c): started jails no session has used yet */
	struct sv_jail *pool;
	size_t n_pool;
	unsigned pool_size;             /* --pool: ready jails per (profile,
	                                 * workspace, language) */
	uint64_t pool_idle_ms;          /* --pool-idle */
	struct wsrc pool_tick;
	bool idle_work;                 /* some session has want or refill bits */
	size_t n_starting;              /* jails begun, not yet exec'ed */
	const struct wlang *guess;      /* the language of the last RUN: what a
	                                 * new session's jail is started for */
	struct sv_attacher attacher;    /* attach.h; its fd watched by attacher_src */
	struct wsrc attacher_src;
	struct sv_jail *attaching;      /* in the order asked */
	uint32_t attach_tag;
	uint32_t next_session;
	unsigned jail_counter;
	bool chat, edit_ok;
	bool learn_all;                 /* --learn: every session learns */
	bool tapped;                    /* the audit tap routes "net" records to
	                                 * learners (sess_learn.c) */
	uint8_t buf[64 * 1024];
};

/* The most sessions by default (--max-sessions), and the most it accepts.
 * Each session's first jail holds about 13 of the supervisor's fds (its
 * pidfd, sync socket, control socket, stdout/stderr pipes, seccomp
 * listener, timer, cgroup files, uid slot lock, workspace O_PATH; measured
 * 2,613 fds for 200 Python sessions): SV_FDS_PER_SESSION leaves a margin,
 * SV_FDS_RESERVE is the server's own.  A second language in a session
 * starts another jail beyond this budget. */
#define SV_FDS_PER_SESSION    16
#define SV_FDS_RESERVE        64

/* The server of a loop callback's loop. */
#define sv_of(l) ((struct sv *)((char *)(l) - offsetof(struct sv, loop)))

/* edit.c */
int sv_edit(struct sv *sv, const char *text, char **out, struct werr *err);

/* sess_learn.c: a learning session's jails (session_int.h has the rest) */
void sl_session_open(struct sv *sv, struct sv_sess *s);

/* widen.c: WIDEN, REVOKE, SAVE (dispatch.c); sess_close frees what they hold */
int sv_widen(struct sv *sv, const struct wmsg *m);
int sv_revoke(struct sv *sv, const struct wmsg *m);
int sv_save(struct sv *sv, const struct wmsg *m);
void widen_free(struct sv_sess *s);

/* dispatch.c: -1 when the broker is hostile or broken */
int sv_dispatch(struct sv *sv, const struct wmsg *m);

/* session.c */
struct sv_sess *sess_find(struct sv *sv, uint32_t id);
int sess_open(struct sv *sv, const struct wpolicy *pol, const char *ws,
              const struct wstrv *hide_extra, bool oneshot, bool learn, struct sv_sess **out,
              struct werr *err);
/* The session's jails end now (WIDEN, REVOKE: a new policy); each language
 * that had one gets its next jail started in the background. */
void sess_new_jails(struct sv *sv, struct sv_sess *s);
/* After OPENED went out: the session's jail for the language the server
 * last ran (chat: Python before any) starts in the background, or comes
 * ready from the pool (which is then topped up); OPENED never waits for a
 * jail. */
void sess_prestart(struct sv *sv, struct sv_sess *s);
/* Start a block; problems with the block itself are answered as its RESULT
 * (reason "error"), so -1 means only "not even that" (busy, unknown). */
int sess_run(struct sv *sv, struct sv_sess *s, uint32_t block, const char *language,
             const uint8_t *code, size_t len, uint32_t approval, struct werr *err);
void sess_interrupt(struct sv *sv, struct sv_sess *s);
void sess_close(struct sv *sv, struct sv_sess *s, const char *why);
void sess_close_all(struct sv *sv, const char *why);
void sess_resume_output(struct sv *sv);
/* Start one jail that waits for an idle loop (a session's next jail, the
 * pool's top-up), so that starts never delay a frame or a block that is
 * ready; false when none is left (sv->idle_work is then false). */
bool sess_idle(struct sv *sv);
/* Work for sess_idle, and room for it: at most SV_IDLE_STARTS jails start
 * at once in the background (each boots an interpreter). */
bool sess_idle_pending(const struct sv *sv);
#define SV_IDLE_STARTS 2
/* The pool's timer and the cgroup attacher (server.c, once the loop is
 * up; without an attacher, jails are attached on the loop). */
int sess_pool_init(struct sv *sv, struct werr *err);
/* At the end: every pooled jail, then the attacher and the jails that
 * waited for it. */
void sess_pool_empty(struct sv *sv);


#endif
