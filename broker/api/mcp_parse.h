/* The MCP message decoder (docs/mcp.md): one JSON-RPC 2.0 message of either
 * protocol era, validated, into struct mcp_msg.  Pure: no I/O, no
 * supervisor, so that the fuzzer (tests/fuzz/fuzz_mcp.c) and the unit
 * tests call it directly.  Everything it reads is hostile.
 *
 * Eras (the spec's own words, docs/specification/2026-07-28/basic/versioning):
 *   modern  a request whose params._meta carries
 *           "io.modelcontextprotocol/protocolVersion" (it must be
 *           MCP_MODERN_VERSION, else -32022 with data.supported) and
 *           "io.modelcontextprotocol/clientCapabilities" (an object; missing:
 *           -32602).  Methods: server/discover, tools/list, tools/call.
 *   legacy  any other request: initialize (params.protocolVersion,
 *           capabilities, clientInfo), ping, tools/list, tools/call, served
 *           once the connection was initialized (mcp.c decides that).
 *   both    notifications/initialized, notifications/cancelled (requestId,
 *           reason), and responses from the client (to this server's
 *           elicitation/create requests, legacy; mcp_elicit.c).
 * Elicitation (issue 23): a client that declared the capability
 * (initialize's capabilities.elicitation, or the modern _meta's
 * clientCapabilities.elicitation) with form mode (an empty object, or one
 * with "form") may be asked; tools/call of the modern era may carry
 * requestState and inputResponses (its retry after input_required).
 * Ids are strings (at most MCP_ID_MAX bytes, no NUL) or integers within
 * +-(2^53-1); never null, never fractional. */
#ifndef BROKER_MCP_PARSE_H
#define BROKER_MCP_PARSE_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MCP_LINE_MAX (2u * 1024 * 1024)  /* one message line, newline excluded */
#define MCP_JSON_DEPTH 32                 /* nesting of a message (capabilities nest) */
#define MCP_ID_MAX 256                    /* a string id, in bytes */
#define MCP_BATCH_MAX 64                  /* messages in one 2025-03-26 batch */
#define MCP_HANDLE_MAX 64                 /* a session handle, in bytes */
#define MCP_TIMEOUT_MAX 86400             /* run_code's timeout, seconds */
#define MCP_VERSION_MAX 32                /* a protocol version string */

#define MCP_MODERN_VERSION "2026-07-28"
/* the legacy revisions served after initialize, newest first */
#define MCP_LEGACY_VERSIONS "2025-11-25", "2025-06-18", "2025-03-26"
#define MCP_LEGACY_LATEST "2025-11-25"
#define MCP_BATCH_VERSION "2025-03-26"    /* the only revision with batches */

/* JSON-RPC's codes and MCP's own (schema.ts of 2026-07-28) */
#define MCP_E_PARSE (-32700)
#define MCP_E_INVALID_REQUEST (-32600)
#define MCP_E_METHOD (-32601)
#define MCP_E_PARAMS (-32602)
#define MCP_E_INTERNAL (-32603)
#define MCP_E_VERSION (-32022)            /* UnsupportedProtocolVersionError */

enum mcp_kind {
	MCP_K_NONE = 0,
	MCP_K_REQUEST,        /* has an id: gets exactly one answer (unless cancelled) */
	MCP_K_NOTIFICATION,   /* no id: never answered */
	MCP_K_RESPONSE,       /* result or error from the client: id, and result */
};

enum mcp_method {
	MCP_M_UNKNOWN = 0,
	MCP_M_INITIALIZE,     /* legacy */
	MCP_M_PING,           /* legacy */
	MCP_M_DISCOVER,       /* modern: server/discover */
	MCP_M_TOOLS_LIST,
	MCP_M_TOOLS_CALL,
	MCP_M_INITIALIZED,    /* notifications/initialized */
	MCP_M_CANCELLED,      /* notifications/cancelled */
};

/* The tools, in the fixed order tools/list gives them. */
enum mcp_tool {
	MCP_T_NONE = 0,
	MCP_T_RUN_CODE,
	MCP_T_OPEN_SESSION,
	MCP_T_CLOSE_SESSION,
};

/* tools/call's arguments, each checked against its tool's inputSchema. */
struct mcp_call {
	enum mcp_tool tool;
	char *language;       /* run_code: at most WPROTO_NAME_MAX bytes */
	char *code;           /* run_code: code_len bytes (<= WPROTO_CODE_MAX), NUL-terminated */
	size_t code_len;
	char *session;        /* run_code (optional), close_session: a handle */
	uint32_t timeout_ms;  /* run_code: 0 = the policy's wall time only */
	char *profile;        /* open_session (optional) */
	char *workspace;      /* open_session (optional), absolute */
	/* the modern retry after an input_required result */
	char *request_state;  /* requestState: at most MCP_STATE_MAX bytes, or NULL */
	json_object *input_responses;   /* inputResponses (an object, owned), or NULL */
};
#define MCP_STATE_MAX 256

struct mcp_msg {
	enum mcp_kind kind;
	json_object *id;      /* requests: the id (owned reference) */
	enum mcp_method method;
	bool modern;          /* a request with the modern _meta */
	char version[MCP_VERSION_MAX + 1];  /* modern: _meta's version; initialize: the
	                                       version the client asked for */
	struct mcp_call call; /* tools/call */
	json_object *cancel_id;  /* notifications/cancelled: requestId (owned) */
	bool elicit;          /* the client can be asked (form elicitation): a modern
	                         request's capabilities; initialize's */
	json_object *result;  /* a response: its "result" (an object, owned), or NULL */
};

struct mcp_error {
	int code;             /* MCP_E_*, 0 when none */
	char msg[512];        /* one line: what was wrong and how to fix it */
	char requested[MCP_VERSION_MAX + 1];  /* -32022: the version asked for */
};

/* One line (without its newline) into a JSON value: *root is an object or,
 * for a batch, an array of 1..MCP_BATCH_MAX values.  0 ok, 1 a blank line
 * (nothing to do), -1 e filled (-32700 not JSON, -32600 not a message). */
int mcp_decode_line(const char *line, size_t len, json_object **root, struct mcp_error *e);

/* One message.  0: m filled.  -1: e filled, and m->id set when the message
 * had a usable id (the error is answered to it; an error in a
 * notification is never answered).  m is cleared on entry; free it with
 * mcp_msg_free in every case. */
int mcp_decode(json_object *msg, struct mcp_msg *m, struct mcp_error *e);
void mcp_msg_free(struct mcp_msg *m);

const char *mcp_method_name(enum mcp_method m);
const char *mcp_tool_name(enum mcp_tool t);
/* 1 when v is a legacy revision this server speaks */
bool mcp_legacy_version(const char *v);

#endif
