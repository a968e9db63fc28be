/* The egress engine's connections, shared by its two halves: engine.c
 * (accepting, the head, the decision, resolving, connecting, deadlines)
 * and relay.c (the proxy's own answers, the splice relay).  Private to
 * egress/. */
#ifndef WARDEN_EGRESS_CONN_H
#define WARDEN_EGRESS_CONN_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "engine.h"
#include "warden/loop.h"

#define CONN_FDS 6               /* what a relayed connection holds at most: its
                                    socket, the upstream's, two pipes */
#define N_ADDRS 8                /* resolved addresses tried */
#define HEAD_MS 10000            /* a client must finish its head within this */
#define IDLE_MS 300000           /* a relayed connection silent both ways this long
                                    is closed (5 min; a client that means to wait
                                    longer sends a keepalive meanwhile) */
#define PIPE_CAP 65536           /* bytes in flight per direction: the default pipe;
                                    256 x 2 x 64 KiB stays under the per-user
                                    pipe-user-pages-soft (64 MiB) */

enum pst { P_HEAD, P_RESOLVE, P_CONNECT, P_RELAY, P_REPLY, P_DRAIN };

struct pdir {                    /* one direction of the relay */
	int pr, pw;                  /* its pipe */
	size_t inpipe;
	bool eof, shut;              /* source ended; destination shut for writing */
	char *pre;                   /* written to the destination first */
	size_t pre_len, pre_off;
	bool pre_own;                /* the proxy's own words, not counted */
};

struct pconn {
	struct eproxy *p;
	struct wloop *l;             /* p's: a lookup may outlive p (resolving) */
	struct pconn *prev, *next;
	struct wsrc cli, up;
	enum pst st;
	bool resolving;              /* a lookup holds this pointer */
	bool dead;                   /* closed; freed when no lookup holds it */
	bool request;                /* a request line was read: audit it */
	bool audited;                /* its record was sent (at the proxy's own answer) */
	bool allowed;
	char *head;
	size_t head_len, drained;
	char method[17];
	char host[256];
	uint16_t port;
	int rule;
	int status;                  /* the proxy's answer: 200, 403, ... */
	char reason[512];
	struct sockaddr_storage addrs[N_ADDRS];
	size_t naddr, iaddr;
	char addr[INET6_ADDRSTRLEN];
	struct pdir c2u, u2c;
	uint64_t up_bytes, down_bytes, start_ms, deadline_ms;
};

struct eproxy {
	struct eproxy *gnext;        /* every live proxy of this process */
	bool paused;                 /* the listener is off until the next tick (EMFILE) */
	struct wloop *l;
	struct eproxy_conf conf;
	struct wsrc lsn, tick;
	bool ticking;
	struct pconn *conns;
	size_t nconns;
	uint64_t audited, dropped;
};


/* conn.c: the fds the process's connections hold (CONN_FDS each, from
 * econn_charge at the accept to econn_close) */
size_t econn_fds_held(void);
void econn_charge(void);
/* Hand r to the proxy's audit callback, within its cap (conf.audit_max). */
void econn_emit(struct eproxy *p, struct wegress_rec *r);
uint64_t econn_now_ms(void);
uint32_t econn_idle_ms(const struct eproxy *p);
/* Audit c (within the cap) and close it; freed after the batch, or by
 * the lookup that still holds it. */
void econn_close(struct pconn *c);
/* Its one record, to the proxy's audit callback (within the cap): at its
 * end, or earlier when the proxy answered it itself (econn_reply). */
void econn_audit(struct pconn *c);
/* conn.c: a closed connection out of its proxy's list and count (if its
 * proxy is still there), freed; for one whose lookup just ended */
void econn_unlink(struct pconn *c);

/* relay.c: the proxy's own answers (written, the client's rest drained
 * for a moment, closed), and the relay */
void econn_reply(struct pconn *c, int status, const char *text, const char *body);
void econn_reply_reason(struct pconn *c, int status, const char *text, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* 403: not in the list, with the --allow and policy lines that would allow it */
void econn_refuse_policy(struct pconn *c);
/* 403: a name led only to addresses no name may reach (own: the host's) */
void econn_refuse_special(struct pconn *c, const char *addr, bool own);
/* Both directions through a pipe each; -1 when no pipe could be made. */
int econn_start_relay(struct pconn *c);
void econn_pump(struct pconn *c);

#endif
