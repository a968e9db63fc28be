/* The mount plan: what the jail's root will hold, computed in the parent from
 * the policy (variables expanded, duplicates merged, parents before children)
 * so the child only executes a list. */
#include <errno.h>
#include <string.h>

#include "jail_impl.h"
#include "warden/util.h"

static int plan_add(struct wplan *plan, size_t *cap, enum wmount_kind kind,
                    const char *raw, const struct jail_spec *spec, uint64_t size,
                    bool optional, struct werr *err)
{
	char *path = NULL;
	size_t i;

	if (policy_expand(raw, spec->workspace, spec->home, &path, err) < 0)
		return -1;
	/* trailing slashes would defeat the duplicate check and the sort */
	for (size_t l = strlen(path); l > 1 && path[l - 1] == '/'; l--)
		path[l - 1] = '\0';
	for (i = 0; i < plan->n; i++) {
		struct wmount *m = &plan->m[i];
		if (strcmp(m->path, path))
			continue;
		/* the same path twice: the stronger kind wins (hide > tmpfs > rw > ro) */
		if (kind > m->kind) {
			m->kind = kind;
			m->size = size;
		}
		m->optional = m->optional && optional;
		free(path);
		return 0;
	}
	if (plan->n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		plan->m = realloc(plan->m, *cap * sizeof(*plan->m));
		if (!plan->m)
			return werr_set(err, ENOMEM, "mount plan");
	}
	plan->m[plan->n++] = (struct wmount){ .kind = kind, .path = path, .size = size,
	                                       .optional = optional, .tree_fd = -1 };
	return 0;
}

static int cmp_mount(const void *a, const void *b)
{
	/* strcmp puts every path before the paths below it ("/a" < "/a/b"), so
	 * parents are mounted first and hides land on top of their binds. */
	return strcmp(((const struct wmount *)a)->path, ((const struct wmount *)b)->path);
}

int jail_plan(const struct jail_spec *spec, struct wplan *plan, struct werr *err)
{
	const struct wpolicy *p = spec->pol;
	size_t cap = 0, i;

	memset(plan, 0, sizeof(*plan));
	plan->uid = getuid();
	plan->gid = getgid();
	plan->host_uid = plan->uid;   /* as root, jail_idmap_prepare changes them */
	plan->host_gid = plan->gid;
	plan->slot_fd = -1;

	for (i = 0; i < p->read_only.n; i++)
		if (plan_add(plan, &cap, WM_BIND_RO, p->read_only.v[i], spec, 0,
		             wstrv_contains(&p->optional, p->read_only.v[i]), err) < 0)
			goto fail;
	for (i = 0; i < p->optional.n; i++)
		if (plan_add(plan, &cap, WM_BIND_RO, p->optional.v[i], spec, 0, true, err) < 0)
			goto fail;
	for (i = 0; i < p->read_write.n; i++)
		if (plan_add(plan, &cap, WM_BIND_RW, p->read_write.v[i], spec, 0, false, err) < 0)
			goto fail;
	/* The workspace is always there: read-write or read-only per policy. */
	if (plan_add(plan, &cap, p->workspace_writable ? WM_BIND_RW : WM_BIND_RO,
	             "$WORKSPACE", spec, 0, false, err) < 0)
		goto fail;
	for (i = 0; i < p->n_tmpfs; i++)
		if (plan_add(plan, &cap, WM_TMPFS, p->tmpfs[i].path, spec, p->tmpfs[i].size,
		             false, err) < 0)
			goto fail;
	for (i = 0; i < p->hide.n; i++)
		if (plan_add(plan, &cap, WM_HIDE, p->hide.v[i], spec, 0, true, err) < 0)
			goto fail;

	for (i = 0; i < plan->n; i++) {
		const char *q = plan->m[i].path;
		if (q[0] != '/' || strstr(q, "/../") || !strcmp(q, "/") ||
		    (strlen(q) >= 3 && !strcmp(q + strlen(q) - 3, "/..")))
			return werr_set(err, 0, "policy %s: path '%s' must be absolute, "
			                "below / and without '..'", p->name, q),
			       jail_plan_free(plan), -1;
		/* these are built by the jail itself */
		if (!strcmp(q, "/proc") || !strncmp(q, "/proc/", 6) ||
		    !strcmp(q, "/dev") || !strncmp(q, "/dev/", 5))
			return werr_set(err, 0, "policy %s: '%s' cannot be mounted; warden "
			                "builds /proc and /dev itself", p->name, q),
			       jail_plan_free(plan), -1;
	}
	qsort(plan->m, plan->n, sizeof(*plan->m), cmp_mount);
	return 0;
fail:
	jail_plan_free(plan);
	return -1;
}

void jail_plan_free(struct wplan *plan)
{
	size_t i;

	if (!plan)
		return;
	for (i = 0; i < plan->n; i++) {
		free(plan->m[i].path);
		closep(&plan->m[i].tree_fd);
		plan->m[i].tree_fd = -1;
	}
	free(plan->m);
	closep(&plan->slot_fd);
	plan->slot_fd = -1;
	plan->m = NULL;
	plan->n = 0;
}
