#!/usr/bin/env bats
# `warden serve --listen`: the serve protocol over WebSocket, end to end
# through the real supervisor, broker and jails.  tests/cli/listen_client.py
# plays each scenario with the Python client (clients/python) and raw
# sockets, and bounds every wait.
load ../helpers

setup() {
	common_setup
	T=$(mktemp -d /tmp/warden-listen.XXXXXX)
	chmod 755 "$T"
}

teardown() {
	rm -rf "$T"
	common_teardown
}

# listen_client SCENARIO
listen_client() {
	run env WARDEN="$WARDEN" WS="$WS" T="$T" timeout -k 5 600 \
		python3 "$WARDEN_TOP/tests/cli/listen_client.py" "$1"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ok $1"* ]]
}

@test "listen: no token, a wrong token or another scheme get 401 for /ws and HTTP, before any session (G211)" {
	listen_client auth
}

@test "listen: a run over /ws runs in a jail and keeps the session's state" {
	listen_client run
}

@test "listen: a client cannot see or touch another's session; its own end with its connection (G213)" {
	listen_client isolation
}

@test "listen: 100 connections at once, a session each" {
	listen_client many
}

@test "listen: --max-sessions holds across clients" {
	listen_client max_sessions
}

@test "listen: a connection that drops ends its running block's jail" {
	listen_client disconnect
}

@test "listen: --session-idle ends a session nobody uses, and says so" {
	listen_client idle
}

@test "listen: a non-loopback address without TLS is refused with the reason (G214)" {
	listen_client nonloopback
}

@test "listen: with --tls-cert and --tls-key a non-loopback address serves wss://" {
	listen_client tls
}

@test "listen: a Unix socket path is the caller's alone (0600) and removed at the end" {
	listen_client unix
}

# Red team: a Unix socket whose directory is swapped for a symlink to
# another one (by jailed code, when the socket lay in its workspace): at
# its end warden removed the path, so a file of that name where the
# symlink led (root's, as root).  Seen failing before: victim/w.sock was
# gone.
@test "listen: at its end warden removes its own Unix socket, not what a swapped directory leads to (red team)" {
	listen_client unix_swap
}

# Red team: a Unix socket inside a served workspace: a block removed it,
# bound its own there and took the bearer token of the next client that
# connected.  Seen failing before: warden started there.
@test "listen: a Unix socket inside a served workspace is refused (red team)" {
	listen_client socket_in_workspace
}

@test "listen: the listener is the confined broker's; the supervisor holds none (G210)" {
	listen_client owner
}

@test "listen: --token-file must be a 0600 file of the caller's; a made token is 256 bits, 0600 (G212)" {
	listen_client token_file
}

# Red team: the token warden makes went into $XDG_RUNTIME_DIR/warden whoever
# owned $XDG_RUNTIME_DIR (one kept from another user by su or sudo -E, or
# one others may write): they can swap the warden directory between its
# check and the write, and read the token.  Now XDG_RUNTIME_DIR must be the
# caller's own 0700 directory, as the XDG spec says, or warden refuses and
# names --token-file; seen failing before: the server started and wrote
# the token there.
@test "listen: a made token goes only into an XDG_RUNTIME_DIR that is the caller's own 0700 directory (red team)" {
	mkdir "$T/rt"
	chmod 777 "$T/rt"
	run env XDG_RUNTIME_DIR="$T/rt" timeout -k 5 60 "$WARDEN" serve --listen 127.0.0.1:0 --workspace "$WS"
	echo "$output"
	[ "$status" -ne 0 ]
	[ "$status" -ne 124 ]
	[[ "$output" == *"XDG_RUNTIME_DIR"*"--token-file"* ]]
	[ ! -e "$T/rt/warden/token" ]
}

# Red team: a --token-file or --tls-key inside a workspace warden serves
# was read and used, and every jail there could read it too.  Seen failing
# before: warden started with both.
@test "listen: a token file or TLS key inside a served workspace is refused (red team)" {
	listen_client secret_in_workspace
}

@test "listen: /mcp serves MCP over Streamable HTTP (JSON or SSE); a session lives on by an unguessable handle" {
	listen_client mcp
}
