/* Line-by-line markdown for the terminal (see markdown.h). */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "markdown.h"

enum lang_kind { L_NONE, L_PY, L_JS, L_SH };

static enum lang_kind lang_kind(const char *lang)
{
	static const char *const py[] = { "python", "py", "python3", NULL };
	static const char *const js[] = { "javascript", "js", "node", "typescript", "ts", NULL };
	static const char *const sh[] = { "shell", "sh", "bash", "zsh", "console", NULL };

	if (!lang)
		return L_NONE;
	for (size_t i = 0; py[i]; i++)
		if (!strcasecmp(lang, py[i]))
			return L_PY;
	for (size_t i = 0; js[i]; i++)
		if (!strcasecmp(lang, js[i]))
			return L_JS;
	for (size_t i = 0; sh[i]; i++)
		if (!strcasecmp(lang, sh[i]))
			return L_SH;
	return L_NONE;
}

static const char *const kw_py[] = {
	"False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
	"continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global",
	"if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise",
	"return", "try", "while", "with", "yield", NULL
};
static const char *const kw_js[] = {
	"async", "await", "break", "case", "catch", "class", "const", "continue", "default",
	"delete", "do", "else", "export", "extends", "false", "finally", "for", "function", "if",
	"import", "in", "instanceof", "let", "new", "null", "of", "return", "switch", "this",
	"throw", "true", "try", "typeof", "undefined", "var", "void", "while", "yield", NULL
};
static const char *const kw_sh[] = {
	"case", "do", "done", "elif", "else", "esac", "export", "fi", "for", "function", "if",
	"in", "local", "read", "return", "select", "set", "then", "until", "while", "echo",
	"cd", "exit", NULL
};

static bool is_kw(enum lang_kind k, const char *w, size_t n)
{
	const char *const *t = k == L_PY ? kw_py : k == L_JS ? kw_js : kw_sh;

	for (size_t i = 0; t[i]; i++)
		if (strlen(t[i]) == n && !memcmp(t[i], w, n))
			return true;
	return false;
}

static bool word_ch(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

void md_code_line(const char *lang, const char *s, size_t n, bool color, struct sbuf *out)
{
	enum lang_kind k = lang_kind(lang);
	size_t i = 0;

	if (!color || k == L_NONE) {
		sbuf_add(out, s, n);
		return;
	}
	while (i < n) {
		char c = s[i];
		size_t j;

		if ((c == '#' && k != L_JS && (k == L_PY || i == 0 || isspace((unsigned char)s[i - 1]))) ||
		    (k == L_JS && c == '/' && i + 1 < n && s[i + 1] == '/')) {
			sbuf_adds(out, MD_GREY);
			sbuf_add(out, s + i, n - i);
			sbuf_adds(out, MD_RESET);
			return;
		}
		if (c == '"' || c == '\'' || (c == '`' && k != L_PY)) {
			for (j = i + 1; j < n && s[j] != c; j++)
				if (s[j] == '\\' && j + 1 < n)
					j++;
			if (j < n)
				j++;
			sbuf_adds(out, MD_GREEN);
			sbuf_add(out, s + i, j - i);
			sbuf_adds(out, MD_RESET);
			i = j;
			continue;
		}
		if (isdigit((unsigned char)c) && (i == 0 || !word_ch(s[i - 1]))) {
			for (j = i; j < n && (isalnum((unsigned char)s[j]) || s[j] == '.' || s[j] == '_'); j++)
				;
			sbuf_adds(out, MD_YELLOW);
			sbuf_add(out, s + i, j - i);
			sbuf_adds(out, MD_RESET);
			i = j;
			continue;
		}
		if (word_ch(c)) {
			for (j = i; j < n && word_ch(s[j]); j++)
				;
			if (is_kw(k, s + i, j - i)) {
				sbuf_adds(out, MD_MAGENTA);
				sbuf_add(out, s + i, j - i);
				sbuf_adds(out, MD_RESET);
			} else {
				sbuf_add(out, s + i, j - i);
			}
			i = j;
			continue;
		}
		sbuf_addc(out, c);
		i++;
	}
}

void md_init(struct md *m, bool color)
{
	memset(m, 0, sizeof(*m));
	m->color = color;
}

void md_free(struct md *m)
{
	sbuf_free(&m->line);
}

/* Where the closing delimiter d (length dn) of a span starting at s[i] is,
 * or 0 when there is none on the line. */
static size_t find_close(const char *s, size_t n, size_t from, const char *d, size_t dn)
{
	for (size_t j = from; j + dn <= n; j++)
		if (!memcmp(s + j, d, dn))
			return j;
	return 0;
}

static void inline_md(const char *s, size_t n, struct sbuf *out)
{
	size_t i = 0;

	while (i < n) {
		size_t e;

		if (s[i] == '`' && (e = find_close(s, n, i + 1, "`", 1)) > i + 1) {
			sbuf_adds(out, MD_CYAN);
			sbuf_add(out, s + i + 1, e - i - 1);
			sbuf_adds(out, "\033[39m");
			i = e + 1;
			continue;
		}
		if (i + 1 < n && ((s[i] == '*' && s[i + 1] == '*') ||
		                  (s[i] == '_' && s[i + 1] == '_' && (i == 0 || !word_ch(s[i - 1])))) &&
		    i + 2 < n && s[i + 2] != ' ') {
			char d[3] = { s[i], s[i], 0 };

			e = find_close(s, n, i + 2, d, 2);
			if (e > i + 2 && s[e - 1] != ' ') {
				sbuf_adds(out, MD_BOLD);
				inline_md(s + i + 2, e - i - 2, out);
				sbuf_adds(out, "\033[22m");
				i = e + 2;
				continue;
			}
		}
		if (s[i] == '*' && i + 1 < n && s[i + 1] != ' ' && s[i + 1] != '*') {
			e = find_close(s, n, i + 1, "*", 1);
			if (e > i + 1 && s[e - 1] != ' ') {
				sbuf_adds(out, MD_ITALIC);
				inline_md(s + i + 1, e - i - 1, out);
				sbuf_adds(out, "\033[23m");
				i = e + 1;
				continue;
			}
		}
		if (s[i] == '[') {
			size_t rb = find_close(s, n, i + 1, "](", 2), rp;

			if (rb && (rp = find_close(s, n, rb + 2, ")", 1))) {
				sbuf_adds(out, MD_UNDER);
				inline_md(s + i + 1, rb - i - 1, out);
				sbuf_adds(out, "\033[24m" MD_GREY " (");
				sbuf_add(out, s + rb + 2, rp - rb - 2);
				sbuf_adds(out, ")" MD_RESET);
				i = rp + 1;
				continue;
			}
		}
		sbuf_addc(out, s[i]);
		i++;
	}
}

/* A fence line: up to 3 spaces, then 3+ ` or ~.  Sets *ch, *cnt and the
 * offset of what follows. */
static bool fence_line(const char *s, size_t n, char *ch, size_t *cnt, size_t *rest)
{
	size_t i = 0, j;

	while (i < n && i < 3 && s[i] == ' ')
		i++;
	if (i >= n || (s[i] != '`' && s[i] != '~'))
		return false;
	for (j = i; j < n && s[j] == s[i]; j++)
		;
	if (j - i < 3)
		return false;
	*ch = s[i];
	*cnt = j - i;
	*rest = j;
	return true;
}

static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isspace((unsigned char)s[i]))
			return false;
	return true;
}

static void render_line(struct md *m, const char *s, size_t n, struct sbuf *out)
{
	char ch;
	size_t cnt, rest, i;

	if (fence_line(s, n, &ch, &cnt, &rest)) {
		if (!m->fence) {
			size_t a = rest, b;

			while (a < n && s[a] == ' ')
				a++;
			for (b = a; b < n && !isspace((unsigned char)s[b]) && s[b] != '{'; b++)
				;
			if (b - a >= sizeof(m->lang))
				b = a + sizeof(m->lang) - 1;
			memcpy(m->lang, s + a, b - a);
			m->lang[b - a] = '\0';
			m->fence = true;
			m->fence_ch = ch;
			m->fence_n = cnt;
			goto fence_out;
		}
		if (ch == m->fence_ch && cnt >= m->fence_n && blank(s + rest, n - rest)) {
			m->fence = false;
			m->lang[0] = '\0';
			goto fence_out;
		}
	}
	if (m->fence) {
		md_code_line(m->lang, s, n, m->color, out);
		return;
	}
	if (!m->color) {
		sbuf_add(out, s, n);
		return;
	}

	for (i = 0; i < n && i < 6 && s[i] == '#'; i++)
		;
	if (i > 0 && i < n && s[i] == ' ') {
		sbuf_adds(out, i == 1 ? MD_BOLD MD_UNDER : MD_BOLD);
		inline_md(s + i + 1, n - i - 1, out);
		sbuf_adds(out, MD_RESET);
		return;
	}
	if (n >= 3 && (s[0] == '-' || s[0] == '*' || s[0] == '_')) {
		size_t k = 0;

		for (i = 0; i < n; i++)
			if (s[i] == s[0])
				k++;
			else if (s[i] != ' ')
				break;
		if (i == n && k >= 3) {
			sbuf_adds(out, MD_GREY "────────────────────────────────────────" MD_RESET);
			return;
		}
	}
	for (i = 0; i < n && s[i] == ' '; i++)
		;
	if (i + 1 < n && (s[i] == '-' || s[i] == '*' || s[i] == '+') && s[i + 1] == ' ') {
		sbuf_add(out, s, i);
		sbuf_adds(out, MD_CYAN "•" MD_RESET " ");
		inline_md(s + i + 2, n - i - 2, out);
		return;
	}
	{
		size_t j = i;

		while (j < n && isdigit((unsigned char)s[j]))
			j++;
		if (j > i && j + 1 < n && (s[j] == '.' || s[j] == ')') && s[j + 1] == ' ') {
			sbuf_add(out, s, i);
			sbuf_adds(out, MD_BOLD);
			sbuf_add(out, s + i, j + 1 - i);
			sbuf_adds(out, "\033[22m ");
			inline_md(s + j + 2, n - j - 2, out);
			return;
		}
	}
	if (n >= 1 && s[0] == '>') {
		size_t k = n >= 2 && s[1] == ' ' ? 2 : 1;

		sbuf_adds(out, MD_GREY "│ " MD_RESET MD_ITALIC);
		inline_md(s + k, n - k, out);
		sbuf_adds(out, MD_RESET);
		return;
	}
	inline_md(s, n, out);
	return;

fence_out:
	if (m->color)
		sbuf_adds(out, MD_GREY);
	sbuf_add(out, s, n);
	if (m->color)
		sbuf_adds(out, MD_RESET);
}

void md_feed(struct md *m, const char *s, size_t n, struct sbuf *out)
{
	if (!out->d)
		sbuf_add(out, "", 0);
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '\n') {
			sbuf_addc(&m->line, s[i]);
			continue;
		}
		render_line(m, m->line.d ? m->line.d : "", m->line.len, out);
		sbuf_addc(out, '\n');
		sbuf_reset(&m->line);
	}
}

void md_end(struct md *m, struct sbuf *out)
{
	if (!out->d)
		sbuf_add(out, "", 0);
	if (m->line.len) {
		render_line(m, m->line.d, m->line.len, out);
		sbuf_addc(out, '\n');
		sbuf_reset(&m->line);
	}
	m->fence = false;
	m->lang[0] = '\0';
}
