#!/usr/bin/env bats
# G144: jailed code that floods its control fd with images (rich output,
# issue 12) cannot make the supervisor hold them without bound, even under
# a profile with no output limit: the supervisor stops reading the control
# socket while the broker is behind, as it does for stdout.  Judged from the
# host: the supervisor's peak memory (VmHWM) while a client reads nothing.
load ../helpers

setup() {
	common_setup
	CFG="$WS.config"
	mkdir -p "$CFG/warden/profiles"
	printf '%s\n' '{"name":"nolimit","extends":"workspace","limits":{"output":"unlimited"}}' \
		> "$CFG/warden/profiles/nolimit.json"
}
teardown() {
	rm -rf "$CFG"
	common_teardown
}

@test "G144: 90 MiB of images on the control fd, nothing read: the supervisor holds a bounded part" {
	run env WARDEN="$WARDEN" XDG_CONFIG_HOME="$CFG" \
		python3 "$WARDEN_TOP/tests/security/rich_flood.py" "$WS" \
		--allow-profile nolimit --profile nolimit
	echo "$output"
	[ "$status" -eq 0 ]
	# its verdict on a line of its own (the broker may say on stderr
	# that its supervisor went away first, as the script ends them)
	grep -q '^ok: ' <<< "$output"
}
