/* Answering seccomp notifications.  Everything in a notification comes from
 * the jail and is hostile: only numbers are read (nr, arch, args), never
 * memory of the jail, and the answer is always the same: EPERM. */
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "warden/notify.h"
#include "warden/util.h"

int wnotify_init(struct wnotify *w, int fd, struct waudit *audit, const char *session,
                 struct werr *err)
{
	memset(w, 0, sizeof(*w));
	w->fd = fd;
	w->audit = audit;
	w->session = session;
	if (fd >= 0 && seccomp_notify_alloc(&w->req, &w->resp) < 0)
		return werr_set(err, ENOMEM, "allocating seccomp notification buffers");
	return 0;
}

static struct wdenied *lookup(struct wnotify *w, uint32_t arch, int nr)
{
	struct wdenied *d;
	char *name;
	size_t i;

	for (i = 0; i < w->n; i++)
		if (w->tab[i].nr == nr)
			return &w->tab[i];
	if (w->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 16;
		w->tab = realloc(w->tab, w->cap * sizeof(*w->tab));
		if (!w->tab)
			abort();
	}
	d = &w->tab[w->n++];
	memset(d, 0, sizeof(*d));
	d->nr = nr;
	name = seccomp_syscall_resolve_num_arch(arch, nr);
	if (name)
		snprintf(d->name, sizeof(d->name), "%s", name);
	else
		snprintf(d->name, sizeof(d->name), "syscall_%d", nr);
	free(name);
	return d;
}

int wnotify_handle(struct wnotify *w)
{
	struct wdenied *d;

	w->last = NULL;
	memset(w->req, 0, sizeof(*w->req));
	if (seccomp_notify_receive(w->fd, w->req) < 0) {
		/* ENOENT: the task died before we read it; anything else means
		 * the listener is gone. */
		return (errno == ENOENT || errno == EINTR || errno == -ENOENT) ? 0 : -1;
	}
	memset(w->resp, 0, sizeof(*w->resp));
	w->resp->id = w->req->id;
	w->resp->error = -EPERM;
	w->resp->val = 0;
	w->resp->flags = 0;
	/* If the task died meanwhile the kernel drops the answer (ENOENT): fine. */
	(void)seccomp_notify_respond(w->fd, w->resp);

	d = lookup(w, w->req->data.arch, w->req->data.nr);
	d->count++;
	w->total++;
	w->last = d;
	if (w->audit && d->count <= WNOTIFY_AUDIT_EACH) {
		json_object *rec = json_object_new_object();
		json_object *args = json_object_new_array();
		char hex[24];

		for (int i = 0; i < 6; i++) {
			snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)w->req->data.args[i]);
			json_object_array_add(args, json_object_new_string(hex));
		}
		json_object_object_add(rec, "session", json_object_new_string(w->session));
		json_object_object_add(rec, "syscall", json_object_new_string(d->name));
		json_object_object_add(rec, "nr", json_object_new_int(d->nr));
		json_object_object_add(rec, "args", args);
		json_object_object_add(rec, "host_pid", json_object_new_int((int)w->req->pid));
		json_object_object_add(rec, "count", json_object_new_int64((int64_t)d->count));
		if (d->count == WNOTIFY_AUDIT_EACH)
			json_object_object_add(rec, "note", json_object_new_string(
				"further calls of this syscall are counted in run_end only"));
		waudit_emit(w->audit, "denied", rec);
	}
	return 0;
}

json_object *wnotify_to_json(const struct wnotify *w)
{
	json_object *arr = json_object_new_array();

	for (size_t i = 0; i < w->n; i++) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "name", json_object_new_string(w->tab[i].name));
		json_object_object_add(o, "count", json_object_new_int64((int64_t)w->tab[i].count));
		json_object_array_add(arr, o);
	}
	return arr;
}

void wnotify_free(struct wnotify *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	seccomp_notify_free(w->req, w->resp);
	w->req = NULL;
	w->resp = NULL;
	free(w->tab);
	w->tab = NULL;
	w->n = w->cap = 0;
}
