/* Discovery (limits/cgroup_impl.h): which cgroup hierarchies are mounted,
 * where warden's own group is in each, and the "warden" parents it may
 * create groups in.  Runs once per process; the result is cached in cg_S. */
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

/* What discovery found, once per process (cgroup_impl.h). */
struct cg_state cg_S;

/* The backend of a hierarchy: chosen here, where hierarchies are found. */
const struct cg_backend *cg_backend_of(const struct cg_hier *h)
{
	return h->version == 2 ? &cg_backend_v2 : &cg_backend_v1;
}

/* the controllers warden uses on v2 (cgroup_v2.c) */
#define V2_CTLS (CG_MEMORY | CG_PIDS | CG_CPU)

/* v1 controllers we use, in the order of own_paths.v1[]. */
static const struct { const char *name; unsigned bit; } v1_ctls[] = {
	{ "memory", CG_MEMORY }, { "pids", CG_PIDS }, { "cpu", CG_CPU }, { "cpuacct", CG_CPUACCT },
};

/* ---- discovery ---- */

/* Our cgroup in each hierarchy, from /proc/self/cgroup:
 *   "0::/a/b"                  v2
 *   "4:memory:/a" "2:cpu,cpuacct:/a"   v1 */
struct own_paths {
	char v2[PATH_MAX];
	char v1[ARRAY_SIZE(v1_ctls)][PATH_MAX];
	bool have_v2, have_v1[ARRAY_SIZE(v1_ctls)];
};

static void parse_own_paths(char *text, struct own_paths *o)
{
	char *line, *save = NULL;

	memset(o, 0, sizeof(*o));
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *list = strchr(line, ':'), *path, *tok, *s2 = NULL;

		if (!list || !(path = strchr(++list, ':')))
			continue;
		*path++ = '\0';
		if (!*list && !strncmp(line, "0:", 2)) {
			snprintf(o->v2, sizeof(o->v2), "%s", path);
			o->have_v2 = true;
			continue;
		}
		for (tok = strtok_r(list, ",", &s2); tok; tok = strtok_r(NULL, ",", &s2))
			for (size_t i = 0; i < ARRAY_SIZE(v1_ctls); i++)
				if (!strcmp(tok, v1_ctls[i].name)) {
					snprintf(o->v1[i], sizeof(o->v1[i]), "%s", path);
					o->have_v1[i] = true;
				}
	}
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++, d++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*d = *s;
		}
	}
	*d = '\0';
}

/* Directory of cgroup `cg` (as /proc/self/cgroup names it) through a mount
 * of the hierarchy at `mnt` whose root is `root`.  Fails if the mount does
 * not show that cgroup (e.g. a bind mount of a sibling subtree, or our
 * cgroup lying outside our cgroup namespace: "/../.."). */
static int own_dir(const char *mnt, const char *root, const char *cg, char *out, size_t len)
{
	size_t rl = strlen(root);
	const char *rel = cg;
	int n;

	if (strcmp(root, "/")) {
		if (strncmp(cg, root, rl) || (cg[rl] != '/' && cg[rl] != '\0'))
			return -1;
		rel = cg + rl;
	}
	if (strstr(rel, "/../") || (strlen(rel) >= 3 && !strcmp(rel + strlen(rel) - 3, "/..")))
		return -1;
	if (!strcmp(rel, "/"))
		rel = "";
	n = snprintf(out, len, "%s%s", mnt, rel);
	return (n < 0 || (size_t)n >= len) ? -1 : 0;
}

/* A slot for a mount of the hierarchy (v2, or v1 with controllers ctls):
 * a new one, or the slot of an earlier mount of the same hierarchy that
 * did not show our cgroup.  NULL if a usable mount is already known. */
static struct cg_hier *add_hier(int version, unsigned ctls)
{
	struct cg_hier *h = NULL;

	for (size_t j = 0; j < cg_S.n && !h; j++)
		if (cg_S.h[j].version == version && (version == 2 || (cg_S.h[j].ctls & ctls)))
			h = &cg_S.h[j];
	if (h && h->own[0])
		return NULL;
	if (!h && cg_S.n == CG_MAX_HIER)
		return NULL;
	if (!h)
		h = &cg_S.h[cg_S.n++];
	memset(h, 0, sizeof(*h));
	h->version = version;
	h->ctls = ctls;
	h->parent_fd = -1;
	return h;
}

/* One mountinfo line: "36 35 98:0 ROOT MOUNTPOINT opts [tags] - FSTYPE SRC SUPEROPTS". */
static void add_mount(char *line, const struct own_paths *o)
{
	char *f[6], *sep, *save = NULL, *fs, *superopts, *tok;
	const char *cgpath = NULL;
	struct cg_hier *h;
	unsigned mask = 0;
	int i;

	sep = strstr(line, " - ");
	if (!sep)
		return;
	*sep = '\0';
	fs = strtok_r(sep + 3, " ", &save);
	(void)strtok_r(NULL, " ", &save);
	superopts = strtok_r(NULL, " ", &save);
	if (!fs || !superopts || (strcmp(fs, "cgroup") && strcmp(fs, "cgroup2")))
		return;
	save = NULL;
	for (i = 0; i < 6; i++)
		if (!(f[i] = strtok_r(i ? NULL : line, " ", &save)))
			return;
	unescape(f[3]);
	unescape(f[4]);

	if (!strcmp(fs, "cgroup2")) {
		if (!(h = add_hier(2, 0)))
			return;
		if (!o->have_v2 || own_dir(f[4], f[3], o->v2, h->own, sizeof(h->own)) < 0) {
			cg_msg(h->why, sizeof(h->why), "%s: our cgroup is not visible in this mount", f[4]);
			return;
		}
		/* If warden moved itself (cgroup_v2.c) and discovery runs again,
		 * our own cgroup is still the one above the leaf it moved to. */
		if (strlen(h->own) > 18 && !strcmp(h->own + strlen(h->own) - 18, "/warden.supervisor"))
			h->own[strlen(h->own) - 18] = '\0';
	} else {
		save = NULL;
		for (tok = strtok_r(superopts, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
			for (size_t j = 0; j < ARRAY_SIZE(v1_ctls); j++)
				if (!strcmp(tok, v1_ctls[j].name)) {
					mask |= v1_ctls[j].bit;
					if (!cgpath && o->have_v1[j])
						cgpath = o->v1[j];
				}
		if (!mask || !(h = add_hier(1, mask)))
			return;
		if (!cgpath || own_dir(f[4], f[3], cgpath, h->own, sizeof(h->own)) < 0) {
			cg_msg(h->why, sizeof(h->why), "%s: our cgroup is not visible in this mount", f[4]);
			return;
		}
	}
	if (snprintf(h->parent, sizeof(h->parent), "%s/warden", h->own) >= (int)sizeof(h->parent)) {
		cg_msg(h->why, sizeof(h->why), "path too long");
		h->own[0] = '\0';
	}
}

void cg_discover_from(const char *mountinfo, const char *self_cgroup)
{
	_cleanup_free_ char *mi = xstrdup(mountinfo), *sc = xstrdup(self_cgroup);
	_cleanup_free_ struct own_paths *o = xmalloc(sizeof(*o));
	char *line, *save = NULL;
	unsigned v1_bound = 0;

	cg_reset();
	cg_S.done = true;
	parse_own_paths(sc, o);
	for (line = strtok_r(mi, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		add_mount(line, o);
	/* A controller is bound to one hierarchy at most: when mountinfo shows
	 * memory, pids and cpu all on v1 hierarchies (a hybrid host), v2's
	 * cgroup.controllers cannot list any of them, and is not read. */
	for (size_t i = 0; i < cg_S.n; i++)
		if (cg_S.h[i].version == 1)
			v1_bound |= cg_S.h[i].ctls;
	/* v2 first: if it has to move warden (cgroup_v2.c), it does so before
	 * any v1 work; v2 also wins the choice when it offers a controller. */
	for (size_t i = 0; i < cg_S.n; i++) {
		struct cg_hier *h = &cg_S.h[i];

		if (h->version != 2 || !h->own[0])
			continue;
		if ((v1_bound & V2_CTLS) == V2_CTLS) {
			h->ctls = 0;
			h->parent_fd = -1;
			cg_msg(h->why, sizeof(h->why), "%s: memory, pids and cpu are on cgroup v1 "
			       "(/proc/self/mountinfo)", h->own);
			continue;
		}
		cg_backend_of(h)->setup(h);
	}
	for (size_t i = 0; i < cg_S.n; i++)
		if (cg_S.h[i].version == 1 && cg_S.h[i].own[0])
			cg_backend_of(&cg_S.h[i])->setup(&cg_S.h[i]);
}

void cg_discover(void)
{
	_cleanup_free_ char *mi = NULL, *sc = NULL;

	if (cg_S.done)
		return;
	if (read_file_str("/proc/self/mountinfo", 1 << 22, &mi, NULL) < 0 ||
	    read_file_str("/proc/self/cgroup", 1 << 16, &sc, NULL) < 0) {
		cg_S.done = true;        /* no procfs: every limit falls back */
		return;
	}
	cg_discover_from(mi, sc);
}

void cg_reset(void)
{
	for (size_t i = 0; i < cg_S.n; i++)
		if (cg_S.h[i].parent_fd >= 0)
			close(cg_S.h[i].parent_fd);
	memset(&cg_S, 0, sizeof(cg_S));
}
