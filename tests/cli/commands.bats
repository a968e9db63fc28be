#!/usr/bin/env bats
# `warden audit`, `warden doctor`, `warden version` and usage errors.
load ../helpers
bats_require_minimum_version 1.5.0

setup() { common_setup; }
teardown() {
	[ -z "${DOC_DIR:-}" ] || rm -rf "$DOC_DIR"
	common_teardown
}

@test "audit: reads back a run as a table and as JSON, filtered by session" {
	"$WARDEN" run --workspace "$WS" --json "$WS.json" -- /bin/sh -c 'echo hi' >/dev/null
	sess=$(sed -n 's/.*"session": "\([0-9a-f]*\)".*/\1/p' "$WS.json")
	[ -n "$sess" ]
	run "$WARDEN" audit --session "$sess"
	[ "$status" -eq 0 ]
	[[ "$output" == *"run_start"* ]]
	[[ "$output" == *"run_end"* ]]
	[[ "$output" == *"reason=exited"* ]]
	run "$WARDEN" audit --json --session "$sess"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	# timestamps are UTC, RFC 3339 with milliseconds (computed without tzset)
	[[ "${lines[0]}" == '{"ts":"'"$(date -u +%Y-%m-%dT)"* ]]
	rm -f "$WS.json"
}

@test "audit: a missing log is a clear error" {
	run "$WARDEN" audit --audit-log "$WS/none.jsonl"
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot read the audit log"* ]]
}

@test "audit: control characters in the log are neutralised in the table" {
	printf '{"ts":"t","event":"run_start","session":"s1","profile":"p","argv":["\\u001b]52;c;x\\u0007"]}\n' > "$AUDIT"
	run "$WARDEN" audit
	[ "$status" -eq 0 ]
	[[ "$output" != *$'\e'* ]]
	[[ "$output" == *'\x1b'* ]]
}

# Issue 13: block and session rows were raw JSON, long event names were
# cut ("session_cl"), and --session took only a whole id.
audit_two_sessions() {
	{
		printf '{"ts":"t1","event":"session_open","session":"3f2a01b2c3d4","profile":"workspace","workspace":"/w/a"}\n'
		printf '{"ts":"t2","event":"block","session":"3f2a01b2c3d4","block":1,"language":"python","code":"print(1)\\nprint(2)","sha256":"ab"}\n'
		printf '{"ts":"t3","event":"block_end","session":"3f2a01b2c3d4","block":1,"reason":"exited","exit_code":0,"wall_ms":12,"denied_syscalls":[]}\n'
		printf '{"ts":"t4","event":"denied_dropped","session":"3f2a01b2c3d4","dropped":3,"limit":512}\n'
		printf '{"ts":"t5","event":"session_close","session":"3f2a01b2c3d4","blocks":1,"why":"closed"}\n'
		printf '{"ts":"t6","event":"session_open","session":"3f2b99887766","profile":"strict","workspace":"/w/b"}\n'
	} > "$AUDIT"
}

@test "audit: the table summarises each event kind and never cuts the event name" {
	audit_two_sessions
	run "$WARDEN" audit
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" != *'{"'* ]]
	[[ "$output" == *" session_close "*"blocks=1 why=closed"* ]]
	[[ "$output" == *" denied_dropped "*"3 denied records left out"* ]]
	[[ "$output" == *" session_open "*"profile=workspace workspace=/w/a"* ]]
	[[ "$output" == *" block "*"#1 python: print(1) (+1 line)"* ]]
	[[ "$output" == *" block_end "*"#1 reason=exited exit=0 wall=12ms"* ]]
}

@test "audit: --session takes a unique prefix; an ambiguous one lists the matches" {
	audit_two_sessions
	run "$WARDEN" audit --session 3f2a --json
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 5 ]
	run "$WARDEN" audit --session 3f2b99887766 --json
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
	run "$WARDEN" audit --session 3f2
	[ "$status" -eq 2 ]
	[[ "$output" == *"--session 3f2"*"3f2a01b2c3d4"*"3f2b99887766"* ]]
}

@test "doctor: reports the kernel features and starts a real jail" {
	run "$WARDEN" doctor
	[ "$status" -eq 0 ]
	[[ "$output" == *"user namespaces"* ]]
	[[ "$output" == *"landlock"* ]]
	[[ "$output" == *"seccomp notify"* ]]
	[[ "$output" == *"memory"* ]]
	[[ "$output" == *"python"* ]]
	[[ "$output" =~ "warden run true"\ +ok ]]
	# issue 20: the jail it started had the network watch (this kernel has veth)
	[[ "$output" =~ "network watch"\ +ok\ +"where a jailed program tries to go is seen" ]]
}

# warden-egress, network mode proxy's process (issue 21): doctor looks for
# it where warden does (WARDEN_EGRESS, beside warden, PREFIX/libexec/warden),
# starts it as a session would (as root as the broker's user) and waits for
# its READY; missing, not executable or not starting, the row says the fix.
# The fakes live in a directory of their own that the user warden can reach.
@test "doctor: checks warden-egress (found, executable, starts and confines itself) and names the fix" {
	local line
	run "$WARDEN" doctor
	[ "$status" -eq 0 ]
	line=$(grep '^  egress proxy ' <<<"$output")
	echo "$line"
	[[ "$line" =~ ^\ +egress\ proxy\ +ok\ + ]]
	[[ "$line" == *"/warden-egress (started, confined itself, ready)" ]]
	DOC_DIR=$(mktemp -d /tmp/warden-doctor.XXXXXX)
	chmod 0755 "$DOC_DIR"
	# warden alone, no warden-egress beside it nor in ../libexec/warden
	cp "$WARDEN" "$DOC_DIR/warden"
	run "$DOC_DIR/warden" doctor
	[ "$status" -eq 0 ]
	line=$(grep '^  egress proxy ' <<<"$output")
	echo "$line"
	[[ "$line" =~ ^\ +egress\ proxy\ +NO\ + ]]
	[[ "$line" == *"$DOC_DIR/../libexec/warden/warden-egress: No such file or directory (nor is warden-egress beside warden); network mode proxy cannot start: reinstall warden"*"WARDEN_EGRESS"* ]]
	# not executable
	printf '#!/bin/sh\nexit 3\n' > "$DOC_DIR/fake"
	chmod 0644 "$DOC_DIR/fake"
	run env WARDEN_EGRESS="$DOC_DIR/fake" "$WARDEN" doctor
	line=$(grep '^  egress proxy ' <<<"$output")
	echo "$line"
	[[ "$line" =~ ^\ +egress\ proxy\ +NO\ + ]]
	[[ "$line" == *"$DOC_DIR/fake is not an executable file"*"chmod 0755 $DOC_DIR/fake"* ]]
	# executable, but it ends before READY
	chmod 0755 "$DOC_DIR/fake"
	run env WARDEN_EGRESS="$DOC_DIR/fake" "$WARDEN" doctor
	line=$(grep '^  egress proxy ' <<<"$output")
	echo "$line"
	[[ "$line" =~ ^\ +egress\ proxy\ +NO\ + ]]
	[[ "$line" == *"$DOC_DIR/fake does not run: it exited 3 before it was ready"* ]]
}

# Issue 13: doctor prints the exact commands that would give full limits,
# only when a limit is weaker here.  As root every limit has a cgroup.
@test "doctor: names the commands that give full limits, only where a limit is weaker" {
	run "$WARDEN" doctor
	[ "$status" -eq 0 ]
	if is_root; then
		[[ "$output" =~ "memory"\ +ok\ +cgroup-v ]]
		[[ "$output" =~ "cpus"\ +ok\ +cgroup-v ]]
		[[ "$output" != *"full limits"* ]]
	else
		[[ "$output" =~ "cpus"\ +NO\ +unavailable ]]
		[[ "$output" == *"for full limits"* ]]
		local me
		me=$(id -un)
		if grep -q ' - cgroup cgroup .*memory' /proc/self/mountinfo; then
			# cgroup v1: root creates warden's parent and hands it over
			[[ "$output" == *"mkdir -p /sys/fs/cgroup/memory/"*"/warden"* ]]
			[[ "$output" == *"chown -R $me "*"/sys/fs/cgroup/cpu/warden"* ]]
		else
			[[ "$output" == *"Delegate="* ]]
		fi
	fi
}

# Issue 13: each --help fits one 80x24 screen and points to its man page
# (which exists in man/).
@test "usage: every --help fits 24 lines of 80 columns and names its man page" {
	local c page long n
	for c in "" run serve chat mcp doctor audit policy; do
		page=warden${c:+-$c}
		run "$WARDEN" $c --help
		[ "$status" -eq 0 ]
		# $lines drops blank lines: count them all
		n=$(printf '%s\n' "$output" | wc -l)
		echo "warden $c --help: $n lines"
		[ "$n" -le 24 ]
		long=$(printf '%s\n' "$output" | awk 'length($0) > 80')
		[ -z "$long" ]
		[[ "$output" == *"man $page"* ]]
		[ -f "$WARDEN_TOP/man/$page.1" ]
	done
}

@test "usage: unknown command and --version" {
	run "$WARDEN" frobnicate
	[ "$status" -eq 2 ]
	[[ "$output" == *"unknown command"* ]]
	run "$WARDEN" --version
	[ "$status" -eq 0 ]
	[[ "$output" == "warden "* ]]
}

# Finding 6: `warden audit` reads whole lines of any length and parses each
# strictly; a line that is not a well-formed record is reported with its
# line number and none of it is shown.
@test "audit: malformed records are reported by line number and never shown" {
	long=$(head -c 100000 /dev/zero | tr '\0' x)
	{
		printf '{"ts":"t1","event":"run_start","session":"good1","profile":"p","argv":["a"]}\n'
		printf 'garbage-line-2\n'
		printf '{"ts":"t3","event":"denied","session":"bad3","syscall":"mount","nr":1,"args":[],"host_pid":1,"count":1} trailing\n'
		printf "{'ts':'t4','event':'denied','session':'bad4','syscall':'x','nr':1,'args':[],'host_pid':1,'count':1}\n"
		printf '{"ts":"t5","event":"denied","session":"bad5","syscall":"mount","nr":"1","args":[],"host_pid":1,"count":1}\n'
		printf '{"ts":"t6","event":"block","session":"good6","block":1,"language":"python","code":"%s","sha256":"0"}\n' "$long"
		printf '[1,2]\n'
		printf '{"ts":"t8","event":"denied","session":"bad8","syscall":"mount","nr":1,"args":[1],"host_pid":1,"count":1}\n'
	} > "$AUDIT"
	for view in "" --json; do
		run --separate-stderr "$WARDEN" audit $view
		echo "$output"; echo "$stderr"
		[ "$status" -eq 1 ]
		[[ "$output" == *good1* ]]
		[[ "$output" == *good6* ]]
		[[ "$output" != *bad* ]]
		[[ "$output" != *garbage* ]]
		for n in 2 3 4 5 7 8; do
			[[ "$stderr" == *"$AUDIT:$n: malformed audit record; "* ]]
		done
		[[ "$stderr" != *"$AUDIT:1:"* ]]
		[[ "$stderr" != *"$AUDIT:6:"* ]]
		[[ "$stderr" != *garbage* ]]
	done
}

# Issue 13 (decoded calls): a denied record's "call" is what the table shows;
# a record from before it had one still shows its raw numbers; a "call"
# that is not a string makes the record malformed; control characters in a
# forged "call" are escaped like every other field.
@test "audit: denied records show the decoded call, old ones their raw numbers" {
	{
		printf '{"ts":"t1","event":"denied","session":"new1","syscall":"socket","nr":41,"args":["0x11","0x3","0x300","0x0","0x0","0x0"],"host_pid":1,"count":1,"call":"socket(AF_PACKET, SOCK_RAW, 768)"}\n'
		printf '{"ts":"t2","event":"denied","session":"old2","syscall":"socket","nr":41,"args":["0x11","0x3","0x300","0x0","0x0","0x0"],"host_pid":1,"count":2}\n'
		printf '{"ts":"t3","event":"denied","session":"esc3","syscall":"socket","nr":41,"args":[],"host_pid":1,"count":3,"call":"x\\u001b[2Jy"}\n'
		printf '{"ts":"t4","event":"denied","session":"bad4","syscall":"socket","nr":41,"args":[],"host_pid":1,"count":4,"call":5}\n'
	} > "$AUDIT"
	run --separate-stderr "$WARDEN" audit --denied
	echo "$output"; echo "$stderr"
	[ "$status" -eq 1 ]
	[[ "$output" == *"new1         denied         socket(AF_PACKET, SOCK_RAW, 768) -> EPERM  #1"* ]]
	[[ "$output" == *"old2         denied         socket(0x11, 0x3, 0x300, ...) -> EPERM  #2"* ]]
	[[ "$output" == *'x\x1b[2Jy -> EPERM  #3'* ]]
	[[ "$output" != *$'\e'* ]]
	[[ "$output" != *bad4* ]]
	[[ "$stderr" == *"$AUDIT:4: malformed audit record; \"call\" has the wrong type"* ]]
}

# Issue 20 (5): `policy check` said ok where `warden run` then refused the
# policy.  It now makes the run's own checks against this machine (the
# mount plan: links below writable places, binds that cannot be used) for
# the current directory or --workspace, each located in the file.
@test "policy check: refuses what a run refuses (a link below a writable place), located in the file" {
	mkdir "$WS/real"
	ln -s real "$WS/link"
	printf '{\n  "extends": "workspace",\n  "filesystem": {"read_only+": ["$WORKSPACE/link"]}\n}\n' > "$WS.json"
	run "$WARDEN" run --workspace "$WS" --policy "$WS.json" -- /bin/true
	echo "$output"
	[ "$status" -eq 125 ]
	[[ "$output" == *"binds $WS/link, which is a symlink below $WS"* ]]
	run "$WARDEN" policy check --workspace "$WS" "$WS.json"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$WS.json:3:33: the policy "*" binds $WS/link, which is a symlink below $WS, a place the jail can write"*"; bind a narrower writable path"* ]]
	[[ "$output" == *"$WS.json: 1 error for a run in $WS (--workspace)"* ]]
	# without --workspace: the current directory, as for a run
	run bash -c 'cd "$1" && "$2" policy check "$1.json"' _ "$WS" "$WARDEN"
	[ "$status" -eq 1 ]
	[[ "$output" == *"1 error for a run in $WS (the current directory"* ]]
	# the issue's own case, where /etc/localtime is a link: "read_write" /etc
	if [ -L /etc/localtime ]; then
		printf '{\n  "extends": "workspace",\n  "filesystem": {"read_write+": ["/etc"]}\n}\n' > "$WS.json"
		run "$WARDEN" policy check --workspace "$WS" "$WS.json"
		echo "$output"
		[ "$status" -eq 1 ]
		[[ "$output" == *"$WS.json:3:34: "*"binds /etc/localtime, which is a symlink below /etc"* ]]
	fi
	rm -f "$WS.json"
}

@test "policy check: a bind that does not exist, and nothing is made in the workspace" {
	mkdir -p "$WS/.git" "$WS/sub"
	printf '{\n  "extends": "workspace",\n  "filesystem": {"read_only+": ["/nonexistent-warden-test"]}\n}\n' > "$WS.json"
	find "$WS" | sort > "$WS.before"
	run "$WARDEN" policy check --workspace "$WS" "$WS.json"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$WS.json:3:33: the policy "*" binds /nonexistent-warden-test, but it cannot be used (No such file or directory); create it, or remove it"* ]]
	find "$WS" | sort > "$WS.after"
	diff "$WS.before" "$WS.after"
	rm -f "$WS.json" "$WS.before" "$WS.after"
}

@test "policy check: reports every error of the file, each at its line and column" {
	printf '{\n  "limits": {"memroy": "1G", "pids": -3},\n  "network": {"mode": "nope"},\n  "foo": 1,\n  "env": {"pass": ["X"], "set": {"X": "1"}}\n}\n' > "$WS.json"
	run "$WARDEN" policy check --workspace "$WS" "$WS.json"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$WS.json:2:14: unknown key \"memroy\" in \"limits\"; did you mean \"memory\"?"* ]]
	[[ "$output" == *"$WS.json:2:38: \"pids\" must not be negative"* ]]
	[[ "$output" == *"$WS.json:3:23: unknown network mode \"nope\""* ]]
	[[ "$output" == *"$WS.json:4:3: unknown key \"foo\" at the top level"* ]]
	[[ "$output" == *"$WS.json:5:"*"\"X\" is in both \"pass\" and \"set\""* ]]
	[[ "$output" == *"$WS.json: 5 errors"* ]]
	rm -f "$WS.json"
}

@test "policy check: takes a profile name as well as a file" {
	run "$WARDEN" policy check --workspace "$WS" workspace strict network
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"workspace: ok (profile workspace; checked for a run in $WS)"* ]]
	[[ "$output" == *"strict: ok (profile strict;"* ]]
	mkdir -p "$WS.cfg/warden/profiles"
	printf '{"extends": "workspace", "limits": {"pids": "many", "cpus": -1}}\n' > "$WS.cfg/warden/profiles/mine.json"
	run env XDG_CONFIG_HOME="$WS.cfg" "$WARDEN" policy check --workspace "$WS" mine
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$WS.cfg/warden/profiles/mine.json:1:45: \"pids\""* ]]
	[[ "$output" == *"$WS.cfg/warden/profiles/mine.json:1:61: \"cpus\""* ]]
	run "$WARDEN" policy check nosuch-profile
	[ "$status" -eq 1 ]
	[[ "$output" == *"unknown profile \"nosuch-profile\"; available profiles: "*"workspace"* ]]
	rm -rf "$WS.cfg"
}

# Issue 20 (6): `warden audit` printed the whole log (5,409 lines as root).
# As journalctl shows the end, it shows the last 10 runs or sessions;
# --last N, --since TIME and --all choose others, for --json too.
audit_runs() { # N runs of two records each, an hour apart, on 2031-01-01
	local i
	for i in $(seq 1 "$1"); do
		printf '{"ts":"2031-01-01T%02d:00:00.000Z","event":"run_start","session":"run%02d","profile":"workspace","argv":["true"]}\n' "$i" "$i"
		printf '{"ts":"2031-01-01T%02d:00:01.000Z","event":"run_end","session":"run%02d","reason":"exited"}\n' "$i" "$i"
	done > "$AUDIT"
}

@test "audit: shows the last 10 runs or sessions by default; --last, --since and --all choose others" {
	audit_runs 15
	run --separate-stderr "$WARDEN" audit
	echo "$output"; echo "$stderr"
	[ "$status" -eq 0 ]
	[ "$(grep -c ' run_start ' <<<"$output")" -eq 10 ]
	[[ "$output" != *run05* ]]
	[[ "$output" == *run06*run15* ]]
	[[ "$stderr" == *"the last 10 of 15 runs and sessions"*"--all"* ]]
	run --separate-stderr "$WARDEN" audit --json
	[ "${#lines[@]}" -eq 20 ]
	[[ "${lines[0]}" == *'"session":"run06"'* ]]
	run --separate-stderr "$WARDEN" audit --all --json
	[ "${#lines[@]}" -eq 30 ]
	[ -z "$stderr" ]
	run --separate-stderr "$WARDEN" audit --last 3 --json
	[ "${#lines[@]}" -eq 6 ]
	[[ "${lines[0]}" == *'"session":"run13"'* ]]
	# --since: every record from then on (here in UTC), however many runs
	run --separate-stderr env TZ=UTC "$WARDEN" audit --since '2031-01-01 03:00' --json
	[ "${#lines[@]}" -eq 26 ]
	[[ "${lines[0]}" == *'"session":"run03"'* ]]
	run --separate-stderr env TZ=UTC "$WARDEN" audit --since 2031-01-01T13:00:00 --last 2 --json
	[ "${#lines[@]}" -eq 4 ]
	[[ "${lines[0]}" == *'"session":"run14"'* ]]
	# --session is one run or session: no other limit
	run --separate-stderr "$WARDEN" audit --session run01 --json
	[ "${#lines[@]}" -eq 2 ]
	run "$WARDEN" audit --since 'next tuesday'
	[ "$status" -eq 2 ]
	[[ "$output" == *"--since 'next tuesday'"*"2024-05-01"*"1h ago"* ]]
	run "$WARDEN" audit --last 0
	[ "$status" -eq 2 ]
}

@test "audit: --since takes a time relative to now" {
	{
		printf '{"ts":"%s","event":"run_start","session":"old1","profile":"p","argv":["a"]}\n' "$(date -u -d '3 hours ago' +%Y-%m-%dT%H:%M:%S.000Z)"
		printf '{"ts":"%s","event":"run_start","session":"new2","profile":"p","argv":["a"]}\n' "$(date -u -d '10 minutes ago' +%Y-%m-%dT%H:%M:%S.000Z)"
	} > "$AUDIT"
	for since in '1h ago' -1h 1h 90m; do
		run --separate-stderr "$WARDEN" audit --since "$since" --json
		echo "$since: $output"
		[ "${#lines[@]}" -eq 1 ]
		[[ "$output" == *new2* ]]
	done
	run --separate-stderr "$WARDEN" audit --since yesterday --json
	[ "${#lines[@]}" -ge 1 ]
	[[ "$output" == *new2* ]]
}

@test "audit: pages through \$PAGER (or less -FRX) only when stdout is a terminal" {
	audit_runs 3
	mkdir "$WS/bin"
	printf '#!/bin/sh\necho "$*" > "$0.args"\ncat > "$0.got"\n' > "$WS/bin/less"
	cp "$WS/bin/less" "$WS/pager"
	chmod +x "$WS/bin/less" "$WS/pager"
	# a terminal (script(1) gives one): $PAGER gets the table
	run script -qec "env PAGER='$WS/pager' '$WARDEN' audit" /dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q 'run03 .*run_end' "$WS/pager.got"
	# no $PAGER: less -FRX (first on PATH here: the fake)
	run script -qec "env -u PAGER PATH='$WS/bin:/usr/bin:/bin' '$WARDEN' audit --json" /dev/null
	[ "$status" -eq 0 ]
	[ "$(cat "$WS/bin/less.args")" = "-FRX" ]
	grep -q '"session":"run03"' "$WS/bin/less.got"
	# --no-pager, and stdout not a terminal: no pager, the output as it is
	rm -f "$WS/pager.got"
	run script -qec "env PAGER='$WS/pager' '$WARDEN' audit --no-pager" /dev/null
	[[ "$output" == *run03* ]]
	[ ! -e "$WS/pager.got" ]
	PAGER="$WS/pager" "$WARDEN" audit > "$WS/out"
	[ ! -e "$WS/pager.got" ]
	grep -q 'run03 .*run_end' "$WS/out"
}
