#!/usr/bin/env bats
# Learning a policy from what a program was refused (issue 23, part 1;
# docs/learn.md, SECURITY.md G220-G224): `warden policy learn` and
# `warden run --learn`, against real jails, judged on the host: the files
# the program wrote, the test servers' logs, the learner's process.
#
# The servers listen on 127.0.0.2 (as in net.bats): a literal loopback
# entry, which learning calls dangerous, so the scenario names it with
# --include, and another test checks it is left out without.
load ../helpers

ADDR=127.0.0.2

wait_file() { for _ in $(seq 400); do [ -s "$1" ] && return 0; sleep 0.05; done; return 1; }

setup_file() {
	D=$(mktemp -d /tmp/warden-learn.XXXXXX)
	export D
	# searchable by others: as root the jail and the learner run as the
	# jail's own uid, which must reach what the profile binds
	chmod 755 "$D"
	mkdir -p "$D/data" "$D/ro" "$D/www" "$D/cfg/warden/profiles"
	echo "region,total" > "$D/data/sales.csv"
	echo "hello from the host" > "$D/www/hello.txt"
	local srv="$BATS_TEST_DIRNAME/net_server.py"
	python3 "$srv" http "$ADDR" "$D/www" "$D/allowed.port" "$D/allowed.log" &
	echo $! > "$D/pids"
	python3 "$srv" http "$ADDR" "$D/www" "$D/other.port" "$D/other.log" &
	echo $! >> "$D/pids"
	wait_file "$D/allowed.port" && wait_file "$D/other.port"
	# the profile learned from: the workspace, $D/ro read-only, the proxy
	# allowing one of the two servers
	cat > "$D/cfg/warden/profiles/learnbase.json" <<EOF
{ "name": "learnbase", "extends": "workspace",
  "filesystem": { "read_only+": ["$D/ro"] },
  "network": { "mode": "proxy", "allow": ["$ADDR:$(cat "$D/allowed.port")"] } }
EOF
}

teardown_file() {
	local p
	while read -r p; do kill "$p" 2>/dev/null || true; done < "$D/pids"
	rm -rf "$D"
}

setup() {
	common_setup
	export XDG_CONFIG_HOME="$D/cfg"
	OTHER=$(cat "$D/other.port")
	T=$(mktemp -d /tmp/warden-learn-t.XXXXXX)
	rm -f "$D/ro/out.txt" "$D/cfg/warden/profiles/learned.json"
	: > "$D/other.log"
}

teardown() {
	if [ -n "${WPID:-}" ]; then kill "$WPID" 2>/dev/null || true; wait "$WPID" 2>/dev/null || true; fi
	rm -rf "$T"
	common_teardown
}

# The issue's program: it reads a file outside the workspace, writes into
# a read-only directory and fetches from a host the profile does not allow,
# trying all three whatever fails.
scenario_program() {
	cat > "$WS/prog.py" <<EOF
import sys, urllib.request
ok = True
try: print(open('$D/data/sales.csv').read().strip())
except Exception as e: print('read failed:', e); ok = False
try: open('$D/ro/out.txt', 'w').write('written\n')
except Exception as e: print('write failed:', e); ok = False
try: print(urllib.request.urlopen('http://$ADDR:$OTHER/hello.txt').read().decode().strip())
except Exception as e: print('fetch failed:', e); ok = False
sys.exit(0 if ok else 1)
EOF
}

# wait for the background warden $WPID; its status in $st.  A warden
# still running after 120 s is a hang: killed, and the test fails.
wait_warden() {
	st=0
	timeout 120 tail --pid="$WPID" -f /dev/null || { kill -KILL "$WPID"; st=999; }
	[ "$st" -eq 0 ] && { wait "$WPID" || st=$?; }
	WPID=
}

# the learner of the run whose workspace is $WS, as "PID" (from /proc)
learner_pid() {
	procs_matching "--workspace $WS" | grep -- "$WL_ARG" | head -1 | sed 's|^/proc/\([0-9]*\):.*|\1|'
}
WL_ARG="warden-learner --learner"

@test "learn: the issue's scenario: a policy is learned, the program succeeds under it and still fails under the profile" {
	scenario_program
	# under the profile it fails, and nothing reached the host
	run "$WARDEN" run --quiet --workspace "$WS" --profile learnbase -- python3 prog.py
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"read failed"* ]]
	[[ "$output" == *"write failed"* ]]
	[[ "$output" == *"fetch failed: HTTP Error 403"* ]]
	[ ! -e "$D/ro/out.txt" ]
	[ ! -s "$D/other.log" ]
	# learning: the program's own status, and a policy
	run "$WARDEN" policy learn --quiet --workspace "$WS" --profile learnbase --name learned \
		--include "$ADDR:$OTHER" --write "$D/cfg/warden/profiles/learned.json" -- python3 prog.py
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"+ filesystem.read_only += $D/data/sales.csv: the program opened it for reading"* ]]
	[[ "$output" == *"+ filesystem.read_write += $D/ro: the program created, removed or renamed something in it"*"read-only in the jail"* ]]
	[[ "$output" == *"+ network.allow += $ADDR:$OTHER: the program asked the proxy for it"*"DANGEROUS, added because --include names it"* ]]
	[[ "$output" == *"wrote the policy to $D/cfg/warden/profiles/learned.json"* ]]
	[[ "$output" != *"INCOMPLETE"* ]]
	[ ! -e "$D/ro/out.txt" ]
	run "$WARDEN" policy check "$D/cfg/warden/profiles/learned.json"
	[ "$status" -eq 0 ]
	run python3 -c "import json, sys; p = json.load(open(sys.argv[1]))
print(p['extends'], p['network']['mode'])
print(' '.join(p['filesystem']['read_only+']))
print(' '.join(p['filesystem']['read_write+']))
print(' '.join(p['network']['allow+']))" "$D/cfg/warden/profiles/learned.json"
	echo "$output"
	[ "${lines[0]}" = "learnbase proxy" ]
	[[ " ${lines[1]} " == *" $D/data/sales.csv "* ]]
	[ "${lines[2]}" = "$D/ro" ]
	[ "${lines[3]}" = "$ADDR:$OTHER" ]
	# under the learned policy the same program succeeds; judged on the host
	run "$WARDEN" run --quiet --workspace "$WS" --profile learned -- python3 prog.py
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "region,total" ]
	[ "${lines[1]}" = "hello from the host" ]
	[ "$(cat "$D/ro/out.txt")" = "written" ]
	grep -qx "GET /hello.txt" "$D/other.log"
	# and still fails under the profile it extends
	rm -f "$D/ro/out.txt"
	run "$WARDEN" run --quiet --workspace "$WS" --profile learnbase -- python3 prog.py
	[ "$status" -eq 1 ]
	[ ! -e "$D/ro/out.txt" ]
}

@test "learn: a loopback address the proxy refused is called out and left out unless --include names it" {
	scenario_program
	run "$WARDEN" run --learn --quiet --workspace "$WS" --profile learnbase \
		--write "$T/p.json" -- python3 prog.py
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"! NOT ADDED, DANGEROUS: network.allow += $ADDR:$OTHER"*"--include $ADDR:$OTHER"* ]]
	run grep -c "$ADDR:$OTHER" "$T/p.json"
	[ "$output" = "0" ]
	grep -q "$D/data/sales.csv" "$T/p.json"
}

# Credentials in a home directory the program reads: on the host (mode
# 644, so that a root run's learner, the jail's uid, can see them), never
# in the jail (its home is a tmpfs).
@test "learn: credential paths are never proposed silently: called out, absent from the policy unless --include names each" {
	local h="$T/home"
	mkdir -p "$h/.ssh" "$h/.aws"
	echo "PRIVATE KEY" > "$h/.ssh/id_rsa"
	echo "[default]" > "$h/.aws/credentials"
	chmod 755 "$T" "$h" "$h/.ssh" "$h/.aws"
	chmod 644 "$h/.ssh/id_rsa" "$h/.aws/credentials"
	local prog="cat ~/.ssh/id_rsa; cat ~/.aws/credentials; cat $D/data/sales.csv"
	HOME=$h run "$WARDEN" policy learn --quiet --workspace "$WS" --write "$T/p.json" -- sh -c "$prog"
	echo "$output"
	[[ "$output" == *"! NOT ADDED, DANGEROUS: filesystem.read_only += $h/.ssh/id_rsa"*"--include $h/.ssh/id_rsa"* ]]
	[[ "$output" == *"! NOT ADDED, DANGEROUS: filesystem.read_only += $h/.aws/credentials"* ]]
	[[ "$output" == *"+ filesystem.read_only += $D/data/sales.csv"* ]]
	cat "$T/p.json"
	grep -q "$D/data/sales.csv" "$T/p.json"
	run grep -c -e "\.ssh" -e "\.aws" "$T/p.json"
	[ "$output" = "0" ]
	# named: that one, and only that one
	HOME=$h run "$WARDEN" policy learn --quiet --workspace "$WS" --write "$T/p.json" \
		--include "$h/.ssh/id_rsa" -- sh -c "$prog"
	echo "$output"
	grep -q "$h/.ssh/id_rsa" "$T/p.json"
	run grep -c "\.aws" "$T/p.json"
	[ "$output" = "0" ]
}

# The program waits for $WS/go (a stat every 0.1 s, each forwarded to the
# learner) after showing it runs; the test kills the learner meanwhile.
waiting_program() {
	echo "cat $D/data/sales.csv; echo started > ready; while [ ! -e go ]; do sleep 0.1; done; echo end"
}

@test "learn: a learner killed mid-run leaves the program's run intact; learning is reported incomplete and nothing is written" {
	"$WARDEN" policy learn --quiet --workspace "$WS" --write "$T/p.json" -- \
		sh -c "$(waiting_program)" > "$T/out" 2> "$T/err" &
	WPID=$!
	wait_file "$WS/ready"
	local lp
	lp=$(learner_pid)
	[ -n "$lp" ]
	kill -KILL "$lp"
	touch "$WS/go"
	local st
	wait_warden
	cat "$T/out" "$T/err"
	[ "$st" -eq 0 ]
	grep -qx end "$T/out"
	grep -q "learning is incomplete: the learner ended before the run did" "$T/err"
	[ ! -e "$T/p.json" ]
	# the learner is gone, not left behind
	[ -z "$(learner_pid)" ]
}

@test "learn: a learner that stops answering is given up after its deadline: the program goes on, learning incomplete" {
	"$WARDEN" run --learn --quiet --workspace "$WS" --write "$T/p.json" -- \
		sh -c "$(waiting_program)" > "$T/out" 2> "$T/err" &
	WPID=$!
	wait_file "$WS/ready"
	local lp
	lp=$(learner_pid)
	[ -n "$lp" ]
	kill -STOP "$lp"
	touch "$WS/go"
	local st
	wait_warden
	cat "$T/out" "$T/err"
	[ "$st" -eq 0 ]
	grep -qx end "$T/out"
	grep -q "learning is incomplete: the learner did not answer within 10 s" "$T/err"
	[ ! -e "$T/p.json" ]
	[ -z "$(learner_pid)" ]
}

# The learner reads hostile memory: judged from the host while it runs
# (its /proc status), and by its own check that Landlock refuses it a
# directory it could otherwise open (learn/learner.c, else it stops and
# learning is incomplete, which the scenarios above would show).
@test "learn: the learner is confined: no capability, no_new_privs, seccomp; as root, the jail's own host uid" {
	"$WARDEN" run --learn --quiet --workspace "$WS" -- sh -c "$(waiting_program)" > "$T/out" 2> "$T/err" &
	WPID=$!
	wait_file "$WS/ready"
	local lp jp
	lp=$(learner_pid)
	[ -n "$lp" ]
	cat "/proc/$lp/status" > "$T/status"
	jp=$(procs_matching "while [ ! -e go ]" | grep -v -e "$WL_ARG" -e "warden run" | head -1 | sed 's|^/proc/\([0-9]*\):.*|\1|')
	[ -n "$jp" ]
	grep -E '^Uid:' "/proc/$jp/status" > "$T/jail.uid"
	touch "$WS/go"
	local st
	wait_warden
	cat "$T/status" "$T/err"
	[ "$st" -eq 0 ]
	grep -qE '^CapEff:\s+0+$' "$T/status"
	grep -qE '^CapPrm:\s+0+$' "$T/status"
	grep -qE '^CapBnd:' "$T/status"
	grep -qE '^NoNewPrivs:\s+1$' "$T/status"
	grep -qE '^Seccomp:\s+2$' "$T/status"
	# as root: never uid 0, the jail's own uid; otherwise the caller's
	if is_root; then
		[ "$(awk '/^Uid:/ { print $2 }' "$T/status")" -ne 0 ]
		[ "$(grep -E '^Uid:' "$T/status")" = "$(cat "$T/jail.uid")" ]
	else
		grep -qE "^Uid:\s+$(id -u)\s+$(id -u)\s+$(id -u)\s+$(id -u)$" "$T/status"
	fi
	[[ "$(cat "$T/err")" != *"INCOMPLETE"* ]]
}

# A call of the learn set the policy denies (open with a set-id mode) and
# one outside it (ptrace): both EPERM inside, as without --learn, whatever
# the learner would say; judged on the host too (no set-id file).
@test "learn: a call the policy denies stays EPERM under --learn: no set-id file appears, ptrace is refused" {
	cat > "$WS/denied.py" <<'EOF'
import ctypes, errno, os
try:
    os.open('suid', os.O_CREAT | os.O_WRONLY, 0o4755)
    print('created')
except PermissionError:
    print('open EPERM')
libc = ctypes.CDLL(None, use_errno=True)
r = libc.syscall(101, 0, 0, 0, 0)
print('ptrace', r, errno.errorcode.get(ctypes.get_errno()))
EOF
	run "$WARDEN" run --learn --quiet --workspace "$WS" -- python3 denied.py
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "open EPERM" ]
	[ "${lines[1]}" = "ptrace -1 EPERM" ]
	[ ! -e "$WS/suid" ]
	[[ "$output" == *"- syscall ptrace: the program called it (ptrace); the policy denies it (EPERM)"*"no policy can allow it"* ]]
	[[ "$output" != *"syscalls.allow_extra += ptrace"* ]]
	# audited as in every run
	grep -q '"event":"denied".*"syscall":"ptrace"' "$AUDIT"
	grep -q '"event":"denied".*"syscall":"openat"' "$AUDIT"
}

@test "learn: a normal run starts no learner, and its denied calls are audited as before" {
	"$WARDEN" run --quiet --workspace "$WS" -- sh -c "$(waiting_program)" > "$T/out" 2> "$T/err" &
	WPID=$!
	wait_file "$WS/ready"
	local lp
	lp=$(learner_pid)
	touch "$WS/go"
	local st
	wait_warden
	[ "$st" -eq 0 ]
	[ -z "$lp" ]
	# the control: a learning run of the same program has one
	rm -f "$WS/ready" "$WS/go"
	"$WARDEN" run --learn --quiet --workspace "$WS" -- sh -c "$(waiting_program)" > "$T/out" 2> "$T/err" &
	WPID=$!
	wait_file "$WS/ready"
	lp=$(learner_pid)
	touch "$WS/go"
	wait_warden
	[ "$st" -eq 0 ]
	[ -n "$lp" ]
	# a denied call in a normal run: one "denied" record, as always
	: > "$AUDIT"
	run "$WARDEN" run --quiet --workspace "$WS" -- python3 -c "import ctypes; ctypes.CDLL(None).syscall(101, 0, 0, 0, 0)"
	[ "$status" -eq 0 ]
	[ "$(grep -c '"event":"denied"' "$AUDIT")" -eq 1 ]
	grep -q '"denied_syscalls":\[{"name":"ptrace","count":1}\]' "$AUDIT"
}

@test "learn: in mode none, a DNS query the program or glibc sends names the host, a direct connection its address: mode proxy and those entries" {
	cat > "$WS/dns.py" <<'EOF'
import socket
q = bytes.fromhex('123401000001000000000000') + b'\x03www\x07example\x03org\x00' + b'\x00\x01\x00\x01'
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.sendto(q, ('127.0.0.1', 53))
except OSError as e:
    print('send failed', e.errno)
try:
    socket.getaddrinfo('learn.example.net', 443)
except OSError as e:
    print('lookup failed')
try:
    socket.create_connection(('93.184.216.34', 80), timeout=5)
except OSError as e:
    print('connect failed', e.errno)
EOF
	run "$WARDEN" policy learn --quiet --workspace "$WS" --write "$T/p.json" -- python3 dns.py
	echo "$output"
	[[ "$output" == *"+ network.allow += www.example.org: the program looked the name up itself"* ]]
	# glibc's own lookup: the network watch answers its connect to
	# 127.0.0.1:53 (issue 20), so it sends its queries, and they name it
	[[ "$output" == *"+ network.allow += learn.example.net: the program looked the name up itself (sendmmsg"* ]]
	[[ "$output" == *"the names in the queries it sent are the network.allow entries"* ]]
	# a direct connection: its address, reached only through the proxy
	[[ "$output" == *"+ network.allow += 93.184.216.34:80: the program connected to it directly"*"network mode none"* ]]
	run python3 -c "import json, sys; n = json.load(open(sys.argv[1]))['network']; print(n['mode'], n['allow'])" "$T/p.json"
	[ "$output" = "proxy ['www.example.org', 'learn.example.net', '93.184.216.34:80']" ]
	run "$WARDEN" policy check "$T/p.json"
	[ "$status" -eq 0 ]
}

@test "learn: --refusals writes the structured list as JSON: op, target, why, proposal, danger" {
	run "$WARDEN" run --learn --quiet --workspace "$WS" --refusals "$T/r.json" -- \
		sh -c "cat $D/data/sales.csv; cat /etc/shadow-not-there; echo x > /usr/learn-x"
	echo "$output"
	run python3 - "$T/r.json" "$D/data/sales.csv" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["profile"] == "workspace" and r["complete"] is True, r
by = {e["target"]: e for e in r["refusals"]}
e = by[sys.argv[2]]
assert e["op"] == "read" and e["syscall"] == "openat" and e["count"] == 1, e
assert e["proposal"] == {"key": "filesystem.read_only", "value": sys.argv[2]}, e
assert e["dangerous"] is False and e["included"] is True, e
e = by["/usr/learn-x"]
assert e["op"] == "create" and e["proposal"] == {"key": "filesystem.read_write", "value": "/usr"}, e
assert e["dangerous"] is True and e["included"] is False and "/usr" in e["danger"], e
print("ok")
EOF
	echo "$output"
	[ "$output" = "ok" ]
}

@test "learn: bad options fail before the program runs" {
	run -125 "$WARDEN" run --quiet --workspace "$WS" --write "$T/p.json" -- sh -c 'echo ran > ran'
	[[ "$output" == *"go with --learn"* ]]
	echo '{ "extends": "workspace" }' > "$T/base.json"
	run -125 "$WARDEN" policy learn --quiet --workspace "$WS" --policy "$T/base.json" -- sh -c 'echo ran > ran'
	[[ "$output" == *"extends a profile by name"* ]]
	run -125 "$WARDEN" policy learn --quiet --workspace "$WS" --name ../x -- sh -c 'echo ran > ran'
	[[ "$output" == *"--name '../x'"* ]]
	run -125 "$WARDEN" policy learn --quiet --workspace "$WS" --write /nonexistent/p.json -- sh -c 'echo ran > ran'
	[[ "$output" == *"/nonexistent/p.json: cannot write it"* ]]
	[ ! -e "$WS/ran" ]
}

# The proxy's record of a refused request is written when its connection
# ends, which may be when the program exits (urllib leaves it open): the
# learner must hear of it before it is told the run ended.  Made certain
# here: the egress process is stopped while the program ends, and goes on
# once the program is gone.  Failed before: the refusal was not learned
# (make test-fresh saw it by chance).
@test "learn: a refusal the proxy records only as the program exits is still learned" {
	cat > "$WS/late.py" <<EOF
import os, socket, time
port = int(os.environ['HTTP_PROXY'].rstrip('/').rsplit(':', 1)[1])
s = socket.create_connection(('127.0.0.1', port))
s.sendall(b'GET http://$ADDR:$OTHER/hello.txt HTTP/1.1\r\nHost: $ADDR:$OTHER\r\n\r\n')
print(s.recv(100).split(b'\r\n')[0].decode(), flush=True)
open('fetched', 'w').close()
while not os.path.exists('go'):
    time.sleep(0.02)
os._exit(0)   # the connection ends with the process
EOF
	"$WARDEN" policy learn --quiet --workspace "$WS" --profile learnbase \
		--include "$ADDR:$OTHER" -- python3 late.py > "$T/out" 2>&1 &
	WPID=$!
	for _ in $(seq 1200); do [ -e "$WS/fetched" ] && break; sleep 0.05; done
	[ -e "$WS/fetched" ]
	local eg="" p
	for p in /proc/[0-9]*; do
		[ "$(awk '/^PPid:/ { print $2 }' "$p/status" 2>/dev/null)" = "$WPID" ] || continue
		[ "$(cat "$p/comm" 2>/dev/null)" = warden-egress ] && eg=${p#/proc/}
	done
	[ -n "$eg" ]
	kill -STOP "$eg"
	touch "$WS/go"
	# the program gone (its jail with it): the proxy goes on
	local gone=""
	for _ in $(seq 3000); do
		procs_matching "python3 late.py" | grep -v -- "--profile" | grep -q . || { gone=1; break; }
		sleep 0.01
	done
	kill -CONT "$eg"
	[ -n "$gone" ]
	wait_warden
	cat "$T/out"
	[ "$st" -eq 0 ]
	grep -q "HTTP/1.1 403" "$T/out"
	grep -q "+ network.allow += $ADDR:$OTHER: the program asked the proxy for it" "$T/out"
}
