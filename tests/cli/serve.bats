#!/usr/bin/env bats
# `warden serve --stdio`: the JSON-lines API end to end, through the real
# supervisor, broker and jails.  tests/cli/serve_client.py plays each
# scenario and checks every event; it bounds every wait (60 s).
load ../helpers

setup() {
	common_setup
	# profiles for the limits: a short wall time, a small output limit
	CFG="$WS.config"
	mkdir -p "$CFG/warden/profiles"
	printf '%s\n' '{"name":"short","extends":"workspace","limits":{"wall_time":"3s"}}' \
		> "$CFG/warden/profiles/short.json"
	printf '%s\n' '{"name":"flood","extends":"workspace","limits":{"output":"64K"}}' \
		> "$CFG/warden/profiles/flood.json"
	BROKER="$(dirname "$WARDEN")/warden-broker"
}
teardown() {
	rm -rf "$CFG"
	common_teardown
}

# serve_client SCENARIO [warden serve options]
serve_client() {
	run env WARDEN="$WARDEN" XDG_CONFIG_HOME="$CFG" \
		python3 "$WARDEN_TOP/tests/cli/serve_client.py" "$1" --workspace "$WS" "${@:2}"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ok $1"* ]]
}

@test "serve: open gives a session with its languages; close ends it" {
	serve_client open
}

@test "serve: python keeps variables, functions, imports and cwd across blocks" {
	serve_client python_state
}

@test "serve: javascript and shell keep their state across blocks" {
	serve_client js_shell_state
}

@test "serve: output that looks like driver markers is relayed verbatim" {
	serve_client markers
}

@test "serve: interrupt stops a sleeping block; the session keeps its state" {
	serve_client interrupt
}

@test "serve: a timeout loses the state and the next block runs in a fresh jail" {
	serve_client timeout --profile short
}

@test "serve: an output flood is truncated to its head and tail, full size reported" {
	serve_client flood --profile flood
}

@test "serve: two sessions run their blocks at the same time" {
	serve_client parallel
}

@test "serve: runs sent while a block runs wait their turn, in order" {
	serve_client queue
}

@test "serve: malformed lines get error events and the session goes on" {
	serve_client malformed
}

@test "serve: an unknown language is refused with the list of available ones" {
	serve_client unknown_language
}

@test "serve: invalid or split UTF-8 in output becomes valid JSON" {
	serve_client utf8
}

@test "serve: a one-shot session runs every block in a fresh jail" {
	serve_client oneshot
}

@test "serve: the broker is confined (no_new_privs, seccomp)" {
	serve_client confined
}

@test "serve: a profile not allowed and a workspace outside the roots are refused; the session goes on (G16)" {
	mkdir -p "$WS.other"
	serve_client refusals --allow-profile short --allow-workspace "$WS.other"
	rm -rf "$WS.other"
}

@test "serve: when the broker dies, warden exits and no jail or cgroup survives" {
	serve_client broker_death
}

@test "serve: warden-broker started by hand says how it is started" {
	run "$BROKER" serve --stdio 3</dev/null
	[ "$status" -eq 125 ]
	[[ "$output" == *"started by \`warden serve\` or \`warden chat\`"* ]]
	run "$BROKER"
	[ "$status" -eq 125 ]
	run "$BROKER" frobnicate
	[ "$status" -eq 125 ]
	[[ "$output" == *"unknown mode"* ]]
}
