#!/usr/bin/env bats
# Learning in a session (issue 23, parts 3 and 4; docs/learn.md "In a
# session"): what a block was refused becomes a question to the person at
# `warden chat`'s terminal (asked by the supervisor, the broker stopped),
# to the client of `warden serve` and to the person behind an MCP client,
# never to the model; serve and MCP widen a session only within what
# warden was started with.  Judged from the host: what the block could
# read, the broker's state, the audit log, the profile saved.  Chat runs
# in tmux with tests/fakes/llm_server.py as its model;
# tests/cli/serve_client.py and mcp_client.py play the other scenarios
# (every wait bounded).
load ../helpers
load tty

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
	T=$(mktemp -d /tmp/warden-learn-tty.XXXXXX)
	chmod 755 "$T"
	SOCK="warden-learn-$$-${BATS_TEST_NUMBER}"
	FAKE_PID=
}

teardown() {
	tmux -L "$SOCK" kill-server 2>/dev/null || true
	if [ -n "$FAKE_PID" ]; then kill "$FAKE_PID" 2>/dev/null || true; wait "$FAKE_PID" 2>/dev/null || true; fi
	rm -rf "$DATA" "$H" "$T"
	common_teardown
}

# --- chat on a terminal (tmux) ------------------------------------------------

# start_chat [chat options]: warden chat -y (blocks run unasked: the
# question is the supervisor's) in a fixed-size terminal, HOME=$H; its exit
# status goes to $T/rc
start_chat() {
	tmux -L "$SOCK" -f /dev/null new-session -d -x 200 -y 50 \
		"trap '' INT; env HOME='$H' XDG_CONFIG_HOME='$T/config' XDG_DATA_HOME='$T/data' WARDEN_AUDIT_LOG='$AUDIT' TERM=xterm-256color NO_COLOR=1 '$WARDEN' chat -y --workspace '$WS' --model openai/fake --api-base http://127.0.0.1:$PORT/v1 --api-key k $*; echo \$? > '$T/rc'; sleep 120"
}

# the chat's broker: the supervisor's child named warden-broker
broker_pid() {
	local shell sv p
	shell=$(tmux -L "$SOCK" display -p '#{pane_pid}')
	sv=$(pgrep -P "$shell" | head -1)
	for p in $(pgrep -P "$sv"); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = warden-broker ] && { echo "$p"; return 0; }
	done
	return 1
}

# the widen records of the audit log, one per line: granted by in_bound why
widen_records() {
	python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("event") == "widen":
        print(r["kind"], r["value"], r["granted"], r["by"], r["by_source"], r.get("why", "-"))' "$AUDIT"
}

# read_script FILE [FILE2]: the model's script: a block that reads FILE,
# prose; with FILE2, another block that reads it, prose
read_script() {
	local more=
	[ -n "${2:-}" ] && more=", {\"tool_call\": {\"language\": \"python\", \"code\": \"print(open('$2').read())\"}}, {\"text\": \"Done again.\"}"
	fake_llm <<JSON
[{"tool_call": {"language": "python", "code": "print(open('$1').read())"}},
 {"text": "Done reading."}$more]
JSON
}

@test "learn chat: a refused read is asked on the terminal with the broker stopped; y widens, the block runs again and reads the file; audited as the person's" {
	read_script "$DATA/sales.csv"
	start_chat
	wait_prompt 1
	keys "read the sales" Enter
	wait_for "Allow read for this session? [y/N/always]"
	screen | grep -qF "the code tried to read $DATA/sales.csv (refused by profile workspace)"
	# the supervisor asks: the broker is stopped (state T) while the question is up
	pid=$(broker_pid)
	grep -q '^State:[[:space:]]*T' "/proc/$pid/status"
	keys y Enter
	wait_for "read $DATA/sales.csv allowed for this session"
	wait_for "north,12"
	wait_for "Done reading."
	# the broker runs again
	run ! grep -q '^State:[[:space:]]*T' "/proc/$pid/status"
	keys "%info" Enter
	wait_for "widened:      read $DATA/sales.csv (this session only"
	run widen_records
	[ "$output" = "read $DATA/sales.csv True person supervisor -" ]
	# the model was told what the person allowed
	grep '"n": 2' "$T/req.log" | grep -q "the user allowed the code to read"
	keys C-d
	wait_exit 0
}

@test "learn chat: N (or Enter) keeps the refusal: the block does not run again, the audit log has the refusal" {
	read_script "$DATA/sales.csv"
	start_chat
	wait_prompt 1
	keys "read the sales" Enter
	wait_for "Allow read for this session? [y/N/always]"
	keys Enter
	wait_for "stays refused"
	wait_for "Done reading."
	run ! grep -qF "north,12" <<< "$(screen)"
	run widen_records
	[ "$output" = "read $DATA/sales.csv False person supervisor declined" ]
	keys "%info" Enter
	wait_for "widened:      nothing"
	keys C-d
	wait_exit 0
}

@test "learn chat: always allows the file's directory: a later read there is granted without a question" {
	printf 'region\nsouth\n' > "$DATA/regions.csv"
	chmod 644 "$DATA/regions.csv"
	read_script "$DATA/sales.csv" "$DATA/regions.csv"
	start_chat
	wait_prompt 1
	keys "read the sales" Enter
	wait_for "Allow read for this session? [y/N/always]"
	keys always Enter
	wait_for "north,12"
	wait_for "Done reading."
	wait_prompt 2
	keys "and the regions" Enter
	wait_for "Done again."
	screen | grep -q "^south"
	[ "$(screen | grep -cF "Allow read for this session?")" -eq 1 ]
	run widen_records
	[ "${lines[0]}" = "read $DATA/sales.csv True person supervisor -" ]
	[ "${lines[1]}" = "read $DATA/regions.csv True always supervisor -" ]
}

@test "learn chat: %revoke drops the widening: the same read is refused and asked again" {
	fake_llm <<JSON
[{"tool_call": {"language": "python", "code": "print(open('$DATA/sales.csv').read())"}},
 {"text": "Done reading."},
 {"tool_call": {"language": "python", "code": "print(open('$DATA/sales.csv').read())"}},
 {"text": "Refused again."}]
JSON
	start_chat
	wait_prompt 1
	keys "read the sales" Enter
	wait_for "Allow read for this session? [y/N/always]"
	keys y Enter
	wait_for "Done reading."
	keys "%revoke" Enter
	wait_for "every widening is gone"
	keys "again" Enter
	wait_for "Allow read for this session? [y/N/always]" 2
	keys n Enter
	wait_for "Refused again."
	[ "$(screen | grep -c "^north,12")" -eq 1 ]
	grep -q '"event":"revoke".*"widenings":\["read '"$DATA"'/sales.csv"\]' "$AUDIT"
}

@test "learn chat: a dangerous refusal is never a one-key question; %allow asks for the word yes, and y is no" {
	read_script "$H/.ssh/id_rsa"
	start_chat
	wait_prompt 1
	keys "read the key" Enter
	wait_for "which is DANGEROUS"
	wait_for "Done reading."
	run ! grep -qF "[y/N/always]" <<< "$(screen)"
	keys "%allow read $H/.ssh/id_rsa" Enter
	wait_for "Type yes to allow it for this session:"
	keys y Enter
	wait_for "stays refused"
	run widen_records
	[ "$output" = "read $H/.ssh/id_rsa False person supervisor declined" ]
	keys C-d
	wait_exit 0
}

@test "learn chat: the walkthrough: refused, allowed for the session, saved with %profile save, and the next run uses the profile" {
	read_script "$DATA/sales.csv"
	start_chat
	wait_prompt 1
	keys "read the sales" Enter
	wait_for "Allow read for this session? [y/N/always]"
	keys y Enter
	wait_for "Done reading."
	keys "%profile save sales" Enter
	wait_for "saved the profile sales"
	keys C-d
	wait_exit 0
	[ -f "$T/config/warden/profiles/sales.json" ]
	# warden audit reads every record strictly (status 1 on one it cannot)
	run "$WARDEN" audit --all --no-pager --audit-log "$AUDIT"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"WIDENED read $DATA/sales.csv by person (supervisor)"* ]]
	[[ "$output" == *"wrote sales to $T/config/warden/profiles/sales.json"* ]]
	# the next run, under the saved profile, reads the file; under the
	# profile it extends it still cannot
	run env HOME="$H" XDG_CONFIG_HOME="$T/config" "$WARDEN" run --profile sales \
		--workspace "$WS" -- cat "$DATA/sales.csv"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"north,12"* ]]
	run env HOME="$H" XDG_CONFIG_HOME="$T/config" "$WARDEN" run --workspace "$WS" \
		-- cat "$DATA/sales.csv"
	[ "$status" -ne 0 ]
}

# --- serve and MCP --------------------------------------------------------------

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

@test "learn serve: a host the proxy refused is asked about, though the block still holds its connection" {
	mkdir -p "$H/.config/warden/profiles"
	printf '%s\n' '{"name":"netlearn","extends":"workspace","network":{"mode":"proxy","allow":["allowed.invalid:8080"]}}' \
		> "$H/.config/warden/profiles/netlearn.json"
	serve_client learn_net --allow-profile netlearn
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
	run "$WARDEN" audit --all --no-pager --audit-log "$AUDIT"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"WIDENED read $DATA/sales.csv by serve client (broker)"* ]]
	[[ "$output" == *"dropped [\"read $DATA/sales.csv\"]"* ]]
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
