#!/usr/bin/env bats
# Learning in a session (issue 23, parts 3 and 4; docs/learn.md "In a
# session"): what a block was refused becomes a question to the client of
# `warden serve` and to the person behind an MCP client, never to the
# model; the supervisor widens the session only within what warden was
# started with.  Judged from the host: what the block could read, and the
# audit log.  tests/cli/serve_client.py and mcp_client.py play each
# scenario (every wait bounded).
load ../helpers

setup() {
	common_setup
	# a data set outside the workspace, readable by a jail's uid as root
	DATA="$WS.data"
	mkdir -p "$DATA"
	printf 'region,total\nnorth,12\n' > "$DATA/sales.csv"
	# a home with a key in it: dangerous to propose
	H="$WS.home"
	mkdir -p "$H/.ssh"
	printf 'not a key\n' > "$H/.ssh/id_rsa"
	chmod 755 "$DATA" "$H" "$H/.ssh"
	chmod 644 "$DATA/sales.csv" "$H/.ssh/id_rsa"
}

teardown() {
	rm -rf "$DATA" "$H"
	common_teardown
}

# serve_client SCENARIO [warden serve options]
serve_client() {
	run env WARDEN="$WARDEN" LEARN_DATA="$DATA" HOME="$H" \
		python3 "$WARDEN_TOP/tests/cli/serve_client.py" "$1" --workspace "$WS" \
		--audit-log "$AUDIT" "${@:2}"
	echo "$output"
	[ "$status" -eq 0 ]
}

# mcp_client SCENARIO [warden mcp options]
mcp_client() {
	run env WARDEN="$WARDEN" LEARN_DATA="$DATA" AUDIT="$AUDIT" HOME="$H" \
		python3 "$WARDEN_TOP/tests/cli/mcp_client.py" "$1" --learn --workspace "$WS" \
		--audit-log "$AUDIT" "${@:2}"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "learn serve: a refused read becomes a question; yes within the bound widens the session only, and the block then reads the file" {
	serve_client learn_widen --allow-workspace "$DATA"
}

@test "learn serve: yes past what warden was started with is refused, the file stays out of the jail" {
	serve_client learn_bound
}

@test "learn serve: no keeps the refusal; only the last failed block's questions can be answered" {
	serve_client learn_no --allow-workspace "$DATA"
}

@test "learn serve: a dangerous refusal is never a question, even within the bound" {
	serve_client learn_dangerous --allow-workspace "$H"
}

@test "learn serve: revoke drops the widening, the next block is refused again, the audit log has both" {
	serve_client learn_revoke --allow-workspace "$DATA"
}

@test "learn serve: a session that does not learn asks nothing" {
	serve_client learn_off --allow-workspace "$DATA"
}

@test "learn mcp: a legacy client that elicits is asked, its yes widens and the second run answers the call" {
	mcp_client learn_elicit --allow-workspace "$DATA"
}

@test "learn mcp: decline leaves the session as it was and the call gets its first result" {
	mcp_client learn_decline --allow-workspace "$DATA"
}

@test "learn mcp: a client that cannot elicit is never asked; the result says only a person can allow it" {
	mcp_client learn_plain --allow-workspace "$DATA"
}

@test "learn mcp: 2026-07-28 asks with input_required; the retry answers; its requestState works once, for its code only" {
	mcp_client learn_modern --allow-workspace "$DATA"
}

@test "learn mcp: 2026-07-28 without elicitation gets a complete result with the refusals" {
	mcp_client learn_modern_plain --allow-workspace "$DATA"
}
