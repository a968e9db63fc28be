#!/usr/bin/env bats
# tests/run.sh's judgement of a suite (tests/tap.sh), fed crafted TAP: a run
# that tests nothing, crashes or misses tests must fail, whatever it printed;
# and tools/bats-lint.py, which run.sh runs over every .bats file.
load ../helpers
bats_require_minimum_version 1.5.0

setup() { T=$(mktemp -d /tmp/warden-tap.XXXXXX); }
teardown() { rm -rf "$T"; }

# judge SCRIPT: run SCRIPT in sh (as run.sh runs) with tests/tap.sh loaded
# and its results logged to $T/log
judge() {
	: >"$T/log"
	run sh -c 'log=$1; . "$2"; eval "$3"' sh "$T/log" "$WARDEN_TOP/tests/tap.sh" "$1"
	echo "$output"
}
# counted pass|fail|skip: how many results of that kind were logged
counted() { grep -cx "$1" "$T/log" || true; }

@test "tap: a suite whose plan is 1..0 fails, naming the suite" {
	judge 'run_tap "the empty suite" printf "1..0\n"'
	[[ "$output" == *"not ok - the empty suite: ran no test (its plan is 1..0"* ]]
	[ "$(counted fail)" -eq 1 ]
	[ "$(counted pass)" -eq 0 ]
	# bats with a filter that matched nothing: 1..0 and exit status 0
	judge 'run_tap "asan: filtered" bats --tap -f "^no such test$" "'"$BATS_TEST_FILENAME"'"'
	[[ "$output" == *"1..0"* ]]
	[[ "$output" == *"not ok - asan: filtered: ran no test"* ]]
	[ "$(counted fail)" -eq 1 ]
}

@test "tap: no plan, or fewer tests than the plan, fails" {
	judge 'run_tap "planless" printf "ok 1 - a\n"'
	[[ "$output" == *"not ok - planless: no TAP plan (1..N): it ran nothing"* ]]
	[ "$(counted fail)" -eq 1 ]
	[ "$(counted pass)" -eq 1 ]
	judge 'run_tap "cut short" printf "1..3\nok 1 - a\nok 2 - b\n"'
	[[ "$output" == *"not ok - cut short: the plan announced 3 tests, 2 were reported"* ]]
	[ "$(counted fail)" -eq 1 ]
	# two plans (bats run twice, as the ASan stage does) add up
	judge 'run_tap "two runs" printf "1..1\nok 1 - a\n1..2\nok 1 - b\nok 2 - c\n"'
	[ "$(counted fail)" -eq 0 ]
	[ "$(counted pass)" -eq 3 ]
}

@test "tap: a non-zero exit status without a failed test fails; 77 with no test is a skip" {
	judge 'run_tap "crashed" sh -c "echo 1..1; echo ok 1 - a; kill -SEGV \$\$"'
	[[ "$output" == *"not ok - crashed exited with status 139 without a failed test"* ]]
	[ "$(counted fail)" -eq 1 ]
	judge 'run_tap "failed" sh -c "echo 1..1; echo not ok 1 - a; exit 1"'
	[ "$(counted fail)" -eq 1 ]   # the test, not the status again
	[[ "$output" != *"without a failed test"* ]]
	judge 'run_tap "unsupported" sh -c "exit 77"'
	[[ "$output" == *"ok - unsupported # SKIP exit status 77"* ]]
	[ "$(counted skip)" -eq 1 ]
	[ "$(counted fail)" -eq 0 ]
}

@test "tap: skips of bats and cmocka are counted as skips, the rest as passes and failures" {
	judge 'run_tap "mixed" printf "1..5\nok 1 - a\nok 2 b # skip no user\nnot ok 3 # SKIP test_x\nnot ok 4 - d\nok 5 - e\n"'
	[ "$(counted pass)" -eq 2 ]
	[ "$(counted skip)" -eq 2 ]
	[ "$(counted fail)" -eq 1 ]
}

@test "tap: expect_count fails when a suite ran fewer tests than were meant" {
	judge 'run_tap "asan: session suites" printf "1..2\nok 1 - a\nok 2 - b\n"; expect_count "asan: session suites" 3'
	[[ "$output" == *"not ok - asan: session suites: 2 tests ran, 3 were meant to run"* ]]
	[ "$(counted fail)" -eq 1 ]
	judge 'run_tap "asan: session suites" printf "1..2\nok 1 - a\nok 2 - b\n"; expect_count "asan: session suites" 2'
	[ "$(counted fail)" -eq 0 ]
	[ "$(counted pass)" -eq 2 ]
}

@test "tap: lint_bats fails with FILE:LINE for each line that checks nothing" {
	mkdir "$T/tests" "$T/tools"
	cp "$WARDEN_TOP/tools/bats-lint.py" "$T/tools/"
	cp "$WARDEN_TOP/tests/cli/tap_lint_sample.txt" "$T/tests/"
	judge 'lint_bats "'"$T"'" "'"$T"'/tests/tap_lint_sample.txt"'
	[[ "$output" == *"not ok - bats-lint: lines that check nothing"* ]]
	[[ "$output" == *"#   tests/tap_lint_sample.txt:5: only the last check of this && list counts"* ]]
	[[ "$output" == *"#   tests/tap_lint_sample.txt:6: \`!\` checks nothing"* ]]
	[[ "$output" == *"#   tests/tap_lint_sample.txt:20: only the last check"* ]]
	[ "$(grep -c '^#   tests/' <<<"$output")" -eq 3 ]
	[ "$(counted fail)" -eq 1 ]
}
