/* Private to learn/: the learner's state while it judges calls. */
#ifndef WARDEN_LEARNER_H
#define WARDEN_LEARNER_H

#include <stdbool.h>
#include <stdint.h>

#include "warden/learn.h"

#define LJ_DNS_MAX 64
#define LJ_EXEC_MAX 32

struct lctx {
	int root;                   /* O_PATH of the jail's root, -1 until WLM_ROOT */
	int mem;                    /* the current call's /proc/TID/mem, or -1 */
	struct wl_list list;
	const struct wl_base *b;
	uint64_t id;                /* the current call's notification */
	uint32_t tid;
	bool recorded;              /* the current call added or counted a refusal */
	uint64_t unread;            /* calls whose memory could not be read */
	/* sockets connected to port 53, by thread and fd: what they send is a
	 * DNS query (glibc connects its UDP socket, then sends) */
	struct { uint32_t tid; int fd; } dns[LJ_DNS_MAX];
	size_t dns_n;
	/* refused execs, by thread and name: a PATH search that finds the
	 * program later was no refusal (learn/judge.c) */
	struct { uint32_t tid; uint64_t id; char base[64]; } ex[LJ_EXEC_MAX];
	size_t ex_n;
};

/* learn/judge.c: one forwarded call (nr, args) that names paths, relative
 * to dir and dir2 (the jail's paths) */
void lj_call(struct lctx *c, int nr, const uint64_t a[6], const char *dir, const char *dir2);
/* a unix socket's path, judged like a file the call reads */
void lj_socket_path(struct lctx *c, const char *call, const char *path);
/* learn/judge_net.c */
void lj_net(struct lctx *c, const char *call, int nr, const uint64_t a[6]);
void lj_proxy(struct lctx *c, const char *method, const char *host, uint32_t port,
              uint32_t status, const char *reason, const char *address);
void lj_denied(struct lctx *c, const char *name, uint64_t count, const char *first);
/* learn/mem.c: read exactly n bytes of the caller's memory at addr, or a
 * NUL-terminated string of at most cap - 1 bytes; 0 or -1 */
int lj_read(struct lctx *c, uint64_t addr, void *buf, size_t n);
int lj_read_str(struct lctx *c, uint64_t addr, char *buf, size_t cap);
/* Record a refusal for the current call (c->recorded) */
struct wl_refusal *lj_add(struct lctx *c, enum wl_op op, const char *target, const char *call,
                          const char *why, const char *key, const char *value);

#endif
