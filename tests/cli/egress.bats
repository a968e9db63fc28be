#!/usr/bin/env bats
# The egress proxy in its own process (issue 21; SECURITY.md G193-G195):
# warden-egress, started by the supervisor, unprivileged and confined,
# judged from the host (/proc/PID of it); what happens when it dies or
# sends what it must not.  The engine itself is proxy_engine.bats's, the
# jail's side net.bats's.  The servers listen on 127.0.0.2 (the host's
# loopback, allowed by a literal entry), as in net.bats.
load ../helpers

ADDR=127.0.0.2

wait_file() { for _ in $(seq 400); do [ -s "$1" ] && return 0; sleep 0.05; done; return 1; }

setup_file() {
	D=$(mktemp -d /tmp/warden-egress.XXXXXX)
	export D
	mkdir -p "$D/www"
	echo "hello through the proxy" > "$D/www/hello.txt"
	python3 "$BATS_TEST_DIRNAME/net_server.py" http "$ADDR" "$D/www" "$D/http.port" "$D/http.log" &
	echo $! > "$D/pids"
	wait_file "$D/http.port"
}

teardown_file() {
	local p
	while read -r p; do kill "$p" 2>/dev/null || true; done < "$D/pids"
	rm -rf "$D"
}

setup() {
	common_setup
	HTTP=$(cat "$D/http.port")
	# the test's own WARDEN_EGRESS (a wrapper or a fake) lives here: as
	# root the egress process runs as the user warden, who must reach it
	E=$(mktemp -d /tmp/warden-egress-exe.XXXXXX)
	chmod 0777 "$E"
}

teardown() {
	if [ -n "${WPID:-}" ]; then kill "$WPID" 2>/dev/null || true; wait "$WPID" 2>/dev/null || true; fi
	rm -rf "$E"
	common_teardown
}

# egress_pid: the pid in the audit log's first egress_start record (written
# once the process is confined and has said READY), waiting up to 20 s
egress_pid() {
	local i p
	for i in $(seq 400); do
		p=$(sed -n 's/.*"event":"egress_start","pid":\([0-9]*\).*/\1/p' "$AUDIT" 2>/dev/null | head -n 1)
		[ -n "$p" ] && { echo "$p"; return 0; }
		sleep 0.05
	done
	echo "no egress_start in $AUDIT" >&2
	return 1
}

field() { sed -n "s/^$2:[[:space:]]*//p" "/proc/$1/status"; }

# ended_clean: the run ends (the jail waits for $WS/done), and its egress
# process with it, as warden ends it: on its EOF, exit status 0 -- not
# killed by its own filter or a sanitizer on the way
ended_clean() {
	touch "$WS/done"
	wait "$WPID"
	WPID=
	grep '"event":"egress_end"' "$AUDIT"
	[ "$(grep -c '"event":"egress_end"' "$AUDIT")" -eq 1 ]
	grep -q '"event":"egress_end","pid":[0-9]*,"reason":"stopped: warden is ending","exit_code":0,' "$AUDIT"
}

# G193, for `warden run`: the egress process is warden's child, runs as
# another uid than root (as root) or the caller's, holds no capability in
# any set, has no_new_privs and a seccomp filter, is not dumpable, and
# holds only what it needs: /dev/null, its socket to the supervisor, the
# jail's listener, its epoll and timers (root reads its fd table; to the
# caller, unprivileged, it is closed: not dumpable).
@test "egress: warden run's proxy process is unprivileged and confined, judged from the host (G193)" {
	"$WARDEN" run --quiet --no-stdin --workspace "$WS" --audit-log "$AUDIT" --net proxy \
		--allow "$ADDR:$HTTP" --timeout 120s -- \
		sh -c 'curl -sS -m 30 -o got.txt http://'"$ADDR:$HTTP"'/hello.txt; echo ready > in.ready
			while [ ! -e done ]; do sleep 0.05; done' 3>&- &
	WPID=$!
	wait_file "$WS/in.ready"
	# the proxy works (the control for everything below)
	[ "$(cat "$WS/got.txt")" = "hello through the proxy" ]
	local pid
	pid=$(egress_pid)
	echo "warden $WPID, egress $pid"
	[ "$(field "$pid" PPid)" = "$WPID" ]
	[ "$(field "$pid" Name)" = warden-egress ]
	local uids
	uids=$(field "$pid" Uid)
	echo "Uid: $uids"
	if is_root; then
		[ "$(echo "$uids" | tr -s '\t ' '\n' | grep -cx 0)" -eq 0 ]
		[ "$(field "$pid" CapBnd)" = 0000000000000000 ]
	else
		[ "$(echo "$uids" | tr -s '\t ' '\n' | sort -u)" = "$(id -u)" ]
	fi
	[ "$(field "$pid" CapEff)" = 0000000000000000 ]
	[ "$(field "$pid" CapPrm)" = 0000000000000000 ]
	[ "$(field "$pid" CapInh)" = 0000000000000000 ]
	[ "$(field "$pid" CapAmb)" = 0000000000000000 ]
	[ "$(field "$pid" NoNewPrivs)" = 1 ]
	[ "$(field "$pid" Seccomp)" = 2 ]
	# not dumpable: the kernel hands the files of its /proc entry to root,
	# whatever its uid
	[ "$(stat -c %u "/proc/$pid/status")" = 0 ]
	if ! is_root; then
		run ls "/proc/$pid/fd"
		[ "$status" -ne 0 ]
		ended_clean
		return 0
	fi
	# its fds, as root: nothing but these kinds, and the jail's listener
	# among them (127.0.0.1:3128 in state LISTEN in the jail's namespace)
	local init="" p ino f link errlink kinds=""
	for p in $(pgrep -P "$WPID"); do
		[ "$(awk '/^NSpid:/ {print NF}' "/proc/$p/status")" -ge 3 ] && init=$p
	done
	[ -n "$init" ]
	ino=$(awk '$2 == "0100007F:0C38" && $4 == "0A" {print $10}' "/proc/$init/net/tcp")
	[ -n "$ino" ]
	errlink=$(readlink "/proc/$WPID/fd/2")
	for f in /proc/"$pid"/fd/*; do
		link=$(readlink "$f")
		echo "${f##*/} -> $link"
		case $link in
		/dev/null | "socket:["*"]" | "anon_inode:[eventpoll]" | "anon_inode:[timerfd]") ;;
		*) [ "${f##*/}" = 2 ] && [ "$link" = "$errlink" ] ;;
		esac
		kinds="$kinds $link"
	done
	[[ "$kinds" == *"socket:[$ino]"* ]]
	[ "$(readlink "/proc/$pid/fd/0")" = /dev/null ]
	[ "$(readlink "/proc/$pid/fd/1")" = /dev/null ]
	# the binary it runs is warden-egress
	[ "$(readlink "/proc/$pid/exe")" = "$(cd "$(dirname "$WARDEN")" && pwd)/warden-egress" ]
	ended_clean
}

# The egress process's own records, of no session, in `warden audit`'s
# default view (the last runs): between the run's records, each summarised
# (its pid; how it ended, or how long a restarted one was down); read as
# strictly as every record: an egress_start whose pid is not a number is
# reported by its line and not shown.
@test "egress: warden audit's default view shows the egress process's start and end, read strictly" {
	"$WARDEN" run --quiet --no-stdin --workspace "$WS" --audit-log "$AUDIT" --net proxy \
		--allow "$ADDR:$HTTP" --timeout 120s -- \
		sh -c 'while [ ! -e done ]; do sleep 0.05; done' 3>&- &
	WPID=$!
	local pid
	pid=$(egress_pid)
	ended_clean
	run --separate-stderr "$WARDEN" audit --no-pager --audit-log "$AUDIT"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *" run_start "*" egress_start   egress proxy pid $pid ready"*" run_end "* ]]
	[[ "$output" == *" egress_end     egress proxy pid $pid ended, exit=0: stopped: warden is ending"* ]]
	# a restart, as the supervisor writes it; and one with a pid of the wrong type
	printf '{"ts":"2031-01-01T00:00:00.000Z","event":"egress_start","pid":7,"restart":true,"down_ms":250,"refused":3}\n' >> "$AUDIT"
	printf '{"ts":"2031-01-01T00:00:01.000Z","event":"egress_start","pid":"8","restart":false}\n' >> "$AUDIT"
	run --separate-stderr "$WARDEN" audit --no-pager --audit-log "$AUDIT"
	echo "$output"; echo "$stderr"
	[ "$status" -eq 1 ]
	[[ "$output" == *" egress_start   egress proxy pid 7 ready again after 250ms down (3 requests answered 502 meanwhile)"* ]]
	[[ "$output" != *"pid 8 "* ]]
	[[ "$stderr" == *"$AUDIT:$(wc -l < "$AUDIT"): malformed audit record; \"pid\" has the wrong type"* ]]
}

# G194: a wrapper around the real binary (a copy in $E, which the egress's
# user can reach) that waits while $E/hold exists before it becomes the
# egress process: the test keeps the restarted process from saying READY
# for as long as it checks the 502, with no timing involved.
@test "egress: SIGKILL of the proxy process: the session runs on, requests get a 502 saying why, then work again; audited (G194)" {
	cp "$(dirname "$WARDEN")/warden-egress" "$E/warden-egress"
	cat > "$E/wrap" <<EOF
#!/usr/bin/python3
import os, time
while os.path.exists("$E/hold"):
    time.sleep(0.02)
os.execv("$E/warden-egress", ["warden-egress"])
EOF
	chmod 0755 "$E/wrap" "$E/warden-egress"
	run env WARDEN="$WARDEN" WARDEN_EGRESS="$E/wrap" EGRESS_DIR="$E" \
		NET_URL="http://$ADDR:$HTTP/hello.txt" \
		python3 "$WARDEN_TOP/tests/cli/egress_client.py" egress_kill --workspace "$WS" \
		--audit-log "$AUDIT" --net proxy --allow "$ADDR:$HTTP"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ok egress_kill"* ]]
	# warden audit reads the records strictly
	run "$WARDEN" audit --audit-log "$AUDIT" --json
	[ "$status" -eq 0 ]
	# the killed one, then the restarted one, ended by warden at its end
	# (exit status 0: not killed by its filter or a sanitizer meanwhile)
	[ "$(grep -c '"event":"egress_end"' "$AUDIT")" -eq 2 ]
	grep '"event":"egress_end"' "$AUDIT" | tail -n 1 |
		grep -q '"reason":"stopped: warden is ending","exit_code":0,'
}

# G195: a fake egress process in Python; each start sends the next thing
# it must not (tests/cli/egress_client.py HOSTILE): an unknown frame type,
# an AUDIT for a jail the supervisor never gave it, an AUDIT whose host
# holds an escape sequence, a file descriptor.
@test "egress: a proxy process that sends a malformed frame is killed and restarted, never the supervisor (G195)" {
	cat > "$E/fake" <<EOF
#!/usr/bin/python3
import os, socket, struct
n = len(os.listdir("$E")) - 1          # this start's number: 0, 1, ...
open("$E/start.%d" % n, "w").close()
s = socket.socket(fileno=3)
s.recv(65536)                          # CONFIG
s.send(bytes([64]) + struct.pack(">I", 1))   # READY, version 1
def st(b):
    return struct.pack(">I", len(b)) + b
def audit(jail, host):
    return (bytes([65]) + struct.pack(">I", jail) + st(b"GET") + st(host) + struct.pack(">I", 80)
            + st(b"") + bytes([0]) + struct.pack(">II", 0xffffffff, 403) + st(b"")
            + struct.pack(">QQQ", 0, 0, 0))
kind = n % 4
if kind == 0:
    s.send(bytes([238]) + b"junk")
elif kind == 1:
    s.send(audit(4242, b"example.org"))
elif kind == 2:
    s.send(audit(1, b"evil\x1b[2J.example"))
else:
    s.sendmsg([audit(1, b"example.org")], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("i", 0))])
while s.recv(65536):
    pass
EOF
	chmod 0755 "$E/fake"
	run env WARDEN="$WARDEN" WARDEN_EGRESS="$E/fake" NET_URL="http://$ADDR:$HTTP/hello.txt" \
		python3 "$WARDEN_TOP/tests/cli/egress_client.py" egress_hostile --workspace "$WS" \
		--audit-log "$AUDIT" --net proxy --allow "$ADDR:$HTTP"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ok egress_hostile"* ]]
	# the escape sequence reached neither the log nor warden's stderr
	run grep -c $'\x1b' "$AUDIT"
	[ "$output" = 0 ]
	# nothing the fake sent was written as a record
	run grep -c '"event":"net"' "$AUDIT"
	[ "$output" = 0 ]
}
