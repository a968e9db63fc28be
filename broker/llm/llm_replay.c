/* The replay provider: "replay:FILE" plays a recorded conversation (an LMC
 * JSON array, the format of saved conversations) with no network.
 *
 * On each call it counts the assistant turns already in the history (an
 * assistant turn is a maximal run of assistant messages) and plays the next
 * assistant turn of the recording: its "message" texts are streamed through
 * ev->text in small chunks, replay_delay_ms apart, and its "code" messages
 * become code.  User and computer messages of the recording are only
 * documentation: the real ones come from the person and the jail.  Past
 * the end of the recording the reply is "(the recording has ended)".
 *
 * The file is read when the model is parsed (llm_parse_model), before the
 * broker confines itself and can no longer open it. */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "core/broker.h"
#include "llm_provider.h"
#include "core/lmc.h"
#include "warden/util.h"

#define REPLAY_FILE_MAX (16u << 20)
#define CHUNK_MAX 16

static char *cached_path;
static json_object *cached;

static int load(const char *path, json_object **out, struct werr *err)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	json_tokener *tok;
	json_object *j;
	size_t end;

	*out = NULL;
	if (bfile_read(path, REPLAY_FILE_MAX, &text, &len, err) < 0)
		return werr_wrap(err, "replay");
	if (len > REPLAY_FILE_MAX)
		return werr_set(err, 0, "replay: %s is larger than %u MiB", path, REPLAY_FILE_MAX >> 20);
	tok = json_tokener_new();
	j = json_tokener_parse_ex(tok, text, (int)len);
	end = json_tokener_get_parse_end(tok);
	if (j && json_tokener_get_error(tok) != json_tokener_success) {
		json_object_put(j);
		j = NULL;
	}
	if (!j) {
		werr_set(err, 0, "replay: %s is not valid JSON (%s at byte %zu)", path,
		         json_tokener_error_desc(json_tokener_get_error(tok)), end);
		json_tokener_free(tok);
		return -1;
	}
	json_tokener_free(tok);
	while (end < len && strchr(" \t\r\n", text[end]))
		end++;
	if (end != len) {
		json_object_put(j);
		return werr_set(err, 0, "replay: %s has data after the JSON array (byte %zu)", path, end);
	}
	if (!json_object_is_type(j, json_type_array)) {
		json_object_put(j);
		return werr_set(err, 0, "replay: %s is not a JSON array of messages "
		                "(a saved conversation: [{\"role\":..,\"type\":..,\"content\":..}, ...])", path);
	}
	for (size_t i = 0; i < json_object_array_length(j); i++) {
		json_object *m = json_object_array_get_idx(j, i);
		const char *role = lmc_str(m, "role"), *type = lmc_str(m, "type");
		if (!m || !json_object_is_type(m, json_type_object) || !*role) {
			json_object_put(j);
			return werr_set(err, 0, "replay: %s: message %zu has no \"role\"", path, i);
		}
		if (strcmp(role, "assistant") == 0 && strcmp(type, "code") == 0 &&
		    !*lmc_str(m, "format")) {
			json_object_put(j);
			return werr_set(err, 0, "replay: %s: code message %zu has no \"format\" (its language)",
			                path, i);
		}
	}
	*out = j;
	return 0;
}

int replay_preload(const char *path, struct werr *err)
{
	json_object *j;

	if (cached_path && strcmp(cached_path, path) == 0)
		return 0;
	if (load(path, &j, err) < 0)
		return -1;
	free(cached_path);
	json_object_put(cached);
	cached_path = xstrdup(path);
	cached = j;
	return 0;
}

static bool is_assistant(json_object *m)
{
	return strcmp(lmc_str(m, "role"), "assistant") == 0;
}

/* The index of the first message of assistant turn k (0-based), or -1. */
static long nth_turn(json_object *a, size_t k)
{
	size_t seen = 0;
	bool in = false;

	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		bool as = is_assistant(json_object_array_get_idx(a, i));
		if (as && !in) {
			if (seen == k)
				return (long)i;
			seen++;
		}
		in = as;
	}
	return -1;
}

static size_t count_turns(json_object *a)
{
	size_t n = 0;
	bool in = false;

	for (size_t i = 0; a && json_object_is_type(a, json_type_array) &&
	                   i < json_object_array_length(a); i++) {
		bool as = is_assistant(json_object_array_get_idx(a, i));
		if (as && !in)
			n++;
		in = as;
	}
	return n;
}

/* false when cancelled */
static bool pause_ms(long ms, volatile sig_atomic_t *cancel)
{
	while (ms > 0) {
		long step = ms > 20 ? 20 : ms;
		struct timespec ts = { .tv_sec = 0, .tv_nsec = step * 1000000L };
		if (cancel && *cancel)
			return false;
		nanosleep(&ts, NULL);
		ms -= step;
	}
	return !(cancel && *cancel);
}

/* The next chunk of s: up to and including a space, at most CHUNK_MAX
 * bytes, never inside a UTF-8 sequence. */
static size_t chunk_len(const char *s, size_t left)
{
	size_t n = 0;

	while (n < left && n < CHUNK_MAX) {
		n++;
		if (s[n - 1] == ' ' || s[n - 1] == '\n')
			break;
	}
	while (n < left && ((unsigned char)s[n] & 0xc0) == 0x80)
		n++;
	return n;
}

static int replay_complete(const struct llm_config *cfg, json_object *history,
                           struct llm_stream *s, volatile sig_atomic_t *cancel, struct werr *err)
{
	struct llm_turn *t = &s->turn;
	json_object *rec = NULL;
	long first;
	int r = -1;

	if (cached_path && strcmp(cached_path, cfg->model) == 0) {
		rec = json_object_get(cached);
	} else if (load(cfg->model, &rec, err) < 0) {
		return -1;
	}
	first = nth_turn(rec, count_turns(history));
	if (first < 0) {
		static const char end[] = "(the recording has ended)";
		r = turn_text(t, end, sizeof(end) - 1, err);
		goto out;
	}
	for (size_t i = (size_t)first; i < json_object_array_length(rec); i++) {
		json_object *m = json_object_array_get_idx(rec, i);
		const char *type = lmc_str(m, "type"), *content = lmc_str(m, "content");

		if (!is_assistant(m))
			break;
		if (cancel && *cancel) {
			werr_set(err, 0, "interrupted");
			goto out;
		}
		if (strcmp(type, "code") == 0) {
			const char *lang = lmc_str(m, "format");
			if (t->ev && t->ev->code_start)
				t->ev->code_start(t->ctx, lang);
			if (turn_code(t, lang, content, err) < 0)
				goto out;
			if (!pause_ms(cfg->replay_delay_ms, cancel)) {
				werr_set(err, 0, "interrupted");
				goto out;
			}
			continue;
		}
		if (strcmp(type, "message") != 0)
			continue;
		for (size_t off = 0, len = strlen(content); off < len;) {
			size_t n = chunk_len(content + off, len - off);
			if (turn_text(t, content + off, n, err) < 0)
				goto out;
			off += n;
			if (!pause_ms(cfg->replay_delay_ms, cancel)) {
				werr_set(err, 0, "interrupted");
				goto out;
			}
		}
		/* the next message of the turn is a separate message */
		if (i + 1 < json_object_array_length(rec) &&
		    strcmp(lmc_str(json_object_array_get_idx(rec, i + 1), "type"), "message") == 0 &&
		    is_assistant(json_object_array_get_idx(rec, i + 1)))
			turn_break(t);
	}
	r = 0;
out:
	json_object_put(rec);
	return r;
}

const struct llm_provider llm_provider_replay = {
	.name = "replay", .prefix = "replay:", .needs = "a file: replay:FILE (a saved conversation)",
	.preload = replay_preload, .complete = replay_complete,
};
