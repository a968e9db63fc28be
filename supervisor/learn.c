/* The supervisor's side of learning: supervisor/learn.h says what it
 * guarantees; docs/learn.md why it is built so.  Each privileged step says
 * why it is safe. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "learn.h"
#include "sv.h"
#include "warden/buf.h"
#include "warden/filter.h"
#include "warden/learn.h"
#include "warden/log.h"
#include "warden/util.h"

int wlearn_init(struct wlearn *L, const struct wpolicy *pol, struct werr *err)
{
	memset(L, 0, sizeof(*L));
	L->sock.fd = L->timer.fd = -1;
	L->pidfd = L->policy_fd = L->json_fd = L->notify_fd = -1;
	L->out[0].fd = L->out[1].fd = -1;
	return wfilter_policy_prog(pol, &L->prog, &L->prog_len, &L->prog_owned, err);
}

/* --- answering ------------------------------------------------------------ */

/* The call runs as the jail asked, with the numbers the notification
 * reported.  -1 with errno ENOENT: the notification is gone (the caller
 * died), the call never ran. */
static int cont(struct wlearn *L, uint64_t id)
{
	memset(L->resp, 0, wnotify_resp_size());
	L->resp->id = id;
	L->resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	return ioctl(L->notify_fd, SECCOMP_IOCTL_NOTIF_SEND, L->resp);
}

static int send_frame(struct wlearn *L, const struct wbuf *b, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = b->d, .iov_len = b->len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (L->sock.fd < 0)
		return -1;
	if (fd >= 0) {
		struct cmsghdr *c;

		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	return sendmsg(L->sock.fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)b->len ? 0 : -1;
}

/* The learner is gone or given up on: every call it held runs now, and so
 * will every later one, unexamined. */
static void give_up(struct wlearn *L, const char *why)
{
	bool reporting = L->reporting;

	if (!L->why[0])
		snprintf(L->why, sizeof(L->why), "%s", why);
	if (L->pidfd >= 0)
		syscall(SYS_pidfd_send_signal, L->pidfd, SIGKILL, NULL, 0);
	if (L->sock.fd >= 0)
		wloop_unwatch(L->loop, &L->sock);
	for (size_t i = 0; i < L->n_pend; i++)
		(void)cont(L, L->pend[i].id);
	L->unexamined += L->n_pend;
	L->n_pend = 0;
	if (L->timer.fd >= 0)
		wloop_timer_set(&L->timer, 0, 0);
	/* last: it may free L (its memory stays until the loop's batch ends) */
	L->reporting = false;
	if (reporting && L->on_report)
		L->on_report(L->report_ctx, false, 0);
}

static void on_done(struct wlearn *L, uint64_t id, bool recorded)
{
	size_t i;

	for (i = 0; i < L->n_pend && L->pend[i].id != id; i++)
		;
	if (i == L->n_pend) {
		give_up(L, "the learner answered a call it was not asked about");
		return;
	}
	L->pend[i] = L->pend[--L->n_pend];
	L->continued++;
	/* the notification was gone (the caller killed meanwhile, or a pid
	 * reused): the call never ran, so nothing it showed is kept */
	if (cont(L, id) < 0 && errno == ENOENT && recorded) {
		struct wbuf b;

		wbuf_init(&b, 16);
		if (wbuf_put_u8(&b, WLM_DROP) == 0 && wbuf_put_u64(&b, id) == 0)
			(void)send_frame(L, &b, -1);
		wbuf_free(&b);
	}
}

/* What the learner says: only DONE frames of forwarded calls. */
static void on_sock(struct wloop *l, struct wsrc *src, uint32_t events)
{
	struct wlearn *L = src->ctx;
	uint8_t buf[64];

	for (;;) {
		ssize_t n = recv(src->fd, buf, sizeof(buf), MSG_DONTWAIT);
		struct wrd r;
		uint64_t id;
		uint8_t type, recorded;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			give_up(L, "the learner ended before the run did");
			return;
		}
		wrd_init(&r, buf, (size_t)n);
		if (wrd_u8(&r, &type) == 0 && type == WLM_REPORTED) {
			uint32_t block;
			uint64_t len;

			if (!L->reporting || wrd_u32(&r, &block) < 0 || wrd_u64(&r, &len) < 0 ||
			    wrd_end(&r) < 0) {
				give_up(L, "the learner sent a report it was not asked for");
				return;
			}
			L->reporting = false;
			if (!L->n_pend)
				wloop_timer_set(&L->timer, 0, 0);
			if (L->on_report)
				L->on_report(L->report_ctx, true, len);
			return;   /* L may be gone */
		}
		wrd_init(&r, buf, (size_t)n);
		if (wrd_u8(&r, &type) < 0 || type != WLM_DONE || wrd_u64(&r, &id) < 0 ||
		    wrd_u8(&r, &recorded) < 0 || wrd_end(&r) < 0) {
			give_up(L, "the learner sent a malformed frame");
			return;
		}
		on_done(L, id, recorded != 0);
		if (L->sock.fd < 0)
			return;
	}
}

static void on_tick(struct wloop *l, struct wsrc *src, uint32_t events)
{
	struct wlearn *L = src->ctx;
	uint64_t t, now = sv_now_ms();

	(void)!read(src->fd, &t, sizeof(t));
	for (size_t i = 0; i < L->n_pend; i++)
		if (ms_since(now, L->pend[i].since_ms) >= WLEARN_ANSWER_MS) {
			give_up(L, "the learner did not answer within 10 s");
			return;
		}
	if (L->reporting && ms_since(now, L->report_since_ms) >= WLEARN_ANSWER_MS) {
		give_up(L, "the learner did not report within 10 s");
		return;
	}
	if (!L->n_pend && !L->reporting)
		wloop_timer_set(&L->timer, 0, 0);
}

/* The kernel's name of the directory a path argument is relative to: the
 * caller's working directory, or the dirfd argument's target.  Text for
 * the learner, never looked at here. */
static void dir_of(pid_t tid, int arg, const __u64 *args, char *out, size_t cap)
{
	char link[64];
	int fd = arg < 0 ? AT_FDCWD : (int)args[arg];
	ssize_t n;

	out[0] = '\0';
	if (fd == AT_FDCWD)
		snprintf(link, sizeof(link), "/proc/%d/cwd", (int)tid);
	else if (fd >= 0)
		snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)tid, fd);
	else
		return;
	n = readlink(link, out, cap - 1);
	out[n > 0 ? n : 0] = '\0';
}

/* Forward one call the policy allows; false when it could not be. */
static bool forward(struct wlearn *L, const struct seccomp_notif *q,
                    const struct wfilter_learn_call *k)
{
	char path[64], dir[PATH_MAX], dir2[PATH_MAX];
	pid_t tid = (pid_t)q->pid;
	struct wbuf b;
	uint64_t id = q->id;
	int mem, rc, root = -1;

	dir[0] = dir2[0] = '\0';
	if (k->path1 >= 0)
		dir_of(tid, k->dir1, q->data.args, dir, sizeof(dir));
	if (k->path2 >= 0)
		dir_of(tid, k->dir2, q->data.args, dir2, sizeof(dir2));
	/* Privileged step: open the caller's memory read-only, for the
	 * learner to read.  Safe: nothing here reads it; the fd cannot write;
	 * and the notification is checked to be still pending after the open
	 * (and the readlinks), so TID was the calling thread, blocked in this
	 * call, and not a pid since reused by another process. */
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)tid);
	mem = open(path, O_RDONLY | O_CLOEXEC);
	/* the jail's root, once: the caller's (the jail cannot chroot) */
	if (!L->root_sent) {
		snprintf(path, sizeof(path), "/proc/%d/root", (int)tid);
		root = open(path, O_PATH | O_CLOEXEC);
	}
	if (ioctl(L->notify_fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0) {
		closep(&mem);
		closep(&root);
		return true;   /* gone: there is nothing to answer */
	}
	if (root >= 0) {
		wbuf_init(&b, 8);
		if (wbuf_put_u8(&b, WLM_ROOT) == 0 && send_frame(L, &b, root) == 0)
			L->root_sent = true;
		wbuf_free(&b);
		closep(&root);
	}
	wbuf_init(&b, WL_FRAME_MAX);
	/* || keeps the fields in order */
	rc = wbuf_put_u8(&b, WLM_CALL) < 0 || wbuf_put_u64(&b, id) < 0 ||
	     wbuf_put_u32(&b, (uint32_t)tid) < 0 || wbuf_put_u32(&b, (uint32_t)q->data.nr) < 0;
	for (int i = 0; i < 6 && !rc; i++)
		rc = wbuf_put_u64(&b, q->data.args[i]) < 0;
	rc = rc || wbuf_put_bytes(&b, dir, strlen(dir)) < 0 ||
	     wbuf_put_bytes(&b, dir2, strlen(dir2)) < 0 ? -1 : send_frame(L, &b, mem);
	wbuf_free(&b);
	closep(&mem);
	if (rc < 0)
		return false;
	if (L->n_pend == L->cap_pend) {
		L->cap_pend = L->cap_pend ? L->cap_pend * 2 : 16;
		L->pend = realloc(L->pend, L->cap_pend * sizeof(*L->pend));
		if (!L->pend)
			abort();
	}
	L->pend[L->n_pend].id = id;
	L->pend[L->n_pend++].since_ms = sv_now_ms();
	L->forwarded++;
	if (L->n_pend == 1)
		wloop_timer_set(&L->timer, 1000, 1000);
	return true;
}

bool wlearn_divert(void *ctx, struct wnotify *w)
{
	struct wlearn *L = ctx;
	const struct seccomp_notif *q = w->req;
	const struct wfilter_learn_call *k;

	/* The one decision: the policy's own program on the numbers the
	 * kernel reported.  Anything it does not ALLOW is denied by the
	 * caller (wnotify_handle), as in a run without learning. */
	if (wfilter_eval(L->prog, L->prog_len, &q->data) != SECCOMP_RET_ALLOW)
		return false;
	if (q->data.arch != AUDIT_ARCH_X86_64 || !(k = wfilter_learn_call(q->data.nr)))
		return false;
	/* the jail's init (warden's own code: its reports on the sync socket) */
	if ((pid_t)q->pid == L->init_pid) {
		(void)cont(L, q->id);
		return true;
	}
	if (L->sock.fd < 0 || L->n_pend >= WLEARN_PENDING_MAX || !forward(L, q, k)) {
		L->unexamined++;
		(void)cont(L, q->id);
	}
	return true;
}

/* --- the learner ---------------------------------------------------------- */

static void argv_add(char ***v, size_t *n, const char *a, const char *b)
{
	*v = realloc(*v, (*n + 3) * sizeof(char *));
	if (!*v)
		abort();
	(*v)[(*n)++] = xstrdup(a);
	if (b)
		(*v)[(*n)++] = xstrdup(b);
	(*v)[*n] = NULL;
}

static void argv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static char **learner_argv(const struct wlearn_conf *c)
{
	char **v = NULL;
	size_t n = 0;

	argv_add(&v, &n, "warden-learner", WL_LEARNER_ARG);
	argv_add(&v, &n, "--profile", c->profile);
	argv_add(&v, &n, "--name", c->name);
	argv_add(&v, &n, "--argv0", c->argv0 ? c->argv0 : "?");
	argv_add(&v, &n, "--net", policy_net_mode_name((enum wnet_mode)c->net));
	argv_add(&v, &n, "--profile-net", policy_net_mode_name((enum wnet_mode)c->profile_net));
	argv_add(&v, &n, "--home", c->home ? c->home : "/");
	argv_add(&v, &n, "--workspace", c->workspace ? c->workspace : "/");
	for (size_t i = 0; i < c->n_allow; i++)
		argv_add(&v, &n, "--allow", c->allow[i]);
	for (size_t i = 0; i < c->n_include; i++)
		argv_add(&v, &n, "--include", c->include[i]);
	if (c->json || c->session)
		argv_add(&v, &n, "--json", NULL);
	if (c->session)
		argv_add(&v, &n, "--session", NULL);
	return v;
}

int wlearn_attach(struct wlearn *L, struct wloop *l, int sock, struct werr *err)
{
	L->loop = l;
	if (!L->resp)
		L->resp = xcalloc(1, wnotify_resp_size());
	if (wloop_watch(l, &L->sock, sock, EPOLLIN, on_sock, L) < 0 ||
	    wloop_timer(l, &L->timer, EPOLLIN, on_tick, L) < 0)
		return werr_set(err, errno, "learning: watching the learner");
	return 0;
}

int wlearn_start(struct wlearn *L, struct wloop *l, const struct wlearn_conf *c,
                 struct werr *err)
{
	static char *const envp[] = { NULL };
	int sp[2] = { -1, -1 }, exe = -1, null = -1, rc = -1;
	bool drop = geteuid() == 0;
	char **argv = learner_argv(c);
	pid_t parent = getpid();

	L->loop = l;
	L->resp = xcalloc(1, wnotify_resp_size());
	L->policy_fd = memfd_create("warden-learned-policy", MFD_CLOEXEC);
	L->json_fd = memfd_create("warden-learned-json", MFD_CLOEXEC);
	if (L->policy_fd < 0 || L->json_fd < 0) {
		werr_set(err, errno, "learning: memfd_create");
		goto out;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
		werr_set(err, errno, "learning: socketpair");
		goto out;
	}
	exe = open("/proc/self/exe", O_PATH | O_CLOEXEC);
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (exe < 0 || null < 0) {
		werr_set(err, errno, "learning: opening warden's own binary");
		goto out;
	}
	/* as root, never as root: the jail's own host ids (docs/design.md "Ids") */
	if (drop && (c->uid == 0 || c->gid == 0)) {
		werr_set(err, 0, "learning: the jail has no host uid of its own");
		goto out;
	}
	L->pid = fork();
	if (L->pid < 0) {
		werr_set(err, errno, "learning: fork");
		goto out;
	}
	if (L->pid == 0) {
		/* fds 0-1 /dev/null, 2 stays (the report; a session's learner
		 * reports nothing there: it is chat's terminal), 3-5 the learner's */
		int fds[] = { null, null, c->session ? null : 2, sp[1], L->policy_fd,
		              c->json || c->session ? L->json_fd : null };
		int tmp[6];

		for (int i = 0; i < 6; i++)
			tmp[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 16);
		for (int i = 0; i < 6; i++)
			if (tmp[i] < 0 || dup2(tmp[i], i) < 0)
				_exit(125);
		/* Privileged step: give up root for good before the learner runs:
		 * groups, then gid, then uid, each read back.  Its uid is the
		 * jail's own (it owns nothing on the host but the jail's files),
		 * and it never gets a capability. */
		if (drop && (setgroups(0, NULL) < 0 || setresgid(c->gid, c->gid, c->gid) < 0 ||
		             setresuid(c->uid, c->uid, c->uid) < 0 || getuid() != c->uid ||
		             geteuid() != c->uid || getegid() != c->gid || setuid(0) == 0))
			_exit(125);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(125);
		syscall(SYS_execveat, exe, "", argv, envp, AT_EMPTY_PATH);
		_exit(125);
	}
	L->pidfd = (int)syscall(SYS_pidfd_open, L->pid, 0);
	if (L->pidfd < 0) {
		werr_set(err, errno, "learning: pidfd_open");
		kill(L->pid, SIGKILL);
		waitpid(L->pid, NULL, 0);
		L->pid = 0;
		goto out;
	}
	if (wlearn_attach(L, l, steal_fd(&sp[0]), err) < 0)
		goto out;
	rc = 0;
out:
	closep(&sp[0]);
	closep(&sp[1]);
	closep(&exe);
	closep(&null);
	argv_free(argv);
	return rc;
}

void wlearn_ready(struct wlearn *L, pid_t init_pid, int notify_fd)
{
	L->init_pid = init_pid;
	L->notify_fd = notify_fd;
}

void wlearn_audit_tap(void *ctx, const char *event, json_object *rec)
{
	struct wlearn *L = ctx;
	json_object *v;
	struct wbuf b;
	int rc;

	if (strcmp(event, "net") || L->sock.fd < 0 ||
	    (json_object_object_get_ex(rec, "allowed", &v) && json_object_get_boolean(v)))
		return;
#define S(k) (json_object_object_get_ex(rec, k, &v) ? json_object_get_string(v) : "")
#define I(k) (json_object_object_get_ex(rec, k, &v) ? (uint32_t)json_object_get_int(v) : 0)
	wbuf_init(&b, WL_FRAME_MAX);
	rc = wbuf_put_u8(&b, WLM_NET) < 0 || wbuf_put_str(&b, S("method")) < 0 ||
	     wbuf_put_str(&b, S("host")) < 0 || wbuf_put_u32(&b, I("port")) < 0 ||
	     wbuf_put_u32(&b, I("status")) < 0 || wbuf_put_str(&b, S("reason")) < 0 ||
	     wbuf_put_str(&b, S("address")) < 0;
#undef S
#undef I
	if (rc == 0)
		(void)send_frame(L, &b, -1);
	wbuf_free(&b);
}

/* --- a session's jail --------------------------------------------------------- */

static int send_simple(struct wlearn *L, uint8_t type, bool with_block, uint32_t block)
{
	struct wbuf b;
	int rc;

	wbuf_init(&b, 16);
	rc = wbuf_put_u8(&b, type) < 0 || (with_block && wbuf_put_u32(&b, block) < 0) ? -1
	     : send_frame(L, &b, -1);
	wbuf_free(&b);
	return rc;
}

bool wlearn_alive(const struct wlearn *L)
{
	return L->sock.fd >= 0;
}

int wlearn_reset(struct wlearn *L)
{
	if (!wlearn_alive(L) || send_simple(L, WLM_RESET, false, 0) < 0) {
		if (wlearn_alive(L))
			give_up(L, "the learner's socket is full");
		return -1;
	}
	return 0;
}

int wlearn_report(struct wlearn *L, uint32_t block)
{
	if (!wlearn_alive(L) || L->reporting)
		return -1;
	if (send_simple(L, WLM_REPORT, true, block) < 0) {
		give_up(L, "the learner's socket is full");
		return -1;
	}
	L->reporting = true;
	L->report_since_ms = sv_now_ms();
	wloop_timer_set(&L->timer, 1000, 1000);
	return 0;
}

size_t wlearn_report_text(const struct wlearn *L, uint64_t len, char *out, size_t cap)
{
	size_t want = len < cap - 1 ? (size_t)len : cap - 1, got = 0;

	while (got < want) {
		ssize_t n = pread(L->json_fd, out + got, want - got, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	out[got] = '\0';
	return strlen(out);   /* cut at a NUL: the frame carries a string */
}
