#!/usr/bin/env bats
# bench/jail_floor.c, the kernel's floor under `warden run` that `make bench`
# measures (docs/design.md "The floor"): it builds from bench/floor.sh's
# command line, every stage runs, and the full floor really does the work
# (the program runs in the workspace, confined, and its groups are gone).
# It asserts no time.
load ../helpers

setup() {
	common_setup
	FLOOR="$BATS_TEST_TMPDIR/jail_floor"
	cc -O2 -D_GNU_SOURCE -I"$WARDEN_TOP/include" -o "$FLOOR" "$WARDEN_TOP/bench/jail_floor.c" \
		"$(dirname "$WARDEN")/filters.o"
}
teardown() { common_teardown; }

@test "bench floor: every stage of jail_floor runs /bin/true" {
	for s in ns mounts cgroups confine all; do
		run "$FLOOR" --upto "$s" "$WS" /bin/true
		echo "stage $s: $output"
		[ "$status" -eq 0 ]
	done
	run "$FLOOR" --upto nonsense "$WS" /bin/true
	[ "$status" -eq 2 ]
	[[ "$output" == *"usage: jail_floor"* ]]
}

@test "bench floor: the full floor runs the program in the workspace, confined, and removes its groups" {
	"$FLOOR" "$WS" /bin/sh -c 'echo made >file; grep -E "^(CapEff|CapBnd|NoNewPrivs|Seccomp):" /proc/self/status; hostname; exit 3' \
		>"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" &
	pid=$!
	rc=0
	wait "$pid" || rc=$?
	cat "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/err"
	[ "$rc" -eq 3 ]
	[ "$(cat "$WS/file")" = made ]
	grep -qx 'CapEff:	0000000000000000' "$BATS_TEST_TMPDIR/out"
	grep -qx 'CapBnd:	0000000000000000' "$BATS_TEST_TMPDIR/out"
	grep -qx 'NoNewPrivs:	1' "$BATS_TEST_TMPDIR/out"
	grep -qx 'Seccomp:	2' "$BATS_TEST_TMPDIR/out"
	grep -qx 'warden' "$BATS_TEST_TMPDIR/out"
	# its cgroups (as root), named after its pid, are gone when it returns
	[ -z "$(find /sys/fs/cgroup -maxdepth 6 -type d -path "*/warden-floor/j$pid" 2>/dev/null)" ]
	if is_root; then
		[ -z "$(cat "$BATS_TEST_TMPDIR/err")" ]   # no fallback note: it made them
	fi
}
