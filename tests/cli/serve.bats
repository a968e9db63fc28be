#!/usr/bin/env bats
# `warden serve --stdio`: the JSON-lines API end to end, through the real
# supervisor, broker and jails.  tests/cli/serve_client.py plays each
# scenario and checks every event; it bounds every wait (60 s).
load ../helpers

setup() {
	common_setup
	# profiles for the limits: a short wall time, a small output limit
	CFG="$WS.config"
	mkdir -p "$CFG/warden/profiles"
	printf '%s\n' '{"name":"short","extends":"workspace","limits":{"wall_time":"3s"}}' \
		> "$CFG/warden/profiles/short.json"
	printf '%s\n' '{"name":"flood","extends":"workspace","limits":{"output":"64K"}}' \
		> "$CFG/warden/profiles/flood.json"
	printf '%s\n' '{"name":"deephide","extends":"workspace","filesystem":{"hide":["$WORKSPACE/.ssh","$WORKSPACE/proj/secret"]}}' \
		> "$CFG/warden/profiles/deephide.json"
	printf '%s\n' '{"name":"cpu1","extends":"workspace","limits":{"wall_time":"2s","cpu_time":"1s"}}' \
		> "$CFG/warden/profiles/cpu1.json"
	# 10 s: the job must outlive two blocks, a cold jail's start included,
	# on a loaded machine under ASan (3 s was overrun there)
	printf '%s\n' '{"name":"bg","extends":"workspace","limits":{"wall_time":"10s","background":true}}' \
		> "$CFG/warden/profiles/bg.json"
	printf '%s\n' '{"name":"bgcpu","extends":"workspace","limits":{"wall_time":"60s","cpu_time":"1s","background":true}}' \
		> "$CFG/warden/profiles/bgcpu.json"
	printf '%s\n' '{"name":"frz","extends":"workspace","limits":{"wall_time":"2s","cpu_time":"2s"}}' \
		> "$CFG/warden/profiles/frz.json"
	printf '%s\n' '{"name":"fds64","extends":"workspace","limits":{"open_files":64}}' \
		> "$CFG/warden/profiles/fds64.json"
	BROKER="$(dirname "$WARDEN")/warden-broker"
}
teardown() {
	rm -rf "$CFG" "$WS.host"
	common_teardown
}

# serve_client SCENARIO [warden serve options]
serve_client() {
	run env WARDEN="$WARDEN" XDG_CONFIG_HOME="$CFG" \
		python3 "$WARDEN_TOP/tests/cli/serve_client.py" "$1" --workspace "$WS" "${@:2}"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ok $1"* ]]
}

@test "serve: open gives a session with its languages; close ends it" {
	serve_client open
}

# Issue 20 (4): the network being off, and where the block tried, are said
# in the block's result too.
@test "serve: a block that tries the network while it is off is told where, in its result, each block anew" {
	serve_client net_off
}

@test "serve: python keeps variables, functions, imports and cwd across blocks" {
	serve_client python_state
}

@test "serve: javascript and shell keep their state across blocks" {
	serve_client js_shell_state
}

@test "serve: output that looks like driver markers is relayed verbatim" {
	serve_client markers
}

@test "serve: interrupt stops a sleeping block; the session keeps its state" {
	serve_client interrupt
}

@test "serve: an interrupt Perl could not act on at once is sent again: the block stops, the session keeps its state" {
	serve_client interrupt_perl_window
}

@test "serve: a timeout loses the state and the next block runs in a fresh jail" {
	serve_client timeout --profile short
}

@test "serve: SIGXCPU under a cpu-time limit ends the block with reason cpu_time, as in warden run" {
	serve_client sigxcpu
}

@test "serve: a block's background processes are killed when it ends (finding 7)" {
	serve_client leftovers --profile short
}

@test "serve: a forged D under limits.background: cpu burnt between blocks counts, jail killed" {
	serve_client forged_done --profile bgcpu
}

@test "serve: a thread left in the driver by a forged D runs nothing between blocks (issue 18)" {
	serve_client frozen_between --profile frz --pool 0
}

@test "serve: a process whose main thread exited is killed at the block's end (issue 18)" {
	serve_client leader_exited --profile short --pool 0
}

@test "serve: limits.background keeps a job across blocks until the wall time" {
	serve_client background --profile bg
}

@test "serve: an output flood is truncated to its head and tail, full size reported" {
	serve_client flood --profile flood
}

@test "serve: a session flooding denied syscalls stays bounded and does not stall another" {
	serve_client denied_flood
}

@test "serve: code shaped like an audit record cannot forge one (warden audit)" {
	serve_client audit_forgery
}

@test "serve: two sessions run their blocks at the same time" {
	serve_client parallel
}

@test "serve: runs sent while a block runs wait their turn, in order" {
	serve_client queue
}

@test "serve: more sessions than the profile's open_files each run a block (the limit comes after close_range)" {
	serve_client many_fds --profile fds64
}

@test "serve: --max-sessions refuses an open beyond it with an error, never a failed run" {
	serve_client max_sessions --max-sessions 3
}

# The room is the whole limit less the server's 64, at 16 fds a session:
# (256 - 64) / 16 = 12.  No quarter is kept back for the jails' proxies
# any more: they live in warden-egress's fd table (issue 21), not the
# supervisor's (before: room for 8)
@test "serve: --max-sessions beyond what the open-files limit allows fails at start, naming both" {
	run env XDG_CONFIG_HOME="$CFG" prlimit --nofile=256 "$WARDEN" serve --stdio --workspace "$WS" \
		--max-sessions 1000 < /dev/null
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"--max-sessions 1000"*"ulimit -n"* ]]
	[[ "$output" == *"the limit is 256 (room for 12 sessions)"* ]]
	run env XDG_CONFIG_HOME="$CFG" "$WARDEN" serve --stdio --workspace "$WS" --max-sessions 0 < /dev/null
	[ "$status" -eq 2 ]
	[[ "$output" == *"--max-sessions"* ]]
}

@test "serve: malformed lines get error events and the session goes on" {
	serve_client malformed
}

@test "serve: an unknown language is refused with the list of available ones" {
	serve_client unknown_language
}

@test "serve: invalid or split UTF-8 in output becomes valid JSON" {
	serve_client utf8
}

@test "serve: a one-shot session runs every block in a fresh jail" {
	serve_client oneshot
}

@test "serve: the broker is confined (no_new_privs, seccomp)" {
	serve_client confined
}

@test "serve: the broker's environment holds no way to the caller's desktop services" {
	SSH_AUTH_SOCK=/tmp/agent.sock DBUS_SESSION_BUS_ADDRESS=unix:path=/tmp/bus \
		XDG_RUNTIME_DIR=/run/user/0 DISPLAY=:0 WAYLAND_DISPLAY=wayland-0 \
		WARDEN_TEST_SECRET=hunter2 LANG=C.UTF-8 serve_client broker_env
}

@test "serve: a profile not allowed and a workspace outside the roots are refused; the session goes on (G16)" {
	mkdir -p "$WS.other"
	serve_client refusals --allow-profile short --allow-workspace "$WS.other"
	rm -rf "$WS.other"
}

@test "serve: when the broker dies, warden exits and no jail or cgroup survives" {
	serve_client broker_death
}

@test "serve: warden-broker started by hand says how it is started" {
	run "$BROKER" serve --stdio 3</dev/null
	[ "$status" -eq 125 ]
	[[ "$output" == *"started by \`warden serve\` or \`warden chat\`"* ]]
	run "$BROKER"
	[ "$status" -eq 125 ]
	run "$BROKER" frobnicate
	[ "$status" -eq 125 ]
	[[ "$output" == *"unknown mode"* ]]
}

@test "serve: a workspace swapped for a symlink after it was opened is never followed (G22a)" {
	serve_client ws_swap
	[ ! -e "$WS.host/escaped" ]
	rm -rf "$WS.host"
}

@test "serve: a hide path another session turned into a symlink is hidden, not followed (G22b)" {
	serve_client hide_swap
	[ "$(ls -A "$WS.host")" = canary ]
	rm -rf "$WS.host"
}

@test "serve: a workspace at or below a hidden path is refused; the session goes on (G22c)" {
	serve_client hidden_ws
}

@test "serve: the root's hides that land inside a workspace below it are hidden there (G22c)" {
	serve_client deep_hide --allow-profile deephide
}

@test "serve: opened names each limit's mechanism; no memory counter gives a null peak; a block failing under a memory rlimit is told (issues 13, 20)" {
	serve_client limits
}

@test "serve: opened carries the jail's facts: the policy's source, the Landlock ABI, home in the workspace (issue 20)" {
	serve_client jail_facts
	mkdir -p "$WS/me"
	HOME="$WS/me" serve_client jail_facts
}
