#!/usr/bin/env bats
# `warden audit`, `warden doctor`, `warden version` and usage errors.
load ../helpers

setup() { common_setup; }
teardown() { common_teardown; }

@test "audit: reads back a run as a table and as JSON, filtered by session" {
	"$WARDEN" run --workspace "$WS" --json "$WS.json" -- /bin/sh -c 'echo hi' >/dev/null
	sess=$(sed -n 's/.*"session": "\([0-9a-f]*\)".*/\1/p' "$WS.json")
	[ -n "$sess" ]
	run "$WARDEN" audit --session "$sess"
	[ "$status" -eq 0 ]
	[[ "$output" == *"run_start"* ]]
	[[ "$output" == *"run_end"* ]]
	[[ "$output" == *"reason=exited"* ]]
	run "$WARDEN" audit --json --session "$sess"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	# timestamps are UTC, RFC 3339 with milliseconds (computed without tzset)
	[[ "${lines[0]}" == '{"ts":"'"$(date -u +%Y-%m-%dT)"* ]]
	rm -f "$WS.json"
}

@test "audit: a missing log is a clear error" {
	run "$WARDEN" audit --audit-log "$WS/none.jsonl"
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot read the audit log"* ]]
}

@test "audit: control characters in the log are neutralised in the table" {
	printf '{"ts":"t","event":"run_start","session":"s1","profile":"p","argv":["\\u001b]52;c;x\\u0007"]}\n' > "$AUDIT"
	run "$WARDEN" audit
	[ "$status" -eq 0 ]
	[[ "$output" != *$'\e'* ]]
	[[ "$output" == *'\x1b'* ]]
}

@test "doctor: reports the kernel features and starts a real jail" {
	run "$WARDEN" doctor
	[ "$status" -eq 0 ]
	[[ "$output" == *"user namespaces"* ]]
	[[ "$output" == *"landlock"* ]]
	[[ "$output" == *"seccomp notify"* ]]
	[[ "$output" == *"memory"* ]]
	[[ "$output" == *"python"* ]]
	[[ "$output" =~ "warden run true"\ +ok ]]
}

@test "usage: unknown command and --version" {
	run "$WARDEN" frobnicate
	[ "$status" -eq 2 ]
	[[ "$output" == *"unknown command"* ]]
	run "$WARDEN" --version
	[ "$status" -eq 0 ]
	[[ "$output" == "warden "* ]]
}
