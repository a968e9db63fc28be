#!/usr/bin/env bats
# Landlock's rights are inherited down the jail's file tree, mounts
# included, so the `all` rights a writable tmpfs (/tmp, $HOME) needs would
# also cover a read-only bind mounted beneath it.  A workspace under /tmp or
# under the user's home (the usual place) is such a bind under `strict`;
# the kernel skips the read-only mount's write check for special files, so
# only Landlock stops the jail writing into a FIFO the host reads there.
# jail/plan.c relocates such a bind out from under the tmpfs (SECURITY.md
# G2).  Found by the tests branch; failed before the relocation.
load ../helpers

setup() { common_setup; }
teardown() {
	[ -z "${HWS:-}" ] || rm -rf "$HWS"
	common_teardown
}

# fifo_not_written DIR: under strict with workspace DIR, the jail's write to
# a FIFO there never reaches the host's reader; the workspace is still
# readable at its own path and $PWD names it.
fifo_not_written() {
	local ws=$1 fifo="$1/fifo" line ff
	mkfifo "$fifo"
	echo hello > "$ws/note"
	exec {ff}<>"$fifo"
	run "$WARDEN" run --profile strict --workspace "$ws" -- /bin/sh -c \
		'cat note; echo "pwd=$PWD"; echo escaped-strict > fifo'
	echo "strict: $status $output"
	echo sentinel >&"$ff"
	read -r -t 10 -u "$ff" line || line="(nothing)"
	exec {ff}<&-
	[ "$line" = sentinel ] || { echo "the jail wrote to the host's FIFO under strict: $line"; false; }
	[ "$status" -ne 0 ]
	[[ "$output" == *hello* ]]
	[[ "$output" == *"pwd=$ws"* ]]
}

@test "under strict, a host FIFO in a workspace under /tmp is not writable (G2)" {
	fifo_not_written "$WS"
}

@test "under strict, a host FIFO in a workspace under \$HOME is not writable (G2)" {
	HWS=$(mktemp -d "$HOME/warden-ws.XXXXXX")
	chmod 755 "$HWS"
	fifo_not_written "$HWS"
}

@test "a policy path under the relocation root is refused" {
	printf '%s\n' '{"name":"reloc","extends":"workspace","filesystem":{"read_only+":["/.warden-ro/x"]}}' > "$WS.json"
	run "$WARDEN" run --policy "$WS.json" --workspace "$WS" -- /bin/true
	echo "$output"
	[ "$status" -eq 125 ]
	[[ "$output" == *"/.warden-ro"* ]]
	rm -f "$WS.json"
}
