#!/usr/bin/env bats
# The persistent language drivers (drivers/*), run outside any jail by
# tests/drivers/harness.py with a real socketpair on fd 4 and pipes on
# stdout/stderr, exactly as supervisor/lang.c starts them (as pid 1 of a
# pid namespace when user namespaces work).  Every wait in the harness is
# bounded and fails the test when it runs out.
load ../helpers

setup() { common_setup; }
teardown() { common_teardown; }

LANGS="python javascript shell perl ruby r"
# R cannot close its fd 1, and the programs an R block starts inherit the
# control socket (R reads its frames on stdin: drivers/r.R): those two
# tests leave it out, and SECURITY.md says what that means (G20, G151).
LANGS_NOT_R="python javascript shell perl ruby"

harness() {
	run /usr/bin/python3 "$WARDEN_TOP/tests/drivers/harness.py" "$@"
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
}

@test "drivers: globals, functions, imports and the working directory persist" {
	harness state $LANGS
}

@test "drivers: an error gives status 1 with the block's own traceback; the session goes on" {
	harness error $LANGS
}

@test "drivers: marker-like text in code and output does not confuse the protocol" {
	harness markers $LANGS
}

@test "drivers: frame lengths count bytes of multi-byte UTF-8" {
	harness utf8 $LANGS
}

@test "drivers: SIGINT during a sleep gives status 130 and the state survives" {
	harness sigint_sleep $LANGS
}

@test "drivers: SIGINT during a busy loop gives status 130 and the state survives" {
	harness sigint_busy python javascript perl ruby r
}

@test "drivers: SIGINT in a loop that prints leaves a working session" {
	harness sigint_print python javascript perl ruby r
}

@test "drivers: SIGINT between blocks does not end the session" {
	harness sigint_idle $LANGS
}

@test "drivers: a block that closes its stdout does not break the session" {
	harness close_stdout $LANGS_NOT_R
}

@test "drivers: programs started by a block do not get fd 4" {
	harness fd4_hidden $LANGS_NOT_R
}

@test "drivers: a child forked by a block does not act as a second driver" {
	harness fork python perl ruby r
}

@test "drivers: EOF on fd 4 exits 0" {
	harness eof $LANGS
}

@test "drivers: a bad frame header on fd 4 makes the driver exit non-zero" {
	harness garbage_header $LANGS
	harness garbage_number $LANGS
	harness garbage_long $LANGS
	harness truncated $LANGS
}

@test "drivers: an empty block is fine" {
	harness empty $LANGS
}

@test "drivers: python shows a final expression, keeps sys.exit to the block, keeps __main__ clean" {
	harness python_display python
	harness python_namespace python
}

@test "drivers: javascript awaits promises, supports top-level await, keeps timers running" {
	harness javascript_extra javascript
}

@test "drivers: shell keeps declare'd variables; fd 4 is closed for the block" {
	harness shell_extra shell
}

@test "drivers: perl keeps package variables; exit(n) ends only the block" {
	harness perl_extra perl
}

@test "drivers: ruby keeps top-level locals; exit(n) ends only the block" {
	harness ruby_extra ruby
}

@test "drivers: they work inside a real jail (its syscall filter, Landlock, no pid 1)" {
	mkdir -p "$WS/top/tests/drivers" "$WS/top/supervisor"
	cp -r "$WARDEN_TOP/drivers" "$WS/top/"
	cp "$WARDEN_TOP/supervisor/lang.c" "$WS/top/supervisor/"
	cp "$WARDEN_TOP/tests/drivers/harness.py" "$WS/top/tests/drivers/"
	local c langs
	for c in state sigint_sleep sigint_idle fd4_hidden eof; do
		langs=$LANGS
		[ "$c" != fd4_hidden ] || langs=$LANGS_NOT_R
		run "$WARDEN" run --quiet --workspace "$WS" -- /usr/bin/env WARDEN_TOP="$WS/top" \
			/usr/bin/python3 "$WS/top/tests/drivers/harness.py" "$c" $langs
		printf '%s\n' "$output"
		[ "$status" -eq 0 ]
		[ "$(grep -c '^ok ' <<<"$output")" -eq "$(wc -w <<<"$langs")" ]
	done
}

@test "drivers: r prints visible values as the console does, not invisible ones" {
	harness r_extra r
}
