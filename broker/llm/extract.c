/* Code blocks in assistant text (no-tools mode), and the repair of the
 * tool calls local models get wrong (extract.h).
 *
 * What counts as code, in the order it appears in the text:
 *   - a fenced block (``` or ~~~, three or more, at the start of a line,
 *     indentation allowed) labelled with a language: the label is kept as
 *     written ("py" stays "py"; the chat resolves aliases).  An unclosed
 *     fence runs to the end of the text (the reply was cut off).
 *   - an UNLABELLED fence is "shell": models leave the label off mostly for
 *     commands.  Fences labelled as data or output (text, output, console,
 *     json, csv, yaml, diff, ...) stay prose and are never run, except a
 *     json/unlabelled fence whose whole content is a tool call.
 *   - a tool call written as JSON text:
 *       {"name":"execute","arguments":{"language":"python","code":"..."}}
 *     (arguments may be a JSON string of that object; "parameters" and
 *     "input" are accepted too; <tool_call> tags around it are dropped);
 *   - functions.execute({...}) / execute({...}), and the Python keyword form
 *     execute(language="python", code="...");
 *   - a tool named after its language: {"name":"python","arguments":"print(1)"}
 *     or {"name":"python","arguments":{"code":"print(1)"}}.
 * Everything else is prose. */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "extract.h"
#include "core/lmc.h"
#include "warden/util.h"

/* how many JSON parses one text may cost */
#define MAX_JSON_ATTEMPTS 64

static char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

static const char *const languages[] = {
	"python", "py", "python3", "javascript", "js", "node", "nodejs", "typescript", "ts",
	"shell", "sh", "bash", "zsh", "fish", "perl", "ruby", "rb", "r", "lua", "php",
	"powershell", "pwsh", "applescript", "html", "go", "rust", "c", "cpp", "java",
};

/* fences whose content is data or output, not code to run */
static const char *const not_code[] = {
	"text", "txt", "plaintext", "plain", "output", "console", "stdout", "stderr", "log",
	"json", "jsonl", "csv", "tsv", "xml", "yaml", "yml", "toml", "ini", "markdown", "md",
	"diff", "patch", "svg", "mermaid",
};

static const char *const exec_names[] = {
	"execute", "run_code", "run", "exec", "code", "code_interpreter", "run_python",
};

static bool in_list(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcasecmp(s, list[i]) == 0)
			return true;
	return false;
}

size_t llm_fence_label(const char *info, size_t n, char *buf, size_t cap)
{
	size_t i = 0, k, len;

	while (i < n && isspace((unsigned char)info[i]))
		i++;
	for (k = i; k < n && !isspace((unsigned char)info[k]) && info[k] != '{'; k++)
		;
	len = k - i;
	if (cap) {
		size_t c = len < cap ? len : cap - 1;

		memcpy(buf, info + i, c);
		buf[c] = '\0';
	}
	return len;
}

bool llm_fence_runs(const char *info, size_t n)
{
	char label[32];
	size_t len = llm_fence_label(info, n, label, sizeof(label));

	if (!len || len >= sizeof(label))
		return true;   /* unlabelled; no data label is that long */
	return !llm_fence_is_data(label);
}

bool llm_fence_is_data(const char *label)
{
	return label && in_list(label, not_code, ARRAY_SIZE(not_code));
}

bool llm_is_language(const char *name)
{
	return name && in_list(name, languages, ARRAY_SIZE(languages));
}

/* The whole of s (surrounding spaces allowed) as JSON, or NULL. */
static json_object *parse_whole(const char *s, size_t len)
{
	json_tokener *tok;
	json_object *j;
	size_t end;

	while (len > 0 && isspace((unsigned char)*s)) {
		s++;
		len--;
	}
	while (len > 0 && isspace((unsigned char)s[len - 1]))
		len--;
	if (len == 0 || len > LLM_REPLY_MAX)
		return NULL;
	tok = json_tokener_new();
	j = json_tokener_parse_ex(tok, s, (int)len);
	end = json_tokener_get_parse_end(tok);
	if (j && (json_tokener_get_error(tok) != json_tokener_success || end != len)) {
		json_object_put(j);
		j = NULL;
	}
	json_tokener_free(tok);
	return j;
}

static const char *obj_str(json_object *o, const char *const *keys, size_t n)
{
	json_object *v;

	for (size_t i = 0; i < n; i++)
		if (json_object_object_get_ex(o, keys[i], &v) && json_object_is_type(v, json_type_string))
			return json_object_get_string(v);
	return NULL;
}

int llm_repair_call(const char *name, const char *args, char **language, char **code)
{
	static const char *const code_keys[] = { "code", "command", "script", "source", "cmd" };
	static const char *const lang_keys[] = { "language", "lang" };
	json_object *j = NULL, *inner;
	const char *c = NULL, *l = NULL;
	bool is_lang;
	int r = -1;

	*language = *code = NULL;
	if (!name || !args)
		return -1;
	if (strncmp(name, "functions.", 10) == 0)
		name = name + 10;
	is_lang = llm_is_language(name);
	if (!is_lang && !in_list(name, exec_names, ARRAY_SIZE(exec_names)))
		return -1;
	j = parse_whole(args, strlen(args));
	if (j && json_object_is_type(j, json_type_string)) {
		/* arguments given as a JSON string: of the object, or raw code */
		const char *s = json_object_get_string(j);
		inner = parse_whole(s, strlen(s));
		if (inner && json_object_is_type(inner, json_type_object)) {
			json_object_put(j);
			j = inner;
		} else {
			json_object_put(inner);
			c = s;
		}
	}
	if (j && json_object_is_type(j, json_type_object)) {
		c = obj_str(j, code_keys, ARRAY_SIZE(code_keys));
		l = obj_str(j, lang_keys, ARRAY_SIZE(lang_keys));
		if (!c)
			goto out;
	} else if (!c) {
		if (j && !json_object_is_type(j, json_type_string))
			goto out;          /* a number, an array: not code */
		const char *a = args;
		while (isspace((unsigned char)*a))
			a++;
		/* broken JSON for execute: not code (running it would fail) */
		if (!is_lang && (*a == '{' || *a == '\0'))
			goto out;
		c = args;              /* not JSON at all: the code itself */
	}
	if (!l || !*l)
		l = is_lang ? name : "python";
	*language = xstrdup(l);
	*code = xstrdup(c);
	r = 0;
out:
	json_object_put(j);
	return r;
}

/* ---- candidates ---- */

enum cand_kind { CAND_NONE, CAND_CODE, CAND_PROSE };

struct cand {
	enum cand_kind kind;
	size_t start, end;       /* [start, end) in the text */
	char *language, *code;
	bool labelled;           /* a fence whose label names its language */
};

static void cand_clear(struct cand *c)
{
	free(c->language);
	free(c->code);
	memset(c, 0, sizeof(*c));
}

/* A tool-call object {"name":..,"arguments":..}: language and code. */
static bool json_call(json_object *o, char **language, char **code)
{
	static const char *const arg_keys[] = { "arguments", "parameters", "input", "args" };
	json_object *name, *args = NULL, *fn;

	if (!o || !json_object_is_type(o, json_type_object))
		return false;
	/* {"type":"function","function":{"name":..,"arguments":..}} */
	if (json_object_object_get_ex(o, "function", &fn) && json_object_is_type(fn, json_type_object))
		o = fn;
	if (!json_object_object_get_ex(o, "name", &name) || !json_object_is_type(name, json_type_string))
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(arg_keys) && !args; i++)
		json_object_object_get_ex(o, arg_keys[i], &args);
	if (!args)
		return false;
	const char *a = json_object_is_type(args, json_type_string)
		? json_object_get_string(args)
		: json_object_to_json_string_ext(args, JSON_C_TO_STRING_PLAIN);
	return llm_repair_call(json_object_get_string(name), a, language, code) == 0;
}

static bool line_start(const char *t, size_t i)
{
	while (i > 0 && (t[i - 1] == ' ' || t[i - 1] == '\t'))
		i--;
	return i == 0 || t[i - 1] == '\n';
}

/* The next fenced block at or after pos. */
static void find_fence(const char *t, size_t len, size_t pos, struct cand *c)
{
	for (size_t i = pos; i + 3 <= len; i++) {
		char ch = t[i];
		size_t n = 0, j, info, info_end, body, k;

		if ((ch != '`' && ch != '~') || !line_start(t, i))
			continue;
		while (i + n < len && t[i + n] == ch)
			n++;
		if (n < 3) {
			i += n - 1;
			continue;
		}
		/* info string to the end of the line */
		info = i + n;
		for (j = info; j < len && t[j] != '\n'; j++)
			if (ch == '`' && t[j] == '`')
				break;
		if (j < len && t[j] == '`') {       /* ```inline``` on one line: not a fence */
			i = j;
			continue;
		}
		info_end = j;
		body = j < len ? j + 1 : len;
		while (info < info_end && isspace((unsigned char)t[info]))
			info++;
		for (k = info; k < info_end && !isspace((unsigned char)t[k]) && t[k] != '{'; k++)
			;
		/* the closing fence: a line of >= n of the same character */
		size_t close = len, after = len, ls = body;
		while (ls < len) {
			size_t le = ls, m = 0, q;
			while (le < len && t[le] != '\n')
				le++;
			q = ls;
			while (q < le && (t[q] == ' ' || t[q] == '\t'))
				q++;
			while (q + m < le && t[q + m] == ch)
				m++;
			if (m >= n) {
				size_t r = q + m;
				while (r < le && isspace((unsigned char)t[r]))
					r++;
				if (r == le) {
					close = ls;
					after = le < len ? le + 1 : len;
					break;
				}
			}
			ls = le + 1;
		}
		size_t code_end = close;
		if (code_end > body && t[code_end - 1] == '\n')
			code_end--;
		if (code_end > body && t[code_end - 1] == '\r')
			code_end--;
		if (code_end < body)
			code_end = body;
		c->start = i;
		c->end = after;
		c->code = xstrndup(t + body, code_end - body);
		c->language = xstrndup(t + info, k - info);
		c->labelled = *c->language && strcasecmp(c->language, "json");
		if (!*c->language || strcasecmp(c->language, "json") == 0) {
			/* a tool call written in a fence */
			json_object *o = parse_whole(c->code, strlen(c->code));
			char *l = NULL, *cd = NULL;
			if (json_call(o, &l, &cd)) {
				json_object_put(o);
				free(c->language);
				free(c->code);
				c->language = l;
				c->code = cd;
				c->kind = CAND_CODE;
				return;
			}
			json_object_put(o);
		}
		if (!*c->language) {
			free(c->language);
			c->language = xstrdup("shell");
		}
		c->kind = in_list(c->language, not_code, ARRAY_SIZE(not_code)) ? CAND_PROSE : CAND_CODE;
		return;
	}
	c->kind = CAND_NONE;
}

static bool skip_prefix_back(const char *t, size_t *start, const char *tag)
{
	size_t s = *start, tl = strlen(tag);
	while (s > 0 && isspace((unsigned char)t[s - 1]))
		s--;
	if (s >= tl && strncmp(t + s - tl, tag, tl) == 0) {
		*start = s - tl;
		return true;
	}
	return false;
}

static void skip_suffix(const char *t, size_t len, size_t *end, const char *tag)
{
	size_t e = *end, tl = strlen(tag);
	while (e < len && isspace((unsigned char)t[e]))
		e++;
	if (len - e >= tl && strncmp(t + e, tag, tl) == 0)
		*end = e + tl;
}

/* Parses one JSON value at t[i], returning it and its end. */
static json_object *json_at(const char *t, size_t len, size_t i, size_t *end, int *budget)
{
	json_tokener *tok;
	json_object *j;

	if (*budget <= 0)
		return NULL;
	(*budget)--;
	tok = json_tokener_new();
	j = json_tokener_parse_ex(tok, t + i, (int)(len - i > LLM_REPLY_MAX ? LLM_REPLY_MAX : len - i));
	if (j && json_tokener_get_error(tok) == json_tokener_success) {
		*end = i + json_tokener_get_parse_end(tok);
	} else {
		json_object_put(j);
		j = NULL;
	}
	json_tokener_free(tok);
	return j;
}

/* The next {"name":..,"arguments":..} tool call written as text. */
static void find_json_call(const char *t, size_t len, size_t pos, struct cand *c, int *budget)
{
	for (size_t i = pos; i < len; i++) {
		size_t q = i + 1, end;
		json_object *o;

		if (t[i] != '{')
			continue;
		while (q < len && isspace((unsigned char)t[q]))
			q++;
		/* cheap filter before a parse: an object that names something */
		if (q >= len || t[q] != '"' || !memmem(t + q, len - q < 400 ? len - q : 400, "\"name\"", 6))
			continue;
		o = json_at(t, len, i, &end, budget);
		if (!o)
			continue;
		if (json_call(o, &c->language, &c->code)) {
			json_object_put(o);
			c->kind = CAND_CODE;
			c->start = i;
			c->end = end;
			if (skip_prefix_back(t, &c->start, "<tool_call>"))
				skip_suffix(t, len, &c->end, "</tool_call>");
			return;
		}
		json_object_put(o);
		i = end - 1;    /* a JSON object that is not a call: skip it whole */
	}
	c->kind = CAND_NONE;
}

/* A Python string literal at t[*i]: '..', "..", '''..''', """..""". */
static char *py_string(const char *t, size_t len, size_t *i)
{
	size_t p = *i, k = 0;
	char q, *o;
	bool triple;

	if (p >= len || (t[p] != '"' && t[p] != '\''))
		return NULL;
	q = t[p];
	triple = p + 2 < len && t[p + 1] == q && t[p + 2] == q;
	p += triple ? 3 : 1;
	o = xmalloc(len - p + 1);
	while (p < len) {
		if (triple ? (p + 2 < len && t[p] == q && t[p + 1] == q && t[p + 2] == q) : t[p] == q) {
			o[k] = '\0';
			*i = p + (triple ? 3 : 1);
			return o;
		}
		if (!triple && t[p] == '\n')
			break;
		if (t[p] == '\\' && p + 1 < len) {
			char e = t[p + 1];
			p += 2;
			switch (e) {
			case 'n': o[k++] = '\n'; break;
			case 't': o[k++] = '\t'; break;
			case 'r': o[k++] = '\r'; break;
			case '\n': break;
			case '\\': case '\'': case '"': o[k++] = e; break;
			default: o[k++] = '\\'; o[k++] = e; break;
			}
			continue;
		}
		o[k++] = t[p++];
	}
	free(o);
	return NULL;
}

static void skip_ws(const char *t, size_t len, size_t *i)
{
	while (*i < len && isspace((unsigned char)t[*i]))
		(*i)++;
}

/* execute({...}), functions.execute({...}), execute(language=.., code=..) */
static void find_call_syntax(const char *t, size_t len, size_t pos, struct cand *c, int *budget)
{
	static const char fn[] = "execute(";
	const char *hit;
	size_t from = pos;

	while (from < len && (hit = memmem(t + from, len - from, fn, sizeof(fn) - 1))) {
		size_t s = (size_t)(hit - t), i = s + sizeof(fn) - 1, end;
		char *lang = NULL, *code = NULL;
		bool ok = false;

		from = s + 1;
		if (s > 0 && (isalnum((unsigned char)t[s - 1]) || t[s - 1] == '_'))
			continue;
		if (s >= 10 && strncmp(t + s - 10, "functions.", 10) == 0)
			s -= 10;
		skip_ws(t, len, &i);
		if (i < len && t[i] == '{') {
			json_object *o = json_at(t, len, i, &end, budget);
			if (o && json_object_is_type(o, json_type_object)) {
				i = end;
				ok = llm_repair_call("execute",
				                     json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
				                     &lang, &code) == 0;
			}
			json_object_put(o);
		} else {
			/* keyword arguments */
			for (int n = 0; n < 8 && i < len && t[i] != ')'; n++) {
				size_t ks = i;
				char *v;
				while (i < len && (isalnum((unsigned char)t[i]) || t[i] == '_'))
					i++;
				size_t kl = i - ks;
				skip_ws(t, len, &i);
				if (kl == 0 || i >= len || (t[i] != '=' && t[i] != ':'))
					break;
				i++;
				skip_ws(t, len, &i);
				if (!(v = py_string(t, len, &i)))
					break;
				if (kl == 8 && strncmp(t + ks, "language", 8) == 0) {
					free(lang);
					lang = v;
				} else if (kl == 4 && strncmp(t + ks, "code", 4) == 0) {
					free(code);
					code = v;
				} else {
					free(v);
				}
				skip_ws(t, len, &i);
				if (i < len && t[i] == ',') {
					i++;
					skip_ws(t, len, &i);
				}
			}
			ok = code != NULL;
			if (ok && !lang)
				lang = xstrdup("python");
		}
		skip_ws(t, len, &i);
		if (ok && i < len && t[i] == ')') {
			c->kind = CAND_CODE;
			c->start = s;
			c->end = i + 1;
			c->language = lang;
			c->code = code;
			return;
		}
		free(lang);
		free(code);
	}
	c->kind = CAND_NONE;
}

static void add_prose(json_object *out, const char *t, size_t a, size_t b)
{
	while (a < b && isspace((unsigned char)t[a]))
		a++;
	while (b > a && isspace((unsigned char)t[b - 1]))
		b--;
	if (a < b) {
		char *s = xstrndup(t + a, b - a);
		json_object_array_add(out, lmc_msg("assistant", "message", NULL, s));
		free(s);
	}
}

json_object *llm_extract_code(const char *text)
{
	json_object *out = json_object_new_array();
	size_t len, pos = 0, prose = 0;
	int budget = MAX_JSON_ATTEMPTS;

	if (!text)
		return out;
	len = strlen(text);
	while (pos < len) {
		struct cand f = { 0 }, j = { 0 }, k = { 0 }, *best = NULL;

		find_fence(text, len, pos, &f);
		/* JSON and call syntax only before the next fence */
		size_t lim = f.kind != CAND_NONE ? f.start : len;
		find_json_call(text, lim, pos, &j, &budget);
		find_call_syntax(text, lim, pos, &k, &budget);
		if (f.kind != CAND_NONE)
			best = &f;
		if (j.kind != CAND_NONE && (!best || j.start < best->start))
			best = &j;
		if (k.kind != CAND_NONE && (!best || k.start < best->start))
			best = &k;
		if (!best) {
			cand_clear(&f);
			cand_clear(&j);
			cand_clear(&k);
			break;
		}
		if (best->kind == CAND_CODE) {
			add_prose(out, text, prose, best->start);
			json_object_array_add(out, lmc_msg("assistant", "code", best->language, best->code));
			prose = best->end;
		}
		pos = best->end > pos ? best->end : pos + 1;
		cand_clear(&f);
		cand_clear(&j);
		cand_clear(&k);
	}
	add_prose(out, text, prose, len);
	return out;
}

json_object *llm_extract_fences(const char *text, bool (*runs)(void *ctx, const char *label),
                                void *ctx)
{
	json_object *out = json_object_new_array();
	size_t len, pos = 0, prose = 0;

	if (!text)
		return out;
	len = strlen(text);
	while (pos < len) {
		struct cand f = { 0 };

		find_fence(text, len, pos, &f);
		if (f.kind == CAND_NONE) {
			cand_clear(&f);
			break;
		}
		if (f.kind == CAND_CODE && f.labelled && runs(ctx, f.language)) {
			add_prose(out, text, prose, f.start);
			json_object_array_add(out, lmc_msg("assistant", "code", f.language, f.code));
			prose = f.end;
		}
		pos = f.end > pos ? f.end : pos + 1;
		cand_clear(&f);
	}
	add_prose(out, text, prose, len);
	return out;
}
