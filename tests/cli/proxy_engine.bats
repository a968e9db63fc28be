#!/usr/bin/env bats
# The egress proxy's engine (egress/engine.c, egress/head.c, policy/netallow.c)
# against real clients and servers on the host's loopback: build/tests/proxyd
# runs the loop, the resolver and the engine that warden-egress runs, on a
# host port with the allow entries it is given, confined as warden-egress is
# (--confine 1: its seccomp allowlist kills the process on any call not on
# it, so every test here also proves the list covers the engine's path);
# curl and tests/cli/proxy_peer.py are the jailed code; a python http.server
# and a TCP echo server are the destinations.  The jail side (the listener
# inside the jail's namespace, --net, --allow) is tested by net.bats, the
# process split (warden-egress and the supervisor) by egress.bats.
load ../helpers

PROXYD=$(dirname "$WARDEN")/tests/proxyd
PEER=$BATS_TEST_DIRNAME/proxy_peer.py

setup() {
	common_setup
	[ -x "$PROXYD" ] || { echo "no $PROXYD: run make unit" >&2; return 1; }
	PIDS=()
	mkdir -p "$WS/www"
	echo hello-through-proxy > "$WS/www/hello.txt"
	python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$WS/www" > "$WS/http.log" 2>&1 3>&- &
	PIDS+=($!)
	python3 "$PEER" echo "$WS/echo.port" "$WS/echo.log" 3>&- &
	PIDS+=($!)
	HTTP_PORT=$(wait_for "$WS/http.log" '.*port \([0-9][0-9]*\).*')
	ECHO_PORT=$(wait_for "$WS/echo.port" '^\([0-9][0-9]*\)$')
	[ -n "$HTTP_PORT" ] && [ -n "$ECHO_PORT" ]
}

teardown() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	common_teardown
}

# wait_for FILE SED-RE: \1 of the first line of FILE that RE matches, waiting
# up to 30 s
wait_for() {
	local i v
	for i in $(seq 300); do
		v=$(sed -n "s/$2/\\1/p" "$1" 2>/dev/null | head -1)
		[ -n "$v" ] && { echo "$v"; return 0; }
		sleep 0.1
	done
	echo "nothing like '$2' in $1 after 30 s" >&2
	return 1
}

# start_proxy [proxyd options] -- ALLOW...: sets PROXY (its port), PROXY_PID
start_proxy() {
	local opts=()
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	rm -f "$WS/proxy.port"
	"$PROXYD" --confine 1 "${opts[@]}" "$WS/proxy.port" "$@" 3>&- &
	PROXY_PID=$!
	PIDS+=("$PROXY_PID")
	PROXY=$(wait_for "$WS/proxy.port" '^\([0-9][0-9]*\)$')
}

hwm_kb() { sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/status"; }

@test "proxy: curl gets a page through http_proxy from an allowed literal address" {
	start_proxy --audit "$AUDIT" -- "127.0.0.1:$HTTP_PORT"
	run curl -sS --max-time 30 -x "http://127.0.0.1:$PROXY" "http://127.0.0.1:$HTTP_PORT/hello.txt"
	[ "$status" = 0 ]
	[ "$output" = hello-through-proxy ]
	# and through a CONNECT tunnel (as HTTPS_PROXY makes curl do)
	run curl -sS --max-time 30 -p -x "http://127.0.0.1:$PROXY" "http://127.0.0.1:$HTTP_PORT/hello.txt"
	[ "$status" = 0 ]
	[ "$output" = hello-through-proxy ]
	kill -TERM "$PROXY_PID"; wait "$PROXY_PID"
	run grep -c '"event":"net".*"allowed":true,"rule":"127.0.0.1:'"$HTTP_PORT"'","status":200' "$AUDIT"
	[ "$output" = 2 ]
	grep -q '"method":"CONNECT","host":"127.0.0.1","port":'"$HTTP_PORT"',"address":"127.0.0.1"' "$AUDIT"
	# the upstream saw an origin-form request line, not the absolute URL
	grep -q '"GET /hello.txt HTTP/1.1" 200' "$WS/http.log"
	run ! grep -q '"GET http://' "$WS/http.log"
}

@test "proxy: a CONNECT tunnel relays both ways, bytes sent with the head included" {
	start_proxy -- "127.0.0.1:$ECHO_PORT"
	run python3 "$PEER" tunnel "$PROXY" "127.0.0.1:$ECHO_PORT"
	[ "$status" = 0 ]
	[ "${lines[0]}" = "HTTP/1.1 200 Connection established" ]
	[ "${lines[1]}" = "early line" ]
	[ "${lines[2]}" = "second line" ]
}

@test "proxy: a refused request gets 403 naming the policy and the exact allow line" {
	start_proxy --audit "$AUDIT" -- "127.0.0.1:$ECHO_PORT"
	run curl -sS --max-time 30 -i -x "http://127.0.0.1:$PROXY" "http://127.0.0.1:$HTTP_PORT/hello.txt"
	[ "$status" = 0 ]
	[[ "${lines[0]}" == "HTTP/1.1 403 Forbidden"* ]]
	[[ "$output" == *'policy "proxyd-test" (tests/helpers/proxyd.c)'* ]]
	[[ "$output" == *"--allow 127.0.0.1:$HTTP_PORT"* ]]
	[[ "$output" == *'"allow": [..., "127.0.0.1:'"$HTTP_PORT"'"]'* ]]
	[[ "$output" != *hello-through-proxy* ]]
	# CONNECT is refused the same way; curl reports the proxy's 403
	run curl -sS --max-time 30 -p -x "http://127.0.0.1:$PROXY" "http://127.0.0.1:$HTTP_PORT/hello.txt"
	[ "$status" != 0 ]
	[[ "$output" == *403* ]]
	# the port counts: the echo port's entry allows no other port
	run python3 "$PEER" tunnel "$PROXY" "127.0.0.1:$HTTP_PORT"
	[[ "${lines[0]}" == "HTTP/1.1 403 Forbidden"* ]]
	kill -TERM "$PROXY_PID"; wait "$PROXY_PID"
	run grep -c '"event":"net".*"port":'"$HTTP_PORT"',"allowed":false,"status":403' "$AUDIT"
	[ "$output" = 3 ]
	# warden audit reads the records strictly and shows them (--all: proxyd's
	# records belong to no run or session, which the default view lists)
	run "$WARDEN" audit --audit-log "$AUDIT" --all
	[ "$status" = 0 ]
	[[ "$output" == *"REFUSED GET 127.0.0.1:$HTTP_PORT -> 403"* ]]
	[[ "$output" == *"not in the allowlist"* ]]
}

@test "proxy: a name allowed by the list that resolves to loopback is refused (localhost)" {
	start_proxy --audit "$AUDIT" -- "localhost:$HTTP_PORT" "LocalHost.:$ECHO_PORT"
	run curl -sS --max-time 30 -i -x "http://127.0.0.1:$PROXY" "http://localhost:$HTTP_PORT/hello.txt"
	[ "$status" = 0 ]
	[[ "${lines[0]}" == "HTTP/1.1 403 Forbidden"* ]]
	[[ "$output" == *"localhost resolved to "* ]]
	[[ "$output" == *"No name can allow such an address"* ]]
	[[ "$output" != *hello-through-proxy* ]]
	run python3 "$PEER" tunnel "$PROXY" "localhost:$ECHO_PORT"
	[[ "${lines[0]}" == "HTTP/1.1 403 Forbidden"* ]]
	kill -TERM "$PROXY_PID"; wait "$PROXY_PID"
	grep -q '"host":"localhost","port":'"$HTTP_PORT"',"address":"\(127.0.0.1\|::1\)","allowed":false' "$AUDIT"
}

@test "proxy: /etc/hosts is honoured, and a name it points at 127.0.0.1 is refused (rebinding)" {
	printf '127.0.0.1 rebind.warden.test\n' > "$WS/hosts"
	local un=(unshare -m)
	is_root || un=(unshare -rm)
	"${un[@]}" sh -c 'mount --bind "$1" /etc/hosts && shift && exec "$@"' sh "$WS/hosts" \
		"$PROXYD" --confine 1 --audit "$AUDIT" "$WS/proxy.port" "rebind.warden.test:$HTTP_PORT" 3>&- &
	PROXY_PID=$!
	PIDS+=("$PROXY_PID")
	PROXY=$(wait_for "$WS/proxy.port" '^\([0-9][0-9]*\)$')
	run curl -sS --max-time 30 -i -x "http://127.0.0.1:$PROXY" "http://rebind.warden.test:$HTTP_PORT/hello.txt"
	[ "$status" = 0 ]
	[[ "${lines[0]}" == "HTTP/1.1 403 Forbidden"* ]]
	# the address came from the private /etc/hosts, and no name grants it
	[[ "$output" == *"rebind.warden.test resolved to 127.0.0.1"* ]]
	[[ "$output" == *"--allow 127.0.0.1:$HTTP_PORT"* ]]
	[[ "$output" != *hello-through-proxy* ]]
}

@test "proxy: a name that does not resolve gets 502 with the resolver's message" {
	start_proxy -- "no-such-host.invalid:$HTTP_PORT"
	run curl -sS --max-time 60 -i -x "http://127.0.0.1:$PROXY" "http://no-such-host.invalid:$HTTP_PORT/"
	[ "$status" = 0 ]
	[[ "${lines[0]}" == "HTTP/1.1 502 Bad Gateway"* ]]
	[[ "$output" == *"resolving no-such-host.invalid: "* ]]
}

@test "proxy: a connection refused upstream gets 502" {
	# a port nothing listens on: the echo server's, after it is gone
	kill "${PIDS[1]}"; wait "${PIDS[1]}" 2>/dev/null || true
	start_proxy -- "127.0.0.1:$ECHO_PORT"
	run python3 "$PEER" tunnel "$PROXY" "127.0.0.1:$ECHO_PORT"
	[[ "${lines[0]}" == "HTTP/1.1 502 Bad Gateway"* ]]
	[[ "$output" == *"Connection refused"* ]]
}

@test "proxy: malformed requests get 400, never a connection" {
	start_proxy -- "127.0.0.1:$HTTP_PORT"
	run python3 "$PEER" raw "$PROXY" 'GET /hello.txt HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'
	[[ "${lines[0]}" == "HTTP/1.1 400 Bad Request"* ]]
	run python3 "$PEER" raw "$PROXY" "GET https://127.0.0.1:$HTTP_PORT/ HTTP/1.1\\r\\n\\r\\n"
	[[ "${lines[0]}" == "HTTP/1.1 400 Bad Request"* ]]
	run python3 "$PEER" raw "$PROXY" "GET http://u:p@127.0.0.1:$HTTP_PORT/ HTTP/1.1\\r\\n\\r\\n"
	[[ "$output" == *"credentials in the URL"* ]]
	run python3 "$PEER" raw "$PROXY" "GET http://127.0.0.1:$HTTP_PORT/ HTTP/1.1\\r\\nX: a\\x00b\\r\\n\\r\\n"
	[[ "$output" == *"control byte"* ]]
	run python3 "$PEER" raw "$PROXY" 'CONNECT 127.0.0.1 HTTP/1.1\r\n\r\n'
	[[ "$output" == *"CONNECT needs host:port"* ]]
	run ! grep -q 'GET' "$WS/http.log"
}

@test "proxy: the Host header sent upstream is the URL's, not the client's" {
	start_proxy -- "127.0.0.1:$ECHO_PORT"
	# the echo server returns the upstream request: what the proxy sent
	run python3 "$PEER" raw "$PROXY" "GET http://127.0.0.1:$ECHO_PORT/p?q HTTP/1.1\\r\\nHost: evil.example\\r\\nProxy-Authorization: x\\r\\nX-Keep: 1\\r\\n\\r\\n"
	[[ "${lines[0]}" == "GET /p?q HTTP/1.1"* ]]
	[[ "$output" == *"Host: 127.0.0.1:$ECHO_PORT"* ]]
	[[ "$output" == *"X-Keep: 1"* ]]
	[[ "$output" == *"Connection: close"* ]]
	[[ "$output" != *evil.example* ]]
	[[ "$output" != *Proxy-Authorization* ]]
}

@test "proxy: 200 tunnels open at once all work; the 257th connection gets 503" {
	start_proxy -- "127.0.0.1:$ECHO_PORT"
	run python3 "$PEER" many "$PROXY" "127.0.0.1:$ECHO_PORT" 200
	[ "$status" = 0 ]
	[ "$output" = "200 ok" ]
	run python3 "$PEER" hold "$PROXY" 256
	echo "$output"
	[[ "${lines[0]}" == "HTTP/1.1 503 Service Unavailable"* ]]
	[[ "$output" == *"too many connections"* ]]
	# and once they are gone, the proxy serves again
	run python3 "$PEER" tunnel "$PROXY" "127.0.0.1:$ECHO_PORT"
	[ "${lines[0]}" = "HTTP/1.1 200 Connection established" ]
}

@test "proxy: a stalled client and a giant header tie up nothing else" {
	start_proxy --head-timeout 600000 -- "127.0.0.1:$HTTP_PORT"
	python3 "$PEER" stall "$PROXY" "$WS/stall.ready" "$WS/stall.done" > "$WS/stall.out" 3>&- &
	local stall=$!
	PIDS+=("$stall")
	local i
	for i in $(seq 300); do [ -e "$WS/stall.ready" ] && break; sleep 0.1; done
	[ -e "$WS/stall.ready" ]
	run python3 "$PEER" giant "$PROXY"
	[[ "${lines[0]}" == "HTTP/1.1 431 Request Header Fields Too Large"* ]]
	run curl -sS --max-time 30 -x "http://127.0.0.1:$PROXY" "http://127.0.0.1:$HTTP_PORT/hello.txt"
	[ "$output" = hello-through-proxy ]
	# the stalled client is still waiting all along
	kill -0 "$stall"
	[ ! -s "$WS/stall.out" ]
}

@test "proxy: a client that does not finish its head in time gets 408" {
	start_proxy --head-timeout 300 -- "127.0.0.1:$HTTP_PORT"
	run python3 "$PEER" stall "$PROXY" "$WS/stall.ready" "$WS/stall.done"
	[ "$status" = 0 ]
	[[ "${lines[0]}" == "HTTP/1.1 408 Request Timeout"* ]]
}

@test "proxy: audit records are bounded per proxy, then one net_dropped" {
	start_proxy --audit "$AUDIT" --audit-max 3 -- "127.0.0.1:$ECHO_PORT"
	local i
	for i in 1 2 3 4 5 6 7; do
		run curl -sS --max-time 30 -o /dev/null -w '%{http_code}' -x "http://127.0.0.1:$PROXY" \
			"http://127.0.0.1:$HTTP_PORT/$i"
		[ "$output" = 403 ]
	done
	kill -TERM "$PROXY_PID"; wait "$PROXY_PID"
	run grep -c '"event":"net"' "$AUDIT"
	[ "$output" = 3 ]
	grep -q '"event":"net_dropped","dropped":4,"limit":3' "$AUDIT"
	run "$WARDEN" audit --audit-log "$AUDIT" --all
	[ "$status" = 0 ]
	[[ "$output" == *"4 net records left out (limit 3)"* ]]
}

@test "proxy: a 1 GiB download through it keeps the proxy's memory flat" {
	truncate -s 1G "$WS/www/big.bin"
	start_proxy -- "127.0.0.1:$HTTP_PORT"
	run curl -sS --max-time 30 -x "http://127.0.0.1:$PROXY" "http://127.0.0.1:$HTTP_PORT/hello.txt"
	[ "$output" = hello-through-proxy ]
	local before after
	before=$(hwm_kb "$PROXY_PID")
	run curl -sS --max-time 600 -p -o /dev/null -w '%{size_download}' -x "http://127.0.0.1:$PROXY" \
		"http://127.0.0.1:$HTTP_PORT/big.bin"
	[ "$status" = 0 ]
	[ "$output" = 1073741824 ]
	run curl -sS --max-time 600 -o /dev/null -w '%{size_download}' -x "http://127.0.0.1:$PROXY" \
		"http://127.0.0.1:$HTTP_PORT/big.bin"
	[ "$output" = 1073741824 ]
	after=$(hwm_kb "$PROXY_PID")
	echo "VmHWM before $before kB, after 2 GiB $after kB"
	# the payload never enters the process (splice); a copy loop with
	# any buffer growth would show here
	[ "$((after - before))" -lt 2048 ]
}

# A jail that floods its proxy must not take the fds of the supervisor and
# of the other jails' proxies (SECURITY.md G107): two proxies in one loop,
# as two sessions' jails in one server, under a small open-files limit; the
# first is flooded with tunnels, the second still serves.
@test "proxy: a flood on one proxy leaves the process's fds to another proxy (open-files budget)" {
	rm -f "$WS/proxy.port"
	prlimit --nofile=200 "$PROXYD" --confine 1 --second "$WS/proxy2.port" "$WS/proxy.port" \
		"127.0.0.1:$HTTP_PORT" "127.0.0.1:$ECHO_PORT" 2> "$WS/proxyd.err" 3>&- &
	PROXY_PID=$!
	PIDS+=("$PROXY_PID")
	PROXY=$(wait_for "$WS/proxy.port" '^\([0-9][0-9]*\)$')
	local proxy2
	proxy2=$(wait_for "$WS/proxy2.port" '^\([0-9][0-9]*\)$')
	# the flood: CONNECT tunnels held open (well within the idle limit of
	# 5 minutes), until the proxy refuses one (503) or holds every fd
	python3 - "$PROXY" "$PROXY_PID" "127.0.0.1:$HTTP_PORT" "$WS/flood.ready" "$WS/flood.done" <<'PY' 3>&- &
import os, socket, sys, time
port, pid, target, ready, done = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
socks = []
for _ in range(256):
    if len(os.listdir("/proc/%s/fd" % pid)) >= 195:
        break
    s = socket.create_connection(("127.0.0.1", port))
    socks.append(s)
    s.sendall(b"CONNECT %s HTTP/1.1\r\n\r\n" % target.encode())
    s.settimeout(1)
    try:
        if s.recv(100).startswith(b"HTTP/1.1 503"):
            break
    except OSError:
        pass
open(ready, "w").close()
while not os.path.exists(done):
    time.sleep(0.1)
PY
	local flood=$!
	PIDS+=("$flood")
	local i
	for i in $(seq 600); do [ -e "$WS/flood.ready" ] && break; sleep 0.1; done
	[ -e "$WS/flood.ready" ]
	run curl -sS --max-time 20 -x "http://127.0.0.1:$proxy2" "http://127.0.0.1:$HTTP_PORT/hello.txt"
	touch "$WS/flood.done"
	echo "$output"
	[ "$output" = hello-through-proxy ]
	# once the flood is gone, the flooded proxy serves again
	for i in $(seq 300); do [ ! -e "/proc/$flood" ] && break; sleep 0.1; done
	run python3 "$PEER" tunnel "$PROXY" "127.0.0.1:$ECHO_PORT"
	[ "${lines[0]}" = "HTTP/1.1 200 Connection established" ]
	# and the proxy never spun on a full fd table, one warning per wakeup
	[ "$(grep -c 'accept: Too many open files' "$WS/proxyd.err")" -le 1 ]
}

# G107's last resort: an accept that still meets a full fd table (the
# process's own fds beyond its reserve: proxyd --fd-free leaves 3 slots, which
# 3 silent clients take) pauses that listener until the next tick.  The
# connection that met EMFILE waits in the accept queue, the listener stays
# readable: a proxy that kept watching it would spin on it, never sleeping.
# Once fds are free again, that connection is served (a CONNECT the list
# refuses: its answer needs no fd but its own).
@test "proxy: an accept that meets a full fd table pauses the listener instead of spinning, and serves once fds are free" {
	rm -f "$WS/proxy.port"
	prlimit --nofile=200 "$PROXYD" --confine 1 --head-timeout 600000 --fd-free 3 "$WS/proxy.port" \
		"127.0.0.1:$ECHO_PORT" 2> "$WS/proxyd.err" 3>&- &
	PROXY_PID=$!
	PIDS+=("$PROXY_PID")
	PROXY=$(wait_for "$WS/proxy.port" '^\([0-9][0-9]*\)$')
	python3 "$PEER" queue "$PROXY" "127.0.0.1:$HTTP_PORT" 3 "$WS/q.ready" "$WS/q.go" > "$WS/q.out" 3>&- &
	local q=$! i st=
	PIDS+=("$q")
	# the control: the fourth client's accept met the full table
	wait_for "$WS/proxyd.err" '.*\(accept: Too many open files\).*'
	# the proxy sleeps (state S), its listener paused, while that client waits
	for i in $(seq 300); do
		st=$(sed 's/^.*) \([A-Z]\) .*/\1/' "/proc/$PROXY_PID/stat")
		[ "$st" = S ] && break
		sleep 0.1
	done
	echo "state: $st"
	[ "$st" = S ]
	# the three leave: the waiting client is served
	touch "$WS/q.go"
	wait "$q"
	cat "$WS/q.out"
	[[ "$(cat "$WS/q.out")" == "HTTP/1.1 403 Forbidden"* ]]
}

# The name that was checked is the only one looked up: never the name with a
# search domain of resolv.conf appended, whose answer no entry allowed
# (SECURITY.md G108).  In private mount and network namespaces: resolv.conf
# with a search domain and a fake DNS server on 127.0.0.1:53 that answers
# NXDOMAIN and logs each name asked.
@test "proxy: a name is looked up as written, never with resolv.conf's search domains" {
	printf 'search corp.warden.test\nnameserver 127.0.0.1\noptions ndots:1 attempts:1\n' > "$WS/resolv.conf"
	cat > "$WS/dns.py" <<'PY'
import socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 53))
open(sys.argv[2], "w").close()
while True:
    d, a = s.recvfrom(2048)
    i, parts = 12, []
    while d[i]:
        parts.append(d[i + 1:i + 1 + d[i]].decode())
        i += 1 + d[i]
    with open(sys.argv[1], "a") as f:
        f.write(".".join(parts) + "\n")
    s.sendto(d[:2] + struct.pack(">H", 0x8183) + d[4:6] + b"\0" * 6 + d[12:], a)
PY
	cat > "$WS/inside.sh" <<'SH'
set -e
ws=$1 proxyd=$2 peer=$3
ip link set lo up
mount --bind "$ws/resolv.conf" /etc/resolv.conf
python3 "$ws/dns.py" "$ws/dns.log" "$ws/dns.ready" &
dns=$!
for i in $(seq 300); do [ -e "$ws/dns.ready" ] && break; sleep 0.1; done
"$proxyd" --confine 1 "$ws/proxy.port" '*.allowed.warden.test:443' &
px=$!
for i in $(seq 300); do [ -s "$ws/proxy.port" ] && break; sleep 0.1; done
python3 "$peer" raw "$(cat "$ws/proxy.port")" 'CONNECT www.allowed.warden.test:443 HTTP/1.1\r\n\r\n' || true
kill "$px" "$dns"
SH
	local un=(unshare -mn)
	is_root || un=(unshare -rmn)
	run "${un[@]}" sh "$WS/inside.sh" "$WS" "$PROXYD" "$PEER"
	echo "$output"
	cat "$WS/dns.log"
	[[ "${lines[0]}" == "HTTP/1.1 502 Bad Gateway"* ]]
	[[ "$output" == *"resolving www.allowed.warden.test: Domain name not found"* ]]
	# the control: the fake server was asked, for the name as written
	grep -qx 'www.allowed.warden.test' "$WS/dns.log"
	run ! grep -q 'corp' "$WS/dns.log"
}

# A name answered by a DNS server (not /etc/hosts, which every other test
# here uses) takes c-ares' whole path, under the confined engine's
# allowlist: on success it sorts the addresses (RFC 6724: a UDP socket
# connected to each, then getsockname), and an answer too long for UDP
# comes back truncated (TC) and is asked again over TCP (setsockopt
# TCP_NODELAY, writev).  Red team: each of these calls killed the engine
# (SIGSYS, status 159), so every name looked up over DNS killed the egress
# process and every relay of every jail.  Private mount and network
# namespaces: a DNS server that answers plain.warden.test over UDP and
# big.warden.test only over TCP (TC over UDP), both with 127.0.0.1, so the
# 403 naming that address proves the answer arrived; the engine then
# answers the next request.
@test "proxy: names answered over DNS, over UDP and (truncated) over TCP; the engine survives both" {
	printf 'nameserver 127.0.0.1\noptions attempts:1\n' > "$WS/resolv.conf"
	cat > "$WS/dns.py" <<'PY'
import socket, struct, sys, threading
def question_end(d):
    i = 12
    while d[i]:
        i += 1 + d[i]
    return i + 5
def answer(d):
    e = question_end(d)
    a = struct.unpack(">H", d[e - 4:e - 2])[0] == 1
    ans = b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 60, 4) + bytes([127, 0, 0, 1]) if a else b""
    return d[:2] + struct.pack(">HHHHH", 0x8180, 1, int(a), 0, 0) + d[12:e] + ans
def log(what):
    with open(sys.argv[1], "a") as f:
        f.write(what + "\n")
def tcp(t):
    while True:
        c, _ = t.accept()
        log("tcp")
        d = c.recv(2 + struct.unpack(">H", c.recv(2))[0])
        r = answer(d)
        c.sendall(struct.pack(">H", len(r)) + r)
        c.close()
t = socket.socket()
t.bind(("127.0.0.1", 53))
t.listen(8)
threading.Thread(target=tcp, args=(t,), daemon=True).start()
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 53))
open(sys.argv[2], "w").close()
while True:
    d, a = s.recvfrom(2048)
    if b"\x03big" in d:
        log("udp truncated")
        s.sendto(d[:2] + struct.pack(">HHHHH", 0x8380, 1, 0, 0, 0) + d[12:question_end(d)], a)
    else:
        log("udp")
        s.sendto(answer(d), a)
PY
	cat > "$WS/inside.sh" <<'SH'
set -e
ws=$1 proxyd=$2 peer=$3
ip link set lo up
mount --bind "$ws/resolv.conf" /etc/resolv.conf
python3 "$ws/dns.py" "$ws/dns.log" "$ws/dns.ready" &
dns=$!
for i in $(seq 300); do [ -e "$ws/dns.ready" ] && break; sleep 0.1; done
"$proxyd" --confine 1 "$ws/proxy.port" 'plain.warden.test:443' 'big.warden.test:443' &
px=$!
for i in $(seq 300); do [ -s "$ws/proxy.port" ] && break; sleep 0.1; done
for h in plain big other; do
	echo "$h:"
	python3 "$peer" raw "$(cat "$ws/proxy.port")" "CONNECT $h.warden.test:443 HTTP/1.1\r\n\r\n" || true
done
kill "$px" "$dns"
SH
	local un=(unshare -mn)
	is_root || un=(unshare -rmn)
	run "${un[@]}" sh "$WS/inside.sh" "$WS" "$PROXYD" "$PEER"
	echo "$output"
	cat "$WS/dns.log"
	# the controls: one answer came over UDP, the long one over TCP
	grep -qx udp "$WS/dns.log"
	grep -qx 'udp truncated' "$WS/dns.log"
	grep -qx tcp "$WS/dns.log"
	[[ "$output" == *"plain:"*"HTTP/1.1 403 Forbidden"*"plain.warden.test resolved to 127.0.0.1"*"big:"* ]]
	[[ "$output" == *"big:"*"HTTP/1.1 403 Forbidden"*"big.warden.test resolved to 127.0.0.1"*"other:"* ]]
	[[ "$output" == *"other:"*"HTTP/1.1 403 Forbidden"*"other.warden.test:443 is not allowed"* ]]
}

# A header line the proxy would not recognise as Host (a space before the
# colon, a name that is not an HTTP token) never reaches upstream, where a
# lenient server could read it as a second Host (SECURITY.md G103)
@test "proxy: a Host header spelled around the check gets 400, never reaches upstream" {
	start_proxy -- "127.0.0.1:$ECHO_PORT"
	local h
	for h in 'Host : evil.example' 'Host\t: evil.example' 'Ho st: evil.example' '"Host": evil.example'; do
		run python3 "$PEER" raw "$PROXY" "GET http://127.0.0.1:$ECHO_PORT/ HTTP/1.1\\r\\n$h\\r\\n\\r\\n"
		echo "$h: $output"
		[[ "${lines[0]}" == "HTTP/1.1 400 Bad Request"* ]]
		[[ "$output" == *"header name"* ]]
		[[ "$output" != *evil.example* ]]
	done
}

# Every other spelling of the host's loopback is refused before any
# connection, even when a literal loopback entry and a wildcard are in the
# list (SECURITY.md G109): numeric and octal and short IPv4 forms,
# IPv4-mapped and compatible IPv6, ::1 and :: and 0.0.0.0, a zone id,
# trailing dots, upper case, userinfo.  The same spellings of the address
# the list does name (127.0.0.2) are refused too: only its dotted quad
# matches (inet_pton, never inet_aton's "127.2"), and a spelling that
# matched no entry is never looked up
@test "proxy: no spelling of a loopback address gets past a list naming another one" {
	start_proxy --audit "$AUDIT" -- "127.0.0.2:$HTTP_PORT" "*.example.org" "allowed.example.net"
	local t p=$HTTP_PORT
	for t in "2130706433:$p" "0x7f.1:$p" "127.1:$p" "0177.0.0.1:$p" "127.000.000.001:$p" \
		"[::ffff:127.0.0.1]:$p" "[::ffff:7f00:1]:$p" "[::127.0.0.1]:$p" "[::1]:$p" "[::1%25lo]:$p" \
		"[::]:$p" "0.0.0.0:$p" "127.0.0.1.:$p" "LOCALHOST.:$p" "localhost:$p" \
		"allowed.example.net@127.0.0.1:$p" "[::ffff:127.0.0.2]:$p" "127.0.0.1:0$p" \
		"127.2:$p" "0x7f.0.0.2:$p" "2130706434:$p" "0177.0.0.2:$p" "127.000.000.002:$p"; do
		run python3 "$PEER" raw "$PROXY" "CONNECT $t HTTP/1.1\\r\\n\\r\\nGET /hello.txt HTTP/1.0\\r\\n\\r\\n"
		echo "$t: ${lines[0]}"
		[[ "${lines[0]}" == "HTTP/1.1 403 Forbidden"* || "${lines[0]}" == "HTTP/1.1 400 Bad Request"* ]]
		[[ "$output" != *hello-through-proxy* ]]
		run python3 "$PEER" raw "$PROXY" "GET http://$t/hello.txt HTTP/1.1\\r\\n\\r\\n"
		[[ "${lines[0]}" == "HTTP/1.1 403 Forbidden"* || "${lines[0]}" == "HTTP/1.1 400 Bad Request"* ]]
		[[ "$output" != *hello-through-proxy* ]]
	done
	# nothing reached the server (it listens on 127.0.0.1), nothing was dialled
	run ! grep -q 'GET /hello.txt' "$WS/http.log"
	run ! grep -q '"allowed":true' "$AUDIT"
	# the control: the literal entry itself is dialled (nothing listens on
	# 127.0.0.2: refused upstream, 502)
	run python3 "$PEER" raw "$PROXY" "GET http://127.0.0.2:$p/hello.txt HTTP/1.1\\r\\n\\r\\n"
	[[ "${lines[0]}" == "HTTP/1.1 502 Bad Gateway"* ]]
	[ "$(grep -c '"allowed":true' "$AUDIT")" -eq 1 ]
}

# A name the list allows may resolve to an ordinary address of one of the
# host's own interfaces (a wildcard, or a domain whose DNS the jail's author
# controls): dialled from the host, it would reach every service listening
# on 0.0.0.0 there, from the host's own address (SECURITY.md G101, G114).
# In private mount and network namespaces: 192.0.1.7 and 3fff::7 (neither
# in the special table) on lo, a private /etc/hosts naming them, a server
# on every address of the namespace; judged by that server's log.
@test "proxy: a name that resolves to an address of the host's own interfaces is refused; only a literal entry reaches it" {
	printf '%s\n' '192.0.1.7 svc.warden.test' '3fff::7 svc6.warden.test' \
		'::ffff:192.0.1.7 mapped.warden.test' > "$WS/hosts"
	cat > "$WS/inside.sh" <<'SH'
set -e
ws=$1 proxyd=$2 peer=$3
ip link set lo up
ip addr add 192.0.1.7/32 dev lo
ip addr add 3fff::7/128 dev lo
mount --bind "$ws/hosts" /etc/hosts
python3 -u -m http.server 0 --bind :: --directory "$ws/www" > "$ws/svc.log" 2>&1 &
srv=$!
trap 'kill $srv $px 2>/dev/null || true' EXIT
for i in $(seq 300); do grep -q "port [0-9]" "$ws/svc.log" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/.* port \([0-9][0-9]*\) .*/\1/p' "$ws/svc.log")
echo "$port" > "$ws/svc.port"
# names: an exact entry and a wildcard
"$proxyd" --confine 1 --audit "$ws/audit" "$ws/proxy.port" "svc.warden.test:$port" "*.warden.test:$port" &
px=$!
for i in $(seq 300); do [ -s "$ws/proxy.port" ] && break; sleep 0.1; done
p=$(cat "$ws/proxy.port")
curl -sS -i -x "http://127.0.0.1:$p" "http://svc.warden.test:$port/hello.txt" > "$ws/r.v4" 2>&1 || true
python3 "$peer" raw "$p" "CONNECT svc6.warden.test:$port HTTP/1.1\\r\\n\\r\\nGET /hello.txt HTTP/1.0\\r\\n\\r\\n" > "$ws/r.v6" 2>&1 || true
curl -sS -i -x "http://127.0.0.1:$p" "http://mapped.warden.test:$port/hello.txt" > "$ws/r.mapped" 2>&1 || true
kill $px; wait $px || true
# the control: literal entries reach the same server at the same addresses
rm -f "$ws/proxy.port"
"$proxyd" --confine 1 "$ws/proxy.port" "192.0.1.7:$port" "[3fff::7]:$port" &
px=$!
for i in $(seq 300); do [ -s "$ws/proxy.port" ] && break; sleep 0.1; done
p=$(cat "$ws/proxy.port")
curl -sS -x "http://127.0.0.1:$p" "http://192.0.1.7:$port/hello.txt" > "$ws/r.lit4" 2>&1 || true
curl -sS -p -x "http://127.0.0.1:$p" "http://[3fff::7]:$port/hello.txt" > "$ws/r.lit6" 2>&1 || true
SH
	local un=(unshare -mn)
	is_root || un=(unshare -rmn)
	"${un[@]}" sh "$WS/inside.sh" "$WS" "$PROXYD" "$PEER"
	local f
	for f in v4 v6 mapped lit4 lit6; do echo "== $f"; cat "$WS/r.$f"; done
	echo "== server"; cat "$WS/svc.log"
	local port
	port=$(cat "$WS/svc.port")
	# each name is refused, and the answer says why
	[[ "$(head -1 "$WS/r.v4")" == "HTTP/1.1 403 Forbidden"* ]]
	grep -q "svc.warden.test resolved to 192.0.1.7, an address of one of this host's own interfaces" "$WS/r.v4"
	grep -q -- "--allow 192.0.1.7:$port" "$WS/r.v4"
	[[ "$(head -1 "$WS/r.v6")" == "HTTP/1.1 403 Forbidden"* ]]
	grep -q "svc6.warden.test resolved to 3fff::7, an address of one of this host's own" "$WS/r.v6"
	# an IPv6 address is written in brackets in the allow line, as an entry must be
	grep -q -- "--allow \[3fff::7\]:$port" "$WS/r.v6"
	[[ "$(head -1 "$WS/r.mapped")" == "HTTP/1.1 403 Forbidden"* ]]
	grep -q "mapped.warden.test resolved to ::ffff:192.0.1.7, an address of one of this host's own" "$WS/r.mapped"
	run ! grep -q hello-through-proxy "$WS/r.v4" "$WS/r.v6" "$WS/r.mapped"
	# audited with the address and why
	grep -q '"host":"svc6.warden.test","port":'"$port"',"address":"3fff::7","allowed":false,.*"status":403,"reason":"[^"]*host'"'"'s own' "$WS/audit"
	# the control: the literal entries reach the server
	[ "$(cat "$WS/r.lit4")" = hello-through-proxy ]
	[ "$(cat "$WS/r.lit6")" = hello-through-proxy ]
	# judged by the server: it served the two literal requests, nothing else
	[ "$(grep -c 'GET /hello.txt' "$WS/svc.log")" -eq 2 ]
}

# A bare CR (not followed by LF) ends a line for some parsers and not for
# others: relayed, "X-A: 1\rHost: evil" is a second Host line upstream
# (SECURITY.md G103).  Every such head gets 400 and reaches nothing; the
# echo upstream would return whatever it got.
@test "proxy: a bare CR anywhere in the head gets 400 and nothing reaches upstream" {
	start_proxy -- "127.0.0.1:$ECHO_PORT"
	local u="http://127.0.0.1:$ECHO_PORT" why h n=0
	# each line: the reason the 400 must give | the head (\r \n \t \xNN escapes)
	while IFS='|' read -r why h; do
		run python3 "$PEER" raw "$PROXY" "$h" < /dev/null
		echo "$h: $output"
		n=$((n + 1))
		[[ "${lines[0]}" == "HTTP/1.1 400 Bad Request"* ]]
		[[ "$output" == *"$why"* ]]
		[[ "$output" != *evil.example* ]]
	done <<-EOF
		a CR not followed by LF|GET $u/ HTTP/1.1\r\nX-A: 1\rHost: evil.example\r\n\r\n
		a CR not followed by LF|GET $u/x\rHost:evil.example HTTP/1.1\r\n\r\n
		a CR not followed by LF|GET $u/ HTTP/1.1\r\nX-A\rHost: evil.example\r\n\r\n
		a CR not followed by LF|GET $u/ HTTP/1.1\r\nX-A: 1\r\rHost: evil.example\r\n\r\n
		a CR not followed by LF|GET $u/ HTTP/1.1\r\nX-A: 1\r\r\n\r\n
		a CR not followed by LF|CONNECT 127.0.0.1:$ECHO_PORT HTTP/1.1\r\nX-A: 1\rHost: evil.example\r\n\r\n
		control byte|GET $u/ HTTP/1.1\r\nX-A: 1\x0bHost: evil.example\r\n\r\n
		control byte|GET $u/ HTTP/1.1\r\nX-A: 1\x0cHost: evil.example\r\n\r\n
		control byte|GET $u/ HTTP/1.1\r\nX-A: 1\x7fHost: evil.example\r\n\r\n
		control byte|GET $u/ HTTP/1.1\r\nX-A: 1\x1bHost: evil.example\r\n\r\n
		control byte|GET $u/x\tHost:evil.example HTTP/1.1\r\n\r\n
	EOF
	[ "$n" -eq 11 ]
	# nothing reached the echo server: it saw no connection at all
	[ ! -s "$WS/echo.log" ]
	# the control: LF alone ends a line (RFC 9112 allows it); upstream gets
	# CRLF, and a tab in a header value passes
	run python3 "$PEER" raw "$PROXY" "GET $u/ok HTTP/1.1\\nX-B: 1\\ta\\n\\n"
	echo "$output"
	[[ "${lines[0]}" == "GET /ok HTTP/1.1"$'\r' ]]
	[[ "$output" == *$'\nX-B: 1\ta\r\n'* ]]
	[ "$(grep -c closed "$WS/echo.log")" -eq 1 ]
}

# A relayed connection with no byte either way for the idle limit is closed
# (SECURITY.md G107: else one jail holds its 256 connections for ever);
# one that keeps moving is never cut, however long it lasts.
@test "proxy: an idle tunnel is closed at the idle limit and audited; an active one is not cut" {
	start_proxy --audit "$AUDIT" --idle-timeout 2000 -- "127.0.0.1:$ECHO_PORT"
	# the active tunnel first: it is older than the idle one
	python3 "$PEER" active "$PROXY" "127.0.0.1:$ECHO_PORT" "$WS/stop" > "$WS/active.out" 3>&- &
	local active=$! i
	PIDS+=("$active")
	for i in $(seq 300); do [ -e "$WS/stop.ready" ] && break; sleep 0.1; done
	[ -e "$WS/stop.ready" ]
	run python3 "$PEER" idle "$PROXY" "127.0.0.1:$ECHO_PORT"
	echo "idle: $output"
	[ "$output" = eof ]
	# judged upstream: the idle tunnel's server side was closed
	for i in $(seq 300); do grep -q '^closed 9$' "$WS/echo.log" && break; sleep 0.1; done
	cat "$WS/echo.log"
	grep -qx 'closed 9' "$WS/echo.log"
	# the active tunnel lived longer than the idle limit and still works
	touch "$WS/stop"
	wait "$active"
	cat "$WS/active.out"
	[ "$(cat "$WS/active.out")" = "active ok" ]
	kill -TERM "$PROXY_PID"; wait "$PROXY_PID"
	cat "$AUDIT"
	grep -q '"method":"CONNECT".*"status":200,"reason":"idle: no byte either way for 2000 ms","bytes_up":9,"bytes_down":9' "$AUDIT"
	# the active one ended with its client, not by the limit
	[ "$(grep -c '"reason":"idle' "$AUDIT")" -eq 1 ]
}

# G104's resolve-and-connect deadline: a destination whose accept queue is
# full drops every SYN (proxy_peer.py blackhole), so the connect never ends
@test "proxy: a connect that never completes holds nothing else up, and gets 504 at the deadline" {
	python3 "$PEER" blackhole "$WS/hole.port" 3>&- &
	PIDS+=($!)
	local hole
	hole=$(wait_for "$WS/hole.port" '^\([0-9][0-9]*\)$')
	start_proxy --audit "$AUDIT" --dial-timeout 600000 -- "127.0.0.1:$hole" "127.0.0.1:$HTTP_PORT"
	# once the proxy is connecting (one more socket in SYN-SENT, state 02,
	# towards the hole, beside the blackhole's own second filler), another
	# client is served
	local hex i n0
	hex=$(printf '%04X' "$hole")
	n0=$(grep -c "0100007F:$hex 02" /proc/net/tcp || true)
	python3 "$PEER" raw "$PROXY" "CONNECT 127.0.0.1:$hole HTTP/1.1\\r\\n\\r\\n" > "$WS/hole.out" 3>&- &
	local stuck=$!
	PIDS+=("$stuck")
	for i in $(seq 300); do [ "$(grep -c "0100007F:$hex 02" /proc/net/tcp)" -gt "$n0" ] && break; sleep 0.1; done
	[ "$(grep -c "0100007F:$hex 02" /proc/net/tcp)" -gt "$n0" ]
	run curl -sS --max-time 30 -x "http://127.0.0.1:$PROXY" "http://127.0.0.1:$HTTP_PORT/hello.txt"
	[ "$output" = hello-through-proxy ]
	kill -0 "$stuck"
	[ ! -s "$WS/hole.out" ]
	kill "$stuck"
	kill -TERM "$PROXY_PID"; wait "$PROXY_PID"
	# with a short deadline: 504, saying which step took too long (the head's
	# deadline far away: only the dial deadline can answer)
	start_proxy --audit "$AUDIT" --head-timeout 600000 --dial-timeout 300 -- "127.0.0.1:$hole"
	run python3 "$PEER" raw "$PROXY" "CONNECT 127.0.0.1:$hole HTTP/1.1\\r\\n\\r\\n"
	echo "$output"
	[[ "${lines[0]}" == "HTTP/1.1 504 Gateway Timeout"* ]]
	[[ "$output" == *"connecting to 127.0.0.1 port $hole took longer than 300 ms"* ]]
	kill -TERM "$PROXY_PID"; wait "$PROXY_PID"
	grep -q '"port":'"$hole"',"address":"127.0.0.1","allowed":true,"rule":"127.0.0.1:'"$hole"'","status":504' "$AUDIT"
}

# The same deadline while the name is still being looked up: a DNS server
# that never answers (private mount and network namespaces, resolv.conf
# pointing at it, c-ares told to wait 30 s for it; the head's deadline far
# away: only the dial deadline can answer)
@test "proxy: a lookup that never ends gets 504 at the deadline" {
	printf 'nameserver 127.0.0.1\noptions timeout:30 attempts:1\n' > "$WS/resolv.conf"
	cat > "$WS/dns.py" <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 53))
open(sys.argv[2], "w").close()
while True:
    d, a = s.recvfrom(2048)
    with open(sys.argv[1], "a") as f:
        f.write("asked\n")
PY
	cat > "$WS/inside.sh" <<'SH'
set -e
ws=$1 proxyd=$2 peer=$3
ip link set lo up
mount --bind "$ws/resolv.conf" /etc/resolv.conf
python3 "$ws/dns.py" "$ws/dns.log" "$ws/dns.ready" &
dns=$!
trap 'kill $dns $px 2>/dev/null || true' EXIT
for i in $(seq 300); do [ -e "$ws/dns.ready" ] && break; sleep 0.1; done
"$proxyd" --confine 1 --audit "$ws/audit" --head-timeout 600000 --dial-timeout 300 "$ws/proxy.port" 'slow.warden.test:80' &
px=$!
for i in $(seq 300); do [ -s "$ws/proxy.port" ] && break; sleep 0.1; done
python3 "$peer" raw "$(cat "$ws/proxy.port")" 'GET http://slow.warden.test/ HTTP/1.1\r\n\r\n' || true
kill $px; wait $px || true
SH
	local un=(unshare -mn)
	is_root || un=(unshare -rmn)
	run "${un[@]}" sh "$WS/inside.sh" "$WS" "$PROXYD" "$PEER"
	echo "$output"
	[[ "${lines[0]}" == "HTTP/1.1 504 Gateway Timeout"* ]]
	[[ "$output" == *"resolving slow.warden.test port 80 took longer than 300 ms"* ]]
	# the control: the lookup was sent, and the server never answered it
	grep -q asked "$WS/dns.log"
	grep -q '"host":"slow.warden.test","port":80,"allowed":true,"rule":"slow.warden.test:80","status":504' "$WS/audit"
}

# A client that hangs up (a reset) while its name is being looked up ends
# its connection, but the lookup goes on until the DNS server answers or
# c-ares gives up.  Red team: such connections left the proxy's count at
# once, so hanging up and reconnecting piled up lookups (and their memory:
# 20,000 of them, 62 MB, from one client in 15 s) past the cap of 256
# connections.  Now each counts until its lookup ends: after 256 reset
# connections whose lookups never end (the fds they held are closed, read
# from the host), the next connection gets 503 at once, where before it
# was admitted and got the 504 of its own lookup's deadline.
@test "proxy: connections reset during their lookup count against the cap until it ends" {
	printf 'nameserver 127.0.0.1\noptions timeout:30 attempts:1\n' > "$WS/resolv.conf"
	cat > "$WS/dns.py" <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 53))
open(sys.argv[2], "w").close()
while True:
    d, a = s.recvfrom(2048)
PY
	cat > "$WS/flood.py" <<'PY'
import socket, struct, sys
if sys.argv[2] == "probe":   # the proxy's answer, even one sent before the request is read
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=30)
    try:
        s.sendall(b"CONNECT next.slow.warden.test:443 HTTP/1.1\r\n\r\n")
    except OSError:
        pass
    print(s.recv(4096).decode(errors="replace"))
    sys.exit(0)
for i in range(int(sys.argv[2])):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    s.sendall(b"CONNECT h%d.slow.warden.test:443 HTTP/1.1\r\n\r\n" % i)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
PY
	cat > "$WS/inside.sh" <<'SH'
set -e
ws=$1 proxyd=$2 peer=$3
ip link set lo up
mount --bind "$ws/resolv.conf" /etc/resolv.conf
python3 "$ws/dns.py" "$ws/dns.log" "$ws/dns.ready" &
dns=$!
trap 'kill $dns $px 2>/dev/null || true' EXIT
for i in $(seq 300); do [ -e "$ws/dns.ready" ] && break; sleep 0.1; done
"$proxyd" --confine 1 --dial-timeout 2000 "$ws/proxy.port" '*.slow.warden.test:443' &
px=$!
for i in $(seq 300); do [ -s "$ws/proxy.port" ] && break; sleep 0.1; done
fds() { ls /proc/$px/fd | wc -l; }
base=$(fds)
python3 "$ws/flood.py" "$(cat "$ws/proxy.port")" 256
# every reset seen: the connections' fds are closed again (c-ares' one
# socket to the server may stay)
for i in $(seq 300); do [ "$(fds)" -le $((base + 1)) ] && break; sleep 0.1; done
echo "fds: $base then $(fds)"
python3 "$ws/flood.py" "$(cat "$ws/proxy.port")" probe
SH
	local un=(unshare -mn)
	is_root || un=(unshare -rmn)
	run "${un[@]}" sh "$WS/inside.sh" "$WS" "$PROXYD" "$PEER"
	echo "$output"
	[[ "${lines[0]}" == "fds: "* ]]
	[[ "${lines[1]}" == "HTTP/1.1 503 Service Unavailable"* ]]
}
