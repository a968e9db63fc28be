#!/usr/bin/env bats
# `warden mcp` driven by a real third-party MCP client: the npm package
# @modelcontextprotocol/inspector in its CLI mode (--cli --method ...), over
# stdio, in both protocol eras (--protocol-era legacy|modern), and over
# serve --listen's /mcp (Streamable HTTP, the modern era) with its token.
#
# setup_file installs the pinned version with npm into this run's temporary
# directory (npm's own cache, ~/.npm, makes later runs fast).  Without node,
# npm or the registry the tests skip, and fail under WARDEN_MUST_WORK=1 (CI):
# the registry is one of the machine's package sources.
load ../helpers

INSPECTOR_VERSION=2.12.0

setup_file() {
	export INSPECTOR_DIR="$BATS_FILE_TMPDIR/inspector"
	export INSPECTOR_ERR=""
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
		INSPECTOR_ERR="node and npm are needed (apt-get install nodejs npm)"
		return 0
	fi
	# Node trusts its own CA list, not the system's: tests/run.sh's
	# unprivileged stage runs with a clean environment, and a machine whose
	# registry traffic passes a proxy with its own CA (in the system's
	# bundle) would fail with SELF_SIGNED_CERT_IN_CHAIN
	if [ -z "${NODE_EXTRA_CA_CERTS:-}" ] && [ -r /etc/ssl/certs/ca-certificates.crt ]; then
		export NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
	fi
	# Debian 12's Node is 18, where CustomEvent and crypto are globals only
	# behind flags (global from Node 19 on); the Inspector uses both
	if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 19 ]; then
		export NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--experimental-global-customevent --experimental-global-webcrypto"
	fi
	if ! npm install --prefix "$INSPECTOR_DIR" --no-fund --no-audit --loglevel=error \
		"@modelcontextprotocol/inspector@$INSPECTOR_VERSION" >"$BATS_FILE_TMPDIR/npm.log" 2>&1; then
		INSPECTOR_ERR="npm install @modelcontextprotocol/inspector@$INSPECTOR_VERSION failed: $(tail -n 5 "$BATS_FILE_TMPDIR/npm.log")"
	fi
}

setup() {
	common_setup
	if [ -n "$INSPECTOR_ERR" ]; then
		skip_unless_works "$INSPECTOR_ERR"
	fi
	INSPECTOR="$INSPECTOR_DIR/node_modules/.bin/mcp-inspector"
}
teardown() {
	common_teardown
}

# inspector ERA ARGS...: the inspector's CLI against `warden mcp`, JSON out
inspector() {
	run "$INSPECTOR" --cli --format json --protocol-era "$1" "$WARDEN" mcp --workspace "$WS" "${@:2}"
	echo "$output"
}

@test "mcp inspector: tools/list in the legacy era lists run_code, open_session, close_session" {
	inspector legacy --method tools/list
	[ "$status" -eq 0 ]
	run python3 -c 'import json,sys; print(" ".join(t["name"] for t in json.loads(sys.argv[1])["result"]["tools"]))' "$output"
	[ "$output" = "run_code open_session close_session" ]
}

@test "mcp inspector: tools/list in the modern era, with the server's identity in _meta" {
	inspector modern --method tools/list
	[ "$status" -eq 0 ]
	[[ "$output" == *'"name":"run_code"'* ]]
}

@test "mcp inspector: tools/call run_code in the legacy era runs the code in a jail" {
	inspector legacy --method tools/call --tool-name run_code \
		--tool-args-json '{"language":"python","code":"import socket\nprint(6 * 7, socket.gethostname())"}'
	[ "$status" -eq 0 ]
	[[ "$output" == *'"text":"42 warden\n"'* ]]
	[[ "$output" == *'"isError":false'* ]]
}

@test "mcp inspector: tools/call run_code in the modern era; a failing block exits 5 (isError)" {
	inspector modern --method tools/call --tool-name run_code \
		--tool-args-json '{"language":"shell","code":"echo jailed; exit 4"}'
	[ "$status" -eq 5 ]
	[[ "$output" == *'jailed'* ]]
	[[ "$output" == *'\"exit_code\":4'* ]]
	[[ "$output" == *'"io.modelcontextprotocol/serverInfo"'* ]]
}

@test "mcp inspector: over serve --listen's /mcp (HTTP) with the token, run_code runs in a jail; without it, refused" {
	local tok="$WS.token" err="$WS.serve.err" port=""
	printf '%s\n' "inspector-token-$$-0123456789abcdef" > "$tok"
	chmod 600 "$tok"
	"$WARDEN" serve --listen 127.0.0.1:0 --token-file "$tok" --workspace "$WS" 2> "$err" &
	local spid=$!
	for _ in $(seq 600); do
		port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\):.*/\1/p' "$err")
		[ -n "$port" ] && break
		sleep 0.05
	done
	run "$INSPECTOR" --cli --format json --protocol-era modern --transport http \
		--server-url "http://127.0.0.1:$port/mcp" --header "Authorization: Bearer $(cat "$tok")" \
		--method tools/call --tool-name run_code \
		--tool-args-json '{"language":"python","code":"import socket\nprint(6 * 7, socket.gethostname())"}'
	echo "$output"
	local ok_status=$status ok_output=$output
	run "$INSPECTOR" --cli --format json --protocol-era modern --transport http \
		--server-url "http://127.0.0.1:$port/mcp" --method tools/list
	echo "$output"
	kill "$spid"
	wait "$spid" || true
	rm -f "$tok" "$err"
	[ -n "$port" ]
	[ "$ok_status" -eq 0 ]
	[[ "$ok_output" == *'"text":"42 warden\n"'* ]]
	[[ "$ok_output" == *'"isError":false'* ]]
	[[ "$output" == *'"error"'* ]]
	[[ "$output" != *'"tools"'* ]]
}
