#!/usr/bin/env bats
# `warden run`: every option and every exit status, against real jails.
load ../helpers

setup() { common_setup; }
teardown() { common_teardown; }

@test "run: a program's exit status is passed through" {
	wrun -- /bin/sh -c 'exit 7'
	[ "$status" -eq 7 ]
	wrun -- /bin/true
	[ "$status" -eq 0 ]
}

@test "run: stdout and stderr are relayed separately" {
	run bash -c "'$WARDEN' run --workspace '$WS' -- /bin/sh -c 'echo out; echo err >&2' 2>'$WS.err'"
	[ "$status" -eq 0 ]
	[ "$output" = "out" ]
	grep -qx err "$WS.err"
	rm -f "$WS.err"
}

@test "run: stdin is relayed through a pipe; --no-stdin gives /dev/null" {
	run bash -c "printf 'a\nb\n' | '$WARDEN' run --quiet --workspace '$WS' -- /bin/sh -c 'wc -l; test -p /proc/self/fd/0 && echo pipe'"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "2" ]
	[ "${lines[1]}" = "pipe" ]
	run bash -c "echo x | '$WARDEN' run --quiet --no-stdin --workspace '$WS' -- /bin/sh -c 'cat; readlink /proc/self/fd/0'"
	[ "$output" = "/dev/null" ]
}

@test "run: a missing program exits 127 with one line saying so" {
	run -127 "$WARDEN" run --workspace "$WS" -- no-such-program-xyz
	[[ "$output" == *"no-such-program-xyz: not found in the jail"* ]]
	[ "${#lines[@]}" -eq 1 ]
}

# Issue 13: the message printed the PATH after the search had used it up
# ("PATH=" or "PATH=-").  It names the PATH searched, or the path tried.
@test "run: not found names the PATH searched, or the path tried" {
	run -127 "$WARDEN" run --workspace "$WS" -- no-such-program-xyz
	[[ "$output" == *"searched PATH=/usr/local/bin:/usr/bin:/bin"* ]]
	run -127 "$WARDEN" run --workspace "$WS" --env PATH=/opt/a:/opt/b -- no-such-program-xyz
	[[ "$output" == *"searched PATH=/opt/a:/opt/b"* ]]
	run -127 "$WARDEN" run --workspace "$WS" -- /opt/no/such-xyz
	[[ "$output" == *"/opt/no/such-xyz: not found in the jail (tried /opt/no/such-xyz)"* ]]
	[[ "$output" != *"PATH=-"* ]]
	[ "${#lines[@]}" -eq 1 ]
}

@test "run: a program that is not executable exits 126" {
	printf 'hello\n' > "$WS/notexec"
	chmod 644 "$WS/notexec"
	wrun -- "$WS/notexec"
	[ "$status" -eq 126 ]
	[[ "$output" == *"cannot execute"* ]]
}

@test "run: killed by a signal exits 128+N" {
	# SIGSEGV from a real fault is forced, even on the namespace's pid 1
	wrun -- /usr/bin/python3 -c 'import ctypes; ctypes.string_at(0)'
	[ "$status" -eq 139 ]
}

@test "run: a signal the program sends itself with the default action kills it (128+N)" {
	# regression (finding 9): the program was pid 1, which ignores such signals
	wrun -- /bin/sh -c 'kill -TERM $$; echo after'
	echo "$output"
	[ "$status" -eq 143 ]
	[[ "$output" != *after* ]]
}

# Issue 13: `kill -TERM` on warden exited 137 without a word.
@test "run: SIGTERM to warden kills the jail, says so, and exits 143 (128+SIGTERM)" {
	"$WARDEN" run --workspace "$WS" --json "$WS.json" -- /bin/sh -c 'touch started; exec sleep 600' 2>"$WS.err" &
	local wpid=$! rc=0
	for _ in $(seq 400); do [ -e "$WS/started" ] && break; sleep 0.05; done
	[ -e "$WS/started" ] || { kill -KILL "$wpid"; echo "the program never started"; false; }
	kill -TERM "$wpid"
	wait "$wpid" || rc=$?
	cat "$WS.err"
	[ "$rc" -eq 143 ]
	# one line says so (unprivileged, the cgroup warning may follow)
	[ "$(grep -c "warden was asked to stop (SIGTERM) and killed the jail" "$WS.err")" -eq 1 ]
	grep -q '"exit_status":143' <(tr -d ' \n' < "$WS.json")
	rm -f "$WS.err" "$WS.json"
}

@test "run: abort() exits 134 (128+SIGABRT), as outside a jail" {
	wrun -- /usr/bin/python3 -c 'import os; os.abort()'
	[ "$status" -eq 134 ]
}

@test "run: an orphan is reaped, no zombie stays" {
	# The inner sh starts a background `true` and exits: `true` is
	# orphaned, reparented to pid 1, and must not stay a zombie.  The
	# program (python) waits only for its own child.
	wrun -- /usr/bin/python3 -c '
import os, subprocess, time
subprocess.run(["/bin/sh", "-c", "true & echo $! > /tmp/orphan"], check=True)
pid = open("/tmp/orphan").read().strip()
deadline = time.monotonic() + 30   # a wait for the condition, bounded
while True:
    try:
        state = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):   # gone, or reaped while read
        print("reaped")
        break
    if time.monotonic() > deadline:
        print("zombie: state %s" % state)
        break
    time.sleep(0.05)
'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *reaped* ]]
	[[ "$output" != *zombie* ]]
}

# jail_init PID: the jail's init, warden PID's child in a pid namespace of
# its own (two NSpid values), seen from the host; empty if there is none
jail_init() {
	local p
	for p in $(pgrep -P "$1"); do
		[ "$(awk '/^NSpid:/ {print NF}' "/proc/$p/status" 2>/dev/null)" -ge 3 ] && echo "$p"
	done
	return 0
}

# wait_file FILE: until it exists (the jail makes it), at most about 30 s
wait_file() {
	for _ in $(seq 600); do [ -e "$1" ] && return 0; sleep 0.05; done
	echo "timed out waiting for $1"
	return 1
}

# Issue 18: init took every signal as the supervisor's (a mutation of the
# check survived every test).  Sent from inside, SIGTERM must not reach the
# program's process group and the sweep signal (JAIL_SIG_SWEEP, SIGRTMIN+2,
# include/warden/jail.h) must not kill the program's other processes.  The
# host waits until init has taken both (its shared pending set, read from
# /proc, is empty), then sends SIGUSR1 from outside: init forwards that one
# only after it is done with the two before, so once the program has it,
# the verdict is final.
@test "run: SIGTERM and the sweep signal sent to pid 1 from inside the jail are dropped (G35)" {
	"$WARDEN" run --quiet --no-stdin --workspace "$WS" --timeout 120s -- /usr/bin/python3 -c '
import os, signal, subprocess, time
got = []
for s in (signal.SIGTERM, signal.SIGUSR1):
    signal.signal(s, lambda n, f: got.append(signal.Signals(n).name))
# in the program group, deaf to the host SIGUSR1 forwarded there; a sweep kills it
bg = subprocess.Popen(["sleep", "1000"],
                      preexec_fn=lambda: signal.signal(signal.SIGUSR1, signal.SIG_IGN))
os.kill(1, signal.SIGTERM)
os.kill(1, signal.SIGRTMIN + 2)
open("sent", "w").close()
while "SIGUSR1" not in got:   # the host sends it
    time.sleep(0.01)
print("forwarded:", " ".join(got), "- background:", "alive" if bg.poll() is None else "dead")
bg.kill()
' > "$WS.out" 2>&1 &
	local wpid=$! init="" pnd="" rc=0
	wait_file "$WS/sent" || { kill "$wpid"; false; }
	init=$(jail_init "$wpid")
	echo "warden $wpid, init $init"
	[ -n "$init" ] || { kill "$wpid"; false; }
	for _ in $(seq 600); do
		pnd=$(awk '/^ShdPnd:/ {print $2}' "/proc/$init/status")
		[[ "$pnd" =~ ^0+$ ]] && break
		sleep 0.05
	done
	echo "init's pending signals: $pnd"
	[[ "$pnd" =~ ^0+$ ]] || { kill "$wpid"; false; }
	kill -USR1 "$init"
	wait "$wpid" || rc=$?
	output=$(cat "$WS.out")
	rm -f "$WS.out"
	echo "$output"
	[ "$rc" -eq 0 ]
	# the host's SIGUSR1 came through (the control), nothing from inside did
	[ "$output" = "forwarded: SIGUSR1 - background: alive" ]
}

# Issue 18: init kept the program's stdin, stdout and stderr open (a
# mutation survived): then they do not see EOF when the program closes
# them.  From the host, init's fd table holds only the sync socket (3).
# An ordinary caller cannot list it: init is non-dumpable and, never having
# exec'd, its memory belongs to the host's user namespace, where the
# caller has no CAP_SYS_PTRACE; that refusal is checked instead.
@test "run: the jail's init holds none of the program's fds, only its sync socket and the network watch (G35)" {
	"$WARDEN" run --quiet --workspace "$WS" --timeout 120s -- /bin/sh -c \
		'touch ready; while [ ! -e go ]; do sleep 0.05; done' < /dev/null > "$WS.out" 2>&1 &
	local wpid=$! init="" prog="" fds="" rc=0
	wait_file "$WS/ready" || { kill "$wpid"; false; }
	init=$(jail_init "$wpid")
	prog=$(pgrep -P "$init" || true)
	echo "warden $wpid, init $init, program $prog"
	# the program's own fds are there to be seen (the control)
	fds=$(ls "/proc/$prog/fd" 2>&1 | sort -n | tr '\n' ' ' || true)
	echo "program's fds: $fds"
	if is_root; then
		output=$(ls "/proc/$init/fd" 2>&1 | sort -n | tr '\n' ' ' || true)
		# with the network watch (issue 20): 5 is the jail's one packet
		# socket, 6 init's signalfd
		local watch sig ino
		watch=$(readlink "/proc/$init/fd/5" || true)
		sig=$(readlink "/proc/$init/fd/6" || true)
		ino=$(awk 'NR > 1 {print $9}' "/proc/$init/net/packet")
		echo "init's 5: $watch, 6: $sig; the packet socket: $ino"
	else
		output=$(ls "/proc/$init/fd" 2>&1 || true)
	fi
	echo "init's fds: $output"
	touch "$WS/go"
	wait "$wpid" || rc=$?
	rm -f "$WS.out"
	[ "$rc" -eq 0 ]
	[[ "$fds" == "0 1 2 "* ]]
	if is_root; then
		[ "$output" = "3 5 6 " ]
		[ "$watch" = "socket:[$ino]" ]
		[ "$sig" = "anon_inode:[signalfd]" ]
	else
		[[ "$output" == *"Permission denied"* ]]
	fi
}

@test "run: --timeout stops the program and exits 124" {
	wrun --timeout 300ms --json "$WS.json" -- /bin/sleep 30
	[ "$status" -eq 124 ]
	[[ "$output" == *"timeout limit 300ms reached"* ]]
	grep -q '"reason":"timeout"' <(tr -d ' \n' < "$WS.json")
	rm -f "$WS.json"
}

@test "run: warden's own failure exits 125 with one line that says what to fix" {
	wrun --profile no-such-profile -- /bin/true
	[ "$status" -eq 125 ]
	[[ "$output" == *"no-such-profile"* ]]
	wrun --memory lots -- /bin/true
	[ "$status" -eq 125 ]
	[[ "$output" == *"--memory"*"512M"* ]]
	run "$WARDEN" run --workspace /nonexistent-dir -- /bin/true
	[ "$status" -eq 125 ]
	[[ "$output" == *"/nonexistent-dir"* ]]
	run "$WARDEN" run --bogus -- /bin/true
	[ "$status" -eq 125 ]
	run "$WARDEN" run
	[ "$status" -eq 125 ]
	[[ "$output" == *"no program given"* ]]
}

# Issue 10: proxy mode used to be refused ("not supported yet"); --net now
# picks the mode over the profile's (tests/cli/net.bats tests the modes).
@test "run: --net picks the network mode over the profile's" {
	wrun --quiet --net proxy -- /bin/sh -c 'echo "[$HTTP_PROXY]"'
	[ "$status" -eq 0 ]
	[ "$output" = "[http://127.0.0.1:3128]" ]
	wrun --quiet --profile network -- /bin/sh -c 'echo "[$HTTP_PROXY]"'
	[ "$status" -eq 0 ]
	[ "$output" = "[http://127.0.0.1:3128]" ]
	wrun --quiet --profile network --net none -- /bin/sh -c 'echo "[$HTTP_PROXY]"'
	[ "$status" -eq 0 ]
	[ "$output" = "[]" ]
}

@test "run: the workspace is the working directory, read-write, at the same path" {
	wrun --quiet -- /bin/sh -c 'pwd; echo hi > made-inside'
	[ "$status" -eq 0 ]
	[ "$output" = "$WS" ]
	[ "$(cat "$WS/made-inside")" = "hi" ]
	[ "$(stat -c %u "$WS/made-inside")" = "$(id -u)" ]
}

@test "run: --profile strict makes the workspace read-only" {
	wrun --profile strict -- /bin/sh -c 'echo x > f'
	[ "$status" -ne 0 ]
	[[ "$output" == *"Read-only file system"* ]]
	[ ! -e "$WS/f" ]
}

@test "run: --policy FILE is used, and a broken one is reported with file:line:col" {
	cat > "$WS.policy.json" <<-'J'
	{
	  "name": "tiny",
	  "limits": { "pids": 8 }
	}
	J
	wrun --policy "$WS.policy.json" --json "$WS.json" -- /bin/true
	[ "$status" -eq 0 ]
	printf '{\n  "name": "bad",\n  "limits": { "memroy": "1G" }\n}\n' > "$WS.policy.json"
	wrun --policy "$WS.policy.json" -- /bin/true
	[ "$status" -eq 125 ]
	[[ "$output" == *"$WS.policy.json:3:"*"memroy"* ]]
	rm -f "$WS.policy.json" "$WS.json"
}

@test "run: the caller's environment does not reach the jail, env.pass and --env do" {
	OPENAI_API_KEY=sk-secret LANG=C.UTF-8 run "$WARDEN" run --workspace "$WS" --env FOO=bar -- /usr/bin/env
	[ "$status" -eq 0 ]
	[[ "$output" != *"sk-secret"* ]]
	[[ "$output" != *"OPENAI_API_KEY"* ]]
	[[ "$output" == *"FOO=bar"* ]]
	[[ "$output" == *"LANG=C.UTF-8"* ]]
	[[ "$output" == *"PATH=/usr/local/bin:/usr/bin:/bin"* ]]
}

# Issue 13: --env 'BAD NAME=1' was accepted silently.
@test "run: --env with a name that is not an environment name is refused, naming the option" {
	wrun --env 'BAD NAME=1' -- /bin/true
	[ "$status" -eq 125 ]
	[[ "$output" == *"--env 'BAD NAME=1'"*"not a valid environment variable name"* ]]
	[ "${#lines[@]}" -eq 1 ]
	wrun --env '1X=1' -- /bin/true
	[ "$status" -eq 125 ]
	wrun --env '=1' -- /bin/true
	[ "$status" -eq 125 ]
	wrun --quiet --env 'GOOD_1=1' -- /bin/sh -c 'echo "$GOOD_1"'
	[ "$status" -eq 0 ]
	[ "$output" = "1" ]
}

# Issue 13: `cd ~ && warden run -- python3 s.py` could not open s.py: the
# private HOME tmpfs was mounted over the workspace, and writes vanished.
# When the workspace is HOME or holds it, the workspace wins.
@test "run: a workspace that is HOME, or holds it, is not hidden by the HOME tmpfs" {
	echo 'print("from s.py")' > "$WS/s.py"
	HOME="$WS" run "$WARDEN" run --quiet --workspace "$WS" -- /bin/sh -c 'python3 s.py && echo kept > out.txt && echo "HOME=$HOME"'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"from s.py"* ]]
	[[ "$output" == *"HOME=$WS"* ]]
	[ "$(cat "$WS/out.txt")" = kept ]
	# HOME below the workspace: its files are the workspace's, visible and kept
	mkdir "$WS/u"
	echo secret-not > "$WS/u/note.txt"
	HOME="$WS/u" run "$WARDEN" run --quiet --workspace "$WS" -- /bin/sh -c 'cat u/note.txt && echo k2 > "$HOME/w.txt"'
	[ "$status" -eq 0 ]
	[ "$output" = secret-not ]
	[ "$(cat "$WS/u/w.txt")" = k2 ]
	# a HOME apart from the workspace is still a private tmpfs
	mkdir "$WS.home"
	echo host > "$WS.home/h.txt"
	HOME="$WS.home" run "$WARDEN" run --quiet --workspace "$WS" -- /bin/sh -c 'ls -A "$HOME"; echo j > "$HOME/j.txt"'
	local leaked=no; [ -e "$WS.home/j.txt" ] && leaked=yes
	rm -rf "$WS.home"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ "$leaked" = no ]
}

# With HOME as the workspace, warden's own directories stay out of the
# jail's reach: the config (API keys, G22), the conversations and the
# audit log (G19).
@test "run: warden's config, data and audit log are hidden in a workspace that holds them" {
	mkdir -p "$WS/.config/warden" "$WS/.local/share/warden/conversations" "$WS/.local/state/warden"
	echo '{"api_key": "sk-in-config"}' > "$WS/.config/warden/config.json"
	echo conv-text-42 > "$WS/.local/share/warden/conversations/c.json"
	HOME="$WS" run env -u XDG_CONFIG_HOME -u XDG_DATA_HOME -u WARDEN_AUDIT_LOG \
		"$WARDEN" run --quiet --workspace "$WS" --audit-log "$WS/.local/state/warden/audit.jsonl" -- \
		/bin/sh -c 'cat .config/warden/config.json; cat .local/share/warden/conversations/c.json;
			echo forged >> .local/state/warden/audit.jsonl; ls -A .local/state/warden; echo done'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" != *"sk-in-config"* ]]
	[[ "$output" != *"conv-text-42"* ]]
	[[ "$output" == *"done"* ]]
	run ! grep -qx forged "$WS/.local/state/warden/audit.jsonl"
	run "$WARDEN" audit --audit-log "$WS/.local/state/warden/audit.jsonl"
	[ "$status" -eq 0 ]
	[[ "$output" == *"run_end"* ]]
}

# The same with the account's real HOME (as root /root, unprivileged the
# test user's own home), found through the password database.
@test "run: the real home directory as the workspace keeps its files" {
	local home f
	home=$(getent passwd "$(id -u)" | cut -d: -f6)
	[ -d "$home" ] && [ -w "$home" ] || skip_unless_works "home directory $home is not writable"
	f="warden-home-test-$$"
	echo "print('real home')" > "$home/$f.py"
	run env -u HOME "$WARDEN" run --quiet --workspace "$home" -- /bin/sh -c "python3 $f.py && echo w > $f.out"
	rm -f "$home/$f.py"
	local out=""; [ -e "$home/$f.out" ] && out=$(cat "$home/$f.out")
	rm -f "$home/$f.out"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"real home"* ]]
	[ "$out" = w ]
}

@test "run: --json writes the summary with every documented key" {
	wrun --json "$WS.json" -- /bin/sh -c 'exit 3'
	[ "$status" -eq 3 ]
	for k in exit_code signal reason wall_ms cpu_ms peak_memory_bytes denied_syscalls limits; do
		grep -q "\"$k\"" "$WS.json" || { echo "missing $k"; cat "$WS.json"; false; }
	done
	grep -q '"reason": "exited"' "$WS.json"
	grep -q '"exit_code": 3' "$WS.json"
	rm -f "$WS.json"
}

@test "run: --memory stops a program that allocates past it (reason oom, or rlimit fallback)" {
	wrun --memory 64M --json "$WS.json" -- /usr/bin/python3 -c 'b = bytearray(256 << 20); print(len(b))'
	[ "$status" -ne 0 ]
	[[ "$output" != *"268435456"* ]]
	if grep -q '"memory": "cgroup' "$WS.json"; then
		grep -q '"reason": "oom"' "$WS.json"
	else
		not_as_root "the rlimit fallback for --memory"
		grep -q '"memory": "rlimit"' "$WS.json"
		[[ "$output" == *"MemoryError"* ]]
	fi
	rm -f "$WS.json"
}

@test "run: --pids caps the number of processes" {
	wrun --pids 8 -- /bin/sh -c 'for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 5 & done; wait'
	[ "$status" -ne 0 ]
	[[ "$output" == *"fork"* || "$output" == *"Resource temporarily unavailable"* || "$output" == *"pids"* ]]
}

@test "run: the jail's init and program are in every group of the run, and warden is in none" {
	"$WARDEN" run --quiet --no-stdin --workspace "$WS" --timeout 60s -- \
		/bin/sh -c 'echo $$ > in.ready; exec sleep 60' &
	local wpid=$! init="" prog="" groups="" d n=0
	for _ in $(seq 600); do [ -s "$WS/in.ready" ] && break; sleep 0.05; done
	[ -s "$WS/in.ready" ] || { kill "$wpid"; echo "the program never started"; false; }
	# from the host: init is warden's child in a pid namespace of its own,
	# the program is init's child
	for p in $(pgrep -P "$wpid"); do
		[ "$(awk '/^NSpid:/ {print NF}' "/proc/$p/status")" -ge 3 ] && init=$p
	done
	prog=$(pgrep -P "$init")
	echo "warden $wpid, init $init, program $prog"
	[ -n "$init" ]
	[ -n "$prog" ]
	groups=$(find /sys/fs/cgroup -maxdepth 6 -type d -name "warden-$wpid-*" 2>/dev/null)
	echo "groups: $groups"
	if ! is_root && [ -z "$groups" ]; then
		# no writable cgroup: the jail stays in the caller's groups
		[ "$(cat "/proc/$init/cgroup")" = "$(cat "/proc/$wpid/cgroup")" ]
		kill "$wpid"; wait "$wpid" || true
		return 0
	fi
	[ -n "$groups" ]
	for d in $groups; do
		grep -qx "$init" "$d/cgroup.procs" || { echo "init not in $d"; kill "$wpid"; false; }
		grep -qx "$prog" "$d/cgroup.procs" || { echo "program not in $d"; kill "$wpid"; false; }
		if grep -qx "$wpid" "$d/cgroup.procs"; then echo "warden in $d"; kill "$wpid"; false; fi
		n=$((n + 1))
	done
	echo "$n groups"
	kill "$wpid"; wait "$wpid" || true
}

@test "run: --cpus reaches the kernel as a quota that throttles, or warden says it cannot" {
	wrun --cpus 0.2 --timeout 300ms --json "$WS.json" -- /bin/sh -c 'while :; do :; done'
	[ "$status" -eq 124 ]
	if ! grep -q '"cpus": "cgroup' "$WS.json"; then
		# no writable cgroup (unprivileged): nothing can enforce it, and
		# warden must say so rather than pretend.  As root there is always one.
		not_as_root "--cpus enforced by nothing"
		grep -q '"cpus": "unavailable"' "$WS.json"
		[[ "$output" == *"--cpus 0.2 is enforced by nothing"* ]]
		rm -f "$WS.json"
		return 0
	fi
	# judged from the host: the run's cgroup has the quota (20 ms per
	# 100 ms) and the kernel throttles the loop.  How much CPU it still
	# gets is timing, measured by `make bench`, not judged here.
	"$WARDEN" run --workspace "$WS" --cpus 0.2 --timeout 60s -- /bin/sh -c 'while :; do :; done' 2>/dev/null &
	wpid=$!
	local d="" q="" throttled=0
	for _ in $(seq 200); do
		d=$(find /sys/fs/cgroup -maxdepth 5 -type d -name "warden-$wpid-*" \
			-exec sh -c 'test -e "$1/cpu.max" || test -e "$1/cpu.cfs_quota_us"' _ {} \; -print 2>/dev/null | head -1)
		[ -n "$d" ] && break
		sleep 0.05
	done
	[ -n "$d" ] || { kill "$wpid"; echo "no cgroup of warden $wpid with a cpu controller"; false; }
	if [ -e "$d/cpu.max" ]; then q=$(cat "$d/cpu.max"); else q="$(cat "$d/cpu.cfs_quota_us") $(cat "$d/cpu.cfs_period_us")"; fi
	for _ in $(seq 200); do
		throttled=$(sed -n 's/^nr_throttled \([0-9]*\)/\1/p' "$d/cpu.stat" 2>/dev/null || echo 0)
		[ "${throttled:-0}" -gt 0 ] && break
		sleep 0.05
	done
	kill "$wpid"; wait "$wpid" || true
	echo "quota: $q, nr_throttled: $throttled"
	[ "$q" = "20000 100000" ]
	[ "${throttled:-0}" -gt 0 ]
	rm -f "$WS.json"
}

@test "run: --cpu-time stops a busy program (reason cpu_time)" {
	wrun --cpu-time 300ms --timeout 20s --json "$WS.json" -- /bin/sh -c 'while :; do :; done'
	[ "$status" -ne 0 ]
	[ "$status" -ne 124 ]
	grep -q '"reason": "cpu_time"' "$WS.json"
	rm -f "$WS.json"
}

@test "run: --output stops a flood at the limit, with warden's memory flat" {
	wrun --output 64K --json "$WS.json" -- /bin/sh -c 'yes 0123456789abcdef'
	[ "$status" -ne 0 ]
	grep -q '"reason": "output"' "$WS.json"
	grep -q '"output_bytes": 65536' "$WS.json"
	rm -f "$WS.json"
}

@test "run: the output limit passes exactly its allowance to a pipe and to a file (the splice path)" {
	# 100001: not a multiple of a page, so a whole-buffer splice would overshoot
	"$WARDEN" run --workspace "$WS" --output 100001 --json "$WS.json" -- \
		/bin/sh -c 'head -c 1048576 /dev/zero' | wc -c > "$WS.count" || true
	[ "$(cat "$WS.count")" -eq 100001 ]
	grep -q '"reason": "output"' "$WS.json"
	"$WARDEN" run --workspace "$WS" --output 100001 --json "$WS.json" -- \
		/bin/sh -c 'head -c 1048576 /dev/zero' > "$WS.file" || true
	[ "$(stat -c %s "$WS.file")" -eq 100001 ]
	grep -q '"reason": "output"' "$WS.json"
	# an O_APPEND file (no splice there on every kernel): the same bytes
	"$WARDEN" run --workspace "$WS" --output 100001 -- /bin/sh -c 'head -c 1048576 /dev/zero' \
		>> "$WS.file" || true
	[ "$(stat -c %s "$WS.file")" -eq 200002 ]
	rm -f "$WS.json" "$WS.count" "$WS.file"
}

@test "run: 1 GiB of output is relayed without warden growing past a few MiB" {
	/usr/bin/time -f '%M' -o "$WS.rss" "$WARDEN" run --workspace "$WS" --output unlimited -- \
		/bin/sh -c 'head -c 1073741824 /dev/zero' | wc -c > "$WS.count"
	[ "$(cat "$WS.count")" -eq 1073741824 ]
	rss_kb=$(tail -1 "$WS.rss")
	echo "warden max RSS: $rss_kb KiB"
	[ "$rss_kb" -lt 16384 ]
	rm -f "$WS.rss" "$WS.count"
}

@test "run: --output unlimited delivers 1 GiB complete and unchanged (count and checksum judged on the host)" {
	# a pattern, not zeros, so a lost or repeated chunk changes the sum
	gen="yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c 1073741824"
	want=$(sh -c "$gen" | cksum)
	"$WARDEN" run --workspace "$WS" --output unlimited -- /bin/sh -c "$gen" | cksum > "$WS.sum"
	[ "$(cat "$WS.sum")" = "$want" ]
	[ "${want##* }" = 1073741824 ]
	rm -f "$WS.sum"
}

# G130: as root, `--output unlimited` into a root-owned pipe hands the
# program a fresh write description of it (no relay); as anyone else the
# output is relayed.  Either way the jail cannot read the caller's pipe,
# and its fcntl calls on fd 1 never reach the caller.
@test "run: the program cannot read or reconfigure the caller's stdout pipe (direct or relayed)" {
	cat > "$WS/probe.py" <<'PY'
import errno, fcntl, os, sys
fcntl.fcntl(1, fcntl.F_SETFL, os.O_NONBLOCK)     # the caller's description?
try:
    fcntl.fcntl(1, 1031, 4096)                   # F_SETPIPE_SZ: shrink the pipe
except OSError:
    pass
try:
    os.open("/proc/self/fd/1", os.O_RDONLY | os.O_NONBLOCK)
    print("reopen: opened", file=sys.stderr)
except OSError as e:
    print("reopen: " + errno.errorcode[e.errno], file=sys.stderr)
print("written")
PY
	python3 - "$WARDEN" "$WS" > "$WS.out" <<'PY'
import fcntl, os, subprocess, sys
w, ws = sys.argv[1], sys.argv[2]
r, wr = os.pipe()
size = fcntl.fcntl(wr, 1032)                     # F_GETPIPE_SZ
p = subprocess.run([w, "run", "--workspace", ws, "--output", "unlimited", "--json",
                    ws + ".json", "--", "python3", ws + "/probe.py"],
                   stdout=wr, stderr=subprocess.PIPE)
out = os.read(r, 65536).decode()
print("status", p.returncode)
print("stderr", p.stderr.decode().strip())
print("out", out.strip())
print("nonblock", bool(fcntl.fcntl(wr, fcntl.F_GETFL) & os.O_NONBLOCK))
print("size", fcntl.fcntl(wr, 1032) == size)
PY
	cat "$WS.out"
	grep -qx "status 0" "$WS.out"
	grep -qx "out written" "$WS.out"
	# the jail's host uid owns nothing of a root-owned pipe; as anyone else
	# the jail's fd 1 is warden's relay pipe, which holds only its own bytes
	if is_root; then
		grep -qx "stderr reopen: EACCES" "$WS.out"
		grep -q '"output_bytes": null' "$WS.json"
	else
		# relayed: counted (stdout and stderr)
		grep -Eq '"output_bytes": [1-9][0-9]*,' "$WS.json"
	fi
	grep -qx "nonblock False" "$WS.out"
	grep -qx "size True" "$WS.out"
	rm -f "$WS.out" "$WS.json"
}

@test "run: --audit-log receives run_start, run_end and denied records" {
	wrun --audit-log "$WS.log" -- /bin/sh -c 'true'
	[ "$status" -eq 0 ]
	grep -q '"event":"run_start"' "$WS.log"
	grep -q '"event":"run_end"' "$WS.log"
	rm -f "$WS.log"
}

# Issue 13: a limit enforced by nothing is a warning of its own, naming the
# option; --strict-limits refuses to start the program instead.
@test "run: --cpus enforced by nothing is a clear warning; --strict-limits refuses it" {
	wrun --cpus 0.5 -- /bin/sh -c 'touch ran'
	[ "$status" -eq 0 ]
	[ -e "$WS/ran" ]
	rm -f "$WS/ran"
	wrun --strict-limits --cpus 0.5 -- /bin/sh -c 'touch ran'
	if is_root; then
		[ "$status" -eq 0 ]
		[ -e "$WS/ran" ]
		[[ "$output" != *"enforced by nothing"* ]]
	else
		[ "$status" -eq 125 ]
		[ ! -e "$WS/ran" ]
		[[ "$output" == *"--cpus 0.5 is enforced by nothing"* ]]
		[[ "$output" == *"warden doctor"* ]]
		wrun --cpus 0.5 -- /bin/true
		[[ "$output" == *"warning: --cpus 0.5 is enforced by nothing"* ]]
	fi
}

@test "run: --help documents every option" {
	run "$WARDEN" run --help
	[ "$status" -eq 0 ]
	for o in --profile --policy --workspace --memory --pids --cpus --timeout --net --audit-log --json; do
		[[ "$output" == *"$o"* ]]
	done
}

@test "run: / cannot be the workspace" {
	run "$WARDEN" run --workspace / -- /bin/true
	[ "$status" -eq 125 ]
	[[ "$output" == *"cannot be /"* ]]
}

@test "run: on a terminal, warden returns when the program ends and takes no key of the user's" {
	local sock="warden-run-$$-$BATS_TEST_NUMBER"
	tmux -L "$sock" -f /dev/null new-session -d -x 100 -y 30 \
		"'$WARDEN' run --workspace '$WS' -- /bin/true; echo \$? > '$WS.rc'; IFS= read -r line; printf '%s\\n' \"\$line\" > '$WS.line.tmp'; mv '$WS.line.tmp' '$WS.line'"
	for _ in $(seq 200); do [ -s "$WS.rc" ] && break; sleep 0.05; done
	rc=$(cat "$WS.rc" 2>/dev/null || echo "none: warden still running")
	tmux -L "$sock" send-keys MARK Enter
	for _ in $(seq 200); do [ -s "$WS.line" ] && break; sleep 0.05; done
	line=$(cat "$WS.line" 2>/dev/null || true)
	tmux -L "$sock" kill-server 2>/dev/null || true   # the pane ended after its read
	rm -f "$WS.rc" "$WS.line"
	echo "warden's status: $rc; the shell then read: $line"
	[ "$rc" = 0 ]
	[ "$line" = MARK ]
}

# Issue 20 (4): with the network off, `pip install` retried for 8.6 s, failed
# on name resolution, and warden said nothing.  Now the jail's namespace
# routes what leaves it to the network watch (jail/netwatch.c): the jail's
# init sees where each packet was going, answers it at once with the same
# "Network is unreachable" (a name lookup with the server's REFUSED), and
# reports it; the supervisor says where, and what lets it out.  The
# default profile has no /etc/resolv.conf, so glibc asks 127.0.0.1:53:
# that leaves through the watch too, and shows the name.
@test "run: a program that tries the network while it is off is told where it tried and how to allow it" {
	wrun --json "$WS.json" -- python3 -c '
import socket
for host in ("pypi.org", "203.0.113.9"):
    try: socket.create_connection((host, 443), timeout=2)
    except OSError as e: print(host, e)'
	echo "$output"
	[ "$status" -eq 0 ]
	# the program's errors are what they were: no route, no name
	[[ "$output" == *"203.0.113.9 [Errno 101] Network is unreachable"* ]]
	[[ "$output" == *"pypi.org [Errno -3] Temporary failure in name resolution"* ]]
	# and what lets it out, with the name it looked up (203.0.113.9 is a
	# documentation address: never suggested, like any special one)
	[[ "$output" == *"warden: the program tried to reach pypi.org (a name lookup) and 203.0.113.9 port 443, but the network is off under profile workspace (network mode none): --profile network, or --net proxy --allow pypi.org, lets it out"* ]]
	python3 - "$WS.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["network_tried"]
assert t["count"] == 2, t
assert t["first"][0] == {"name": "pypi.org", "address": "127.0.0.1", "port": 53, "protocol": "udp"}, t
assert t["first"][1] == {"address": "203.0.113.9", "port": 443, "protocol": "tcp"}, t
PY
	grep '"event":"run_end"' "$AUDIT" | tail -1 | grep -q '"network_tried":{"count":2,'
	run "$WARDEN" audit --audit-log "$AUDIT" --last 1 --no-pager
	echo "$output"
	[[ "$output" == *"run_end"*"tried=pypi.org,203.0.113.9:443"* ]]
	# a program that does not try: no word of it
	wrun --json "$WS.json" -- python3 -c 'print(1)'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" != *"network"* ]]
	python3 -c 'import json, sys; t = json.load(open(sys.argv[1]))["network_tried"]; assert t == {"count": 0, "first": []}, t' "$WS.json"
	# mode loopback: the jail's own 127.0.0.1 works and is not counted,
	# anything beyond it is, and a name lookup (to 127.0.0.1:53) is seen
	wrun --net loopback -- python3 -c '
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
socket.create_connection(s.getsockname()).close()
try: socket.create_connection(("203.0.113.9", 80), timeout=2)
except OSError as e: print(e)
try: socket.getaddrinfo("files.example", 443)
except OSError as e: print(e)'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"[Errno 101] Network is unreachable"* ]]
	[[ "$output" == *"[Errno -3] Temporary failure in name resolution"* ]]
	[[ "$output" == *"warden: the program tried to reach 203.0.113.9 port 80 and files.example (a name lookup), but only the jail's own 127.0.0.1 is there (network mode loopback)"* ]]
	rm -f "$WS.json"
}

# Without the network watch (a kernel without veth; WARDEN_NO_NET_WATCH
# makes such a jail here) a jail is as it was before it: no route at all,
# the program fails at once, and warden counts the attempts from the
# kernel's counters and says it cannot tell where.
@test "run: without the network watch, attempts are only counted, and the note says where is not known" {
	export WARDEN_NO_NET_WATCH=1
	wrun --json "$WS.json" -- python3 -c '
import socket
try: socket.create_connection(("203.0.113.9", 443), timeout=2)
except OSError as e: print("tcp", e)
try: socket.getaddrinfo("pypi.org", 443)
except OSError as e: print("lookup", e)
import os; print(sorted(os.listdir("/sys/class/net")) if os.path.isdir("/sys/class/net") else "no sysfs")'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"tcp [Errno 101] Network is unreachable"* ]]
	[[ "$output" == *"lookup [Errno -3] Temporary failure in name resolution"* ]]
	[[ "$output" == *"warden: the program tried to reach the network "*" times, but the network is off under profile workspace (network mode none)"* ]]
	[[ "$output" == *"where it tried to go is not known: this jail had no network watch"* ]]
	python3 - "$WS.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["network_tried"] == {"count": 0, "first": []}, j
assert j["network_unreachable"] >= 2, j
PY
	run "$WARDEN" run --workspace "$WS" -- cat /proc/net/dev
	echo "$output"
	[[ "$output" != *"wd0"* ]]
	run "$WARDEN" doctor
	[[ "$output" =~ "network watch"\ +NO\ +"off: WARDEN_NO_NET_WATCH is set" ]]
	rm -f "$WS.json"
}

# Issue 20 (7): unprivileged, every run printed "warning: no writable
# cgroup".  It is said once per user and machine (a stamp in the state
# directory), again when the situation changes, and points to warden doctor;
# --json names every limit's mechanism on every run.  As root there is a
# cgroup, and no such line.
@test "run: weaker limits without a writable cgroup are said once, with warden doctor" {
	export XDG_STATE_HOME="$WS.state"
	wrun --json "$WS.json" -- /bin/true
	echo "$output"
	[ "$status" -eq 0 ]
	if grep -q '"memory": "cgroup' "$WS.json"; then
		[[ "$output" != *"no writable cgroup"* ]]
		rm -rf "$WS.json" "$WS.state"
		return 0
	fi
	not_as_root "a run without a memory cgroup"
	[[ "$output" == *"warning: no writable cgroup: "*"rlimits only"*"warden doctor"* ]]
	wrun --json "$WS.json" -- /bin/true
	echo "$output"
	[[ "$output" != *"no writable cgroup"* ]]
	grep -q '"memory": "rlimit"' "$WS.json"
	# the situation changed since it was said: said again
	for f in "$WS.state"/warden/said-cgroup.*; do echo "memory limit enforced by a cgroup" > "$f"; done
	wrun -- /bin/true
	[[ "$output" == *"warning: no writable cgroup: "* ]]
	rm -rf "$WS.json" "$WS.state"
}

# Issue 20 (7): a memory limit enforced by an rlimit (no memory cgroup)
# showed up as Python's MemoryError with nothing from warden.  Nothing tells
# an allocation refused by RLIMIT_AS from the program's own choice, so
# warden says what it knows: the program failed under that rlimit, and
# more firmly when its largest process had used most of the limit (the
# kernel's peak RSS).  As root the limit is a cgroup's, and its OOM kill is
# reason oom, with no such note.
@test "run: a program failing under a memory rlimit is told the limit is an rlimit" {
	wrun --memory 64M --json "$WS.json" -- /usr/bin/python3 -c 'b = bytearray(256 << 20)'
	echo "$output"
	[ "$status" -ne 0 ]
	if grep -q '"memory": "cgroup' "$WS.json"; then
		grep -q '"reason": "oom"' "$WS.json"
		[[ "$output" != *"RLIMIT_AS"* ]]
		rm -f "$WS.json"
		return 0
	fi
	not_as_root "the rlimit fallback for --memory"
	[[ "$output" == *"MemoryError"* ]]
	[[ "$output" == *"warden: memory: the program failed (exit 1) while its memory limit (64M) was an rlimit (RLIMIT_AS, no memory cgroup here)"*"--memory raises it"* ]]
	# a program that filled most of it first: said more firmly
	wrun --memory 200M -- /usr/bin/python3 -c '
chunks = []
try:
    while True: chunks.append(bytearray(4 << 20))
except MemoryError:
    raise SystemExit(1)'
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"warden: memory: the program failed (exit 1) after its largest process used "*" of the 200M its memory limit allows: it most likely ran out"*"RLIMIT_AS"* ]]
	# one that succeeds under it: no word
	wrun --memory 64M -- /usr/bin/python3 -c 'print(1)'
	[ "$status" -eq 0 ]
	[[ "$output" != *"memory"* ]]
	rm -f "$WS.json"
}
