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

# Issue 21 (one table per fact): a value of the broker's options that looks
# like one of the supervisor's stays the value; before, the supervisor took
# it as its own option (here: the workspace, which does not exist)
@test "chat: an option's value that looks like another option stays its value (--system-message --workspace=...)" {
	fake_llm <<'JSON'
[{"text": "one"}, {"text": "two"}]
JSON
	chat --system-message "--workspace=/nonexistent" "hi"
	echo "$output"
	[ "$status" -eq 0 ]
	run sysmsg 1
	[[ "$output" == "--workspace=/nonexistent"* ]]
	chat -ym "openai/fake" --system-message-append --net "hi"
	echo "$output"
	[ "$status" -eq 0 ]
	run sysmsg 2
	[[ "$output" == *$'\n\n--net' ]]
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

# Issue 12: %info says what the chat runs with, from what the supervisor
# reported (OPENED): judged against the audit log and the files on disk.
@test "chat: %info names the model, profile, limits, what is weaker here, the files and ids" {
	fake_llm <<'JSON'
[{"text": "hello back"}]
JSON
	run bash -c "printf 'hello\n%%info\n' | timeout -k 5 60 '$WARDEN' chat --workspace '$WS' --model openai/fake --api-base http://127.0.0.1:$PORT/v1 --api-key '$KEY' --system-message-append extra"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"model:        openai/fake, API base http://127.0.0.1:$PORT/v1; code as tool calls"* ]]
	[[ "$output" == *"system:       warden's instructions, with your addition"* ]]
	[[ "$output" == *"sandbox:      profile workspace"* ]]
	[[ "$output" == *"workspace:    $WS"* ]]
	[[ "$output" == *"network:      none"* ]]
	[[ "$output" == *"limits:       memory 1G ("*"pids 256 ("*"output 8M (supervisor)"* ]]
	[[ "$output" == *"landlock:     ABI "* ]]
	if is_root; then
		[[ "$output" == *"memory 1G (cgroup-v"* ]]
		[[ "$output" == *"degraded:     nothing"* ]]
	else
		[[ "$output" == *"memory 1G (rlimit: weaker: per process)"* ]]
		[[ "$output" == *"degraded:     limits memory by rlimit only, pids by rlimit only"*"cpus not enforced"* ]]
	fi
	local f id
	f=$(conv_file)
	[ -f "$f" ]
	[[ "$output" == *"conversation: $f (2 messages)"* ]]
	# the audit id is the session's, as the supervisor logged it
	id=$(printf '%s\n' "$output" | sed -n 's/.*audit id \([0-9a-f]*\) (warden audit.*/\1/p')
	[ -n "$id" ]
	grep -q "\"session\":\"$id\"" "$AUDIT"
	[[ "$output" != *"$KEY"* ]]
	# where the policy came from, and the Landlock ABI, as the supervisor says
	[[ "$output" == *"policy from:  built-in:workspace.json"* ]]
	[[ "$output" != *"landlock:     unknown"* ]]

	sed 's/"name": *"workspace"/"name": "mine"/' "$WARDEN_TOP/policy/profiles/workspace.json" \
		> "$T/mine.json"
	run bash -c "printf '%%info\n' | timeout -k 5 60 '$WARDEN' chat --policy '$T/mine.json' --workspace '$WS' --model openai/fake --api-base http://127.0.0.1:$PORT/v1 --api-key k"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"sandbox:      profile mine"* ]]
	[[ "$output" == *"policy from:  $T/mine.json"* ]]
}

# Issue 12: %jupyter writes a valid notebook (nbformat's own validator)
# under the data directory, and refuses any other place.
@test "chat: %jupyter writes a valid notebook with the text, the code and its output" {
	fake_llm <<'JSON'
[{"text": "Let me run it.", "tool_call": {"language": "python", "code": "print('nb', 6 * 7)"}},
 {"text": "Shell too.", "tool_call": {"language": "shell", "code": "echo shell-out"}},
 {"text": "It printed **42**."}]
JSON
	run bash -c "printf 'compute it\n%%jupyter\n%%jupyter mine\n%%jupyter ../up\n%%jupyter $WS/nb\n' | timeout -k 5 60 '$WARDEN' chat -y --workspace '$WS' --model openai/fake --api-base http://127.0.0.1:$PORT/v1 --api-key k"
	echo "$output"
	[ "$status" -eq 0 ]
	local f nb
	f=$(conv_file)
	nb="$XDG_DATA_HOME/warden/notebooks/$(basename "$f" .json).ipynb"
	[[ "$output" == *"notebook written: $nb (6 cells"* ]]
	[ -f "$XDG_DATA_HOME/warden/notebooks/mine.ipynb" ]
	[[ "$output" == *"%jupyter: ../up: '..' is not allowed"* ]]
	[[ "$output" == *"%jupyter: $WS/nb: not under $XDG_DATA_HOME/warden/, the only place"* ]]
	[ ! -e "$WS/nb" ]
	[ ! -e "$WS/nb.ipynb" ]
	[ -z "$(find "$XDG_DATA_HOME/.." -maxdepth 2 -name 'up*')" ]
	# Debian's python3-nbformat (tools/deps.sh), not another python3 on PATH
	/usr/bin/python3 - "$nb" <<'PY'
import json, sys
import nbformat
path = sys.argv[1]
raw = json.load(open(path))
assert raw["nbformat"] == 4 and raw["nbformat_minor"] == 5, raw
nb = nbformat.read(path, as_version=4)
nbformat.validate(nb)
kinds = [(c.cell_type, c.source) for c in nb.cells]
assert kinds[0] == ("markdown", "**User:** compute it"), kinds
assert kinds[1] == ("markdown", "Let me run it."), kinds
assert kinds[2] == ("code", "print('nb', 6 * 7)"), kinds
out = nb.cells[2].outputs
assert [o.output_type for o in out] == ["stream"] and out[0].text == "nb 42\n", out
assert kinds[4] == ("code", "%%bash\necho shell-out"), kinds
assert nb.cells[4].outputs[0].text == "shell-out\n"
assert kinds[5] == ("markdown", "It printed **42**."), kinds
PY
}

# Issue 12: images in the conversation become display_data; the notebook is
# made from the saved conversation (--resume) as it was.
@test "chat: %jupyter turns an image message into display_data image/png" {
	fake_llm <<'JSON'
[{"text": "ok"}]
JSON
	python3 - "$T/pic.json" <<'PY'
import json, sys
png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
json.dump([
  {"role": "user", "type": "message", "content": "plot"},
  {"role": "assistant", "type": "code", "format": "python", "content": "plt.show()"},
  {"role": "computer", "type": "console", "format": "output", "content": "drawn\n"},
  {"role": "computer", "type": "image", "format": "base64.png", "content": png},
  {"role": "assistant", "type": "message", "content": "Here it is."}], open(sys.argv[1], "w"))
PY
	run bash -c "printf '%%jupyter pic\n' | timeout -k 5 60 '$WARDEN' chat --resume '$T/pic.json' --workspace '$WS' --model openai/fake --api-base http://127.0.0.1:$PORT/v1 --api-key k"
	echo "$output"
	[ "$status" -eq 0 ]
	/usr/bin/python3 - "$XDG_DATA_HOME/warden/notebooks/pic.ipynb" <<'PY'
import base64, sys
import nbformat
nb = nbformat.read(sys.argv[1], as_version=4)
nbformat.validate(nb)
out = nb.cells[1].outputs
assert [o.output_type for o in out] == ["stream", "display_data"], out
assert base64.b64decode(out[1].data["image/png"]).startswith(b"\x89PNG"), out[1]
PY
}

# Issue 12: --conversations lists saved conversations (date, first message,
# size) with the ID that --resume takes; without a terminal it only lists.
@test "chat: --conversations lists saved conversations; --resume ID resumes one" {
	fake_llm <<'JSON'
[{"text": "first answer"}, {"text": "second answer"}, {"text": "resumed answer"}]
JSON
	run "$WARDEN" chat --conversations
	[ "$status" -eq 0 ]
	[[ "$output" == "no saved conversations in $XDG_DATA_HOME/warden/conversations yet" ]]
	chat "alpha question"
	[ "$status" -eq 0 ]
	chat "beta question"
	[ "$status" -eq 0 ]
	local beta id
	beta=$(conv_file)
	# the older one is older by its time, whatever the clock's resolution
	touch -d '2001-02-03 04:05' "$(ls "$XDG_DATA_HOME"/warden/conversations/*alpha*.json)"
	run "$WARDEN" chat --conversations < /dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "saved conversations in $XDG_DATA_HOME/warden/conversations, newest first:" ]
	[[ "${lines[1]}" == "  1  "*"    2 msgs  beta question  ["*"beta-question.json]" ]]
	[[ "${lines[2]}" == "  2  2001-02-03 04:05    2 msgs  alpha question  ["*"alpha-question.json]" ]]
	[[ "$output" == *"resume one with: warden chat --resume NAME.json"* ]]
	[[ "$output" != *"Resume which"* ]]
	id=$(sed -n 's/.*\[\(.*alpha-question.json\)\]$/\1/p' <<< "$output")
	[ -n "$id" ]
	chat --resume "$id" "gamma question"
	[ "$status" -eq 0 ]
	req 3 | grep -q 'alpha question'
	run ! grep -q 'beta question' <<< "$(req 3)"
	# a conversation's text reaches the terminal through the sanitizer
	printf '[{"role":"user","type":"message","content":"evil \\u001b]0;pwned\\u0007 title"}]\n' \
		> "$XDG_DATA_HOME/warden/conversations/evil.json"
	run "$WARDEN" chat --conversations < /dev/null
	[ "$status" -eq 0 ]
	[[ "$output" == *"1 msgs  evil ^[]0;pwned^G title  [evil.json]"* ]]
	[[ "$output" != *$'\e'* ]]
	run "$WARDEN" chat --conversations --resume "$id"
	[ "$status" -eq 2 ]
	[[ "$output" == *"leave out --resume"* ]]
}

# Issue 20 (3): as root the broker's user cannot walk to the data directory
# (here it lies under a 0700 directory, as /root's does) and works through
# /proc/self/fd/5; every message names the directory as the person knows
# it, and a path the person gives that way is understood.
@test "chat: messages name the data directory's real path, never /proc/self/fd" {
	chmod 700 "$T"
	fake_llm <<'JSON'
[{"text": "hi"}]
JSON
	local conv="$XDG_DATA_HOME/warden/conversations"
	run bash -c "printf '%%load\n%%load nonexist.json\n%%save ../x\nhello\n%%save $conv/mine.json\n%%load $conv/nonexist.json\n' | timeout -k 5 60 '$WARDEN' chat --workspace '$WS' --model openai/fake --api-base http://127.0.0.1:$PORT/v1 --api-key k"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"%load: no saved conversation in $conv yet"* ]]
	[[ "$output" == *"%load: loading the conversation $conv/nonexist.json: opening $conv/nonexist.json: No such file"* ]]
	[[ "$output" == *"%save: ../x: '..' is not allowed; conversations live under $XDG_DATA_HOME/warden"* ]]
	[[ "$output" == *"saved to $conv/mine.json"* ]]
	[ -f "$conv/mine.json" ]
	[[ "$output" != *"/proc/self/fd"* ]]
	run "$WARDEN" chat --resume nonexist.json --export-script -
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"$conv/nonexist.json"* ]]
	[[ "$output" != *"/proc/self/fd"* ]]
}

# Issue 20 (8): a message that is a magic command runs it; it is not sent
# to the model.
@test "chat: warden chat \"%info\" runs the command, and asks the model nothing" {
	fake_llm <<'JSON'
[{"text": "should not be asked"}]
JSON
	chat -y "%info"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"warden chat: what this chat runs with"* ]]
	[[ "$output" == *"sandbox:      profile workspace"* ]]
	[ ! -s "$T/req.log" ]
	chat "%tokens"
	[ "$status" -eq 0 ]
	[[ "$output" == *"tokens in 0 messages"* ]]
	chat "%nosuch"
	[ "$status" -eq 2 ]
	[[ "$output" == *"unknown command %nosuch"* ]]
	[ ! -s "$T/req.log" ]
}

# Issue 20 (9): the hint for a chat without a key names the recording where
# it is, wherever warden runs from (here: the build tree; installed, under
# PREFIX/share/doc/warden, install.bats).
@test "chat: without an API key, the replay hint names a recording that exists" {
	run bash -c "cd / && '$WARDEN' chat --workspace '$WS' hello"
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *"no API key for openai"* ]]
	local demo
	demo=$(sed -n 's/.*try --model replay:\([^ ]*\.json\).*/\1/p' <<< "$output")
	[[ "$demo" == /* ]]
	[ -f "$demo" ]
	cmp "$demo" "$WARDEN_TOP/examples/demo.json"
	is_root || return 0
	# as root, from a checkout the broker's user cannot reach (a clone in
	# /root, 0700): the hint still names it (make test-fresh found it gone)
	local priv="$T/private"
	mkdir -p "$priv/build" "$priv/examples"
	chmod 700 "$priv"
	cp "$WARDEN" "$(dirname "$WARDEN")/warden-broker" "$(dirname "$WARDEN")/warden-egress" "$priv/build/"
	cp "$WARDEN_TOP/examples/demo.json" "$priv/examples/"
	run bash -c "cd / && '$priv/build/warden' chat --workspace '$WS' hello"
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *"try --model replay:$priv/examples/demo.json"* ]]
}

# Issue 20 (1): many local models answer with a fenced block and never call
# the tool.  With tools on (the default), such a reply's fenced blocks in a
# language the session runs are run as --no-tools runs them; data fences,
# languages warden does not run and replies that called the tool are not.
@test "chat: in tool mode, fenced code in a reply without a tool call runs, as with --no-tools" {
	fake_llm <<'JSON'
[{"text": "An example, not to run:\n```python\nprint('exam' + 'ple')\n```\nNow for real.", "tool_call": {"language": "shell", "code": "echo tool-ran"}},
 {"fenced": {"language": "py", "code": "print('fenced', 6 * 7)"}, "text": "Here is code:"},
 {"fenced": "Data:\n```text\nprint('data')\n```\nGo, which warden does not run:\n```go\nfmt.Println(1)\n```\nAll done: 42."}]
JSON
	run bash -c "printf 'compute\n%%info\n' | timeout -k 5 120 '$WARDEN' chat -y --workspace '$WS' --model openai/fake --api-base http://127.0.0.1:$PORT/v1 --api-key k"
	echo "$output"
	[ "$status" -eq 0 ]
	# a reply that calls the tool: its fence is the model's text, in its
	# place, and does not run
	[[ "$output" == *"An example, not to run:"*"print('exam' + 'ple')"*"Now for real."*"tool-ran"* ]]
	[[ "$output" != *"example"$'\n'* ]]
	# a reply without: the fenced block ran in the jail, its output went back
	[[ "$output" == *"fenced 42"* ]]
	req 1 | grep -q '"tools"'
	req 3 | grep -q 'fenced 42'
	# shown once, in its box (not also in the text)
	[ "$(grep -cF "print('fenced', 6 * 7)" <<< "$output")" -eq 1 ]
	[[ "$output" == *"Here is code:"*"╭─ py"*"│ print('fenced', 6 * 7)"* ]]
	# data and unknown languages: text, not run, no further request
	[[ "$output" == *"print('data')"*"fmt.Println(1)"*"All done: 42."* ]]
	[ "$(nreq)" -eq 3 ]
	# %info says which way the last code came
	[[ "$output" == *"; code as fenced blocks (the model made no tool call; tools are offered)"* ]]
	# the system message says so too
	req 1 | grep -q 'fenced block in one of the languages below'
}

@test "chat: in tool mode, fenced code without -y and without a terminal is declined, as with --no-tools" {
	fake_llm <<'JSON'
[{"fenced": {"language": "shell", "code": "touch should_not_exist"}, "text": "Run this:"}]
JSON
	chat "make a file" < /dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"Not run"*"-y"* ]]
	[ ! -e "$WS/should_not_exist" ]
	[ "$(nreq)" -eq 1 ]
	grep -q 'declined' "$(conv_file)"
}

# Issue 20 (12): %jupyter's command-line form, as --export-script's: the
# notebook of a saved conversation, without starting a chat; the same
# places as %jupyter (G160), or stdout.
@test "chat: --resume FILE --jupyter [NAME|-] writes the notebook without starting a chat" {
	fake_llm <<'JSON'
[{"text": "Let me run it.", "tool_call": {"language": "python", "code": "print('nb', 6 * 7)"}},
 {"text": "It printed **42**."}]
JSON
	chat -y "compute it"
	[ "$status" -eq 0 ]
	local f nb
	f=$(conv_file)
	nb="$XDG_DATA_HOME/warden/notebooks/$(basename "$f" .json).ipynb"
	run "$WARDEN" chat --resume "$f" --jupyter
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"notebook written: $nb (4 cells"* ]]
	run "$WARDEN" chat --jupyter mine --resume "$f"
	[ "$status" -eq 0 ]
	[[ "$output" == *"notebook written: $XDG_DATA_HOME/warden/notebooks/mine.ipynb"* ]]
	"$WARDEN" chat --resume "$f" --jupyter - > "$T/out.ipynb"
	for n in "$nb" "$XDG_DATA_HOME/warden/notebooks/mine.ipynb" "$T/out.ipynb"; do
		/usr/bin/python3 - "$n" <<'PY'
import sys
import nbformat
nb = nbformat.read(sys.argv[1], as_version=4)
nbformat.validate(nb)
assert nb.cells[2].source == "print('nb', 6 * 7)", nb.cells
assert nb.cells[2].outputs[0].text == "nb 42\n", nb.cells[2]
PY
	done
	# the places %jupyter refuses are refused here too
	run "$WARDEN" chat --resume "$f" --jupyter ../up
	[ "$status" -eq 1 ]
	[[ "$output" == *"../up: '..' is not allowed"* ]]
	run "$WARDEN" chat --resume "$f" --jupyter "$WS/nb"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$WS/nb: not under $XDG_DATA_HOME/warden/, the only place"* ]]
	[ ! -e "$WS/nb" ]
	[ ! -e "$WS/nb.ipynb" ]
	run "$WARDEN" chat --jupyter
	[ "$status" -eq 2 ]
	[[ "$output" == *"--jupyter needs the conversation: --resume"* ]]
	# no chat was started: the model was asked only by the first run
	[ "$(nreq)" -eq 2 ]
}

# session_output FILE: what the blocks of a conversation printed, in order,
# without the notes warden adds for the model ("(no output)", "[exit
# status 3]", ...)
session_output() {
	python3 - "$1" <<'PY'
import json, re, sys
out = []
for m in json.load(open(sys.argv[1])):
    if m.get("role") == "computer" and m.get("type") == "console":
        c = m["content"]
        c = re.sub(r"(\n?\[(exit status \d+|warden: [^\n]*)\])+$", "", c)
        if c != "(no output)":
            out.append(c if c.endswith("\n") else c + "\n")
sys.stdout.write("".join(out))
PY
}

# Issue 20 (2): each language's blocks run in one interpreter, as in the
# session, whatever comes between them: a Python variable survives a shell
# block, the shell's variables and directory survive the others, a
# JavaScript let survives Python; a final expression is shown; sys.exit
# ends only its block.  The script, run in a jail, prints what the session
# printed.
@test "chat: --export-script keeps each language's state across the others, and prints what the session printed" {
	fake_llm <<'JSON'
[{"tool_call": {"language": "python", "code": "x = 41\nprint('py1', x)"}},
 {"tool_call": {"language": "shell", "code": "v=5\nmkdir -p sub && cd sub\necho sh1 $v"}},
 {"tool_call": {"language": "python", "code": "print('py2', x + 1)"}},
 {"tool_call": {"language": "sh", "code": "echo sh2 $v $(basename \"$PWD\")"}},
 {"tool_call": {"language": "javascript", "code": "let y = 2\nconsole.log('js1', y)"}},
 {"tool_call": {"language": "py", "code": "import sys\nz = x * 2\nz"}},
 {"tool_call": {"language": "js", "code": "console.log('js2', y * 21)"}},
 {"tool_call": {"language": "python", "code": "sys.exit(3)"}},
 {"tool_call": {"language": "python", "code": "print('py3', z, x)\nopen('made.txt', 'w').write('%d\\n' % z)"}},
 {"text": "Done."}]
JSON
	chat -y "go"
	echo "$output"
	[ "$status" -eq 0 ]
	local f want
	f=$(conv_file)
	want=$(session_output "$f")
	echo "the session: $want"
	[[ "$want" == *"py1 41"*"sh1 5"*"py2 42"*"sh2 5 sub"*"js1 2"*"82"*"js2 42"*"py3 82 41"* ]]
	timeout 60 "$WARDEN" chat --resume "$f" --export-script - > "$T/redo.sh"
	cat "$T/redo.sh"
	mkdir "$T/again"
	cp "$T/redo.sh" "$T/again/"
	run timeout 120 "$WARDEN" run --quiet --workspace "$T/again" -- \
		sh -c 'sh redo.sh > out.txt 2>&1; echo "script status $?"; ls -a /tmp'
	echo "$output"
	echo "the script: $(cat "$T/again/out.txt")"
	[ "$status" -eq 0 ]
	[[ "$output" == *"script status 0"* ]]
	[ "$(cat "$T/again/out.txt")" = "$want" ]
	[ "$(cat "$T/again/made.txt")" = 82 ]
	[ -d "$T/again/sub" ]
	# nothing of the script's own is left behind in the jail's /tmp
	[[ "$output" != *"warden-script."* ]]
}

# Issue 20 (2): after --resume the next block of a language runs in a new
# jail (the earlier blocks' state is gone, and the model is told); the
# script starts a new interpreter there too.  The header names the
# conversation file where it is, never /proc/self/fd/N.
@test "chat: --export-script starts a new interpreter where the session's jail was new; its header names the real path" {
	chmod 700 "$T"
	fake_llm <<'JSON'
[{"tool_call": {"language": "python", "code": "x = 5\nprint('first', x)"}},
 {"text": "Set."},
 {"tool_call": {"language": "python", "code": "print('after resume', globals().get('x', 'gone'))"}},
 {"text": "Gone."}]
JSON
	chat -y "set x"
	[ "$status" -eq 0 ]
	local f
	f=$(conv_file)
	chat -y --resume "$f" "print x"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"after resume gone"* ]]
	req 4 | grep -q 'this block ran in a new python jail'
	f=$(conv_file)
	run "$WARDEN" chat --resume "$f" --export-script -
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" > "$T/redo.sh"
	cat "$T/redo.sh"
	[[ "$output" == *"#   $f"* ]]
	[[ "$output" != *"/proc/self/fd"* ]]
	[[ "$output" == *"warden_restart python"* ]]
	mkdir "$T/again"
	cp "$T/redo.sh" "$T/again/"
	run timeout 120 "$WARDEN" run --quiet --workspace "$T/again" -- \
		sh -c 'sh redo.sh > out.txt 2>&1; echo "script status $?"'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"script status 0"* ]]
	[ "$(cat "$T/again/out.txt")" = "first 5
after resume gone" ]
}

# Issue 20 (2): what the script cannot do as the session did is said at its
# top, block by block: a limit that stopped a block, a call the jail denied.
@test "chat: --export-script says at its top where it cannot do what the session did" {
	fake_llm <<'JSON'
[{"tool_call": {"language": "python", "code": "import socket\ntry:\n    socket.socket(socket.AF_PACKET, socket.SOCK_RAW)\nexcept OSError as e:\n    print('denied', e.errno)"}},
 {"tool_call": {"language": "ruby", "code": "puts 'ruby ran'"}},
 {"text": "Done."}]
JSON
	chat -y "go"
	echo "$output"
	[ "$status" -eq 0 ]
	run "$WARDEN" chat --resume "$(conv_file)" --export-script -
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"# Where this script does not do what the session did:"*"#   block 1 (python): the jail denied socket"*"here, without a jail, nothing denies them"* ]]
	[[ "$output" == *"warden_block ruby <<"* ]]
}
