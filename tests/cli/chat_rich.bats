#!/usr/bin/env bats
# warden chat and rich output (issue 12): an image a block shows is saved,
# its path shown, kept in the conversation, and sent to a vision model on
# the next request (a text note for other models).  The fake LLM server
# (tests/fakes/llm_server.py) logs every request.
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
	/usr/bin/python3 -c "import PIL" 2>/dev/null ||
		skip_unless_works "/usr/bin/python3 has no PIL (tools/deps.sh installs python3-pil)"
}

teardown() {
	[ -n "$FAKE_PID" ] && kill "$FAKE_PID" 2>/dev/null
	[ -n "$FAKE_PID" ] && wait "$FAKE_PID" 2>/dev/null
	rm -rf "$T"
	common_teardown
}

# chat_as MODEL [OPTIONS] [MESSAGE]
chat_as() {
	run timeout -k 5 120 "$WARDEN" chat --workspace "$WS" --model "$1" \
		--api-base "http://127.0.0.1:$PORT/v1" --api-key "$KEY" "${@:2}"
}

conv_file() {
	printf '%s\n' "$output" | sed -n 's/^conversation saved in //p' | tail -1
}

# the Nth request's body as JSON text
req() {
	python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["n"] == int(sys.argv[2]):
        print(json.dumps(r["body"]))' "$T/req.log" "$1"
}

SCRIPT='[{"tool_call": {"language": "python", "code": "from PIL import Image\nImage.new(\"RGB\", (24, 12), \"blue\").show()\nprint(\"shown\")"}},
 {"text": "A blue box."}]'

@test "chat: a vision model gets the image on the next request; the file and the conversation have it" {
	fake_llm <<< "$SCRIPT"
	chat_as openai/gpt-4o -y "draw"
	echo "$output"
	[ "$status" -eq 0 ]
	# the path is shown, and the file is the PNG
	path=$(printf '%s\n' "$output" | sed -n 's/.*image (png, [0-9]* bytes) saved in //p' | head -1)
	[ -n "$path" ]
	[ -f "$path" ]
	[ "$(head -c 8 "$path" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]
	# request 2: the tool result, then a user message with the image
	req 2 | python3 -c '
import base64, json, sys
b = json.load(sys.stdin)
msgs = b["messages"]
tool = [i for i, m in enumerate(msgs) if m["role"] == "tool"]
assert tool and "shown" in msgs[tool[0]]["content"], msgs
img = msgs[tool[-1] + 1]
assert img["role"] == "user", img
parts = [p for p in img["content"] if p["type"] == "image_url"]
assert len(parts) == 1, img
url = parts[0]["image_url"]["url"]
assert url.startswith("data:image/png;base64,"), url[:40]
assert base64.b64decode(url.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
'
	# the conversation has the image as Open Interpreter's LMC message
	f=$(conv_file)
	[ -f "$f" ]
	python3 - "$f" "$path" <<'PY'
import base64, json, sys
msgs = json.load(open(sys.argv[1]))
imgs = [m for m in msgs if m.get("type") == "image"]
assert len(imgs) == 1, msgs
assert imgs[0]["role"] == "computer" and imgs[0]["format"] == "base64.png", imgs[0]
assert base64.b64decode(imgs[0]["content"]) == open(sys.argv[2], "rb").read()
PY
}

@test "chat: a model without vision gets a text note instead of the image" {
	fake_llm <<< "$SCRIPT"
	chat_as openai/fake -y "draw"
	[ "$status" -eq 0 ]
	req 2 | python3 -c '
import json, sys
b = json.load(sys.stdin)
s = json.dumps(b)
assert "image_url" not in s and "base64" not in s, s[:400]
tool = [m for m in b["messages"] if m["role"] == "tool"]
assert "produced an image" in tool[0]["content"] and "shown" in tool[0]["content"], tool
'
}

@test "chat: the config key vision overrides the model-name table, both ways" {
	mkdir -p "$XDG_CONFIG_HOME/warden"
	printf '%s\n' '{"vision": false}' > "$XDG_CONFIG_HOME/warden/config.json"
	fake_llm <<< "$SCRIPT"
	chat_as openai/gpt-4o -y "draw"
	[ "$status" -eq 0 ]
	run bash -c "grep -c image_url '$T/req.log'"
	[ "$output" = 0 ]
	grep -q "produced an image" "$T/req.log"
	kill "$FAKE_PID"
	wait "$FAKE_PID" || true
	FAKE_PID=
	rm -f "$T/req.log"
	printf '%s\n' '{"vision": true}' > "$XDG_CONFIG_HOME/warden/config.json"
	fake_llm <<< "$SCRIPT"
	chat_as openai/fake -y "draw"
	[ "$status" -eq 0 ]
	req 2 | grep -q '"image_url"'
	# and it is a setting like any other: a wrong type is an error naming it
	printf '%s\n' '{"vision": "yes"}' > "$XDG_CONFIG_HOME/warden/config.json"
	chat_as openai/fake -y "draw"
	[ "$status" -ne 0 ]
	[[ "$output" == *'"vision" must be true or false'* ]]
}

@test "chat: an Anthropic vision model gets an image block after the tool result" {
	fake_llm <<< "$SCRIPT"
	run timeout -k 5 120 "$WARDEN" chat --workspace "$WS" --model anthropic/claude-3-5-sonnet-latest \
		--api-base "http://127.0.0.1:$PORT/v1" --api-key "$KEY" -y "draw"
	echo "$output"
	[ "$status" -eq 0 ]
	req 2 | python3 -c '
import base64, json, sys
b = json.load(sys.stdin)
turn = b["messages"][-1]
assert turn["role"] == "user", turn
kinds = [blk["type"] for blk in turn["content"]]
assert kinds[0] == "tool_result" and "image" in kinds[1:], kinds
img = [blk for blk in turn["content"] if blk["type"] == "image"][0]
assert img["source"]["type"] == "base64" and img["source"]["media_type"] == "image/png", img
assert base64.b64decode(img["source"]["data"])[:4] == b"\x89PNG"
'
}

@test "chat: HTML from a block is shown as text with its terminal escapes neutralised, and kept in the conversation" {
	fake_llm <<'JSON'
[{"tool_call": {"language": "python", "code": "class H:\n    def _repr_html_(self): return '<b>bold</b>\\x1b]2;pwned\\x07'\ndisplay(H())"}},
 {"text": "Shown."}]
JSON
	chat_as openai/fake -y "html"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"<b>bold</b>"* ]]
	[[ "$output" != *$'\e'* ]]
	f=$(conv_file)
	python3 - "$f" <<'PY'
import json, sys
msgs = json.load(open(sys.argv[1]))
html = [m for m in msgs if m.get("format") == "html"]
assert len(html) == 1 and html[0]["role"] == "computer" and html[0]["type"] == "code", msgs
assert "<b>bold</b>" in html[0]["content"] and "\x1b" not in html[0]["content"], html
PY
	# the model reads no HTML (its code has it, its tool result does not)
	req 2 | python3 -c '
import json, sys
tool = [m for m in json.load(sys.stdin)["messages"] if m["role"] == "tool"]
assert len(tool) == 1 and "<b>" not in tool[0]["content"], tool
'
}

# Issue 20 (12): a block that shows many images kept every one in memory
# and sent them all to the model (with an unlimited output limit, without
# bound).  The first 8 of a block are kept, saved, shown and sent; the rest
# are dropped at once, and both the person and the model are told how many.
@test "chat: at most 8 images of a block are kept and sent; the person and the model are told how many were dropped" {
	printf '%s\n' '{"name": "unlimited", "extends": "workspace", "limits": {"output": "unlimited"}}' > "$T/unlimited.json"
	fake_llm <<'JSON'
[{"tool_call": {"language": "python", "code": "import base64\npng = base64.b64decode('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==')\nclass P:\n    def _repr_png_(self):\n        return png\nfor i in range(20):\n    display(P())\nprint('twenty shown')"}},
 {"text": "Twenty dots."}]
JSON
	chat_as openai/gpt-4o -y --policy "$T/unlimited.json" "draw twenty"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"twenty shown"* ]]
	[ "$(grep -c 'image (png, [0-9]* bytes) saved in ' <<< "$output")" -eq 8 ]
	[[ "$output" == *"12 more images of this block were dropped (at most 8 a block are kept)"* ]]
	[ "$(find "$XDG_DATA_HOME/warden/images" -type f | wc -l)" -eq 8 ]
	req 2 | python3 -c '
import json, sys
b = json.load(sys.stdin)
msgs = b["messages"]
parts = [p for m in msgs if isinstance(m.get("content"), list) for p in m["content"]
         if p.get("type") == "image_url"]
assert len(parts) == 8, len(parts)
tool = [m for m in msgs if m["role"] == "tool"]
assert "12 more images were dropped" in tool[-1]["content"], tool[-1]
'
	python3 - "$(conv_file)" <<'PY'
import json, sys
msgs = json.load(open(sys.argv[1]))
assert len([m for m in msgs if m.get("type") == "image"]) == 8, msgs
PY
}
