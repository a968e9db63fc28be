#!/usr/bin/env bats
# `make demo` is what a new user sees first: it must keep working.
load ../helpers

@test "demo: every escape attempt of examples/escape.py is blocked and audited" {
	run sh "$WARDEN_TOP/tools/demo.sh"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"0 of 9 attempts escaped"* ]]
	[[ "$output" != *"ESCAPED"* ]]
	# the audit shows what was denied
	[[ "$output" =~ denied\ +ptrace ]]
	[[ "$output" =~ denied\ +bpf ]]
	[[ "$output" == *"nothing was left behind"* ]]
}
