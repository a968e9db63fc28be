#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "warden/util.h"

static void oom(void)
{
	static const char m[] = "warden: out of memory\n";
	(void)!write(2, m, sizeof(m) - 1);
	_exit(125);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *xcalloc(size_t n, size_t m)
{
	void *p = calloc(n ? n : 1, m ? m : 1);
	if (!p)
		oom();
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		oom();
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&p, fmt, ap);
	va_end(ap);
	if (r < 0)
		oom();
	return p;
}

int parse_u64(const char *s, uint64_t *out, struct werr *err)
{
	uint64_t v = 0;
	const char *p = s;

	*out = 0;
	if (!s || !*s)
		return werr_set(err, 0, "empty number");
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return werr_set(err, 0, "'%s' is not a whole number", s);
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return werr_set(err, 0, "'%s' is too large", s);
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*out = v;
	return 0;
}

/* Split "12.5G" into a number (integer part and up to 3 decimals, kept as
 * thousandths) and a suffix.  Used by both parsers below. */
static int split_number(const char *s, uint64_t *milli, const char **suffix)
{
	uint64_t ip = 0, frac = 0;
	int fd = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (ip > (UINT64_MAX / 1000 - 9) / 10)
			return -1;
		ip = ip * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -1;
		for (; *p >= '0' && *p <= '9'; p++) {
			if (fd < 3) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				fd++;
			}
		}
	}
	while (fd < 3) {
		frac *= 10;
		fd++;
	}
	*milli = ip * 1000 + frac;
	*suffix = p;
	return 0;
}

static int scale(uint64_t milli, uint64_t mult, uint64_t *out)
{
	/* result = milli * mult / 1000, checked for overflow */
	if (mult && milli > UINT64_MAX / mult) {
		if (milli / 1000 > UINT64_MAX / mult)
			return -1;
		*out = (milli / 1000) * mult + (milli % 1000) * mult / 1000;
		return 0;
	}
	*out = milli * mult / 1000;
	return 0;
}

int parse_size(const char *s, uint64_t *out, struct werr *err)
{
	uint64_t milli, mult;
	const char *suf;

	*out = 0;
	if (!s || split_number(s, &milli, &suf) < 0)
		goto bad;
	if (!strcmp(suf, "") || !strcmp(suf, "B"))
		mult = 1;
	else if (!strcmp(suf, "K") || !strcmp(suf, "k") || !strcmp(suf, "KiB"))
		mult = 1ULL << 10;
	else if (!strcmp(suf, "M") || !strcmp(suf, "MiB"))
		mult = 1ULL << 20;
	else if (!strcmp(suf, "G") || !strcmp(suf, "GiB"))
		mult = 1ULL << 30;
	else if (!strcmp(suf, "T") || !strcmp(suf, "TiB"))
		mult = 1ULL << 40;
	else
		goto bad;
	if (scale(milli, mult, out) < 0)
		return werr_set(err, 0, "size '%s' is too large", s);
	return 0;
bad:
	return werr_set(err, 0, "'%s' is not a size; write a number with an optional K, M, G or T suffix, e.g. 512M", s ? s : "");
}

int parse_duration_ms(const char *s, uint64_t *out, struct werr *err)
{
	uint64_t milli, mult;
	const char *suf;

	*out = 0;
	if (!s || split_number(s, &milli, &suf) < 0)
		goto bad;
	if (!strcmp(suf, "ms"))
		mult = 1;
	else if (!strcmp(suf, "") || !strcmp(suf, "s"))
		mult = 1000;
	else if (!strcmp(suf, "m") || !strcmp(suf, "min"))
		mult = 60 * 1000;
	else if (!strcmp(suf, "h"))
		mult = 3600 * 1000;
	else
		goto bad;
	if (scale(milli, mult, out) < 0)
		return werr_set(err, 0, "duration '%s' is too large", s);
	return 0;
bad:
	return werr_set(err, 0, "'%s' is not a duration; write a number with ms, s, m or h, e.g. 30s or 5m", s ? s : "");
}

void format_size(uint64_t v, char *buf, size_t len)
{
	static const char units[] = "KMGT";
	int i;

	for (i = 3; i >= 0; i--) {
		uint64_t m = 1ULL << (10 * (i + 1));
		if (v >= m && v % m == 0) {
			snprintf(buf, len, "%" PRIu64 "%c", v / m, units[i]);
			return;
		}
	}
	snprintf(buf, len, "%" PRIu64, v);
}

void format_duration_ms(uint64_t ms, char *buf, size_t len)
{
	if (ms && ms % 3600000 == 0)
		snprintf(buf, len, "%" PRIu64 "h", ms / 3600000);
	else if (ms && ms % 60000 == 0)
		snprintf(buf, len, "%" PRIu64 "m", ms / 60000);
	else if (ms % 1000 == 0)
		snprintf(buf, len, "%" PRIu64 "s", ms / 1000);
	else
		snprintf(buf, len, "%" PRIu64 "ms", ms);
}

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int read_file_buf(const char *path, size_t max, char **out, size_t *len, struct werr *err)
{
	_cleanup_close_ int fd = -1;

	*out = NULL;
	*len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return werr_set(err, errno, "opening %s", path);
	return read_fd_buf(fd, path, max, out, len, err);
}

int read_fd_buf(int fd, const char *name, size_t max, char **out, size_t *len, struct werr *err)
{
	_cleanup_free_ char *buf = NULL;
	size_t used = 0, cap;

	*out = NULL;
	*len = 0;
	/* one byte more than allowed tells the caller the file is too large;
	 * the buffer grows from 64 KiB, so a large max (mountinfo's 4 MiB)
	 * costs no mmap/munmap for the usual small file */
	cap = max + 2 < 64 * 1024 ? max + 2 : 64 * 1024;
	buf = xmalloc(cap);
	while (used <= max) {
		ssize_t n;

		if (used + 1 >= cap) {
			char *nb;

			cap = cap > (max + 2) / 2 ? max + 2 : cap * 2;
			nb = realloc(buf, cap);
			if (!nb)
				abort();
			buf = nb;
		}
		n = read(fd, buf + used, cap - 1 - used);   /* cap <= max + 2 */
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return werr_set(err, errno, "reading %s", name);
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	buf[used] = '\0';
	*out = steal_pointer(&buf);
	*len = used;
	return 0;
}

int read_file_str(const char *path, size_t max, char **out, struct werr *err)
{
	char *buf;
	size_t len;

	*out = NULL;
	if (max == 0 || read_file_buf(path, max - 1, &buf, &len, err) < 0)
		return max ? -1 : werr_set(err, EINVAL, "reading %s", path);
	if (len >= max) {
		free(buf);
		return werr_set(err, 0, "%s is larger than %zu bytes", path, max);
	}
	*out = buf;
	return 0;
}

int write_file_str(const char *path, const char *s, struct werr *err)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return werr_set(err, errno, "opening %s", path);
	if (write_all(fd, s, strlen(s)) < 0)
		return werr_set(err, errno, "writing '%s' to %s", s, path);
	return 0;
}

int mkdir_p(const char *path, int mode, struct werr *err)
{
	char buf[4096];
	size_t len = strlen(path);
	char *p;

	if (len == 0 || len >= sizeof(buf))
		return werr_set(err, ENAMETOOLONG, "mkdir %s", path);
	memcpy(buf, path, len + 1);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, (mode_t)mode) < 0 && errno != EEXIST)
			return werr_set(err, errno, "creating directory %s", buf);
		*p = '/';
	}
	if (mkdir(buf, (mode_t)mode) < 0 && errno != EEXIST)
		return werr_set(err, errno, "creating directory %s", buf);
	return 0;
}

const char *proc_stat_fields(int procfd, const char *name, char *buf, size_t len)
{
	char path[300];
	const char *p;
	ssize_t n;
	int fd;

	if (len < 2 || snprintf(path, sizeof(path), "%s/stat", name) >= (int)sizeof(path))
		return NULL;
	fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] ? p + 2 : NULL;
}
