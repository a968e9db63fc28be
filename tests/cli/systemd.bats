#!/usr/bin/env bats
# The systemd user units (systemd/): what make install puts in the user
# unit directory passes `systemd-analyze verify`, and their own command
# lines serve a socket-activated warden (systemd-socket-activate plays the
# user manager: it binds the socket and passes it as LISTEN_FDS).
load ../helpers

setup() {
	common_setup
	T=$(mktemp -d /tmp/warden-systemd.XXXXXX)
	chmod 755 "$T"
	P="$T/usr"
	RT="$T/rt"
	mkdir -p "$RT" "$T/home"
	chmod 700 "$RT"
	BUILDDIR=$(cd "$(dirname "$WARDEN")" && pwd)
	PREFIX="$P" BUILD="$BUILDDIR" sh "$WARDEN_TOP/tools/install.sh" install > /dev/null
	UNITS="$P/lib/systemd/user"
	SA_PID=
}

teardown() {
	if [ -n "$SA_PID" ]; then
		kill "$SA_PID" 2>/dev/null || true
		wait "$SA_PID" 2>/dev/null || true
	fi
	rm -rf "$T"
	common_teardown
}

# unit_line UNIT KEY: the value of KEY= in the installed unit, with %t and
# %h as the user manager would give them here
unit_line() {
	sed -n "s/^$2=//p" "$UNITS/$1" | sed -e "s|%t|$RT|g" -e "s|%h|$T/home|g"
}

@test "systemd: the installed user units pass systemd-analyze verify" {
	command -v systemd-analyze || skip_unless_works "systemd-analyze is not installed"
	[ -f "$UNITS/warden.socket" ]
	[ -f "$UNITS/warden.service" ]
	# the service names the installed warden, which is there
	grep -q "^ExecStart=$P/bin/warden serve --listen systemd " "$UNITS/warden.service"
	run env XDG_RUNTIME_DIR="$RT" MANPATH="$P/share/man" \
		systemd-analyze verify --user "$UNITS/warden.socket" "$UNITS/warden.service"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "systemd: the units' own command lines serve a socket-activated warden on the user's socket" {
	command -v systemd-socket-activate || skip_unless_works "systemd-socket-activate is not installed"
	# the socket unit makes the token, once: 256 bits of hex, 0600
	sh -c "$(unit_line warden.socket ExecStartPre)"
	run stat -c %a "$RT/warden/token"
	[ "$output" = 600 ]
	grep -qE '^[0-9a-f]{64}$' "$RT/warden/token"
	first=$(cat "$RT/warden/token")
	sh -c "$(unit_line warden.socket ExecStartPre)"
	[ "$(cat "$RT/warden/token")" = "$first" ]
	sh -c "$(unit_line warden.service ExecStartPre)"
	[ -d "$T/home/warden-workspace" ]
	sock="$(unit_line warden.socket ListenStream)"
	[ "$sock" = "$RT/warden/warden.sock" ]
	# shellcheck disable=SC2046
	systemd-socket-activate -l "$sock" -E XDG_RUNTIME_DIR="$RT" -E HOME="$T/home" \
		-E WARDEN_AUDIT_LOG="$AUDIT" -E PATH="$PATH" \
		$(unit_line warden.service ExecStart) > "$T/out" 2> "$T/err" &
	SA_PID=$!
	for _ in $(seq 600); do
		[ -S "$sock" ] && break
		sleep 0.05
	done
	[ -S "$sock" ]
	run timeout -k 5 120 python3 - "$sock" "$RT/warden/token" "$T/home/warden-workspace" "$WARDEN_TOP" <<'PY'
import sys, os
sock, token, ws, top = sys.argv[1:]
sys.path.insert(0, os.path.join(top, "clients", "python"))
from warden_client import Session
with Session(url="unix:" + sock, token=open(token).read().strip(), timeout=60) as s:
    out, res = s.execute("echo activated; pwd", "shell")
    print(out, end="")
    print("exit", res["exit_code"])
PY
	echo "$output"
	cat "$T/err"
	[ "$status" -eq 0 ]
	[[ "$output" == *"activated"* ]]
	[[ "$output" == *"$T/home/warden-workspace"* ]]
	[[ "$output" == *"exit 0"* ]]
	# warden served systemd's socket: it made none of its own, and said so
	grep -q "listening on $sock" "$T/err"
	grep -q "Execing" "$T/err"
	# warden ends on SIGTERM; the socket stays the manager's
	kill "$SA_PID"
	st=0
	wait "$SA_PID" || st=$?
	SA_PID=
	[ "$st" -eq 143 ]
	[ -S "$sock" ]
}
