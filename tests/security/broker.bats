#!/usr/bin/env bats
# G17: a malformed, unknown or unpermitted frame from the broker ends the
# broker and every jail it had.  The broker here is hostile on purpose
# (tests/fakes/hostile_broker.py): it is installed as `warden-broker` next to
# a copy of `warden`, which is where the supervisor looks for its broker
# first (supervisor/broker.c).  Using that path needs no test-only
# switch in the product: whoever can write next to warden can replace warden
# itself.  Each test lets a block start in a jail, sends one bad frame, and
# judges from the host: the supervisor exited, and no process of the jail
# is left.
load ../helpers

setup() {
	common_setup
	B=$(mktemp -d /tmp/warden-hostile.XXXXXX)
	cp "$WARDEN" "$B/warden"
	cp "$WARDEN_TOP/tests/fakes/hostile_broker.py" "$B/hostile_broker.py"
	# as root the broker runs as its own user: it must be able to read itself
	chmod 755 "$B" "$B/warden" "$B/hostile_broker.py"
	TOKEN=$((7000000 + RANDOM * 10 + BATS_TEST_NUMBER))
	WPID=
}

teardown() {
	if [ -n "$WPID" ]; then kill "$WPID" 2>/dev/null || true; wait "$WPID" 2>/dev/null || true; fi
	rm -rf "$B" "$WS.data" "$WS.home"
	common_teardown
}

# hostile SCENARIO: serve with the hostile broker, which starts a block
# (prints READY, then sleeps with $TOKEN in its command line) and then
# sends the scenario's frame
# The supervisor gives its broker an allowlisted environment (G47), so the
# scenario travels inside the broker itself: a wrapper written per test.
install_hostile() {
	printf '#!/bin/sh\nHOSTILE_SCENARIO=%s HOSTILE_CODE="echo READY; sleep %s" exec python3 %s/hostile_broker.py "$@"\n' \
		"$1" "$TOKEN" "$B" > "$B/warden-broker"
	chmod 755 "$B/warden-broker"
}
hostile() {
	install_hostile "$1"
	run timeout 60 "$B/warden" serve --stdio --workspace "$WS" </dev/null
	echo "status $status: $output"
}

# the supervisor ended everything on its own (not the 60 s timeout), after
# the jail was running, and said why; nothing of the jail is left
ended() {
	[ "$status" -eq 125 ] || { echo "supervisor status $status, want 125"; return 1; }
	[[ "$output" == *"the jail is running; sending $1"* ]] || { echo "no jail was running"; return 1; }
	[[ "$output" == *"warden: "*"; ending it"* ]] || { echo "the supervisor did not say why"; return 1; }
	local left
	left=$(procs_matching "sleep $TOKEN")
	[ -z "$left" ] || { echo "the jail survived its hostile broker: $left"; return 1; }
}

@test "hostile broker: control: with a quiet broker the jail runs and is seen from the host" {
	install_hostile quiet
	"$B/warden" serve --stdio --workspace "$WS" </dev/null 2>"$WS.err" &
	WPID=$!
	for _ in $(seq 400); do [ -n "$(procs_matching "sleep $TOKEN")" ] && break; sleep 0.05; done
	[ -n "$(procs_matching "sleep $TOKEN")" ] || { cat "$WS.err"; false; }
	kill "$WPID"; wait "$WPID" || true; WPID=
	[ -z "$(procs_matching "sleep $TOKEN")" ]
	rm -f "$WS.err"
}

@test "hostile broker: a frame before HELLO ends the supervisor" {
	hostile before_hello
	[ "$status" -eq 125 ]
	[[ "$output" == *"not permitted now"* ]]
}

@test "hostile broker: a truncated field ends the broker and its jail" {
	hostile malformed
	ended malformed
	[[ "$output" == *"malformed frame from the broker: RUN frame"* ]]
}

@test "hostile broker: a NUL byte in a string ends the broker and its jail" {
	hostile nul
	ended nul
}

@test "hostile broker: trailing bytes end the broker and its jail" {
	hostile trailing
	ended trailing
}

@test "hostile broker: a frame over the size limit ends the broker and its jail" {
	hostile oversize
	ended oversize
}

@test "hostile broker: a second HELLO (not permitted now) ends the broker and its jail" {
	hostile hello_again
	ended hello_again
	[[ "$output" == *"HELLO, which is not permitted now"* ]]
}

@test "hostile broker: a frame only the supervisor sends ends the broker and its jail" {
	hostile supervisor_frame
	ended supervisor_frame
}

@test "hostile broker: an unknown frame type ends the broker and its jail" {
	hostile unknown_type
	ended unknown_type
}

@test "hostile broker: EDIT, which serve never permits, ends the broker and its jail" {
	hostile edit_in_serve
	ended edit_in_serve
	[[ "$output" == *"EDIT was refused"* ]]
}

@test "hostile broker: SAVE, which serve never permits, ends the broker and its jail" {
	hostile save_in_serve
	ended save_in_serve
	[[ "$output" == *"SAVE was refused"* ]]
}

# widen KIND VALUE CODE [warden options]: the hostile broker widens its own
# session (issue 23), then runs CODE there; the session learns unless
# LEARN=0
widen() {
	printf '#!/bin/sh\nHOSTILE_SCENARIO=widen HOSTILE_LEARN=%s HOSTILE_KIND=%s HOSTILE_VALUE=%s HOSTILE_CODE=%s exec python3 %s/hostile_broker.py "$@"\n' \
		"${LEARN:-1}" "$1" "$2" "'$3'" "$B" > "$B/warden-broker"
	chmod 755 "$B/warden-broker"
	# warden's own directories outside the home, so that the home is not
	# refused as warden's own before anything else is checked
	run timeout 60 env HOME="${WHOME:-$HOME}" XDG_CONFIG_HOME="$B/config" XDG_DATA_HOME="$B/data" \
		"$B/warden" "${@:4}" --workspace "$WS" </dev/null
	echo "status $status: $output"
}

# a data set and a home with a key, next to the workspace (teardown
# removes them)
learn_files() {
	DATA="$WS.data"
	mkdir -p "$DATA" "$WS.home/.ssh"
	printf 'rows\n' > "$DATA/secret.csv"
	printf 'key\n' > "$WS.home/.ssh/id_rsa"
	printf 'notes\n' > "$WS.home/notes.txt"
	chmod 755 "$DATA" "$WS.home" "$WS.home/.ssh"
	chmod 644 "$DATA/secret.csv" "$WS.home/.ssh/id_rsa" "$WS.home/notes.txt"
}

@test "hostile broker: a WIDEN within what serve was started with is granted (control)" {
	learn_files
	widen read "$DATA/secret.csv" "cp $DATA/secret.csv $WS/copy" serve --stdio \
		--allow-workspace "$DATA"
	[[ "$output" == *"WIDENED status 0"* ]]
	[ -f "$WS/copy" ]
}

@test "hostile broker: serve never widens a session past its bound, whatever the broker asks (G230)" {
	learn_files
	widen read "$DATA/secret.csv" "cp $DATA/secret.csv $WS/copy" serve --stdio
	[[ "$output" == *"WIDENED status 1: warden does not widen this session"* ]]
	[ ! -e "$WS/copy" ]
	grep -q '"event":"widen".*"granted":false.*"in_bound":false' "$AUDIT"
}

@test "hostile broker: serve never widens to a dangerous path, even within its bound (G231)" {
	learn_files
	# the caller's home, allowed as a workspace root: dangerous all the same
	WHOME="$WS.home" widen read "$WS.home" "cp $WS.home/notes.txt $WS/copy" \
		serve --stdio --allow-workspace "$WS.home"
	[[ "$output" == *"WIDENED status 1: warden does not widen this session to read ~: it is a home directory"* ]]
	[ ! -e "$WS/copy" ]
	grep -q '"event":"widen".*"granted":false.*"in_bound":true.*"why":"dangerous"' "$AUDIT"
}

@test "hostile broker: serve never widens to a key in the home, even with the home allowed (G231)" {
	learn_files
	WHOME="$WS.home" widen read "$WS.home/.ssh/id_rsa" "cp $WS.home/.ssh/id_rsa $WS/copy" \
		serve --stdio --allow-workspace "$WS.home"
	[[ "$output" == *"WIDENED status 1: warden does not widen this session to read ~/.ssh/id_rsa: it is in the catalog"* ]]
	[ ! -e "$WS/copy" ]
}

@test "hostile broker: chat without a terminal widens nothing, even within its bound (G232)" {
	learn_files
	widen read "$DATA/secret.csv" "cp $DATA/secret.csv $WS/copy" chat --allow-workspace "$DATA"
	[[ "$output" == *"WIDENED status 1: warden asks about widening on chat's terminal only"* ]]
	[ ! -e "$WS/copy" ]
}

@test "hostile broker: serve never widens a session that does not learn, even within its bound (G235)" {
	learn_files
	LEARN=0 widen read "$DATA/secret.csv" "cp $DATA/secret.csv $WS/copy" serve --stdio \
		--allow-workspace "$DATA"
	[[ "$output" == *"WIDENED status 1: session "*" does not learn"* ]]
	[ ! -e "$WS/copy" ]
	grep -q '"event":"widen".*"granted":false.*"why":"the session does not learn"' "$AUDIT"
}

@test "hostile broker: serve never widens a session to warden's own files, even within its bound (G231)" {
	learn_files
	# the audit log in the data directory the operator allowed
	WARDEN_AUDIT_LOG="$DATA/audit.jsonl" widen write "$DATA" "echo forged >> $DATA/audit.jsonl; touch $DATA/planted" \
		serve --stdio --allow-workspace "$DATA"
	[[ "$output" == *"WIDENED status 1: $DATA is warden's own"* ]]
	[ ! -e "$DATA/planted" ]
	grep -q '"event":"widen".*"granted":false.*"why":"warden'"'"'s own directory' "$DATA/audit.jsonl"
	run ! grep -qx forged "$DATA/audit.jsonl"
}
