#!/usr/bin/env bats
# `warden chat` on a real terminal: tmux runs it, the test types keys and
# reads the screen.  The model is tests/fakes/llm_server.py.
load ../helpers
load tty

setup() {
	common_setup
	T=$(mktemp -d /tmp/warden-tty.XXXXXX)
	chmod 755 "$T"
	SOCK="warden-tty-$$-${BATS_TEST_NUMBER}"
	FAKE_PID=
}

teardown() {
	tmux -L "$SOCK" kill-server 2>/dev/null || true
	[ -n "$FAKE_PID" ] && kill "$FAKE_PID" 2>/dev/null
	[ -n "$FAKE_PID" ] && wait "$FAKE_PID" 2>/dev/null
	rm -rf "$T"
	common_teardown
}

# warden chat in a fixed-size terminal; its exit status is printed after it
start_chat() {
	local envs="HOME='$T/home' XDG_CONFIG_HOME='$T/config' XDG_DATA_HOME='$T/data' WARDEN_AUDIT_LOG='$AUDIT' TERM=xterm-256color"
	[ -z "${COLOR:-}" ] && envs="$envs NO_COLOR=1"
	[ -n "${EDITOR_SCRIPT:-}" ] && envs="$envs EDITOR='$EDITOR_SCRIPT' VISUAL='$EDITOR_SCRIPT'"
	[ -n "${WARDEN_BROKER:-}" ] && envs="$envs WARDEN_BROKER='$WARDEN_BROKER'"
	mkdir -p "$T/home"
	# the shell ignores SIGINT, so that Ctrl-C reaches warden only and the
	# shell lives on to record warden's exit status
	tmux -L "$SOCK" -f /dev/null new-session -d -x 150 -y 50 \
		"trap '' INT; env $envs '$WARDEN' chat --workspace '$WS' --model openai/fake --api-base http://127.0.0.1:$PORT/v1 --api-key k $*; echo \$? > '$T/rc'; sleep 120"
}

alive() { [ ! -e "$T/rc" ]; }

@test "chat tty: y at the approval prompt runs the block" {
	fake_llm <<'JSON'
[{"text": "Running it.", "tool_call": {"language": "python", "code": "print('approved run', 6 * 7)"}},
 {"text": "It printed 42."}]
JSON
	COLOR=1 start_chat
	wait_prompt 1
	keys "compute it" Enter
	wait_for "Run this code? [y]es [n]o [e]dit [a]lways:"
	screen | grep -q "python · runs in a jail, sandbox profile: workspace"
	keys y Enter
	wait_for "approved run 42"
	wait_for "It printed 42."
	wait_prompt 2
	# on a terminal, with NO_COLOR unset, the code is coloured
	tmux -L "$SOCK" capture-pane -p -e -S -300 | grep -q $'\e\\[[0-9;]*m'
	keys C-d
	wait_exit 0
}

@test "chat tty: n declines, the block does not run, and the model is told" {
	fake_llm <<'JSON'
[{"tool_call": {"language": "shell", "code": "touch declined_file"}},
 {"text": "Understood, I did not run it."}]
JSON
	start_chat
	wait_prompt 1
	keys "make a file" Enter
	wait_for "Run this code?"
	keys n Enter
	wait_for "not run"
	keys "why not?" Enter
	wait_for "Understood, I did not run it."
	[ ! -e "$WS/declined_file" ]
	grep '"n": 2' "$T/req.log" | grep -q "The user declined to run this code."
	alive
}

@test "chat tty: Ctrl-C interrupts a running block, and the chat goes on" {
	fake_llm <<'JSON'
[{"tool_call": {"language": "python", "code": "import time\nprint('sleep' + 'ing now', flush=True)\ntime.sleep(60)\nprint('woke' + ' up')"}},
 {"text": "Still here after the interrupt."}]
JSON
	start_chat
	wait_prompt 1
	keys "sleep a minute" Enter
	wait_for "Run this code?"
	keys y Enter
	# the program's output (not the code, which spells it differently)
	wait_for "sleeping now" 
	keys C-c
	wait_for "interrupted"
	wait_prompt 2
	run ! grep -q "^woke up" <<< "$(screen)"
	alive
	# alive: the next message gets an answer, and the model was told
	keys "are you there?" Enter
	wait_for "Still here after the interrupt."
	grep '"n": 2' "$T/req.log" | grep -q "interrupted by the user"
}

# Issue 20 (2): the exported script included a block the person had
# interrupted.  It is left out (and said so at the top); the blocks before
# and after it run, and print what they printed in the session.
@test "chat tty: --export-script leaves out the block the person interrupted" {
	fake_llm <<'JSON'
[{"tool_call": {"language": "python", "code": "x = 1\nprint('before', x)"}},
 {"tool_call": {"language": "python", "code": "import time\nprint('sleep' + 'ing now', flush=True)\ntime.sleep(60)\nx = 99"}},
 {"tool_call": {"language": "python", "code": "print('after', x)"}},
 {"text": "Done."}]
JSON
	start_chat -y
	wait_prompt 1
	keys "go" Enter
	wait_for "sleeping now"
	keys C-c
	wait_for "interrupted"
	wait_prompt 2
	keys "go on" Enter
	wait_for "after 1"
	wait_for "Done."
	keys C-d
	wait_exit 0
	local f
	f=$(screen | sed -n 's/^conversation saved in //p' | tail -1)
	[ -f "$f" ]
	HOME="$T/home" XDG_CONFIG_HOME="$T/config" XDG_DATA_HOME="$T/data" \
		"$WARDEN" chat --resume "$f" --export-script - > "$T/redo.sh"
	cat "$T/redo.sh"
	run ! grep -q 'time.sleep(60)' "$T/redo.sh"
	grep -q '^#   block 2 (python): left out: the user interrupted it' "$T/redo.sh"
	mkdir "$T/again"
	cp "$T/redo.sh" "$T/again/"
	run timeout 120 "$WARDEN" run --quiet --workspace "$T/again" -- \
		sh -c 'sh redo.sh > out.txt 2>&1; echo "script status $?"'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"script status 0"* ]]
	[ "$(cat "$T/again/out.txt")" = "before 1
after 1" ]
}

@test "chat tty: Ctrl-C stops the model's reply; twice at an empty prompt exits" {
	fake_llm <<'JSON'
[{"slow_ms": 200, "chunk": 2, "text": "This reply streams very slowly, word by word, so that there is time to press Ctrl-C in the middle of it.\nline two\nline three\nline four\n"},
 {"text": "Second answer."}]
JSON
	start_chat
	wait_prompt 1
	keys "talk slowly" Enter
	# the first line arrives, then Ctrl-C
	wait_for "time to press Ctrl-C"
	keys C-c
	wait_for "the reply was interrupted"
	run ! grep -q "line four" <<< "$(screen)"
	keys "again" Enter
	wait_for "Second answer."
	wait_prompt 3
	keys C-c
	wait_for "Ctrl-C again or Ctrl-D to exit"
	alive
	keys C-c
	wait_exit 0
}

@test "chat tty: e opens the code in \$EDITOR, and the edited code is what runs" {
	fake_llm <<'JSON'
[{"tool_call": {"language": "python", "code": "print('value', 6 * 6)"}},
 {"text": "Done."}]
JSON
	printf '#!/bin/sh\nsed -i "s/6 \\* 6/6 * 7/" "$1"\n' > "$T/editor.sh"
	chmod 755 "$T/editor.sh"
	EDITOR_SCRIPT="$T/editor.sh" start_chat
	wait_prompt 1
	keys "show a value" Enter
	wait_for "Run this code?"
	keys e Enter
	# shown again, edited, and asked again
	wait_for "print('value', 6 * 7)"
	wait_for "Run this code?" 2
	keys y Enter
	wait_for "value 42"
	wait_for "Done."
	# the conversation keeps the code that ran
	grep '"n": 2' "$T/req.log" | grep -q "6 \* 7"
}

# Issue 12: with --no-tools the fence was shown in the rendered text and
# again in the code box; on a terminal the markdown renderer is in play.
@test "chat tty: --no-tools shows the code once, in its box (colour on)" {
	fake_llm <<'JSON'
[{"fenced": {"language": "python", "code": "print('tty' + 'once', 6 * 7)"}, "text": "Here is code:"},
 {"text": "It printed 42."}]
JSON
	COLOR=1 start_chat -y --no-tools
	wait_prompt 1
	keys "compute" Enter
	wait_for "ttyonce 42"
	wait_for "It printed 42."
	wait_prompt 2
	[ "$(screen | grep -cF "print('tty' + 'once', 6 * 7)")" -eq 1 ]
	screen | grep -q "│ print('tty' + 'once', 6 \* 7)"
	keys C-d
	wait_exit 0
}

# Issue 20 (1): with tools on, a reply with fenced code and no tool call
# asks before its block runs, and shows the code once, in its box.
@test "chat tty: tool mode, a fenced reply without a tool call: approved, run, shown once" {
	fake_llm <<'JSON'
[{"fenced": {"language": "python", "code": "print('tool' + 'less', 6 * 7)"}, "text": "Here is code:"},
 {"text": "It printed 42."}]
JSON
	COLOR=1 start_chat
	wait_prompt 1
	keys "compute" Enter
	wait_for "Run this code? [y]es [n]o [e]dit [a]lways:"
	keys y Enter
	wait_for "toolless 42"
	wait_for "It printed 42."
	wait_prompt 2
	[ "$(screen | grep -cF "print('tool' + 'less', 6 * 7)")" -eq 1 ]
	screen | grep -q "│ print('tool' + 'less', 6 \* 7)"
	screen | grep -q "Here is code:"
	keys C-d
	wait_exit 0
}

@test "chat tty: %info and %jupyter show the facts and the notebook's path" {
	fake_llm <<'JSON'
[{"text": "Running.", "tool_call": {"language": "shell", "code": "echo from-the-jail"}},
 {"text": "Done."}]
JSON
	start_chat -y --system-message Rhymes-only
	wait_prompt 1
	keys "go" Enter
	wait_for "Done."
	wait_prompt 2
	keys "%info" Enter
	wait_for "session:      "
	screen | grep -q "system:       your system message replaces warden's instructions"
	screen | grep -q "sandbox:      profile workspace"
	screen | grep -q "limits:       memory 1G"
	screen | grep -q "degraded:     "
	screen | grep -q "conversation: $T/data/warden/conversations/"
	keys "%jupyter" Enter
	wait_for "notebook written: "
	local nb
	nb=$(screen | sed -n 's/^notebook written: \(.*\.ipynb\) (.*/\1/p')
	[[ "$nb" == "$T/data/warden/notebooks/"*".ipynb" ]]
	grep -q 'from-the-jail' "$nb"
	keys C-d
	wait_exit 0
}

# Issue 12: the conversation picker: a number resumes that conversation,
# whose messages go to the model with the next question.
@test "chat tty: --conversations lists, and a number resumes that conversation" {
	fake_llm <<'JSON'
[{"text": "answer one"}, {"text": "answer two"}, {"text": "answer three"}]
JSON
	mkdir -p "$T/home"
	for q in "older question" "newer question"; do
		HOME="$T/home" XDG_CONFIG_HOME="$T/config" XDG_DATA_HOME="$T/data" \
			timeout -k 5 60 "$WARDEN" chat --workspace "$WS" --model openai/fake \
			--api-base "http://127.0.0.1:$PORT/v1" --api-key k "$q" > /dev/null
	done
	touch -d '2001-02-03 04:05' "$T"/data/warden/conversations/*older-question*.json
	start_chat --conversations
	wait_for "Resume which? [1-2, Enter: none]"
	screen | grep -q "  2  2001-02-03 04:05    2 msgs  older question"
	keys 2 Enter
	wait_for "resumed $T/data/warden/conversations/"
	screen | grep -q "> older question"
	wait_prompt 2
	keys "and then?" Enter
	wait_for "answer three"
	grep '"n": 3' "$T/req.log" | grep -q "older question"
	run ! grep -q "newer question" <<< "$(grep '"n": 3' "$T/req.log")"
	keys C-d
	wait_exit 0
}
