/* Owned string vectors and freeing a policy. */
#include <string.h>

#include "internal.h"
#include "warden/util.h"

void wstrv_free(struct wstrv *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

int wstrv_push(struct wstrv *s, const char *str)
{
	/* v stays NULL-terminated so it can be handed to execve-like APIs */
	char **v = realloc(s->v, (s->n + 2) * sizeof(*s->v));

	if (!v)
		abort();
	s->v = v;
	s->v[s->n++] = xstrdup(str);
	s->v[s->n] = NULL;
	return 0;
}

bool wstrv_contains(const struct wstrv *s, const char *str)
{
	size_t i;

	for (i = 0; s && i < s->n; i++)
		if (!strcmp(s->v[i], str))
			return true;
	return false;
}

void wstrv_move(struct wstrv *dst, struct wstrv *src)
{
	wstrv_free(dst);
	*dst = *src;
	src->v = NULL;
	src->n = 0;
}

void wstrv_remove_at(struct wstrv *s, size_t i)
{
	if (i >= s->n)
		return;
	free(s->v[i]);
	memmove(&s->v[i], &s->v[i + 1], (s->n - i) * sizeof(*s->v));  /* with the NULL */
	s->n--;
}

void policy_free(struct wpolicy *p)
{
	size_t i;

	if (!p)
		return;
	free(p->name);
	free(p->source);
	free(p->description);
	wstrv_free(&p->read_only);
	wstrv_free(&p->read_write);
	wstrv_free(&p->optional);
	for (i = 0; i < p->n_tmpfs; i++)
		free(p->tmpfs[i].path);
	free(p->tmpfs);
	wstrv_free(&p->hide);
	wstrv_free(&p->protect);
	wstrv_free(&p->unprotect);
	wstrv_free(&p->unhide);
	wstrv_free(&p->net_allow);
	wstrv_free(&p->allow_extra);
	wstrv_free(&p->deny_extra);
	wstrv_free(&p->env_pass);
	wstrv_free(&p->env_set_keys);
	wstrv_free(&p->env_set_vals);
	free(p);
}
