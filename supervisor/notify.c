/* Answering seccomp notifications.  Everything in a notification comes from
 * the jail and is hostile: only numbers are read (nr, arch, args), never
 * memory of the jail (so a path argument is shown as its address, 0x...,
 * not as a string), and the answer is always the same: EPERM.  What the
 * jail can make us keep is bounded (supervisor/notify.h): at most
 * WNOTIFY_NR_MAX + 1 entries, found in O(1), and at most
 * WNOTIFY_RECORDS_MAX audit records per run or session. */
#include <errno.h>
#include <inttypes.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/seccomp.h>

#include "decode.h"
#include "notify.h"
#include "warden/util.h"

/* The kernel's sizes of a notification and its answer (at least ours).  Raw
 * ioctls, not libseccomp's seccomp_notify_*: those first probe the kernel's
 * API level (nine seccomp calls per process), which a run whose filter was
 * compiled at build time never needs (jail/filter.c). */
static size_t req_size, resp_size;

size_t wnotify_resp_size(void)
{
	return resp_size > sizeof(struct seccomp_notif_resp) ? resp_size
	                                                     : sizeof(struct seccomp_notif_resp);
}

int wnotify_init(struct wnotify *w, int fd, struct waudit *audit, const char *session,
                 struct wnotify_budget *budget, struct werr *err)
{
	memset(w, 0, sizeof(*w));
	w->fd = fd;
	w->audit = audit;
	w->session = session;
	w->budget = budget ? budget : &w->own;
	if (fd < 0)
		return 0;
	if (!req_size) {
		struct seccomp_notif_sizes sz;

		if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0)
			return werr_set(err, errno, "reading the kernel's seccomp notification sizes");
		req_size = sz.seccomp_notif > sizeof(*w->req) ? sz.seccomp_notif : sizeof(*w->req);
		resp_size = sz.seccomp_notif_resp > sizeof(*w->resp) ? sz.seccomp_notif_resp
		                                                     : sizeof(*w->resp);
	}
	w->req = calloc(1, req_size);
	w->resp = calloc(1, resp_size);
	if (!w->req || !w->resp)
		return werr_set(err, ENOMEM, "allocating seccomp notification buffers");
	return 0;
}

static struct wdenied *new_entry(struct wnotify *w, int nr, const char *name)
{
	struct wdenied *d;

	if (w->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 16;
		w->tab = realloc(w->tab, w->cap * sizeof(*w->tab));
		if (!w->tab)
			abort();
	}
	d = &w->tab[w->n++];
	memset(d, 0, sizeof(*d));
	d->nr = nr;
	snprintf(d->name, sizeof(d->name), "%s", name);
	return d;
}

static struct wdenied *unknown_entry(struct wnotify *w, int nr)
{
	if (!w->unknown) {
		new_entry(w, nr, WNOTIFY_UNKNOWN);
		w->unknown = w->n;
	}
	return &w->tab[w->unknown - 1];
}

/* O(1): one array read for a number seen before.  A number is resolved by
 * libseccomp once, the first time; only numbers below WNOTIFY_NR_MAX of the
 * native arch can have an entry of their own, so the table holds at most
 * WNOTIFY_NR_MAX + 1 entries whatever the jail calls. */
static struct wdenied *lookup(struct wnotify *w, uint32_t arch, int nr)
{
	char *name;

	if (nr < 0 || nr >= WNOTIFY_NR_MAX || arch != seccomp_arch_native())
		return unknown_entry(w, nr);
	if (!w->slot)
		w->slot = xcalloc(WNOTIFY_NR_MAX, sizeof(*w->slot));
	if (w->slot[nr])
		return &w->tab[w->slot[nr] - 1];
	name = seccomp_syscall_resolve_num_arch(arch, nr);
	if (name) {
		new_entry(w, nr, name);
		w->slot[nr] = (uint16_t)w->n;
	} else {
		unknown_entry(w, nr);
		w->slot[nr] = (uint16_t)w->unknown;
	}
	free(name);
	return &w->tab[w->slot[nr] - 1];
}

static void audit_call(struct wnotify *w, const struct wdenied *d, const char *call)
{
	json_object *rec = json_object_new_object();
	json_object *args = json_object_new_array();
	char hex[24];

	for (int i = 0; i < 6; i++) {
		snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)w->req->data.args[i]);
		json_object_array_add(args, json_object_new_string(hex));
	}
	json_object_object_add(rec, "session", json_object_new_string(w->session));
	json_object_object_add(rec, "syscall", json_object_new_string(d->name));
	/* the real number, also for the "unknown" bucket */
	json_object_object_add(rec, "nr", json_object_new_int(w->req->data.nr));
	json_object_object_add(rec, "args", args);
	/* the same numbers decoded for people; "args" stays the record */
	json_object_object_add(rec, "call", json_object_new_string(call));
	json_object_object_add(rec, "host_pid", json_object_new_int((int)w->req->pid));
	json_object_object_add(rec, "count", json_object_new_int64((int64_t)d->count));
	if (d->count == WNOTIFY_AUDIT_EACH)
		json_object_object_add(rec, "note", json_object_new_string(
			"further calls of this syscall are only counted in the summary"));
	waudit_emit(w->audit, "denied", rec);
}

int wnotify_handle(struct wnotify *w)
{
	struct wdenied *d;
	char call[WDECODE_MAX];
	uint64_t args[6];

	w->last = NULL;
	w->last_audited = false;
	memset(w->req, 0, req_size);   /* the kernel wants it zeroed */
	if (ioctl(w->fd, SECCOMP_IOCTL_NOTIF_RECV, w->req) < 0) {
		/* ENOENT: the task died before we read it; anything else means
		 * the listener is gone. */
		return (errno == ENOENT || errno == EINTR || errno == -ENOENT) ? 0 : -1;
	}
	if (w->divert && w->divert(w->divert_ctx, w))
		return 0;
	memset(w->resp, 0, resp_size);
	w->resp->id = w->req->id;
	w->resp->error = -EPERM;
	w->resp->val = 0;
	w->resp->flags = 0;
	/* If the task died meanwhile the kernel drops the answer (ENOENT): fine. */
	(void)ioctl(w->fd, SECCOMP_IOCTL_NOTIF_SEND, w->resp);

	d = lookup(w, w->req->data.arch, w->req->data.nr);
	d->count++;
	w->total++;
	w->last = d;
	if (d->count > WNOTIFY_AUDIT_EACH)
		return 0;
	/* only the calls that are kept are decoded: at most
	 * WNOTIFY_AUDIT_EACH per entry and mark, each a table lookup */
	for (int i = 0; i < 6; i++)
		args[i] = w->req->data.args[i];
	wdecode_call(call, sizeof(call), d->name, args);
	if (d->count == 1)
		wdecode_call(d->first, sizeof(d->first), d->name, args);
	if (w->budget->records < WNOTIFY_RECORDS_MAX) {
		w->budget->records++;
		w->last_audited = true;
		if (w->audit)
			audit_call(w, d, call);
	} else {
		w->budget->dropped++;
	}
	return 0;
}

void wnotify_mark(struct wnotify *w)
{
	for (size_t i = 0; i < w->n; i++)
		w->tab[i].count = 0;
}

size_t wnotify_summary(const struct wnotify *w, char *buf, size_t len)
{
	size_t off = 0, shown = 0;

	if (!len)
		return 0;
	buf[0] = '\0';
	for (size_t i = 0; i < w->n; i++) {
		int n;

		if (!w->tab[i].count)
			continue;
		n = snprintf(buf + off, len - off, "%s%s (%" PRIu64 "; first: %s)", shown ? ", " : "",
		             w->tab[i].name, w->tab[i].count, w->tab[i].first);
		if (n < 0 || (size_t)n >= len - off) {
			/* cut: end in "..." rather than in the middle of a name */
			snprintf(buf + off, len - off, "%s...", shown ? ", " : "");
			break;
		}
		off += (size_t)n;
		shown++;
	}
	return shown;
}

json_object *wnotify_to_json(const struct wnotify *w)
{
	json_object *arr = json_object_new_array();

	for (size_t i = 0; i < w->n; i++) {
		json_object *o;

		if (!w->tab[i].count)
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "name", json_object_new_string(w->tab[i].name));
		json_object_object_add(o, "count", json_object_new_int64((int64_t)w->tab[i].count));
		json_object_array_add(arr, o);
	}
	return arr;
}

void wnotify_flush_dropped(struct wnotify *w, json_object *rec)
{
	if (!w->budget || !w->budget->dropped) {
		json_object_put(rec);
		return;
	}
	json_object_object_add(rec, "dropped", json_object_new_int64((int64_t)w->budget->dropped));
	json_object_object_add(rec, "limit", json_object_new_int(WNOTIFY_RECORDS_MAX));
	w->budget->dropped = 0;
	waudit_emit(w->audit, "denied_dropped", rec);
}

void wnotify_free(struct wnotify *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	free(w->req);
	free(w->resp);
	w->req = NULL;
	w->resp = NULL;
	free(w->tab);
	w->tab = NULL;
	free(w->slot);
	w->slot = NULL;
	w->n = w->cap = w->unknown = 0;
}
