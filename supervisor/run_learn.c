/* `warden run --learn` and `warden policy learn`: the steps a learning run
 * adds to wrun (supervisor/run.c), each a no-op without --learn, so a
 * normal run takes none of this path (its filter is the one compiled at
 * build time; `make bench` compares).  The learning itself is
 * supervisor/learn.c; docs/learn.md says why it is built so. */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>

#include "learn.h"
#include "run_int.h"
#include "sv.h"
#include "warden/filter.h"
#include "warden/log.h"
#include "warden/util.h"

/* What the learned policy extends: the profile as it is, before the
 * command line's --net and --allow (which the learned policy carries). */
int run_learn_policy(struct run *r, struct werr *err)
{
	if (!r->o->learn.on)
		return 0;
	if (r->o->policy_file)
		return werr_set(err, 0, "--learn: a learned policy extends a profile by name, and "
		                "--policy %s is a file: save it as ~/.config/warden/profiles/NAME.json "
		                "and learn with --profile NAME", r->o->policy_file);
	r->learn_profile_net = (int)r->pol->net;
	r->learn_allow0 = r->pol->net_allow.n;
	return 0;
}

/* The learning filter instead of the policy's (which learn.c keeps, to
 * decide every notification by). */
int run_learn_prepare(struct run *r, struct jail_spec *spec, struct werr *err)
{
	scmp_filter_ctx ctx = NULL;

	if (!r->o->learn.on)
		return 0;
	r->learn = xcalloc(1, sizeof(*r->learn));
	if (wlearn_init(r->learn, r->pol, err) < 0 ||
	    wlearn_outputs(r->learn, r->o->learn.write, r->o->learn.json_file, err) < 0 ||
	    wfilter_build_learn(r->pol, &ctx, err) < 0)
		return -1;
	jr_learn_filter(&r->jr, spec, ctx);
	return 0;
}

/* The listener of a learning run, from the jail's start to its end (the
 * same as run.c's for other runs: wnotify_handle diverts to learn.c). */
static void on_notify(struct wloop *lp, struct wsrc *src, uint32_t events)
{
	struct run *r = (struct run *)lp;

	if (events & EPOLLIN)
		wnotify_handle(&r->notify);
	else if (events & (EPOLLHUP | EPOLLERR))
		wloop_forget(lp, src);   /* the fd is the notify's */
}

/* The jail's reports while it starts: once READY came (with the listener),
 * its notifications are answered on this loop, so the program's own
 * execve, which notifies, can run. */
static void on_sync(struct wloop *lp, struct wsrc *src, uint32_t events)
{
	struct run *r = (struct run *)lp;   /* the loop is struct run's first member */
	int rc = jail_finish(&r->jr.jl, &r->learn_err);

	if (r->jr.jl.ready && r->notify_src.fd < 0 && r->jr.jl.notify_fd >= 0) {
		r->notify.divert = NULL;
		if (wnotify_init(&r->notify, steal_fd(&r->jr.jl.notify_fd), r->audit,
		                 r->learn_session, NULL, &r->learn_err) < 0) {
			r->learn_start_rc = -1;
			return;
		}
		r->notify.divert = wlearn_divert;
		r->notify.divert_ctx = r->learn;
		wloop_watch(lp, &r->notify_src, r->notify.fd, EPOLLIN, on_notify, NULL);
		wlearn_ready(r->learn, r->jr.jl.pid, r->notify.fd);
	}
	if (rc != 0)
		r->learn_start_rc = rc;
}

int run_learn_start(struct run *r, const struct jail_spec *spec, struct wrun_result *res,
                    struct werr *err)
{
	const struct wrun_learn *lo = &r->o->learn;
	struct wlearn_conf c = {
		.profile = r->o->profile ? r->o->profile : "workspace",
		.profile_net = r->learn_profile_net, .net = (int)r->pol->net,
		.allow = r->pol->net_allow.v + r->learn_allow0,
		.n_allow = r->pol->net_allow.n - r->learn_allow0,
		.name = lo->name ? lo->name : "learned", .argv0 = r->o->argv[0],
		.home = r->home, .workspace = r->ws,
		.include = lo->include, .n_include = lo->n_include,
		.json = lo->json_file != NULL,
	};

	if (jr_begin(&r->jr, spec, err) < 0)
		return -1;
	c.uid = r->jr.jl.host_uid;
	c.gid = r->jr.jl.host_gid;
	r->learn_session = res->session;
	if (wlearn_start(r->learn, &r->loop, &c, err) < 0) {
		jail_abort(&r->jr.jl);
		return -1;
	}
	waudit_tap(r->audit, wlearn_audit_tap, r->learn);
	r->learn_start_rc = 0;
	memset(&r->learn_err, 0, sizeof(r->learn_err));
	wloop_watch(&r->loop, &r->learn_sync, r->jr.jl.sync_fd, EPOLLIN, on_sync, NULL);
	while (!r->learn_start_rc)
		if (wloop_wait(&r->loop, -1) < 0 && errno != EINTR) {
			werr_set(&r->learn_err, errno, "waiting for the jail");
			r->learn_start_rc = -1;
		}
	wloop_forget(&r->loop, &r->learn_sync);   /* the fd stays the jail's */
	if (r->learn_start_rc < 0) {
		*err = r->learn_err;
		jail_abort(&r->jr.jl);
		return -1;
	}
	wtiming("child ready+exec");
	return 0;
}

void run_learn_end(struct run *r, struct wrun_result *res)
{
	struct werr err = { 0 };

	if (!r->learn)
		return;
	/* its last connections' records reach the learner before it is told
	 * the run ended: the egress process sends them when it drops the jail */
	if (r->jr.proxy)
		wproxy_free_wait(r->jr.proxy);
	r->jr.proxy = NULL;
	waudit_tap(r->audit, NULL, NULL);
	if (wlearn_finish(r->learn, &r->notify, &err) < 0)
		res->learn_incomplete = true;
}

void run_learn_free(struct run *r)
{
	if (!r->learn)
		return;
	waudit_tap(r->audit, NULL, NULL);
	wlearn_free(r->learn);
	free(r->learn);
	r->learn = NULL;
}
