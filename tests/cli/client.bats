#!/usr/bin/env bats
# The Python client (clients/python): `pip install ./clients/python` into a
# venv, then a program using the installed warden_client drives a session
# (run, state, a large block, errors, interrupt) and a chat with the fake
# model (approval, a declined block), over stdio and over the listener.
load ../helpers

setup_file() {
	# one venv for the file: pip offline, its build backend from Debian's
	# wheels (tools/deps.sh: python3-setuptools-whl, python3-wheel-whl); the
	# source is copied first, since pip builds in the tree it installs
	VT=$(mktemp -d /tmp/warden-client.XXXXXX)
	export VT
	chmod 755 "$VT"
	cp -r "$WARDEN_TOP/clients/python" "$VT/src"
	/usr/bin/python3 -m venv "$VT/venv"
	"$VT/venv/bin/pip" install --no-index --find-links /usr/share/python-wheels \
		"$VT/src" > "$VT/pip.log" 2>&1 || { cat "$VT/pip.log"; return 1; }
}

teardown_file() {
	rm -rf "$VT"
}

setup() {
	common_setup
	T=$(mktemp -d /tmp/warden-clientt.XXXXXX)
	chmod 755 "$T"
	unset OPENAI_API_KEY ANTHROPIC_API_KEY
}

teardown() {
	rm -rf "$T"
	common_teardown
}

@test "client: pip install ./clients/python installs warden_client, standard library only" {
	run "$VT/venv/bin/python" -c 'import warden_client, sys; print(warden_client.__file__)'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == "$VT/venv/"* ]]
	# it needs nothing but Python itself
	run "$VT/venv/bin/pip" show warden-client
	echo "$output"
	[[ "$output" == *"Requires: "* ]]
	[[ "$output" != *"Requires: "[a-zA-Z]* ]]
}

@test "client: the installed client drives a session and a chat over stdio" {
	run env WARDEN="$WARDEN" WS="$WS" T="$T" WARDEN_TOP="$WARDEN_TOP" timeout -k 5 600 \
		"$VT/venv/bin/python" "$WARDEN_TOP/tests/cli/client_check.py" stdio
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ok stdio"* ]]
}

@test "client: the installed client drives a session and a chat over the listener" {
	run env WARDEN="$WARDEN" WS="$WS" T="$T" WARDEN_TOP="$WARDEN_TOP" timeout -k 5 600 \
		"$VT/venv/bin/python" "$WARDEN_TOP/tests/cli/client_check.py" listen
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ok listen"* ]]
}
