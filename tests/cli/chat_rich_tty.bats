#!/usr/bin/env bats
# warden chat on a real terminal (tmux) and an image a block shows: the
# path of the saved file is on the screen; the inline-image escape is
# written only when TERM says the terminal draws images (kitty's graphics
# protocol), read from the raw bytes the pane received (tmux pipe-pane).
load ../helpers
load tty

setup() {
	common_setup
	T=$(mktemp -d /tmp/warden-tty.XXXXXX)
	chmod 755 "$T"
	SOCK="warden-rtty-$$-${BATS_TEST_NUMBER}"
	FAKE_PID=
	/usr/bin/python3 -c "import PIL" 2>/dev/null ||
		skip_unless_works "/usr/bin/python3 has no PIL (tools/deps.sh installs python3-pil)"
}

teardown() {
	tmux -L "$SOCK" kill-server 2>/dev/null || true
	[ -n "$FAKE_PID" ] && kill "$FAKE_PID" 2>/dev/null
	[ -n "$FAKE_PID" ] && wait "$FAKE_PID" 2>/dev/null
	rm -rf "$T"
	common_teardown
}

# start_chat TERM [VAR=VALUE]: warden chat -y "draw" in tmux, its raw output
# in $T/raw; it starts once the pipe is in place ($T/go)
start_chat() {
	local envs="HOME='$T/home' XDG_CONFIG_HOME='$T/config' XDG_DATA_HOME='$T/data' WARDEN_AUDIT_LOG='$AUDIT' TERM=$1 NO_COLOR=1 ${2:-}"
	mkdir -p "$T/home"
	tmux -L "$SOCK" -f /dev/null new-session -d -x 200 -y 50 \
		"while [ ! -e '$T/go' ]; do sleep 0.05; done; env -u KITTY_WINDOW_ID -u TERM_PROGRAM $envs '$WARDEN' chat -y --workspace '$WS' --model openai/fake --api-base http://127.0.0.1:$PORT/v1 --api-key k draw; sleep 120"
	tmux -L "$SOCK" pipe-pane -o "cat >> '$T/raw'"
	touch "$T/go"
}

SCRIPT='[{"tool_call": {"language": "python", "code": "from PIL import Image\nImage.new(\"RGB\", (24, 12), \"blue\").show()"}},
 {"text": "A blue box."}]'

@test "chat tty: an image's saved path is shown; no inline escape on a plain xterm" {
	fake_llm <<< "$SCRIPT"
	start_chat xterm-256color
	wait_for "A blue box."
	path=$(screen | sed -n 's/.*image (png, [0-9]* bytes) saved in \([^ ]*\.png\).*/\1/p' | head -1)
	[ -n "$path" ]
	[ -f "$path" ]
	[ "$(head -c 4 "$path" | od -An -c | tr -d ' \n')" = "211PNG" ]
	run grep -c $'\e_G' "$T/raw"
	[ "$output" = 0 ]
}

@test "chat tty: on a terminal that says it is kitty, the image is drawn inline (kitty graphics)" {
	fake_llm <<< "$SCRIPT"
	start_chat xterm-kitty
	wait_for "A blue box."
	screen | grep -q "image (png, [0-9]* bytes) saved in "
	# the escape: APC G with PNG (f=100), transmit and show (a=T), base64 of a PNG
	grep -qa $'\e_Gf=100,a=T,m=0;iVBORw0KGgo' "$T/raw"
}

@test "chat tty: on a terminal whose TERM_PROGRAM says iTerm2, the image is drawn inline (iTerm2's protocol)" {
	# TERM_PROGRAM passes the broker's environment allowlist (G47)
	fake_llm <<< "$SCRIPT"
	start_chat xterm-256color TERM_PROGRAM=iTerm.app
	wait_for "A blue box."
	screen | grep -q "image (png, [0-9]* bytes) saved in "
	grep -qa $'\e]1337;File=inline=1;size=[0-9]*:iVBORw0KGgo' "$T/raw"
}

@test "chat tty: the running line of a block is shown under its code box" {
	fake_llm <<'JSON'
[{"tool_call": {"language": "python", "code": "import os, time\nwhile not os.path.exists('go'): time.sleep(0.05)\nprint('went')"}},
 {"text": "Done waiting."}]
JSON
	start_chat xterm-256color
	wait_for "line 2: while not os.path.exists('go'): time.sle…"
	touch "$WS/go"
	wait_for "Done waiting."
	screen | grep -q "^went"
}
