/* The warm pool (supervisor/session_int.h; docs/design.md "The warm
 * pool"): jails started ahead of any session for a (profile, workspace,
 * language) a session used, taken ready by the next one; the refills;
 * the attacher that moves starting jails into their cgroups off the
 * loop. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "session.h"
#include "session_int.h"
#include "jailrun.h"
#include "sv.h"
#include "warden/filter.h"
#include "warden/jail.h"
#include "warden/log.h"
#include "warden/util.h"

/* The one thing a jail's start reads from a workspace that its sessions
 * (and the person) keep changing: which hide paths exist and what they
 * are (jail/mounts.c hides what is there when the jail starts, and skips
 * what is not).  A pooled jail started before .env appeared, or before
 * another session put a symlink at .ssh, is not what a cold start would
 * build now: this sum, taken before the pooled jail started and again
 * when a session would take it, tells them apart.  Each path is opened as
 * the jail opens it, no symlink followed in any component. */
static void sum_mix(uint64_t *h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		*h = (*h ^ b[i]) * 1099511628211ULL;   /* FNV-1a */
}

static void sum_path(uint64_t *h, const char *path)
{
	struct werr e = { 0 };
	struct stat st;
	int fd = jail_open_nofollow(AT_FDCWD, path, &e);
	uint64_t v[3] = { 0, 0, 0 };

	sum_mix(h, path, strlen(path) + 1);
	if (fd < 0) {
		v[0] = (uint64_t)errno;
	} else {
		if (fstat(fd, &st) == 0) {
			v[0] = st.st_dev;
			v[1] = st.st_ino;
			v[2] = st.st_mode & S_IFMT;
		}
		close(fd);
	}
	sum_mix(h, v, sizeof(v));
}

static uint64_t hide_sum(const struct sv_sess *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < s->pol->hide.n; i++) {
		_cleanup_free_ char *p = NULL;
		struct werr e = { 0 };

		if (policy_expand(s->pol->hide.v[i], s->ws, sv_caller_home(), &p, &e) == 0)
			sum_path(&h, p);
	}
	for (size_t i = 0; i < s->hide_extra.n; i++)
		sum_path(&h, s->hide_extra.v[i]);
	return h;
}

/* The catalogs' paths at the workspace's root and the home, and warden's
 * own directories: taken right after a pooled jail's plan made its
 * placeholders (jail_protect_sum), and when a session would take it. */
static uint64_t protect_sum(const struct sv_sess *s)
{
	return jail_protect_sum(s->ws, sv_caller_home(), s->pol, s->own.v);
}

static bool pool_match(const struct sv_jail *j, const struct sv_sess *s, const struct wlang *lang,
                       const struct stat *ws)
{
	return j->jr.pol == s->pol && j->lang == lang && j->ws_dev == ws->st_dev &&
	       j->ws_ino == ws->st_ino && !strcmp(j->pool_ws, s->ws);
}

/* One more jail in the pool for s's (profile, workspace, lang), when it
 * has fewer than --pool and the server's budget has room: sessions and
 * pooled jails together stay within --max-sessions (each holds a jail's
 * fds).  False when there is nothing to do. */
bool pool_fill_one(struct sv *sv, const struct sv_sess *s, const struct wlang *lang)
{
	struct stat ws;
	unsigned have = 0;
	struct werr e = { 0 };
	struct sv_jail *j;
	uint64_t sum;

	/* a learning jail's learner lives with it, and a widened session's
	 * policy is its own: neither is pooled (pool_match compares the
	 * policy, so nobody else could take one anyway) */
	if (s->learn || s->wpol || fstat(s->ws_fd, &ws) < 0)
		return false;
	for (j = sv->pool; j; j = j->pool_next)
		have += pool_match(j, s, lang, &ws);
	if (have >= sv->pool_size || sv->n_sessions + sv->n_pool >= sv->max_sessions)
		return false;
	sum = hide_sum(s);   /* before it starts: see hide_sum */
	j = sj_spawn(sv, s, lang, true, &e);
	if (!j)
		return false;   /* the session's own start will say why */
	j->pool_ws = xstrdup(s->ws);
	j->hide_sum = sum;
	j->protect_sum = protect_sum(s);   /* after its plan: placeholders in place */
	j->ws_dev = ws.st_dev;
	j->ws_ino = ws.st_ino;
	j->pooled = true;
	j->pool_until_ms = sv_now_ms() + sv->pool_idle_ms;
	j->pool_next = sv->pool;
	sv->pool = j;
	sv->n_pool++;
	wloop_timer_set(&sv->pool_tick, POOL_TICK_MS, POOL_TICK_MS);
	return true;
}

/* s has, or is starting, a jail for lang: one from the pool when one is
 * there (ready, or still starting), else one started now; then the pool
 * is topped up behind it. */
int sess_want(struct sv *sv, struct sv_sess *s, const struct wlang *lang,
                     struct werr *err)
{
	struct stat ws;
	struct sv_jail *j = NULL;
	uint64_t sum = 0, psum = 0;
	bool sum_taken = false;

	if (s->jails[lang - wlangs])
		return 0;
	if (fstat(s->ws_fd, &ws) < 0)
		return werr_set(err, errno, "workspace %s", s->ws);
	for (struct sv_jail **pp = &sv->pool; *pp;) {
		struct sv_jail *c = *pp;

		/* a pooled jail does not learn: a learning session never takes one */
		if (s->learn || !pool_match(c, s, lang, &ws)) {
			pp = &c->pool_next;
			continue;
		}
		if (!sum_taken) {
			sum = hide_sum(s);
			psum = protect_sum(s);
			sum_taken = true;
		}
		if (c->hide_sum != sum || c->protect_sum != psum ||
		    (c->cpu_low && wcg_set_cpu_low(c->jr.cg, false) < 0)) {
			/* its hides or protections are stale, or it would keep the pool's
			 * CPU weight: it goes (unlinked, so *pp is the next
			 * one now), and a fresh one is started */
			sj_destroy(sv, c);
			continue;
		}
		c->cpu_low = false;   /* a cold jail's limits from here on */
		j = c;
		*pp = c->pool_next;   /* out of the pool, for good */
		c->pool_next = NULL;
		sv->n_pool--;
		free(c->pool_ws);
		c->pool_ws = NULL;
		break;
	}
	if (!j) {
		/* room for it: a pooled jail of another key gives way */
		if (sv->pool && sv->n_sessions + sv->n_pool > sv->max_sessions)
			sj_destroy(sv, sv->pool);
		j = sj_spawn(sv, s, lang, false, err);
		if (!j)
			return -1;
	}
	if (sj_attach(sv, j, s, err) < 0) {
		sj_destroy(sv, j);
		return -1;
	}
	if (sv->pool_size && s->oneshot) {
		/* a jail per block: the pool is topped up at once, so the next
		 * block's jail is ready when this one's ends */
		s->refill |= 1u << (lang - wlangs);
		sv->idle_work = true;
	} else if (sv->pool_size) {
		/* the pool is topped up behind it, but not before the block
		 * this jail was taken for has ended (REFILL_IDLE_MS, on_pool_tick) */
		s->refill_later |= 1u << (lang - wlangs);
		s->refill_at_ms = sv_now_ms() + REFILL_IDLE_MS;
		if (!sv->pool)   /* else it ticks already */
			wloop_timer_set(&sv->pool_tick, POOL_TICK_MS, POOL_TICK_MS);
	}
	return 0;
}

void sess_new_jails(struct sv *sv, struct sv_sess *s)
{
	for (size_t i = 0; i < ARRAY_SIZE(s->jails); i++) {
		struct sv_jail *j = s->jails[i];

		if (!j)
			continue;
		if (j->used) {   /* its next one starts while the person reads */
			s->want |= 1u << i;
			sv->idle_work = true;
		}
		sj_destroy(sv, j);
	}
	s->refill = s->refill_later = 0;
}

bool sess_idle_pending(const struct sv *sv)
{
	return sv->idle_work && sv->n_starting < SV_IDLE_STARTS;
}

bool sess_idle(struct sv *sv)
{
	for (struct sv_sess *s = sv->sessions; s; s = s->next) {
		if (s->want) {
			unsigned i = (unsigned)__builtin_ctz(s->want);
			struct werr e = { 0 };

			s->want &= ~(1u << i);
			if (!s->jails[i])
				(void)sess_want(sv, s, &wlangs[i], &e);
			return true;
		}
	}
	for (struct sv_sess *s = sv->sessions; s; s = s->next) {
		while (s->refill) {
			unsigned i = (unsigned)__builtin_ctz(s->refill);

			if (pool_fill_one(sv, s, &wlangs[i]))
				return true;
			s->refill &= ~(1u << i);
		}
	}
	sv->idle_work = false;
	return false;
}

static void on_pool_tick(struct wloop *l, struct wsrc *src, uint32_t events)
{
	struct sv *sv = sv_of(l);
	uint64_t ticks, now = sv_now_ms();
	struct sv_jail *j = sv->pool, *next;
	bool later = false;

	(void)!read(src->fd, &ticks, sizeof(ticks));
	for (; j; j = next) {
		next = j->pool_next;
		if (now >= j->pool_until_ms)
			sj_destroy(sv, j);   /* idle: emptied */
	}
	/* a session that took a jail REFILL_IDLE_MS ago or more and is
	 * between blocks: its refill is due; one whose block runs waits */
	for (struct sv_sess *s = sv->sessions; s; s = s->next) {
		if (s->refill_later && !s->busy && now >= s->refill_at_ms)
			sj_refill_now(sv, s);
		later |= s->refill_later != 0;
	}
	if (!sv->pool && !later)
		wloop_timer_set(&sv->pool_tick, 0, 0);
}

/* The attacher moved j into its groups (err_no 0), or could not. */
static void attach_done(struct sv *sv, struct sv_jail *j, int err_no)
{
	struct werr e = { 0 };

	j->attaching = false;
	if (j->doomed) {   /* destroyed meanwhile: now it may be reaped */
		j->doomed = false;
		sj_destroy(sv, j);
		return;
	}
	if (err_no)
		werr_set(&e, err_no, "moving the jail into its cgroup");
	if (err_no || jail_go(&j->jr.jl, &e) < 0)
		sj_start_failed(sv, j, &e);
}

static struct sv_jail *attaching_pop(struct sv *sv)
{
	struct sv_jail *j = sv->attaching;

	if (j) {
		sv->attaching = j->attach_next;
		j->attach_next = NULL;
	}
	return j;
}

static void on_attacher(struct wloop *l, struct wsrc *src, uint32_t events)
{
	struct sv *sv = sv_of(l);
	uint32_t tag;
	int err_no, rc;

	while ((rc = sv_attacher_answer(&sv->attacher, &tag, &err_no)) > 0) {
		struct sv_jail *j = sv->attaching;

		if (!j || j->attach_tag != tag)
			break;   /* out of order: not ours to trust; end it below */
		attaching_pop(sv);
		attach_done(sv, j, err_no);
	}
	if (rc == 0)
		return;
	/* gone (or confused): no write of it can follow once it is reaped;
	 * every jail that waited for it fails its start, and jails attach on
	 * the loop from now on */
	wloop_forget(&sv->loop, src);
	sv_attacher_stop(&sv->attacher);
	while (sv->attaching)
		attach_done(sv, attaching_pop(sv), EIO);
}

int sess_pool_init(struct sv *sv, struct werr *err)
{
	struct werr aerr = { 0 };

	if (wloop_timer(&sv->loop, &sv->pool_tick, EPOLLIN, on_pool_tick, NULL) < 0)
		return werr_set(err, errno, "creating the pool's timer");
	if (sv_attacher_start(&sv->attacher, &aerr) == 0)
		wloop_watch(&sv->loop, &sv->attacher_src, sv->attacher.fd, EPOLLIN, on_attacher, NULL);
	else
		wlog_warn("%s; jails are attached to their cgroups on the loop", aerr.msg);
	return 0;
}

void sess_pool_empty(struct sv *sv)
{
	while (sv->pool)
		sj_destroy(sv, sv->pool);
	/* the jails still waiting for the attacher: once it is reaped they
	 * may be */
	wloop_forget(&sv->loop, &sv->attacher_src);
	sv_attacher_stop(&sv->attacher);
	while (sv->attaching) {
		struct sv_jail *j = attaching_pop(sv);
		j->attaching = false;
		j->doomed = false;
		sj_destroy(sv, j);
	}
}
