/* policy_to_json: the effective policy, in the schema the parser reads.
 *
 * Written by hand rather than with json-c's printer so that it reads well
 * (short lists on one line, "512M" rather than 536870912, "/usr" rather
 * than "\/usr") and so that key order follows the documentation.  Every
 * key is written, so `warden policy show NAME > f.json` gives a file that
 * parses back to the same policy and shows every default. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "warden/util.h"

#define WIDTH 80

struct out {
	FILE *f;
	int indent;
	bool first;      /* no member written yet in the current object */
};

static void put_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		switch (c) {
		case '"':  fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (c < 0x20)
				fprintf(f, "\\u%04x", c);
			else
				fputc(c, f);
		}
	}
	fputc('"', f);
}

/* Bytes put_str writes for s. */
static size_t str_width(const char *s)
{
	size_t n = 2;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		n += (c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t') ? 2 :
		     c < 0x20 ? 6 : 1;
	}
	return n;
}

static void key(struct out *o, const char *k)
{
	fputs(o->first ? "\n" : ",\n", o->f);
	o->first = false;
	fprintf(o->f, "%*s", o->indent * 2, "");
	put_str(o->f, k);
	fputs(": ", o->f);
}

static void open_obj(struct out *o, const char *k)
{
	key(o, k);
	fputc('{', o->f);
	o->indent++;
	o->first = true;
}

static void close_obj(struct out *o)
{
	o->indent--;
	if (o->first)   /* empty */
		fputc('}', o->f);
	else
		fprintf(o->f, "\n%*s}", o->indent * 2, "");
	o->first = false;
}

static void put_strv(struct out *o, const char *k, const struct wstrv *v)
{
	size_t i, width = (size_t)o->indent * 2 + str_width(k) + 4;

	key(o, k);
	for (i = 0; i < v->n; i++)
		width += str_width(v->v[i]) + 2;
	if (width <= WIDTH) {
		fputc('[', o->f);
		for (i = 0; i < v->n; i++) {
			if (i)
				fputs(", ", o->f);
			put_str(o->f, v->v[i]);
		}
		fputc(']', o->f);
		return;
	}
	fputc('[', o->f);
	for (i = 0; i < v->n; i++) {
		fprintf(o->f, "%s\n%*s", i ? "," : "", (o->indent + 1) * 2, "");
		put_str(o->f, v->v[i]);
	}
	fprintf(o->f, "\n%*s]", o->indent * 2, "");
}

static void put_text(struct out *o, const char *k, const char *s)
{
	key(o, k);
	put_str(o->f, s);
}

static void put_size(struct out *o, const char *k, uint64_t v)
{
	char buf[32];

	if (v == 0) {
		put_text(o, k, "unlimited");
		return;
	}
	format_size(v, buf, sizeof(buf));
	put_text(o, k, buf);
}

static void put_duration(struct out *o, const char *k, uint64_t ms)
{
	char buf[32];

	if (ms == 0) {
		put_text(o, k, "unlimited");
		return;
	}
	format_duration_ms(ms, buf, sizeof(buf));
	put_text(o, k, buf);
}

static void put_count(struct out *o, const char *k, uint64_t v)
{
	if (v == 0) {
		put_text(o, k, "unlimited");
		return;
	}
	key(o, k);
	fprintf(o->f, "%llu", (unsigned long long)v);
}

static void put_cpus(struct out *o, const char *k, double d)
{
	char buf[64];
	int prec;

	if (d <= 0) {
		put_text(o, k, "unlimited");
		return;
	}
	/* the shortest text that reads back as the same double */
	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	key(o, k);
	fputs(buf, o->f);
}

char *policy_to_json(const struct wpolicy *p)
{
	char *buf = NULL;
	size_t len = 0, i;
	struct out o = { .indent = 1, .first = true };

	o.f = open_memstream(&buf, &len);
	if (!o.f)
		return NULL;
	fputc('{', o.f);
	put_text(&o, "name", p->name ? p->name : "unnamed");
	if (p->description)
		put_text(&o, "description", p->description);

	open_obj(&o, "filesystem");
	put_strv(&o, "read_only", &p->read_only);
	put_strv(&o, "read_write", &p->read_write);
	put_strv(&o, "optional", &p->optional);
	open_obj(&o, "tmpfs");
	for (i = 0; i < p->n_tmpfs; i++)
		put_size(&o, p->tmpfs[i].path, p->tmpfs[i].size);
	close_obj(&o);
	put_strv(&o, "hide", &p->hide);
	put_strv(&o, "protect", &p->protect);
	put_strv(&o, "unprotect", &p->unprotect);
	put_strv(&o, "unhide", &p->unhide);
	close_obj(&o);

	open_obj(&o, "network");
	put_text(&o, "mode", policy_net_mode_name(p->net));
	put_strv(&o, "allow", &p->net_allow);
	close_obj(&o);

	open_obj(&o, "limits");
	put_size(&o, "memory", p->limits.memory);
	put_count(&o, "pids", p->limits.pids);
	put_cpus(&o, "cpus", p->limits.cpus);
	put_duration(&o, "wall_time", p->limits.wall_ms);
	put_duration(&o, "cpu_time", p->limits.cpu_ms);
	put_size(&o, "file_size", p->limits.file_size);
	put_count(&o, "open_files", p->limits.open_files);
	put_size(&o, "output", p->limits.output);
	key(&o, "background");
	fputs(p->limits.background ? "true" : "false", o.f);
	close_obj(&o);

	open_obj(&o, "syscalls");
	put_text(&o, "deny_action", p->deny_action == WDENY_KILL ? "kill" : "errno");
	key(&o, "audit");
	fputs(p->audit ? "true" : "false", o.f);
	put_strv(&o, "allow_extra", &p->allow_extra);
	put_strv(&o, "deny_extra", &p->deny_extra);
	close_obj(&o);

	open_obj(&o, "env");
	put_strv(&o, "pass", &p->env_pass);
	open_obj(&o, "set");
	for (i = 0; i < p->env_set_keys.n && i < p->env_set_vals.n; i++)
		put_text(&o, p->env_set_keys.v[i], p->env_set_vals.v[i]);
	close_obj(&o);
	close_obj(&o);

	fputs("\n}\n", o.f);
	if (fclose(o.f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}
