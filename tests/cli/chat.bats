#!/usr/bin/env bats
# `warden chat` end to end: a real fake LLM server on 127.0.0.1
# (tests/fakes/llm_server.py), the real supervisor, real jails.
load ../helpers

KEY="sk-warden-test-SECRET-4242"

setup() {
	common_setup
	T=$(mktemp -d /tmp/warden-chat.XXXXXX)
	chmod 755 "$T"
	export HOME="$T/home" XDG_CONFIG_HOME="$T/config" XDG_DATA_HOME="$T/data"
	mkdir -p "$HOME"
	unset OPENAI_API_KEY ANTHROPIC_API_KEY
	FAKE_PID=
}

teardown() {
	[ -n "$FAKE_PID" ] && kill "$FAKE_PID" 2>/dev/null
	[ -n "$FAKE_PID" ] && wait "$FAKE_PID" 2>/dev/null
	rm -rf "$T"
	common_teardown
}

# fake_llm: the script (a JSON array of responses) on stdin
fake_llm() {
	cat > "$T/script.json"
	python3 "$WARDEN_TOP/tests/fakes/llm_server.py" "$T/script.json" --log "$T/req.log" \
		--idle 120 > "$T/port" 2> "$T/fake.err" &
	FAKE_PID=$!
	for _ in $(seq 200); do
		[ -s "$T/port" ] && break
		sleep 0.05
	done
	PORT=$(head -1 "$T/port")
	[ -n "$PORT" ]
}

# chat [OPTIONS] [MESSAGE]: warden chat against the fake server
chat() {
	run timeout -k 5 120 "$WARDEN" chat --workspace "$WS" --model openai/fake \
		--api-base "http://127.0.0.1:$PORT/v1" --api-key "$KEY" "$@"
}

# the conversation file warden reported
conv_file() {
	printf '%s\n' "$output" | sed -n 's/^conversation saved in //p' | tail -1
}

# req N: the Nth request's body as JSON text
req() {
	python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["n"] == int(sys.argv[2]):
        print(json.dumps(r["body"]))' "$T/req.log" "$1"
}

nreq() { wc -l < "$T/req.log"; }

@test "chat: a tool call runs in a jail, its output goes back to the model, the answer is shown" {
	fake_llm <<'JSON'
[{"text": "Let me check.", "tool_call": {"language": "python", "code": "st = open('/proc/self/status').read()\nprint('nnp', st.split('NoNewPrivs:')[1].split()[0])\nopen('made_in_jail.txt', 'w').write('hello from the jail\\n')\nprint('product', 6 * 7)"}},
 {"text": "The answer is **42**, computed in the jail."}]
JSON
	chat -y "what is 6 times 7?"
	[ "$status" -eq 0 ]
	[[ "$output" == *"Let me check."* ]]
	[[ "$output" == *"sandbox profile: workspace"* ]]
	# no_new_privs is set: the code ran in warden's jail, not here
	[[ "$output" == *"nnp 1"* ]]
	[[ "$output" == *"product 42"* ]]
	[[ "$output" == *"The answer is **42**, computed in the jail."* ]]
	[ "$(cat "$WS/made_in_jail.txt")" = "hello from the jail" ]
	# not a terminal: no colour, no escape sequence at all
	[[ "$output" != *$'\e'* ]]
	[ "$(nreq)" -eq 2 ]
	# the second request carries the block's output, and the system
	# message told the model about the jail
	req 2 | grep -q 'product 42'
	req 1 | grep -q 'runs inside a jail'
	req 1 | grep -q "\"tools\""
}

# Issue 13: chat says once which limits are weaker (from the OPENED limits
# report); as root every limit has a cgroup and nothing is said.
@test "chat: one line names the weaker limits; none as root" {
	fake_llm <<'JSON'
[{"text": "One.", "tool_call": {"language": "shell", "code": "echo first"}},
 {"text": "Two.", "tool_call": {"language": "shell", "code": "echo second"}},
 {"text": "Done."}]
JSON
	chat -y "twice"
	[ "$status" -eq 0 ]
	[[ "$output" == *"first"*"second"*"Done."* ]]
	if is_root; then
		[[ "$output" != *"weaker limits"* ]]
	else
		[ "$(grep -c 'weaker limits here' <<< "$output")" -eq 1 ]
		[[ "$output" == *"memory, pids, cpu_time by per-process rlimits only, cpus enforced by nothing"* ]]
	fi
}

@test "chat: --no-tools runs a fenced block from the text" {
	fake_llm <<'JSON'
[{"fenced": {"language": "python", "code": "print('fenced', 6 * 7)"}, "text": "Here is code:"},
 {"text": "It printed 42."}]
JSON
	chat -y --no-tools "compute"
	[ "$status" -eq 0 ]
	[[ "$output" == *"fenced 42"* ]]
	[[ "$output" == *"It printed 42."* ]]
	# no tool definitions in the request; the output in the second one
	run ! grep -q '"tools"' <<< "$(req 1)"
	req 1 | grep -q 'fenced block'
	req 2 | grep -q 'fenced 42'
}

# Issue 12: with --no-tools the fenced block was printed twice, once as
# the model's text and once in the code box before it ran.
@test "chat: --no-tools shows each code block once, in its box" {
	fake_llm <<'JSON'
[{"fenced": {"language": "python", "code": "print('once' + 'only', 6 * 7)"}, "text": "Here is code:"},
 {"fenced": "Data, not code:\n```text\nplain-text-fence\n```\nDone."}]
JSON
	chat -y --no-tools "compute"
	[ "$status" -eq 0 ]
	[[ "$output" == *"onceonly 42"* ]]
	[ "$(grep -cF "print('once' + 'only', 6 * 7)" <<< "$output")" -eq 1 ]
	[[ "$output" == *"╭─ python"*"│ print('once' + 'only', 6 * 7)"* ]]
	# a fence that is not run (data) is still shown as the model wrote it
	[ "$(grep -cF 'plain-text-fence' <<< "$output")" -eq 1 ]
	[[ "$output" == *"Data, not code:"*"plain-text-fence"*"Done."* ]]
}

@test "chat: a 429 is retried and the answer still arrives" {
	fake_llm <<'JSON'
[{"status": 429, "retry_after": 1, "message": "slow down"},
 {"text": "Answer after the retry."}]
JSON
	chat -y "hello"
	[ "$status" -eq 0 ]
	[[ "$output" == *"trying again"* ]]
	[[ "$output" == *"Answer after the retry."* ]]
	[ "$(nreq)" -eq 2 ]
}

@test "chat: a model that cannot be reached is a clear error and a non-zero exit" {
	PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
	chat -y --connect-timeout 2s "hello"
	[ "$status" -ne 0 ]
	[[ "$output" == *"cannot reach the model"* ]]
	[[ "$output" == *"127.0.0.1:$PORT"* ]]
	[[ "$output" == *"--api-base"* ]]
}

@test "chat: a malformed stream is an error; the earlier turns stay in the conversation file" {
	fake_llm <<'JSON'
[{"text": "First answer, complete."},
 {"malformed": true, "text": "Partial second"}]
JSON
	run bash -c "printf 'first question\nsecond question\nthird question\n' | timeout -k 5 120 '$WARDEN' chat --workspace '$WS' --model openai/fake --api-base http://127.0.0.1:$PORT/v1 --api-key '$KEY' -y"
	[ "$status" -eq 1 ]
	[[ "$output" == *"First answer, complete."* ]]
	[[ "$output" == *"reply failed"* ]]
	# stopped at the failure: the third line was not sent
	[ "$(nreq)" -eq 2 ]
	f=$(conv_file)
	[ -f "$f" ]
	grep -q 'first question' "$f"
	grep -q 'First answer, complete.' "$f"
	grep -q 'second question' "$f"
	run ! grep -q 'third question' "$f"
}

@test "chat: the saved conversation is LMC, and has the code and its output" {
	fake_llm <<'JSON'
[{"tool_call": {"language": "python", "code": "print('lmc', 1 + 1)"}},
 {"text": "Done."}]
JSON
	chat -y "go"
	[ "$status" -eq 0 ]
	f=$(conv_file)
	[ -f "$f" ]
	python3 - "$f" <<'PY'
import json, sys
msgs = json.load(open(sys.argv[1]))
assert isinstance(msgs, list) and msgs, msgs
for m in msgs:
    assert set(m) <= {"role", "type", "format", "content"}, m
    assert m["role"] in ("user", "assistant", "computer"), m
    assert m["type"] in ("message", "code", "console"), m
    assert isinstance(m["content"], str), m
shape = [(m["role"], m["type"]) for m in msgs]
assert shape == [("user", "message"), ("assistant", "code"), ("computer", "console"),
                 ("assistant", "message")], shape
assert msgs[1]["format"] == "python" and "print('lmc', 1 + 1)" in msgs[1]["content"]
assert msgs[2]["format"] == "output" and "lmc 2" in msgs[2]["content"], msgs[2]
PY
}

@test "chat: the API key is never in the conversation, the history, the audit log or the output" {
	fake_llm <<'JSON'
[{"tool_call": {"language": "shell", "code": "echo key-test"}},
 {"status": 401, "echo_key": true, "message": "bad key"}]
JSON
	chat -y "use the key"
	[ "$status" -ne 0 ]
	# it was sent (so the checks below can fail)
	grep -q "$KEY" "$T/req.log"
	[[ "$output" == *"key-test"* ]]
	[[ "$output" != *"$KEY"* ]]
	f=$(conv_file)
	[ -f "$f" ]
	run ! grep -q "$KEY" "$f"
	run ! grep -rqs "$KEY" "$(dirname "$(dirname "$f")")"
	[ -s "$AUDIT" ]
	run ! grep -q "$KEY" "$AUDIT"
}

@test "chat: without -y and without a terminal, code is declined and the way out is named" {
	fake_llm <<'JSON'
[{"tool_call": {"language": "shell", "code": "touch should_not_exist"}}]
JSON
	chat "make a file" < /dev/null
	[ "$status" -eq 0 ]
	[[ "$output" == *"-y"* ]]
	[[ "$output" == *"Not run"* ]]
	[ ! -e "$WS/should_not_exist" ]
	[ "$(nreq)" -eq 1 ]
	grep -q 'declined' "$(conv_file)"
}

@test "chat: --export-script writes the approved code as a script that runs again" {
	fake_llm <<'JSON'
[{"tool_call": {"language": "python", "code": "total = sum([10, 20, 12])\nprint('total', total)"}},
 {"tool_call": {"language": "python", "code": "open('report.txt', 'w').write('total=%d\\n' % total)"}},
 {"tool_call": {"language": "shell", "code": "cat report.txt"}},
 {"text": "Report written."}]
JSON
	chat -y "make a report"
	[ "$status" -eq 0 ]
	[ "$(cat "$WS/report.txt")" = "total=42" ]
	f=$(conv_file)
	timeout 60 "$WARDEN" chat --resume "$f" --export-script - > "$T/replay.sh"
	head -1 "$T/replay.sh" | grep -qx '#!/bin/sh'
	mkdir "$T/again"
	run bash -c "cd '$T/again' && sh '$T/replay.sh'"
	[ "$status" -eq 0 ]
	[[ "$output" == *"total 42"* ]]
	[[ "$output" == *"total=42"* ]]
	[ "$(cat "$T/again/report.txt")" = "total=42" ]
}

@test "chat: --export-script without --resume, and bad options, exit 2 with one line" {
	run "$WARDEN" chat --export-script -
	[ "$status" -eq 2 ]
	[[ "$output" == *"--resume"* ]]
	run "$WARDEN" chat --max-output lots
	[ "$status" -eq 2 ]
	[[ "$output" == *"--max-output needs a whole number"* ]]
	run "$WARDEN" chat --no-such-option
	[ "$status" -eq 2 ]
	[[ "$output" == *"unknown option --no-such-option"* ]]
}

@test "chat: magic commands work from piped input" {
	fake_llm <<'JSON'
[{"text": "hi"}]
JSON
	run bash -c "printf '%%tokens\n%%profile\n%%profile nosuch\n%%nope\n' | timeout -k 5 60 '$WARDEN' chat --workspace '$WS' --model openai/fake --api-base http://127.0.0.1:$PORT/v1 --api-key k"
	[ "$status" -eq 0 ]
	[[ "$output" == *"tokens in 0 messages"* ]]
	[[ "$output" == *"sandbox profile: workspace"* ]]
	[[ "$output" == *"not one of the profiles allowed"* ]]
	[[ "$output" == *"unknown command %nope"* ]]
}

# Issue 13: %profile strict was refused without naming --allow-profile,
# and `warden chat --help` did not list it.
@test "chat: a refused %profile names --allow-profile, which chat --help lists" {
	fake_llm <<'JSON'
[{"text": "hi"}]
JSON
	run bash -c "printf '%%profile strict\n' | timeout -k 5 60 '$WARDEN' chat --workspace '$WS' --model openai/fake --api-base http://127.0.0.1:$PORT/v1 --api-key k"
	[ "$status" -eq 0 ]
	[[ "$output" == *"not one of the profiles allowed"*"--allow-profile strict"* ]]
	run "$WARDEN" chat --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"--allow-profile NAME"* ]]
	[[ "$output" == *"--allow-workspace DIR"* ]]
	[[ "$output" == *"--workspace DIR"* ]]
}

# Issue 13: a refused --api-base was retried for 7.5 s and an empty
# conversation was saved anyway.
@test "chat: a refused --api-base fails at once, naming the URL, and saves no conversation" {
	PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	chat "hello"
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"http://127.0.0.1:$PORT/v1"*"connection refused"*"--api-base"* ]]
	[[ "$output" != *"retrying"* ]]
	[[ "$output" != *"conversation saved"* ]]
	[ -z "$(find "$T/data" -type f -name '*.json' 2>/dev/null)" ]
}

@test "chat: the replay demo runs without a key" {
	[ -f "$WARDEN_TOP/examples/demo.json" ]
	cp "$WARDEN_TOP/examples/sales.csv" "$WS/"
	run timeout -k 5 120 "$WARDEN" chat -y --workspace "$WS" --model "replay:$WARDEN_TOP/examples/demo.json" "Analyse sales.csv"
	[ "$status" -eq 0 ]
	[[ "$output" == *"sandbox profile: workspace"* ]]
	# the analysis really ran in the jail on this workspace's file
	[[ "$output" == *"30 rows; columns: date, region, product, units, revenue"* ]]
	grep -q '<svg' "$WS/revenue_by_region.svg"
	# the network attempt was stopped by the jail
	[[ "$output" == *"Network is unreachable"* ]]
	[[ "$output" == *"warden audit --session "* ]]
}

# sysmsg N: the system message of request N (OpenAI form: messages[0])
sysmsg() {
	python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["n"] == int(sys.argv[2]):
        m = r["body"]["messages"][0]
        assert m["role"] == "system", m
        print(m["content"])' "$T/req.log" "$1"
}

# Issue 12: --system-message replaces warden's instructions, as Open
# Interpreter's does; the facts about the jail stay in either case.
@test "chat: --system-message replaces the instructions, keeps the jail's facts; -append adds" {
	fake_llm <<'JSON'
[{"text": "one"}, {"text": "two"}, {"text": "three"}]
JSON
	chat --system-message "You are Pirate Pete. Answer in rhyme." "hi"
	[ "$status" -eq 0 ]
	run sysmsg 1
	[[ "$output" == "You are Pirate Pete. Answer in rhyme."* ]]
	[[ "$output" != *"Warden Interpreter"* ]]
	[[ "$output" != *"Work in small steps"* ]]
	# the facts: how code runs, the jail, its profile and limits, denials
	[[ "$output" == *"call the \`execute\` tool"* ]]
	[[ "$output" == *"runs inside a jail"* ]]
	[[ "$output" == *"sandbox profile \"workspace\""* ]]
	[[ "$output" == *"policy working, not a bug"* ]]

	chat --system-message-append "Prefer awk." "hi"
	[ "$status" -eq 0 ]
	run sysmsg 2
	[[ "$output" == "You are Warden Interpreter"* ]]
	[[ "$output" == *"runs inside a jail"* ]]
	[[ "$output" == *$'\n\nPrefer awk.' ]]

	# config.json: the same two keys; the command line wins
	mkdir -p "$XDG_CONFIG_HOME/warden"
	printf '{"system_message": "Config persona.", "system_message_append": "Config extra."}\n' \
		> "$XDG_CONFIG_HOME/warden/config.json"
	chat "hi"
	[ "$status" -eq 0 ]
	run sysmsg 3
	[[ "$output" == "Config persona."* ]]
	[[ "$output" == *"runs inside a jail"* ]]
	[[ "$output" == *"Config extra." ]]
}
