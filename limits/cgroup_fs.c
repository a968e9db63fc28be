/* Small cgroupfs helpers shared by limits/cgroup.c, cgroup_discover.c and
 * the two backends (cgroup_impl.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "warden/log.h"
#include "warden/util.h"
#include "cgroup_impl.h"

/* ---- small cgroupfs helpers (also used by the backends) ---- */

int cg_write(int dfd, const char *file, const char *val)
{
	_cleanup_close_ int fd = openat(dfd, file, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	return write_all(fd, val, strlen(val));
}

int cg_set(int dfd, const char *path, const char *file, const char *val,
           bool optional, struct werr *err)
{
	if (cg_write(dfd, file, val) == 0 || (optional && errno == ENOENT))
		return 0;
	return werr_set(err, errno, "setting %s=%s in cgroup %s", file, val, path);
}

ssize_t cg_read(int dfd, const char *file, char *buf, size_t len)
{
	_cleanup_close_ int fd = openat(dfd, file, O_RDONLY | O_CLOEXEC);
	size_t used = 0;

	buf[0] = '\0';
	if (fd < 0)
		return -1;
	while (used < len - 1) {
		ssize_t n = read(fd, buf + used, len - 1 - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		used += (size_t)n;
	}
	buf[used] = '\0';
	return (ssize_t)used;
}

static int parse_num(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || (*end && *end != '\n' && *end != ' '))
		return -1;
	*out = v;
	return 0;
}

int cg_read_u64(int dfd, const char *file, const char *key, uint64_t *out)
{
	char buf[4096];
	const char *line;
	size_t kl;

	if (cg_read(dfd, file, buf, sizeof(buf)) < 0)
		return -1;
	if (!key)
		return parse_num(buf, out);
	kl = strlen(key);
	for (line = buf; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
		if (!strncmp(line, key, kl) && line[kl] == ' ')
			return parse_num(line + kl + 1, out);
	return -1;
}

uint64_t cg_cpu_quota_us(double cpus)
{
	double q;

	if (cpus > 65536)       /* far more CPUs than any machine has */
		cpus = 65536;
	q = cpus * (double)CG_CPU_PERIOD_US + 0.5;
	return q < 1000 ? 1000 : (uint64_t)q;
}

bool cg_stat_once(int dfd, bool on, const char *file, const char *key,
                  uint64_t *field, bool *have)
{
	if (!on || *have || cg_read_u64(dfd, file, key, field) < 0)
		return false;
	*have = true;
	return true;
}

void cg_msg(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

bool cg_word_in(const char *s, const char *word)
{
	size_t wl = strlen(word);

	while (*s) {
		size_t n;

		s += strspn(s, " \t\n");
		n = strcspn(s, " \t\n");
		if (n == wl && !strncmp(s, word, wl))
			return true;
		s += n;
	}
	return false;
}

void cg_open_parent(struct cg_hier *h)
{
	h->parent_fd = -1;
	/* EEXIST: another warden (same cgroup) made it first; that is fine,
	 * it is shared and never removed by warden. */
	if (mkdir(h->parent, 0755) < 0 && errno != EEXIST) {
		cg_msg(h->why, sizeof(h->why), "%s: cannot create: %s", h->parent, strerror(errno));
		return;
	}
	/* An existing parent may belong to root while we are not: check that
	 * we can create groups in it now rather than fail in wcg_create. */
	if (faccessat(AT_FDCWD, h->parent, W_OK, AT_EACCESS) < 0) {
		cg_msg(h->why, sizeof(h->why), "%s: not writable: %s", h->parent, strerror(errno));
		return;
	}
	h->parent_fd = open(h->parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (h->parent_fd < 0)
		cg_msg(h->why, sizeof(h->why), "%s: %s", h->parent, strerror(errno));
}
