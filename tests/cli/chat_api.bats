#!/usr/bin/env bats
# The serve protocol's "chat" op: warden chat's turn loop over the API,
# with the fake model server (tests/fakes/llm_server.py), the real
# supervisor, broker and jails, over stdio and over the listener.
# tests/cli/chat_api_client.py plays each scenario with the Python client.
load ../helpers

setup() {
	common_setup
	T=$(mktemp -d /tmp/warden-chatapi.XXXXXX)
	chmod 755 "$T"
	unset OPENAI_API_KEY ANTHROPIC_API_KEY
}

teardown() {
	rm -rf "$T"
	common_teardown
}

# chat_api SCENARIO TRANSPORT
chat_api() {
	run env WARDEN="$WARDEN" WS="$WS" T="$T" timeout -k 5 600 \
		python3 "$WARDEN_TOP/tests/cli/chat_api_client.py" "$1" "$2"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ok $1 $2"* ]]
}

@test "chat api: a turn with approval runs the block after yes, feeds its output back (stdio)" {
	chat_api approve stdio
}

@test "chat api: a turn with approval runs the block after yes, feeds its output back (listener)" {
	chat_api approve listen
}

@test "chat api: an approval with edited code runs the edit; the audit says edited" {
	chat_api edit listen
}

@test "chat api: a declined block does not run; the model hears of it (stdio)" {
	chat_api decline stdio
}

@test "chat api: a declined block does not run; the model hears of it (listener)" {
	chat_api decline listen
}

@test "chat api: -y at start runs blocks without a confirmation; the audit says auto" {
	chat_api autorun listen
}

@test "chat api: interrupt ends a running block's turn and a stalled reply's (stdio)" {
	chat_api interrupt stdio
}

@test "chat api: interrupt ends a running block's turn and a stalled reply's (listener)" {
	chat_api interrupt listen
}

@test "chat api: the API key never crosses the API; no request names a model, endpoint or key (G215)" {
	chat_api key listen
}

@test "chat api: without --model, chat is refused with the fix; run still works" {
	chat_api nomodel stdio
}
