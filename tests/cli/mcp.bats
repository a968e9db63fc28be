#!/usr/bin/env bats
# `warden mcp`: the MCP server on stdio, both protocol eras, end to end
# through the real supervisor, broker and jails.  tests/cli/mcp_client.py
# plays each scenario as an MCP client and checks every message (each line
# of stdout must be JSON-RPC); every wait is bounded (60 s).
load ../helpers

setup() {
	common_setup
}
teardown() {
	common_teardown
}

# mcp_client SCENARIO [warden mcp options]
mcp_client() {
	run env WARDEN="$WARDEN" python3 "$WARDEN_TOP/tests/cli/mcp_client.py" "$1" \
		--workspace "$WS" "${@:2}"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ok $1"* ]]
}

@test "mcp: legacy era: initialize negotiates, tools/list, state in the default session and by handle, error results" {
	mcp_client legacy
}

@test "mcp: modern era: server/discover, _meta on every result, tools/list's ttlMs and fixed order, state by handle" {
	mcp_client modern
}

@test "mcp: an image the block shows comes back as MCP image content (both eras)" {
	mcp_client image
}

@test "mcp: notifications/cancelled interrupts the running block, is never answered, and the session keeps its state; a call's timeout too" {
	mcp_client cancel
}

@test "mcp: malformed input gets -32700/-32600/-32601/-32602 and the server goes on; 2025-03-26 batches" {
	mcp_client malformed
}

@test "mcp: an unsupported version gets -32022 with data.supported; missing _meta fields -32602" {
	mcp_client version
}

@test "mcp: stdin's EOF ends warden with status 0 and every jail, a running block's included" {
	mcp_client eof
}

@test "mcp: warden mcp --help names its options; --stdio and stray arguments are refused" {
	run "$WARDEN" mcp --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"--allow-workspace"* ]]
	run "$WARDEN" mcp --stdio
	[ "$status" -eq 2 ]
	[[ "$output" == *"always speaks on stdin and stdout"* ]]
	run "$WARDEN" mcp --bogus
	[ "$status" -eq 2 ]
	[[ "$output" == *"mcp: unknown option --bogus"* ]]
}

@test "mcp: the broker runs confined in mcp mode (no_new_privs, seccomp) and stdout is only JSON-RPC" {
	local fifo="$BATS_TEST_TMPDIR/in" out="$BATS_TEST_TMPDIR/out" broker="" i pid w
	mkfifo "$fifo"
	"$WARDEN" mcp --workspace "$WS" <"$fifo" >"$out" 2>/dev/null &
	pid=$!
	exec {w}>"$fifo"
	for i in $(seq 1 200); do
		broker=$(pgrep -f '^warden-broker mcp' -P "$pid" || true)
		[ -n "$broker" ] && break
		sleep 0.05
	done
	[ -n "$broker" ]
	# answered: the broker confines itself before it reads any input
	echo '{"jsonrpc":"2.0","id":1,"method":"ping"}' >&"$w"
	for i in $(seq 1 600); do
		[ -s "$out" ] && break
		sleep 0.05
	done
	grep -q '^NoNewPrivs:[[:space:]]*1' "/proc/$broker/status"
	grep -q '^Seccomp:[[:space:]]*2' "/proc/$broker/status"
	exec {w}>&-
	wait "$pid"
	out=$(cat "$out")
	[ "$out" = '{"jsonrpc":"2.0","id":1,"result":{}}' ]
}
