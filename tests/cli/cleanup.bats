#!/usr/bin/env bats
# G13: when a run ends, for any reason, nothing of it survives: no process,
# no cgroup, no mount.  Even when warden itself is killed with SIGKILL.
load ../helpers

setup() { common_setup; }
teardown() { common_teardown; }

# the program's processes: their command line starts with this run's
# unique token (exec -a).  Not any that merely carries it: warden's own
# command line names it, and so does its watchdog (a fork of warden),
# which lives on after warden to remove the groups (under load, a while)
token_procs() { pgrep -f "^$1( |\$)" || true; }

cgroup_leftovers() { # groups named after a given warden pid
	find /sys/fs/cgroup -maxdepth 4 -type d -name "warden-$1-*" 2>/dev/null || true
}

wait_for_file() {
	for _ in $(seq 100); do [ -e "$1" ] && return 0; sleep 0.05; done
	return 1
}

@test "cleanup: daemons started by the program do not outlive the run" {
	tok="warden-daemon-$$-$RANDOM"
	# the jail ends only once both daemons run under their token (a wait
	# for that condition, not a fixed sleep that might end too soon)
	wrun --quiet -- /bin/bash -c "(setsid bash -c 'exec -a $tok sleep 600' &) ; (bash -c 'exec -a $tok sleep 600' &) ;
		until [ \"\$(pgrep -c -f -x '$tok 600')\" -ge 2 ]; do sleep 0.01; done; echo started"
	[ "$status" -eq 0 ]
	[ "$output" = "started" ]
	# no grace period: when warden returns, the run's processes are gone
	[ -z "$(token_procs "$tok")" ]
}

@test "cleanup: SIGKILL of warden kills the jail and removes its cgroups" {
	tok="warden-sigkill-$$-$RANDOM"
	"$WARDEN" run --workspace "$WS" -- /bin/bash -c "touch ready; (exec -a $tok sleep 600 &) ; exec -a $tok sleep 600" &
	wpid=$!
	wait_for_file "$WS/ready"
	[ -n "$(token_procs "$tok")" ]
	if is_root; then [ -n "$(cgroup_leftovers "$wpid")" ]; fi
	kill -9 "$wpid"
	wait "$wpid" || true
	for _ in $(seq 40); do
		[ -z "$(token_procs "$tok")" ] && [ -z "$(cgroup_leftovers "$wpid")" ] && break
		sleep 0.05
	done
	[ -z "$(token_procs "$tok")" ]
	[ -z "$(cgroup_leftovers "$wpid")" ]
}

@test "cleanup: a normal run leaves no cgroup and no mount on the host" {
	before=$(wc -l < /proc/self/mountinfo)
	"$WARDEN" run --workspace "$WS" -- /bin/true &
	wpid=$!
	wait "$wpid"
	# warden exits as soon as it has reported; its watchdog removes the
	# (empty) groups just after: wait for that, bounded
	for _ in $(seq 100); do
		[ -z "$(cgroup_leftovers "$wpid")" ] && break
		sleep 0.05
	done
	[ -z "$(cgroup_leftovers "$wpid")" ]
	[ "$(wc -l < /proc/self/mountinfo)" -eq "$before" ]
}

@test "cleanup: the program's processes are gone when warden exits, its cgroups just after" {
	tok="warden-handover-$$-$RANDOM"
	"$WARDEN" run --workspace "$WS" -- /bin/bash -c "(exec -a $tok sleep 600 &) ; exec -a $tok sleep 0.01" &
	wpid=$!
	wait "$wpid"
	# no grace period for processes: the pid namespace died with init
	[ -z "$(token_procs "$tok")" ]
	for _ in $(seq 100); do
		[ -z "$(cgroup_leftovers "$wpid")" ] && break
		sleep 0.05
	done
	[ -z "$(cgroup_leftovers "$wpid")" ]
}

@test "cleanup: a timed-out run leaves no process behind" {
	tok="warden-timeout-$$-$RANDOM"
	wrun --timeout 300ms -- /bin/bash -c "(exec -a $tok sleep 600 &) ; exec -a $tok sleep 600"
	[ "$status" -eq 124 ]
	[ -z "$(token_procs "$tok")" ]
}

@test "cleanup: warden's watchdog holds no pipe of warden's stdio, so a reader's EOF comes when warden exits" {
	# a harness capturing warden's stderr (subprocess.run(capture_output),
	# `$(warden run ... 2>&1)`) reads until every writer is gone: the
	# watchdog, which outlives warden (rmdir, gc), must not be one of them
	mkfifo "$BATS_TEST_TMPDIR/err"
	cat "$BATS_TEST_TMPDIR/err" > /dev/null &
	"$WARDEN" run --workspace "$WS" -- /bin/sh -c 'touch ready; while [ ! -e go ]; do sleep 0.01; done' \
		2> "$BATS_TEST_TMPDIR/err" < /dev/null > /dev/null &
	wpid=$!
	wait_for_file "$WS/ready"
	pipe=$(readlink "/proc/$wpid/fd/2")
	[ "$pipe" = "$BATS_TEST_TMPDIR/err" ]
	kids=$(pgrep -P "$wpid" || true)
	if [ "$(id -u)" -eq 0 ]; then [ -n "$kids" ]; fi   # as root: the jail's init and the watchdog
	for k in $kids; do
		for fd in 0 1 2; do
			[ "$(readlink "/proc/$k/fd/$fd" 2>/dev/null || true)" != "$pipe" ]
		done
	done
	touch "$WS/go"
	wait "$wpid"
}
