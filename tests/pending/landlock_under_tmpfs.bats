#!/usr/bin/env bats
# PENDING: not in the default run (tests/run.sh reads tests/cli and
# tests/security only).  It fails on the current code; the lead enables it
# (moves it to tests/security/) with the fix.
#
# Finding (found by the tests branch): Landlock rules are inherited down the
# jail's file tree, so the `all` rights given to a writable tmpfs (/tmp,
# $HOME) also cover every read-only bind mounted beneath it.  A workspace
# under /tmp or under the user's home (the usual place) is such a bind: under
# `strict` only the read-only mount protects it, and the kernel skips the
# mount's write check for special files, so the jail can write into a FIFO
# the host reads there.  The same test with the workspace under /var/tmp
# passes (tests/security/security.bats, "Landlock is applied").
load ../helpers

setup() { common_setup; }
teardown() { rm -f "$WS.json"; common_teardown; }

@test "pending: under strict, a host FIFO in a workspace under /tmp is not writable" {
	local fifo="$WS/fifo" line ff
	mkfifo "$fifo"
	exec {ff}<>"$fifo"
	run "$WARDEN" run --profile strict --workspace "$WS" -- /bin/sh -c 'echo escaped-strict > fifo'
	echo "strict: $status $output"
	echo sentinel >&"$ff"
	read -r -t 10 -u "$ff" line || line="(nothing)"
	exec {ff}<&-
	[ "$line" = sentinel ] || { echo "the jail wrote to the host's FIFO under strict: $line"; false; }
	[ "$status" -ne 0 ]
}
