#!/bin/sh
# Runs every test and ends with one line: "N passed, N failed".
#
#   unit tests      build/tests/test_*           (cmocka, TAP output)
#   unit + ASan     build-asan/tests/test_*      (the same suites under
#                   AddressSanitizer and UndefinedBehaviorSanitizer)
#   cli tests       tests/cli/*.bats             (bats, as the caller)
#   security tests  tests/security/*.bats        (probes in real jails)
#   unprivileged    the cli and security suites again as an ordinary user
#                   (created when run as root), with WARDEN_UNPRIV=1
#
# Every suite is judged on three things, so that a run that tests nothing
# cannot pass: its TAP lines, its plan (a "1..N" whose N tests must all be
# reported), and its exit status (a crash, a failing bats or runuser is a
# failure even without a "not ok" line).  Exit status 77 of a unit suite
# that reported nothing is a skip.
# A skipped test counts as a failure when WARDEN_MUST_WORK=1 (CI).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
ASAN_BUILD=${ASAN_BUILD:-build-asan}
build="$top/$BUILD"
export WARDEN="$build/warden" WARDEN_PROBES="$build/probes" WARDEN_TOP="$top"
must=${WARDEN_MUST_WORK:-0}
pass=0 fail=0 skip=0
log=$(mktemp /tmp/warden-test.XXXXXX)
trap 'rm -f "$log" "$log".*' EXIT

failure() { echo "not ok - $*"; echo fail >>"$log"; }

# run_tap NAME CMD...: run CMD, relay its output, count its TAP lines, and
# check its plan and exit status.
run_tap() {
	name=$1; shift
	: >"$log.out"
	{ "$@" 2>&1; echo $? >"$log.rc"; } | tee "$log.out"
	rc=$(cat "$log.rc" 2>/dev/null || echo 255)
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
	plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\).*/\1/p' "$log.out" | awk '{ s += $1 } END { print s + 0 }')
	nplans=$(grep -c '^1\.\.[0-9]' "$log.out")
	if [ "$rc" = 77 ] && [ "$n" = 0 ]; then
		echo "ok - $name # SKIP exit status 77"; echo skip >>"$log"; return
	fi
	if [ "$nplans" = 0 ]; then
		failure "$name: no TAP plan (1..N): it ran nothing (exit status $rc)"
	elif [ "$plan" != "$n" ]; then
		failure "$name: the plan announced $plan tests, $n were reported"
	fi
	if [ "$rc" != 0 ] && [ "$nfail" = 0 ]; then
		failure "$name exited with status $rc without a failed test"
	fi
}

section() { printf '\n== %s\n' "$1"; }

unit_suites() { # DIR LABEL
	found=0
	for t in "$1"/tests/test_*; do
		[ -x "$t" ] || continue
		found=1
		# a hang must fail, not stall CI: 5 minutes per suite at most (rc 124)
		run_tap "$2$(basename "$t")" env CMOCKA_MESSAGE_OUTPUT=TAP timeout 300 "$t"
	done
	[ "$found" = 1 ] || failure "$2: no unit test binary in $1/tests (make unit)"
}

section "unit tests"
unit_suites "$build" ""

# The same suites built with ASan and UBSan (make test builds them): a
# memory error or undefined behaviour aborts the suite, which fails.
section "unit tests under AddressSanitizer and UndefinedBehaviorSanitizer"
if [ "${WARDEN_NO_ASAN:-0}" = 1 ]; then
	echo "# WARDEN_NO_ASAN=1: not run"
	[ "$must" = 1 ] && failure "WARDEN_NO_ASAN=1 under WARDEN_MUST_WORK=1"
else
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1} \
	UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
		unit_suites "$top/$ASAN_BUILD" "asan: "
fi

suites() { # the .bats files that exist under $1
	for f in "$1"/tests/cli/*.bats "$1"/tests/security/*.bats; do
		[ -f "$f" ] && printf '%s\n' "$f"
	done
}

# As root the broker runs as its own system user (design.md "Two
# executables"); a machine that runs the tests as root gets it here, as a
# package's postinst would create it.
if [ "$(id -u)" = 0 ] && ! id warden >/dev/null 2>&1; then
	useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin warden \
		|| { echo "not ok - could not create the broker's user warden"; echo fail >>"$log"; }
fi

section "command-line and security tests ($(id -un))"
# shellcheck disable=SC2046
run_tap "bats ($(id -un))" bats --tap $(suites "$top")

# The Debian package: built, installed with dpkg -i, used and purged.  It
# changes this machine's packages, so it runs as root only, never twice.
section "package tests"
if [ "$(id -u)" = 0 ]; then
	run_tap "bats package (root)" bats --tap "$top"/tests/package/*.bats
elif [ "$must" = 1 ]; then
	failure "tests/package/*.bats need root (dpkg -i): run make test as root"
else
	echo "ok - package tests # SKIP they need root (dpkg -i)"; echo skip >>"$log"
fi

# The same suites as an unprivileged user: user namespaces, no cgroup
# delegation, rlimit fallbacks.  Files are copied where that user can read.
section "unprivileged tests"
if [ "$(id -u)" = 0 ]; then
	user=warden-test
	id "$user" >/dev/null 2>&1 || useradd --system --create-home --shell /bin/sh "$user" \
		|| failure "could not create user $user"
	if id "$user" >/dev/null 2>&1; then
		stage=$(mktemp -d /tmp/warden-unpriv.XXXXXX)
		mkdir -p "$stage/build"
		if cp -a "$build/warden" "$build/warden-broker" "$build/probes" "$build/filters.o" "$stage/build/" &&
		   mkdir -p "$stage/build/tests" && cp -a "$build/tests/proxyd" "$stage/build/tests/" &&
		   cp -a "$top/tests" "$top/policy" "$top/tools" "$top/examples" "$top/drivers" "$top/supervisor" \
			"$top/man" "$top/completion" "$top/bench" "$top/include" "$stage/" &&
		   chmod -R a+rX "$stage"; then
			# from the stage: the checkout may be where warden-test cannot
			# go (a 0700 home), and bats starts by entering its cwd
			cd "$stage" || failure "could not enter $stage"
			# shellcheck disable=SC2046
			run_tap "bats as $user (runuser)" runuser -u "$user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin \
				HOME="$(getent passwd "$user" | cut -d: -f6)" LANG=C.UTF-8 \
				WARDEN="$stage/build/warden" WARDEN_PROBES="$stage/build/probes" \
				WARDEN_TOP="$stage" WARDEN_UNPRIV=1 WARDEN_MUST_WORK="$must" \
				bats --tap $(suites "$stage")
		else
			failure "could not stage the unprivileged run in $stage"
		fi
		cd "$top" && rm -rf "$stage"
	fi
else
	echo "# already unprivileged: the suites above ran as $(id -un)"
fi

pass=$(grep -c '^pass$' "$log")
fail=$(grep -c '^fail$' "$log")
skip=$(grep -c '^skip$' "$log")
if [ "$must" = 1 ] && [ "$skip" -gt 0 ]; then
	echo "# WARDEN_MUST_WORK=1: $skip skipped tests count as failures"
	fail=$((fail + skip)); skip=0
fi
echo
if [ "$skip" -gt 0 ]; then echo "$pass passed, $fail failed, $skip skipped"; else echo "$pass passed, $fail failed"; fi
[ "$fail" -eq 0 ]
