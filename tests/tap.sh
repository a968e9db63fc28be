# How tests/run.sh judges what a suite printed; sourced by it, and by
# tests/cli/tap.bats, which feeds these functions crafted TAP.  POSIX sh.
# The caller sets $log, a file that gets one line per result: pass, fail or
# skip (run.sh counts them at the end).
# shellcheck disable=SC2154  # $log, set by the caller

failure() { echo "not ok - $*"; echo fail >>"$log"; }
skipped() { echo "ok - $1 # SKIP $2"; echo skip >>"$log"; }  # NAME REASON

# run_tap NAME CMD...: run CMD, relay its output, count its TAP lines, and
# judge the suite by three things, so that a run that tests nothing cannot
# pass: its plan (every "1..N" summed; the N tests must all be reported),
# the number of tests (a plan 1..0, a filter that matched nothing, fails),
# and its exit status (a crash, a failing bats or runuser is a failure even
# without a "not ok" line).  Exit status 77 with no test reported is a skip.
# Sets tap_count to the number of tests reported.
run_tap() {
	name=$1; shift
	: >"$log.out"
	{ "$@" 2>&1; echo $? >"$log.rc"; } | tee "$log.out"
	rc=$(cat "$log.rc" 2>/dev/null || echo 255)
	rm -f "$log.rc"
	n=0 nfail=0
	while IFS= read -r line; do
		case "$line" in
		"ok "*"# skip"*|"ok "*"# SKIP"*|"not ok "*"# SKIP"*|"not ok "*"# skip"*) echo skip >>"$log" ;;
		"ok "*) echo pass >>"$log" ;;
		"not ok "*) echo fail >>"$log"; nfail=$((nfail + 1)) ;;
		*) continue ;;
		esac
		n=$((n + 1))
	done <"$log.out"
	tap_count=$n
	plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\).*/\1/p' "$log.out" | awk '{ s += $1 } END { print s + 0 }')
	nplans=$(grep -c '^1\.\.[0-9]' "$log.out")
	if [ "$rc" = 77 ] && [ "$n" = 0 ]; then
		skipped "$name" "exit status 77"; return
	fi
	if [ "$nplans" = 0 ]; then
		failure "$name: no TAP plan (1..N): it ran nothing (exit status $rc)"
	elif [ "$plan" != "$n" ]; then
		failure "$name: the plan announced $plan tests, $n were reported"
	elif [ "$n" = 0 ]; then
		failure "$name: ran no test (its plan is 1..0: a filter that matched nothing, or no test in it)"
	fi
	if [ "$rc" != 0 ] && [ "$nfail" = 0 ]; then
		failure "$name exited with status $rc without a failed test"
	fi
}

# expect_count NAME MEANT: after run_tap NAME, the suite ran as many tests
# as the caller meant to run (a test a filter silently missed fails).
expect_count() {
	if [ "$tap_count" != "$2" ]; then
		failure "$1: $tap_count tests ran, $2 were meant to run (a name the filter missed?)"
	fi
}

# lint_bats TOP FILE...: tools/bats-lint.py as one test; what it flags is
# listed FILE:LINE under the failure, relative to TOP.
lint_bats() {
	lint_top=$1; shift
	if lint_out=$(python3 "$lint_top/tools/bats-lint.py" "$@" 2>&1); then
		echo "ok - bats-lint: every check in $# bats files counts"; echo pass >>"$log"
	else
		failure "bats-lint: lines that check nothing (one check per line; \`run ! cmd\` for a negation):"
		printf '%s\n' "$lint_out" | sed "s|^$lint_top/||; s|^|#   |"
	fi
}
