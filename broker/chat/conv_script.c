/* The approved code of a conversation as a shell script that does what
 * the session did (conv.h).
 *
 * In the session each language had one jail, and its interpreter kept its
 * state from one block to the next whatever other languages ran between.
 * A script of one heredoc per run of blocks lost that: Python blocks were
 * split across interpreters as soon as a shell block came between them.
 * So the script keeps one interpreter per language alive (conv_drivers.c)
 * and feeds it each block in turn through a FIFO, waiting for the block's
 * end before the next one, so that output and files come in the session's
 * order.  Where the conversation says the session's jail of a language
 * was new (after --resume, %load, %profile, --oneshot, a lost state), the
 * script starts a new interpreter too.
 *
 * What a block's console message says (the notes of conv.h) decides the
 * rest: declined and unrun blocks are not in the script; an interrupted
 * one is left out and named at the top, with each place where the script,
 * which has no jail, cannot do as the session did.
 *
 * The script's own machinery: a directory from mktemp with a FIFO per
 * language (its blocks) and one FIFO "done" that the script holds open
 * read-write for its whole run (so that no writer ever blocks on it), on
 * which each driver writes "LANG STATUS" after a block and the wrapper of
 * an interpreter that ended writes "LANG exit STATUS".  At the end every
 * interpreter gets EOF and is waited for; Ctrl-C ends them. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "conv.h"
#include "core/sanitize.h"
#include "warden/util.h"

/* what the script makes of one code message */
struct blk {
	json_object *m;                 /* the code message */
	const struct conv_interp *in;   /* NULL: no interpreter known */
	int num;                        /* its number in the script */
	bool interrupted, new_jail, lost_after;
	char *stopped, *signal, *denied;   /* from the notes, or NULL */
	size_t images;
};

static const char *str_field(json_object *o, const char *k)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static bool is(json_object *m, const char *role, const char *type)
{
	return !strcmp(str_field(m, "role") ?: "", role) && !strcmp(str_field(m, "type") ?: "", type);
}

/* A note of warden's (a line that starts with note) in content: what
 * follows it on its line, up to the first of the stop string's characters
 * (malloc'd); NULL when there is none. */
static char *note(const char *content, const char *note, const char *stop)
{
	size_t n = strlen(note);

	for (const char *p = content; p; p = strchr(p, '\n')) {
		size_t len;

		if (*p == '\n')
			p++;
		if (strncmp(p, note, n))
			continue;
		p += n;
		len = strcspn(p, "\n");
		if (stop) {
			const char *s = memmem(p, len, stop, strlen(stop));

			if (s)
				len = (size_t)(s - p);
		}
		return wsan_str(p, len > 200 ? 200 : len);   /* a comment line of the script */
	}
	return NULL;
}

static bool has_note(const char *content, const char *marker)
{
	_cleanup_free_ char *n = note(content, marker, NULL);

	return n != NULL;
}

static bool has_line(const char *code, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = code; p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (!strncmp(p, line, n) && (p[n] == '\n' || p[n] == '\0'))
			return true;
	}
	return false;
}

/* The blocks that ran (fully or not), in order; *n of them. */
static struct blk *collect(json_object *msgs, size_t *n)
{
	size_t len = json_object_array_length(msgs), k = 0;
	struct blk *b = xcalloc(len + 1, sizeof(*b));

	for (size_t i = 0; i < len; i++) {
		json_object *m = json_object_array_get_idx(msgs, i);
		json_object *out = json_object_array_get_idx(msgs, i + 1);
		const char *c;

		if (!is(m, "assistant", "code") || !out || !is(out, "computer", "console"))
			continue;
		c = str_field(out, "content") ?: "";
		/* never ran: declined, Ctrl-C at the prompt, no jail, no language */
		if (!strncmp(c, CONV_DECLINED, strlen(CONV_DECLINED)) ||
		    !strncmp(c, CONV_NOT_RUN, strlen(CONV_NOT_RUN)) || has_note(c, CONV_COULD_NOT_RUN))
			continue;
		b[k].m = m;
		b[k].in = conv_interp_find(str_field(m, "format"));
		b[k].num = (int)k + 1;
		b[k].interrupted = has_note(c, CONV_INTERRUPTED);
		b[k].new_jail = has_note(c, CONV_NEW_JAIL);
		b[k].lost_after = has_note(c, CONV_STATE_LOST);
		b[k].stopped = note(c, CONV_STOPPED, " limit was reached]");
		b[k].signal = note(c, CONV_SIGNALED, "]");
		b[k].denied = note(c, CONV_DENIED, ". This is");
		for (size_t j = i + 2; j < len; j++) {
			json_object *r = json_object_array_get_idx(msgs, j);

			if (!is(r, "computer", "image") && !is(r, "computer", "code"))
				break;
			b[k].images += is(r, "computer", "image");
		}
		k++;
	}
	*n = k;
	return b;
}

static void blk_free(struct blk *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(b[i].stopped);
		free(b[i].signal);
		free(b[i].denied);
	}
	free(b);
}

/* 'text' for sh, every ' as '\'' */
static void sh_quote(struct sbuf *s, const char *text)
{
	sbuf_addc(s, '\'');
	for (const char *p = text; *p; p++) {
		if (*p == '\'')
			sbuf_adds(s, "'\\''");
		else
			sbuf_addc(s, *p);
	}
	sbuf_addc(s, '\'');
}

/* "block 3 (py)", the language as the model wrote it */
static void blk_name(struct sbuf *s, const struct blk *b)
{
	const char *f = str_field(b->m, "format") ?: "?";
	_cleanup_free_ char *lang = wsan_str(f, strlen(f) > 32 ? 32 : strlen(f));

	for (char *p = lang; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	sbuf_addf(s, "block %d (%s)", b->num, lang);
}

/* a line of the header's list */
static void where_line(struct sbuf *s, const struct blk *b)
{
	sbuf_adds(s, "#   ");
	blk_name(s, b);
	sbuf_adds(s, ": ");
}

static void header(struct sbuf *s, const struct blk *b, size_t n, const bool *used,
                   const char *source)
{
	_cleanup_free_ char *src = wsan_str(source ?: "", strlen(source ?: ""));
	struct sbuf where = { 0 };
	size_t ni;
	const struct conv_interp *in = conv_interp_all(&ni);
	bool first = true;

	for (char *p = src; *p; p++)
		if (*p == '\n')
			*p = ' ';
	sbuf_adds(s, "#!/bin/sh\n");
	sbuf_addf(s, "# The code the user approved in the warden conversation\n#   %s\n", src);
	sbuf_adds(s, "# in order.  Each language runs in one interpreter for as long as the\n"
	             "# session's jail of that language lived, so a block sees what the earlier\n"
	             "# blocks of its language left (variables, functions, imports, the working\n"
	             "# directory), whatever ran between them.  This script runs WITHOUT a jail;\n"
	             "# to keep one:\n"
	             "#   warden run --workspace DIR -- sh SCRIPT\n");
	for (size_t i = 0; i < ni; i++) {
		if (!used[i])
			continue;
		sbuf_addf(s, "%s%s", first ? "# It needs: " : ", ", in[i].program);
		first = false;
	}
	if (!first)
		sbuf_adds(s, ".\n");
	for (size_t i = 0; i < n; i++) {
		if (!b[i].in) {
			where_line(&where, &b[i]);
			sbuf_adds(&where, "left out: no interpreter is known for its language\n");
			continue;
		}
		if (b[i].interrupted) {
			where_line(&where, &b[i]);
			sbuf_adds(&where, "left out: the user interrupted it in the session, so it "
			                  "did not run to its end\n");
			continue;
		}
		if (b[i].stopped) {
			where_line(&where, &b[i]);
			sbuf_addf(&where, "the jail stopped it (the policy's %s limit); here nothing "
			          "stops it\n", b[i].stopped);
		}
		if (b[i].signal) {
			where_line(&where, &b[i]);
			sbuf_addf(&where, "it was killed by signal %s in the session; here it may run "
			          "on\n", b[i].signal);
		}
		if (b[i].denied) {
			where_line(&where, &b[i]);
			sbuf_addf(&where, "the jail denied %s; here, without a jail, nothing denies "
			          "them\n", b[i].denied);
		}
		if (b[i].images) {
			where_line(&where, &b[i]);
			sbuf_addf(&where, "it showed %zu image%s in the session; here %s not shown\n",
			          b[i].images, b[i].images == 1 ? "" : "s",
			          b[i].images == 1 ? "it is" : "they are");
		}
	}
	if (where.len) {
		sbuf_adds(s, "#\n# Where this script does not do what the session did:\n");
		sbuf_add(s, where.d, where.len);
	}
	sbuf_free(&where);
}

/* the functions the blocks call; for the languages used only */
static void prelude(struct sbuf *s, const bool *used, const char *end)
{
	size_t ni;
	const struct conv_interp *in = conv_interp_all(&ni);

	sbuf_adds(s, "\n# ---- how the blocks run (warden's part; the blocks follow it) ----\n"
	             "set -u\nwarden_end=");
	sh_quote(s, end);
	sbuf_adds(s, "\nwarden_status=0\n"
	             "warden_dir=$(mktemp -d \"${TMPDIR:-/tmp}/warden-script.XXXXXX\") || exit 1\n"
	             "mkfifo \"$warden_dir/done\" || exit 1\n"
	             "# held open read-write: a driver's or a wrapper's write never blocks\n"
	             "exec 9<>\"$warden_dir/done\"\n"
	             "trap 'warden_stop' EXIT\n"
	             "trap 'warden_kill; exit 130' INT TERM HUP\n");
	for (size_t i = 0; i < ni; i++) {
		if (!used[i])
			continue;
		sbuf_addf(s, "\nwarden_drv_%s=", in[i].name);
		sh_quote(s, in[i].driver);
		sbuf_adds(s, "\n");
	}
	sbuf_adds(s, "\n# the fd this script writes a language's blocks to\nwarden_fd() {\n"
	             "\tcase $1 in\n");
	for (size_t i = 0; i < ni; i++)
		if (used[i])
			sbuf_addf(s, "\t%s) echo %d ;;\n", in[i].name, in[i].fd);
	sbuf_adds(s, "\tesac\n}\n\n"
	             "# warden_start LANG: its interpreter, unless it runs; it reads its blocks\n"
	             "# on fd 9, and when it ends its wrapper says so on done\n"
	             "warden_start() {\n"
	             "\teval \"[ -z \\\"\\${warden_up_$1:-}\\\" ]\" || return 0\n"
	             "\trm -f \"$warden_dir/$1\"\n"
	             "\tmkfifo \"$warden_dir/$1\" || exit 1\n"
	             "\t(\n"
	             "\t\texec 3>&- 4>&- 5>&- 6>&- 7>&- 8>&-\n"
	             "\t\tcase $1 in\n");
	for (size_t i = 0; i < ni; i++)
		if (used[i])
			sbuf_addf(s, "\t\t%s) %s & ;;\n", in[i].name, in[i].start);
	sbuf_adds(s, "\t\tesac 9<\"$warden_dir/$1\" </dev/null\n"
	             "\t\techo $! > \"$warden_dir/$1.pid\"\n"
	             "\t\twait $!\n"
	             "\t\techo \"$1 exit $?\" 2>/dev/null > \"$warden_dir/done\"\n"
	             "\t) &\n"
	             "\teval \"exec $(warden_fd \"$1\")>\\\"\\$warden_dir/\\$1\\\"\"\n"
	             "\teval \"warden_up_$1=1\"\n"
	             "}\n\n"
	             "# warden_wait LANG: until LANG's block ended (its status in warden_status)\n"
	             "warden_wait() {\n"
	             "\twhile IFS=' ' read -r warden_l warden_s warden_x <&9; do\n"
	             "\t\tif [ \"$warden_s\" = exit ]; then\n"
	             "\t\t\teval \"exec $(warden_fd \"$warden_l\")>&-\"\n"
	             "\t\t\teval \"warden_up_$warden_l=\"\n"
	             "\t\t\twarden_s=$warden_x\n"
	             "\t\tfi\n"
	             "\t\tif [ \"$warden_l\" = \"$1\" ]; then\n"
	             "\t\t\twarden_status=$warden_s\n"
	             "\t\t\treturn 0\n"
	             "\t\tfi\n"
	             "\tdone\n"
	             "\treturn 1\n"
	             "}\n\n"
	             "# warden_block LANG: the block on stdin, run by LANG's interpreter\n"
	             "warden_block() {\n"
	             "\twarden_start \"$1\"\n"
	             "\t( cat; printf '%s\\n' \"$warden_end\" ) >&\"$(warden_fd \"$1\")\"\n"
	             "\twarden_wait \"$1\"\n"
	             "}\n\n"
	             "# warden_restart LANG: the session's jail of LANG was new here: the\n"
	             "# interpreter ends (EOF), and the next block starts another\n"
	             "warden_restart() {\n"
	             "\teval \"[ -n \\\"\\${warden_up_$1:-}\\\" ]\" || return 0\n"
	             "\teval \"exec $(warden_fd \"$1\")>&-\"\n"
	             "\twarden_wait \"$1\"\n"
	             "}\n\n"
	             "warden_stop() {\n"
	             "\tfor warden_lang in");
	for (size_t i = 0; i < ni; i++)
		if (used[i])
			sbuf_addf(s, " %s", in[i].name);
	sbuf_adds(s, "; do\n"
	             "\t\twarden_restart \"$warden_lang\"\n"
	             "\tdone\n"
	             "\trm -rf \"$warden_dir\"\n"
	             "}\n\n"
	             "# Ctrl-C: the interpreters (which ignore SIGINT, as background jobs of a\n"
	             "# script do) end at once\n"
	             "warden_kill() {\n"
	             "\tfor warden_p in \"$warden_dir\"/*.pid; do\n"
	             "\t\t[ -f \"$warden_p\" ] && kill -TERM \"$(cat \"$warden_p\")\" 2>/dev/null\n"
	             "\tdone\n"
	             "\trm -rf \"$warden_dir\"\n"
	             "\ttrap - EXIT\n"
	             "}\n");
}

char *conv_script(json_object *msgs, const char *source)
{
	struct sbuf s = { 0 };
	size_t n, ni;
	struct blk *b = collect(msgs, &n);
	const struct conv_interp *in = conv_interp_all(&ni);
	bool used[16] = { false }, ran[16] = { false }, lost[16] = { false };
	_cleanup_free_ char *end = xstrdup("WARDEN_END");
	int emitted = 0;

	for (size_t i = 0; i < n; i++)
		if (b[i].in && !b[i].interrupted)
			used[b[i].in - in] = true;
	/* a line no block has ends each block and each heredoc */
	for (size_t i = 0; i < n;) {
		if (has_line(str_field(b[i].m, "content") ?: "", end)) {
			char *e2 = xasprintf("%s_X", end);

			free(end);
			end = e2;
			i = 0;   /* every block again */
			continue;
		}
		i++;
	}
	header(&s, b, n, used, source);
	for (size_t i = 0; i < ni; i++)
		if (used[i]) {
			prelude(&s, used, end);
			break;
		}
	for (size_t i = 0; i < n; i++) {
		const char *code = str_field(b[i].m, "content") ?: "";
		size_t k;

		if (!b[i].in)
			continue;
		k = (size_t)(b[i].in - in);
		/* the jail of this language was new here, or ended after its
		 * last block: the interpreter too (interrupted blocks count, as
		 * they ran in it) */
		if (ran[k] && (b[i].new_jail || lost[k]))
			sbuf_addf(&s, "\n# the session's %s jail was new here: so is its interpreter\n"
			          "warden_restart %s\n", in[k].name, in[k].name);
		ran[k] = true;
		lost[k] = b[i].lost_after;
		if (b[i].interrupted)
			continue;
		if (!emitted)
			sbuf_adds(&s, "\n# ---- the blocks ----\n");
		sbuf_adds(&s, "\n# ");
		blk_name(&s, &b[i]);
		sbuf_addf(&s, "\nwarden_block %s <<'%s'\n", in[k].name, end);
		sbuf_adds(&s, code);
		if (*code && code[strlen(code) - 1] != '\n')
			sbuf_addc(&s, '\n');
		sbuf_addf(&s, "%s\n", end);
		emitted++;
	}
	if (emitted)
		sbuf_adds(&s, "\nexit \"$warden_status\"\n");
	else
		sbuf_adds(&s, "# (no approved code in this conversation)\n");
	blk_free(b, n);
	return sbuf_steal(&s);
}

int conv_export_script(json_object *msgs, const char *source, const char *path,
                       struct werr *err)
{
	_cleanup_free_ char *text = conv_script(msgs, source);
	_cleanup_close_ int fd = -1;

	if (!strcmp(path, "-"))
		return write_all(1, text, strlen(text)) < 0 ? werr_set(err, errno, "writing the script") : 0;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (fd < 0)
		return werr_set(err, errno, "cannot write the script %s%s", path,
		                errno == EACCES ? " (warden chat may write only under its data "
		                                  "directory; use --export-script - > FILE)" : "");
	if (write_all(fd, text, strlen(text)) < 0)
		return werr_set(err, errno, "writing the script %s", path);
	return 0;
}
