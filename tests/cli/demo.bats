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
	# Issue 20 (4): the chat's block that tried to connect is told, in chat,
	# that the network is off and what lets it out (and so is the model)
	# and where it tried: seen by the jail's init in the packet itself
	[[ "$output" == *"the block tried to reach 1.1.1.1 port 443, but the network is off under profile workspace (network mode none): --sandbox-profile network (or %profile network), or --net proxy --allow 1.1.1.1:443, lets it out"* ]]
	# Issue 20 (10): as root the jail's uid 0 read like a failure; the demo
	# says what it is on the host (never 0: SECURITY.md G30)
	[[ "$output" == *"inside the jail: uid "* ]]
	if is_root; then
		[[ "$output" =~ inside\ the\ jail:\ uid\ 0,\ which\ on\ the\ host\ is\ uid\ ([0-9]+),\ with\ no\ privilege\ there ]]
		[ "${BASH_REMATCH[1]}" -ne 0 ]
	else
		[[ "$output" == *"inside the jail: uid $(id -u), the same uid on the host;"* ]]
	fi
}
