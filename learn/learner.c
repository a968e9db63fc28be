/* The learner: `warden --learner ...`, started by the supervisor for a
 * learning run (supervisor/learn.c; include/warden/learn.h).  It reads the
 * jailed program's memory, which is hostile, so it runs apart and confined
 * before it reads anything, in this order:
 *
 *   1. the fds it was given and nothing else (3 the supervisor's socket,
 *      4 and 5 where the policy and the JSON go, 2 the report);
 *   2. no_new_privs; no capability (it runs as the jail's host uid as root,
 *      as the caller otherwise: the supervisor switched before exec);
 *   3. Landlock handling every file right, with no rule: it can open
 *      nothing but O_PATH descriptors (stat, readlink and O_PATH walks are
 *      not Landlock's), no TCP, and on ABI 6+ no abstract socket and no
 *      signal outside itself.  A kernel without Landlock: it refuses to run
 *      (learning is then reported incomplete), rather than run as the
 *      caller with the caller's files open to it;
 *   4. seccomp: an allowlist of what it does (reading, writing its fds,
 *      O_PATH opens, stat, readlink, memory), EPERM for the rest.
 *
 * Why not read /proc/PID/mem itself: a process confined by Landlock may
 * not ptrace-access (so not open /proc/PID/mem, cwd, root or fd of) a
 * process outside its own Landlock domain, and the jail has a domain of
 * its own (security/landlock/task.c; checked on this kernel).  So the
 * supervisor opens the caller's memory read-only for each call, after the
 * kernel said the notification is still pending, and passes the fd. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/openat2.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "learner.h"
#include "warden/buf.h"
#include "warden/filter.h"
#include "warden/landlock.h"
#include "warden/policy.h"
#include "warden/util.h"

#define INCLUDE_MAX 64
#define ALLOW_MAX 64

struct opts {
	struct wl_base b;
	const char *include[INCLUDE_MAX];
	const char *allow[ALLOW_MAX];
	bool want_json;
	bool session;        /* a session's jail: a report per block (WLM_REPORT) */
};

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "profile", required_argument, NULL, 'p' }, { "name", required_argument, NULL, 'n' },
		{ "argv0", required_argument, NULL, 'a' }, { "net", required_argument, NULL, 'm' },
		{ "profile-net", required_argument, NULL, 'M' },
		{ "allow", required_argument, NULL, 'A' }, { "home", required_argument, NULL, 'h' },
		{ "workspace", required_argument, NULL, 'w' },
		{ "include", required_argument, NULL, 'i' }, { "json", no_argument, NULL, 'j' },
		{ "session", no_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	enum wnet_mode m;
	int c;

	optind = 2;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'p': o->b.profile = optarg; break;
		case 'n': o->b.name = optarg; break;
		case 'a': o->b.argv0 = optarg; break;
		case 'm':
		case 'M':
			if (policy_net_mode_parse(optarg, &m) < 0)
				return -1;
			*(c == 'm' ? &o->b.net : &o->b.profile_net) = (int)m;
			break;
		case 'A':
			if (o->b.n_allow == ALLOW_MAX)
				return -1;
			o->allow[o->b.n_allow++] = optarg;
			break;
		case 'h': o->b.home = optarg; break;
		case 'w': o->b.workspace = optarg; break;
		case 'i':
			if (o->b.n_include == INCLUDE_MAX)
				return -1;
			o->include[o->b.n_include++] = optarg;
			break;
		case 'j': o->want_json = true; break;
		case 's': o->session = true; break;
		default: return -1;
		}
	}
	o->b.include = o->include;
	o->b.allow = o->allow;
	return o->b.profile && o->b.name ? 0 : -1;
}

static int allow(scmp_filter_ctx ctx, const char *name, unsigned n, const struct scmp_arg_cmp *c)
{
	int nr = seccomp_syscall_resolve_name(name);

	return nr < 0 ? 0 : seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, n, c);
}

static int confine(struct werr *err)
{
	static const char *const calls[] = {
		"read", "write", "pread64", "close", "recvmsg", "sendto", "sendmsg", "openat2",
		"newfstatat", "fstat", "statx", "fstatfs", "statfs", "readlink", "readlinkat",
		"lseek", "brk", "munmap", "mremap", "madvise", "futex", "rt_sigprocmask",
		"rt_sigreturn", "exit", "exit_group", "getrandom", "clock_gettime", "getpid",
		"gettid", "tgkill", "fcntl",
	};
	const struct scmp_arg_cmp o_path = SCMP_A2(SCMP_CMP_MASKED_EQ, O_PATH, O_PATH);
	const struct scmp_arg_cmp no_exec = SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0);
	struct wll_ruleset rs;
	scmp_filter_ctx ctx;
	int abi, rc = 0;

	if (syscall(SYS_close_range, 6, ~0U, 0) < 0)
		return werr_set(err, errno, "closing inherited fds");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return werr_set(err, errno, "no_new_privs");
	if ((abi = wll_abi()) <= 0)
		return werr_set(err, 0, "this kernel has no Landlock, and the learner reads hostile "
		                "memory: it does not run unconfined");
	if (wll_create(&rs, abi, WLL_TCP, err) < 0)
		return -1;
	rc = wll_restrict(&rs, "the learner", err);
	wll_close(&rs);
	if (rc < 0)
		return -1;
	if (!(ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM))))
		return werr_set(err, 0, "the learner's seccomp filter");
	for (size_t i = 0; i < ARRAY_SIZE(calls) && rc == 0; i++)
		rc = allow(ctx, calls[i], 0, NULL);
	if (rc == 0)
		rc = allow(ctx, "openat", 1, &o_path);
	if (rc == 0)
		rc = allow(ctx, "mmap", 1, &no_exec);
	if (rc == 0)
		rc = allow(ctx, "mprotect", 1, &no_exec);
	if (rc == 0)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	if (rc < 0)
		return werr_set(err, -rc, "the learner's seccomp filter");
	/* checked, not assumed: opening a directory for reading must now fail
	 * (openat2 passes the filter whatever its flags: Landlock alone can
	 * refuse it) */
	{
		struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC };
		int fd = (int)syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof(how));

		if (fd >= 0) {
			close(fd);
			return werr_set(err, 0, "Landlock did not confine the learner");
		}
	}
	return 0;
}

static void done(uint64_t id, bool recorded)
{
	struct wbuf b;

	wbuf_init(&b, 32);
	if (wbuf_put_u8(&b, WLM_DONE) == 0 && wbuf_put_u64(&b, id) == 0 &&
	    wbuf_put_u8(&b, recorded) == 0)
		(void)!send(WL_FD_SOCK, b.d, b.len, MSG_NOSIGNAL);
	wbuf_free(&b);
}

static void on_call(struct lctx *c, struct wrd *r, int fd)
{
	uint64_t id, a[6];
	uint32_t tid, nr;
	const uint8_t *d1, *d2;
	size_t n1, n2;
	char dir[WL_PATH_MAX], dir2[WL_PATH_MAX];

	if (wrd_u64(r, &id) < 0 || wrd_u32(r, &tid) < 0 || wrd_u32(r, &nr) < 0)
		return;
	for (int i = 0; i < 6; i++)
		if (wrd_u64(r, &a[i]) < 0)
			return;
	if (wrd_bytes(r, &d1, &n1, WL_PATH_MAX - 1) < 0 || wrd_bytes(r, &d2, &n2, WL_PATH_MAX - 1) < 0)
		return;
	memcpy(dir, d1, n1);
	dir[n1] = '\0';
	memcpy(dir2, d2, n2);
	dir2[n2] = '\0';
	c->id = id;
	c->tid = tid;
	c->mem = fd;
	c->recorded = false;
	if (fd < 0) {
		c->unread++;
	} else {
		const struct wfilter_learn_call *k = wfilter_learn_call((int)nr);

		if (k && k->path1 < 0)
			lj_net(c, k->name, (int)nr, a);
		else
			lj_call(c, (int)nr, a, dir, dir2);
	}
	c->mem = -1;
	done(id, c->recorded);
}

static void finish(struct lctx *c, const struct opts *o, struct wrd *r)
{
	uint64_t unexamined = 0;
	char *why = NULL, *pol;
	json_object *j;

	if (wrd_u64(r, &unexamined) < 0 || wrd_str(r, &why, 1024) < 0)
		why = xstrdup("a malformed end of run");
	if (why && !why[0]) {
		free(why);
		why = NULL;
	}
	if (why || unexamined || c->unread) {
		c->list.incomplete = true;
		c->list.why_incomplete = why ? why : xasprintf("%llu call%s not examined",
			(unsigned long long)(unexamined + c->unread),
			unexamined + c->unread == 1 ? " was" : "s were");
	}
	wl_settle(&c->list, &o->b);
	wl_print(&c->list, &o->b, 2);
	pol = wl_policy(&c->list, &o->b);
	(void)write_all(WL_FD_POLICY, pol, strlen(pol));
	free(pol);
	if (o->want_json) {
		const char *s;

		j = wl_to_json(&c->list, &o->b);
		s = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN |
		                                   JSON_C_TO_STRING_NOSLASHESCAPE);
		(void)write_all(WL_FD_JSON, s, strlen(s));
		(void)write_all(WL_FD_JSON, "\n", 1);
		json_object_put(j);
	}
}

/* Everything recorded so far is forgotten (a session's block starts, or
 * its report was written). */
static void forget(struct lctx *c)
{
	wl_free(&c->list);
	memset(&c->list, 0, sizeof(c->list));
	c->unread = 0;
	c->ex_n = 0;
}

/* A session's block ended: its list, settled, as JSON at the start of
 * WL_FD_JSON (the supervisor reads the length REPORTED says, and never
 * parses it: it goes to the broker as it is), then forgotten. */
static void report(struct lctx *c, const struct opts *o, struct wrd *r)
{
	uint32_t block;
	const char *s;
	json_object *j;
	struct wbuf b;
	uint64_t len = 0;

	if (wrd_u32(r, &block) < 0)
		return;
	if (c->unread) {
		c->list.incomplete = true;
		c->list.why_incomplete = xasprintf("%llu call%s could not be read",
			(unsigned long long)c->unread, c->unread == 1 ? "" : "s");
	}
	wl_settle(&c->list, &o->b);
	j = wl_to_json(&c->list, &o->b);
	s = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN |
	                                   JSON_C_TO_STRING_NOSLASHESCAPE);
	if (lseek(WL_FD_JSON, 0, SEEK_SET) == 0 && write_all(WL_FD_JSON, s, strlen(s)) == 0)
		len = strlen(s);
	json_object_put(j);
	forget(c);
	wbuf_init(&b, 32);
	if (wbuf_put_u8(&b, WLM_REPORTED) == 0 && wbuf_put_u32(&b, block) == 0 &&
	    wbuf_put_u64(&b, len) == 0)
		(void)!send(WL_FD_SOCK, b.d, b.len, MSG_NOSIGNAL);
	wbuf_free(&b);
}

int wl_learner_main(int argc, char **argv)
{
	struct opts o;
	struct lctx c;
	struct werr err = { 0 };
	uint8_t *buf = xmalloc(WL_FRAME_MAX);

	memset(&o, 0, sizeof(o));
	memset(&c, 0, sizeof(c));
	c.root = c.mem = -1;
	c.b = &o.b;
	if (parse(argc, argv, &o) < 0) {
		fputs("warden: the learner was started with bad options\n", stderr);
		return 2;
	}
	if (confine(&err) < 0) {
		fprintf(stderr, "warden: the learner cannot confine itself: %s\n", err.msg);
		return 1;
	}
	for (;;) {
		char cbuf[CMSG_SPACE(sizeof(int))];
		struct iovec iov = { .iov_base = buf, .iov_len = WL_FRAME_MAX };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
		                     .msg_controllen = sizeof(cbuf) };
		ssize_t n = recvmsg(WL_FD_SOCK, &mh, MSG_CMSG_CLOEXEC);
		struct wrd r;
		uint8_t type;
		int fd = -1;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 1;   /* the supervisor is gone: nothing to report to */
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
			    cm->cmsg_len == CMSG_LEN(sizeof(int)))
				memcpy(&fd, CMSG_DATA(cm), sizeof(int));
		wrd_init(&r, buf, (size_t)n);
		if (wrd_u8(&r, &type) < 0)
			type = 0;
		switch (type) {
		case WLM_ROOT:
			if (c.root < 0 && fd >= 0)
				c.root = steal_fd(&fd);
			break;
		case WLM_CALL:
			on_call(&c, &r, fd);
			break;
		case WLM_DROP: {
			uint64_t id;

			if (wrd_u64(&r, &id) == 0)
				wl_drop(&c.list, id);
			break;
		}
		case WLM_NET: {
			char *m = NULL, *h = NULL, *why = NULL, *addr = NULL;
			uint32_t port, status;

			if (wrd_str(&r, &m, 64) == 0 && wrd_str(&r, &h, 300) == 0 &&
			    wrd_u32(&r, &port) == 0 && wrd_u32(&r, &status) == 0 &&
			    wrd_str(&r, &why, 512) == 0 && wrd_str(&r, &addr, 64) == 0) {
				c.id = 0;
				lj_proxy(&c, m, h, port, status, why, addr);
			}
			free(m);
			free(h);
			free(why);
			free(addr);
			break;
		}
		case WLM_DENIED: {
			char *name = NULL, *first = NULL;
			uint32_t nr;
			uint64_t count;

			if (wrd_str(&r, &name, 64) == 0 && wrd_u32(&r, &nr) == 0 &&
			    wrd_u64(&r, &count) == 0 && wrd_str(&r, &first, 256) == 0) {
				c.id = 0;
				lj_denied(&c, name, count, first);
			}
			free(name);
			free(first);
			break;
		}
		case WLM_RESET:
			if (o.session)
				forget(&c);
			break;
		case WLM_REPORT:
			if (o.session)
				report(&c, &o, &r);
			break;
		case WLM_END:
			finish(&c, &o, &r);
			wl_free(&c.list);
			free(buf);
			return 0;
		default:
			break;
		}
		closep(&fd);
	}
}
