/* The MCP decoder (broker/api/mcp_parse.c), both eras: what a valid
 * message of each kind decodes to, and one case per kind of malformed
 * message with the JSON-RPC code it gets and whether its id survives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/mcp_parse.h"
#include "warden/proto.h"

#define META "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"," \
             "\"io.modelcontextprotocol/clientCapabilities\":{}}"

/* line -> r (0 or -1), m and e filled; the caller frees m */
static int decode(const char *line, struct mcp_msg *m, struct mcp_error *e)
{
	json_object *root;
	int r = mcp_decode_line(line, strlen(line), &root, e);

	memset(m, 0, sizeof(*m));
	if (r != 0)
		return r;
	assert_true(json_object_is_type(root, json_type_object));
	r = mcp_decode(root, m, e);
	json_object_put(root);
	return r;
}

static void ok(const char *line, struct mcp_msg *m)
{
	struct mcp_error e;

	if (decode(line, m, &e) != 0)
		fail_msg("%s: %d %s", line, e.code, e.msg);
}

static void bad(const char *line, int code, const char *phrase, bool want_id)
{
	struct mcp_error e;
	struct mcp_msg m;
	int r = decode(line, &m, &e);

	if (r != -1)
		fail_msg("%.100s: %d, want -1", line, r);
	if (e.code != code || !strstr(e.msg, phrase))
		fail_msg("%.100s: %d \"%s\", want %d \"%s\"", line, e.code, e.msg, code, phrase);
	if (want_id != (m.id != NULL))
		fail_msg("%.100s: id %s", line, m.id ? "kept" : "lost");
	assert_null(m.call.code);
	assert_null(m.call.language);
	mcp_msg_free(&m);
}

static void test_legacy(void **state)
{
	struct mcp_msg m;

	ok("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
	   "\"2025-03-26\",\"capabilities\":{},\"clientInfo\":{\"name\":\"c\",\"version\":\"1\"}}}", &m);
	assert_int_equal(m.kind, MCP_K_REQUEST);
	assert_int_equal(m.method, MCP_M_INITIALIZE);
	assert_false(m.modern);
	assert_string_equal(m.version, "2025-03-26");
	mcp_msg_free(&m);
	ok("{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"tools/call\",\"params\":{\"name\":\"run_code\","
	   "\"arguments\":{\"language\":\"py\",\"code\":\"print(1)\",\"session\":\"h\",\"timeout\":0.25}}}", &m);
	assert_int_equal(m.call.tool, MCP_T_RUN_CODE);
	assert_string_equal(m.call.language, "py");
	assert_string_equal(m.call.code, "print(1)");
	assert_int_equal(m.call.code_len, 8);
	assert_string_equal(m.call.session, "h");
	assert_int_equal(m.call.timeout_ms, 250);
	assert_string_equal(json_object_get_string(m.id), "x");
	mcp_msg_free(&m);
	ok("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":7}}", &m);
	assert_int_equal(m.kind, MCP_K_NOTIFICATION);
	assert_int_equal(m.method, MCP_M_CANCELLED);
	assert_int_equal(json_object_get_int(m.cancel_id), 7);
	mcp_msg_free(&m);
	/* unknown notifications and responses are decoded, to be ignored */
	ok("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\"}", &m);
	assert_int_equal(m.method, MCP_M_UNKNOWN);
	mcp_msg_free(&m);
	ok("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}", &m);
	assert_int_equal(m.kind, MCP_K_RESPONSE);
	mcp_msg_free(&m);
}

static void test_modern(void **state)
{
	struct mcp_msg m;

	ok("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{" META "}}", &m);
	assert_true(m.modern);
	assert_int_equal(m.method, MCP_M_DISCOVER);
	assert_string_equal(m.version, MCP_MODERN_VERSION);
	mcp_msg_free(&m);
	ok("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{" META ",\"name\":"
	   "\"open_session\",\"arguments\":{\"profile\":\"strict\",\"workspace\":\"/w\"}}}", &m);
	assert_int_equal(m.call.tool, MCP_T_OPEN_SESSION);
	assert_string_equal(m.call.profile, "strict");
	assert_string_equal(m.call.workspace, "/w");
	mcp_msg_free(&m);
	bad("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\",\"params\":{\"_meta\":{"
	    "\"io.modelcontextprotocol/protocolVersion\":\"1900-01-01\","
	    "\"io.modelcontextprotocol/clientCapabilities\":{}}}}", MCP_E_VERSION, "1900-01-01", true);
	bad("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\",\"params\":{\"_meta\":{"
	    "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}", MCP_E_PARAMS,
	    "clientCapabilities", true);
	bad("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"initialize\",\"params\":{" META
	    ",\"protocolVersion\":\"2025-11-25\"}}", MCP_E_METHOD, "no handshake", true);
	bad("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"server/discover\"}", MCP_E_PARAMS,
	    "protocolVersion", true);
}

static void test_envelope(void **state)
{
	struct mcp_error e;
	struct mcp_msg m;

	assert_int_equal(decode("  \t", &m, &e), 1);
	assert_int_equal(decode("nope", &m, &e), -1);
	assert_int_equal(e.code, MCP_E_PARSE);
	assert_int_equal(decode("[]", &m, &e), -1);
	assert_int_equal(e.code, MCP_E_INVALID_REQUEST);
	assert_int_equal(decode("\"s\"", &m, &e), -1);
	assert_int_equal(e.code, MCP_E_INVALID_REQUEST);
	bad("{\"id\":1,\"method\":\"ping\"}", MCP_E_INVALID_REQUEST, "jsonrpc", true);
	bad("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", MCP_E_INVALID_REQUEST, "id", false);
	bad("{\"jsonrpc\":\"2.0\",\"id\":2.5,\"method\":\"ping\"}", MCP_E_INVALID_REQUEST, "fraction", false);
	bad("{\"jsonrpc\":\"2.0\",\"id\":9007199254740992,\"method\":\"ping\"}", MCP_E_INVALID_REQUEST,
	    "2^53", false);
	bad("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":1}", MCP_E_INVALID_REQUEST,
	    "unknown member \"x\"", true);
	bad("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":[]}", MCP_E_INVALID_REQUEST,
	    "params", true);
	bad("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}", MCP_E_INVALID_REQUEST, "method", true);
	bad("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"nope\"}", MCP_E_METHOD, "nope", true);
	bad("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"notifications/cancelled\"}", MCP_E_METHOD,
	    "notifications/cancelled", true);
	/* a malformed notification: an error that is never answered */
	bad("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{}}", MCP_E_PARAMS,
	    "requestId", false);
}

static void test_tool_arguments(void **state)
{
	char big[WPROTO_CODE_MAX + 200];
	int n;

	bad("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"rm\"}}",
	    MCP_E_PARAMS, "Unknown tool: rm", true);
	bad("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"run_code\"}}",
	    MCP_E_PARAMS, "language", true);
	bad("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"run_code\","
	    "\"arguments\":{\"language\":\"py\",\"code\":\"a\\u0000b\"}}}", MCP_E_PARAMS, "NUL", true);
	bad("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"run_code\","
	    "\"arguments\":{\"language\":\"\",\"code\":\"\"}}}", MCP_E_PARAMS, "empty", true);
	bad("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"run_code\","
	    "\"arguments\":{\"language\":\"py\",\"code\":\"\",\"session\":\"\"}}}", MCP_E_PARAMS,
	    "empty", true);
	bad("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"run_code\","
	    "\"arguments\":{\"language\":\"py\",\"code\":\"\",\"timeout\":86401}}}", MCP_E_PARAMS,
	    "timeout", true);
	bad("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"open_session\","
	    "\"arguments\":{\"workspace\":\"rel\"}}}", MCP_E_PARAMS, "absolute", true);
	bad("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"close_session\","
	    "\"arguments\":{}}}", MCP_E_PARAMS, "session", true);
	n = snprintf(big, sizeof(big), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
	             "{\"name\":\"run_code\",\"arguments\":{\"language\":\"py\",\"code\":\"");
	memset(big + n, 'x', WPROTO_CODE_MAX + 1);
	strcpy(big + n + WPROTO_CODE_MAX + 1, "\"}}}");
	bad(big, MCP_E_PARAMS, "limit", true);
}

static void test_batch(void **state)
{
	struct mcp_error e;
	json_object *root;
	char line[(MCP_BATCH_MAX + 1) * 64 + 16];
	size_t n = 0;

	n += (size_t)snprintf(line, sizeof(line), "[");
	for (int i = 0; i <= MCP_BATCH_MAX; i++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s{\"jsonrpc\":\"2.0\",\"id\":%d,"
		                      "\"method\":\"ping\"}", i ? "," : "", i);
	snprintf(line + n, sizeof(line) - n, "]");
	assert_int_equal(mcp_decode_line(line, strlen(line), &root, &e), -1);
	assert_int_equal(e.code, MCP_E_INVALID_REQUEST);
	assert_null(root);
	snprintf(line, sizeof(line), "[{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}]");
	assert_int_equal(mcp_decode_line(line, strlen(line), &root, &e), 0);
	assert_true(json_object_is_type(root, json_type_array));
	json_object_put(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_legacy),
		cmocka_unit_test(test_modern),
		cmocka_unit_test(test_envelope),
		cmocka_unit_test(test_tool_arguments),
		cmocka_unit_test(test_batch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
