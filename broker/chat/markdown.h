/* Markdown for a terminal, rendered line by line as the model streams:
 * headings bold, **strong**, *emphasis*, `inline code`, lists, quotes,
 * rules, links, and fenced code with a simple syntax colour for python,
 * javascript and shell (keywords, strings, comments, numbers).
 *
 * Input must already be sanitized (sanitize.h): this only adds escape
 * sequences.  Without colour the text passes through unchanged, which is
 * the most readable form in a log. */
#ifndef BROKER_MARKDOWN_H
#define BROKER_MARKDOWN_H

#include <stdbool.h>
#include <stddef.h>

#include "core/sanitize.h"

#define MD_RESET "\033[0m"
#define MD_BOLD "\033[1m"
#define MD_DIM "\033[2m"
#define MD_ITALIC "\033[3m"
#define MD_UNDER "\033[4m"
#define MD_RED "\033[31m"
#define MD_GREEN "\033[32m"
#define MD_YELLOW "\033[33m"
#define MD_BLUE "\033[34m"
#define MD_MAGENTA "\033[35m"
#define MD_CYAN "\033[36m"
#define MD_GREY "\033[90m"

struct md {
	bool color;
	bool fence;            /* inside a fenced code block */
	char fence_ch;         /* '`' or '~' */
	size_t fence_n;        /* length of the opening fence */
	char lang[32];         /* the fence's language, "" if none */
	struct sbuf line;      /* the line being received */
};

void md_init(struct md *m, bool color);
void md_free(struct md *m);
/* Render every complete line of s[0..n) into out; keep the rest. */
void md_feed(struct md *m, const char *s, size_t n, struct sbuf *out);
/* End of a reply: render a pending partial line (adding "\n") and forget
 * any open fence. */
void md_end(struct md *m, struct sbuf *out);

/* One line of code (no newline) in the language's colours. */
void md_code_line(const char *lang, const char *s, size_t n, bool color, struct sbuf *out);

#endif
