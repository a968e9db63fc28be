/* Reading the caller's memory and keeping a refusal: the learner's lowest
 * helpers (learn/learner.h). */
#include <string.h>
#include <unistd.h>

#include "learner.h"

int lj_read(struct lctx *c, uint64_t addr, void *buf, size_t n)
{
	size_t got = 0;

	if (c->mem < 0 || !addr)
		return -1;
	while (got < n) {
		ssize_t r = pread(c->mem, (char *)buf + got, n - got, (off_t)(addr + got));

		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

/* A NUL-terminated string of at most cap - 1 bytes, read a page at a time
 * (the rest of a page may be unmapped); -1 when longer or unreadable. */
int lj_read_str(struct lctx *c, uint64_t addr, char *buf, size_t cap)
{
	size_t got = 0;

	if (c->mem < 0 || !addr)
		return -1;
	while (got < cap - 1) {
		size_t page = 4096 - ((addr + got) & 4095), want = cap - 1 - got;
		ssize_t r = pread(c->mem, buf + got, want < page ? want : page, (off_t)(addr + got));
		char *nul;

		if (r <= 0)
			return -1;
		if ((nul = memchr(buf + got, '\0', (size_t)r)))
			return 0;
		got += (size_t)r;
	}
	return -1;
}

struct wl_refusal *lj_add(struct lctx *c, enum wl_op op, const char *target, const char *call,
                          const char *why, const char *key, const char *value)
{
	struct wl_refusal *r = wl_add(&c->list, op, target, call, why, key, value, c->id);

	c->recorded = true;
	return r;
}

