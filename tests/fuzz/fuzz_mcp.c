/* libFuzzer target: the MCP message decoder of warden mcp
 * (broker/api/mcp_parse.c), both eras, which reads hostile lines from an
 * MCP client: the line (JSON, batches), then every message in it.
 *
 * Checks beyond "does not crash": a decoded message has the kind and the
 * fields its method needs, within their bounds and without NUL bytes; a
 * request keeps a string or integer id, a modern one the modern version;
 * an error has a JSON-RPC or MCP code and a one-line message, -32022 names
 * the version asked for; a failure leaves nothing but the id. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/mcp_parse.h"
#include "warden/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_str(const char *s, size_t max)
{
	if (s && strlen(s) > max)
		abort();
}

static void check_error(const struct mcp_error *e)
{
	switch (e->code) {
	case MCP_E_PARSE:
	case MCP_E_INVALID_REQUEST:
	case MCP_E_METHOD:
	case MCP_E_PARAMS:
	case MCP_E_VERSION:
		break;
	default:
		abort();
	}
	if (!e->msg[0] || memchr(e->msg, '\n', strlen(e->msg)))
		abort();
	if (e->code == MCP_E_VERSION && !strcmp(e->requested, MCP_MODERN_VERSION))
		abort();
}

static void check_msg(json_object *o)
{
	struct mcp_error e;
	struct mcp_msg m;
	int r = mcp_decode(o, &m, &e);

	if (m.id && !json_object_is_type(m.id, json_type_string) &&
	    !json_object_is_type(m.id, json_type_int))
		abort();
	if (r < 0) {
		check_error(&e);
		if (m.call.code || m.call.language || m.call.session || m.cancel_id)
			abort();
		mcp_msg_free(&m);
		return;
	}
	switch (m.kind) {
	case MCP_K_REQUEST:
		if (!m.id || m.method == MCP_M_UNKNOWN || m.method == MCP_M_CANCELLED ||
		    m.method == MCP_M_INITIALIZED)
			abort();
		if (m.modern && strcmp(m.version, MCP_MODERN_VERSION))
			abort();
		if (m.modern && (m.method == MCP_M_INITIALIZE || m.method == MCP_M_PING))
			abort();
		if (!m.modern && m.method == MCP_M_DISCOVER)
			abort();
		break;
	case MCP_K_NOTIFICATION:
		if (m.id || (m.method == MCP_M_CANCELLED && !m.cancel_id))
			abort();
		break;
	case MCP_K_RESPONSE:
		break;
	case MCP_K_NONE:
		abort();
	}
	if (m.method == MCP_M_TOOLS_CALL) {
		check_str(m.call.language, WPROTO_NAME_MAX);
		check_str(m.call.session, MCP_HANDLE_MAX);
		check_str(m.call.profile, WPROTO_NAME_MAX);
		check_str(m.call.workspace, WPROTO_PATH_MAX);
		if (m.call.workspace && m.call.workspace[0] != '/')
			abort();
		if (m.call.session && !m.call.session[0])
			abort();
		switch (m.call.tool) {
		case MCP_T_RUN_CODE:
			if (!m.call.code || !m.call.language || !m.call.language[0] ||
			    strlen(m.call.code) != m.call.code_len || m.call.code_len > WPROTO_CODE_MAX ||
			    m.call.timeout_ms > MCP_TIMEOUT_MAX * 1000u)
				abort();
			break;
		case MCP_T_CLOSE_SESSION:
			if (!m.call.session)
				abort();
			break;
		case MCP_T_OPEN_SESSION:
			break;
		case MCP_T_NONE:
			abort();
		}
	}
	mcp_msg_free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mcp_error e;
	json_object *root;
	int r = mcp_decode_line((const char *)data, size, &root, &e);

	if (r < 0) {
		check_error(&e);
		if (root)
			abort();
		return 0;
	}
	if (r == 1)
		return 0;
	if (json_object_is_type(root, json_type_array)) {
		size_t n = json_object_array_length(root);
		if (n == 0 || n > MCP_BATCH_MAX)
			abort();
		for (size_t i = 0; i < n; i++)
			check_msg(json_object_array_get_idx(root, i));
	} else if (json_object_is_type(root, json_type_object)) {
		check_msg(root);
	} else {
		abort();
	}
	json_object_put(root);
	return 0;
}
