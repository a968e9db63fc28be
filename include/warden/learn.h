/* Learning a policy from what a program tried and was refused (issue 23,
 * docs/learn.md).  Two processes share this header:
 *
 *   the supervisor (supervisor/learn.c) forwards the notifications of a
 *     learning filter (include/warden/filter.h) whose call the policy
 *     allows, with a read-only fd of the caller's memory, and answers them
 *     CONTINUE once the learner has looked; it never reads that memory;
 *   the learner (learn/, `warden --learner`, started by the supervisor,
 *     unprivileged and confined: no capability, no_new_privs, Landlock
 *     with no file right at all, its own seccomp allowlist) reads the
 *     paths and addresses from that memory, judges each call against the
 *     jail (the jail's root as an fd) and the host, and keeps the
 *     refusals: a structured list (struct wl_list) that travels as JSON,
 *     with the policy file rendered on top of it.
 *
 * The wire: one SOCK_SEQPACKET message per frame, at most WL_FRAME_MAX
 * bytes, built and read with common/buf.c (u8 type first). */
#ifndef WARDEN_LEARN_H
#define WARDEN_LEARN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <json-c/json.h>

/* argv[1] of the learner: not a command anyone types */
#define WL_LEARNER_ARG "--learner"
/* its fds: 0 and 1 /dev/null, 2 stderr (the report), these: */
#define WL_FD_SOCK 3      /* SOCK_SEQPACKET to the supervisor */
#define WL_FD_POLICY 4    /* where the policy file goes (a memfd), or closed */
#define WL_FD_JSON 5      /* where the JSON list goes (a memfd), or /dev/null */

#define WL_FRAME_MAX (3 * 4096 + 512)
#define WL_PATH_MAX 4096

enum wl_msg {
	/* supervisor -> learner */
	WLM_ROOT = 1,      /* SCM_RIGHTS: O_PATH of the jail's root (/proc/INIT/root) */
	WLM_CALL,          /* u64 id, u32 tid, u32 nr, 6 x u64 args, bytes dir, bytes dir2;
	                    * SCM_RIGHTS: the caller's /proc/TID/mem, read-only.  dir and
	                    * dir2: the jail's path of the directories the call's paths
	                    * are relative to (readlink of /proc/TID/cwd or fd/N) */
	WLM_DROP,          /* u64 id: the call never ran (its notification was gone) */
	WLM_NET,           /* str method, str host, u32 port, u32 status, str reason:
	                    * the proxy refused it (an audit "net" record) */
	WLM_DENIED,        /* str name, u32 nr, u64 count, str first: a syscall the
	                    * policy denied (the supervisor's count) */
	WLM_END,           /* u64 unexamined, str why: the run is over; report */
	/* a session's jail (the learner started with --session): */
	WLM_RESET,         /* a block starts: forget what was recorded before it */
	WLM_REPORT,        /* u32 block: the block ended: its list as JSON into
	                    * WL_FD_JSON from offset 0, forget it, answer REPORTED */
	/* learner -> supervisor */
	WLM_DONE = 32,     /* u64 id, u8 recorded: looked at; continue the call */
	WLM_REPORTED,      /* u32 block, u64 length: the JSON is written */
};

/* --- the refusals ------------------------------------------------------- */

enum wl_op {
	WL_READ,          /* opened for reading */
	WL_LIST,          /* a directory opened, listed or entered */
	WL_EXEC,          /* executed */
	WL_WRITE,         /* opened for writing, truncated */
	WL_CREATE,        /* created, removed or renamed in a directory */
	WL_PROBE,         /* only looked at: stat, access, readlink */
	WL_CONNECT,       /* connected (or sent) to an address directly */
	WL_DNS,           /* asked a DNS server (a name, or only that it tried) */
	WL_PROXY,         /* the proxy refused a request */
	WL_SYSCALL,       /* a syscall the policy denies */
	WL__N
};
const char *wl_op_name(enum wl_op op);

struct wl_refusal {
	enum wl_op op;
	char *target;      /* what the program named: a path (the jail's), host:port,
	                    * a name, a syscall */
	char *call;        /* the syscall that showed it, or "proxy" */
	uint64_t count;
	char *why;         /* why it was refused, one clause */
	const char *key;   /* the policy key proposed ("filesystem.read_only"), or
	                    * NULL: nothing is proposed */
	char *value;       /* the entry proposed */
	char *note;        /* more for people (why nothing, or what else), or NULL */
	char *danger;      /* why it is left out unless --include names it, or NULL */
	bool included;     /* in the policy */
	bool covered;      /* not needed: another proposal covers it (note says which) */
	uint64_t id;       /* the notification it came from last (WLM_DROP) */
};

struct wl_list {
	struct wl_refusal *v;
	size_t n, cap;
	uint64_t dropped;  /* refusals beyond WL_MAX, only counted */
	bool incomplete;
	char *why_incomplete;
};
#define WL_MAX 4096

/* What the learned policy extends and what it already holds (trusted: the
 * supervisor's command line and policy). */
struct wl_base {
	const char *profile;        /* "workspace" */
	const char *name;           /* the new policy's name */
	const char *argv0;          /* for its description */
	int net;                    /* enum wnet_mode of the run */
	int profile_net;            /* ... of the profile itself */
	const char *const *allow;   /* --allow entries of the run the profile lacks */
	size_t n_allow;
	const char *home, *workspace;
	const char *const *include; /* --include: names a dangerous entry may be included by */
	size_t n_include;
};

/* Add (or count again) a refusal; takes none of the strings (copies).
 * key NULL: nothing proposed.  Returns the entry, or NULL when the list is
 * full (counted in dropped). */
struct wl_refusal *wl_add(struct wl_list *l, enum wl_op op, const char *target,
                          const char *call, const char *why, const char *key,
                          const char *value, uint64_t id);
/* WLM_DROP: forget the last count of each refusal seen last in call id. */
void wl_drop(struct wl_list *l, uint64_t id);
void wl_free(struct wl_list *l);
/* Decide dangers and inclusion (learn/danger.c), merge proposals (a write
 * wins over a read of the same path, an entry below a proposed directory
 * of the same kind goes): call once, before rendering. */
void wl_settle(struct wl_list *l, const struct wl_base *b);
/* Why proposing value under key is dangerous, or NULL (learn/danger.c).
 * home: the caller's home directory. */
const char *wl_danger(const char *key, const char *value, const char *home, char *buf, size_t len);
/* The structured list as JSON: {"profile", "complete", "why_incomplete",
 * "dropped", "refusals": [{op, target, syscall, count, refused, proposal:
 * {key, value} | null, note, dangerous, danger, included, covered}]} */
json_object *wl_to_json(const struct wl_list *l, const struct wl_base *b);
/* The policy that extends b->profile with every included proposal, as
 * JSON text (malloc'd). */
char *wl_policy(const struct wl_list *l, const struct wl_base *b);
/* For people: one line per refusal, dangerous ones called out; control
 * characters in what the program named are shown escaped. */
void wl_print(const struct wl_list *l, const struct wl_base *b, int fd);

/* --- network (learn/net.c) --------------------------------------------- */

/* The first name asked in a DNS query (RFC 1035 header, one question, no
 * compression pointers in a question), lowercased, dots between labels,
 * into name (at least 256 bytes).  0, or -1 when msg is not a plain query. */
int wl_dns_query_name(const uint8_t *msg, size_t len, char *name, size_t cap);
/* "host:port" ("[v6]:port") of an AF_INET/AF_INET6 address, or a unix
 * path into out; the family, or -1 when sa is not one of those. */
int wl_sockaddr_str(const struct sockaddr *sa, size_t len, char *out, size_t cap, uint16_t *port);

/* the learner's entry (learn/learner.c) */
int wl_learner_main(int argc, char **argv);

#endif
