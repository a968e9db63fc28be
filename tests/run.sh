#!/bin/sh
# Runs every test and ends with one line: "N passed, N failed".
#
#   bats lint       tools/bats-lint.py over tests/**/*.bats
#   unit tests      build/tests/test_*           (cmocka, TAP output)
#   unit + ASan     build-asan/tests/test_*      (the same suites under
#                   AddressSanitizer and UndefinedBehaviorSanitizer)
#   fuzz replay     build-asan/tests/fuzz_*      (each fuzz target over
#                   tests/fuzz/corpus/NAME and tests/fuzz/regress/NAME-*)
#   cli tests       tests/cli/*.bats             (bats, as the caller)
#   security tests  tests/security/*.bats        (probes in real jails)
#   sessions + ASan tests/cli/{serve,pool,rich,...}.bats as root against
#                   build-asan/warden (ASan and UBSan)
#   unprivileged    the cli and security suites again as an ordinary user
#                   (created when run as root), with WARDEN_UNPRIV=1
#
# Every suite is judged (tests/tap.sh) so that a run that tests nothing
# cannot pass: its TAP lines, its plan (a "1..N" whose N tests must all be
# reported; 1..0, a filter that matched nothing, fails), and its exit status
# (a crash, a failing bats or runuser is a failure even without a "not ok"
# line).  Exit status 77 of a unit suite that reported nothing is a skip.
# The ASan session stage also checks that it ran every test it meant to.
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

. "$top/tests/tap.sh"   # failure, skipped, run_tap, expect_count, lint_bats

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

# The users the tests need, made (as root) before any stage that needs them:
#   warden       the broker's system user as root (design.md "Two
#                executables"; tools/broker-user.sh, as a package's
#                postinst would), for every chat and serve test from the
#                first bats stage on
#   warden-test  an ordinary user: the root stages' identity.bats give it a
#                workspace, and the unprivileged stage runs as it
unpriv_user=warden-test
if [ "$(id -u)" = 0 ]; then
	sh "$top/tools/broker-user.sh" || failure "could not create the broker's user warden"
	id "$unpriv_user" >/dev/null 2>&1 || useradd --system --create-home --shell /bin/sh "$unpriv_user" \
		|| failure "could not create user $unpriv_user"
fi

# bats ignores a `! cmd` or the first checks of `[ a ] && [ b ]` unless they
# end the test (set -e): tools/bats-lint.py finds such lines, FILE:LINE each.
section "lint of the bats files"
# shellcheck disable=SC2046
lint_bats "$top" $(find "$top/tests" -name '*.bats' | sort)

# The rooms stay rooms (docs/design.md, "Layout as built"): drawn from the
# objects' own symbols, no circle between files or folders, no source file
# over 1,000 lines, none over 800 in the supervisor's process.
section "layout: the call graph of the objects"
run_tap "layout" python3 "$top/tools/layers.py" "$build"

section "unit tests"
unit_suites "$build" ""

# The same suites built with ASan and UBSan (make test builds them): a
# memory error or undefined behaviour aborts the suite, which fails.
section "unit tests under AddressSanitizer and UndefinedBehaviorSanitizer"
if [ "${WARDEN_NO_ASAN:-0}" = 1 ]; then
	skipped "asan: unit suites" "WARDEN_NO_ASAN=1"
else
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1} \
	UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
		unit_suites "$top/$ASAN_BUILD" "asan: "
fi

# Every fuzz target (tests/fuzz/fuzz_*.c) fed its corpus and its regression
# inputs by tests/fuzz/replay.c, without libFuzzer (make unit builds them;
# make fuzz fuzzes): a crash, a target's own abort() or a sanitizer report
# fails.  Under ASan and UBSan (build-asan) unless WARDEN_NO_ASAN=1.
section "fuzz targets: their corpus and regression inputs replayed"
fuzz_replay() { # DIR LABEL
	fz_dir=$1 fz_label=$2
	for src in "$top"/tests/fuzz/fuzz_*.c; do
		[ -f "$src" ] || continue
		name=$(basename "$src" .c)
		if [ ! -x "$fz_dir/tests/$name" ]; then
			failure "$fz_label$name: no $fz_dir/tests/$name (make unit)"
			continue
		fi
		set -- "tests/fuzz/corpus/$name"
		for r in "$top/tests/fuzz/regress/$name"-*; do
			[ -f "$r" ] && set -- "$@" "tests/fuzz/regress/${r##*/}"
		done
		run_tap "$fz_label$name" env -C "$top" timeout 300 "$fz_dir/tests/$name" "$@"
	done
}
if [ "${WARDEN_NO_ASAN:-0}" = 1 ]; then
	fuzz_replay "$build" "fuzz replay: "
else
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1} \
	UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
		fuzz_replay "$top/$ASAN_BUILD" "asan: fuzz replay: "
fi

suites() { # the .bats files that exist under $1
	for f in "$1"/tests/cli/*.bats "$1"/tests/security/*.bats; do
		[ -f "$f" ] && printf '%s\n' "$f"
	done
}

section "command-line and security tests ($(id -un))"
# shellcheck disable=SC2046
run_tap "bats ($(id -un))" bats --tap $(suites "$top")

# The long-lived supervisor (serve, chat, the pool, the proxy, rich mode)
# built with ASan and UBSan (make test builds build-asan/warden from the
# unit stage's objects), driven by the session suites as root.  A
# sanitizer report anywhere fails the stage and is printed:
#   log_path     every report goes to $sandir/san.PID, whoever's stderr the
#                test swallowed; any such file fails the stage.
#   san.1..4     symlinks to /dev/null.  A jail's first processes are pids
#                1, 2, ... of their own pid namespace and were made with
#                clone() on a stack ASan does not know, so ASan's first
#                noreturn call there prints a harmless "ignoring requested
#                __asan_handle_no_return" warning before pivot_root; every
#                jail would write the same san.1 under another uid, and
#                ASan dies when it cannot open its log.  A real error in a
#                jail's init still kills that jail, so its test fails.
#   detect_leaks=0  LeakSanitizer stops the world with ptrace and reads
#                /proc/PID/task at exit: in warden's children that entered
#                a jail's pid and mount namespaces, and in the broker
#                (seccomp denies ptrace), it dies with "LeakSanitizer has
#                encountered a fatal error" and exit status 1, failing
#                tests for no bug.  Leaks are the unit stage's job (LSan on).
#   halt_on_error, abort_on_error  the first error ends the process.
# UBSan's reports go to stderr even so: gcc links libubsan apart from
# libasan, and both export __sanitizer_set_report_path, so libubsan's
# setting of UBSAN_OPTIONS' log_path lands in libasan.  They still abort
# the process (its test fails), and one in the output fails the stage.
# The broker runs as user warden under Landlock: it cannot open the log,
# so an error in it aborts it (warden then exits and the test fails) and
# its report goes to its stderr only.
asan_suites="cli/serve cli/mcp cli/listen cli/chat_api cli/client cli/pool cli/rich cli/proxy_engine cli/net cli/egress cli/chat cli/chat_rich
	cli/chat_tty cli/chat_rich_tty cli/stacks cli/broker cli/cleanup cli/run cli/run_tty
	cli/commands cli/drivers security/rich_flood security/security security/broker
	security/identity"
# Not here: install, demo and bench_floor (they test the build, the demo
# script and the kernel's floor, not the supervisor's sessions).
#
# Tests run with a 4 MiB quarantine instead of ASan's 256 MiB, one exact
# name a line.  G144 judges the supervisor's peak memory (VmHWM) against 40
# MiB while images flood it: freed image buffers held in the quarantine are
# peak memory a normal build reuses (measured growth: 45 MiB with a 32 MiB
# quarantine, 31 with 16, 17 with 0; 14 in the normal build).  Its other
# errors (overflows, a use of a buffer freed just before) are still caught.
asan_small_quarantine='G144: 90 MiB of images on the control fd, nothing read: the supervisor holds a bounded part'
# Tests not run under ASan at all, one exact name a line, each after a
# comment with its reason.  None so far.
asan_exclude=''
asan_tests() { # the names of the suites' tests
	for s in $asan_suites; do sed -n 's/^@test "\(.*\)" {$/\1/p' "$top/tests/$s.bats"; done
}
asan_re() { # names on stdin -> one anchored bash ERE (bats -f) matching exactly them
	sed 's/[][\\.*^$+?(){}|]/\\&/g' | paste -sd'|' | sed 's/^/^(/; s/$/)$/'
}
asan_bats() { # bats over the suites, each test's name prefixed "asan: "
	# shellcheck disable=SC2046
	{ ASAN_OPTIONS="$san:detect_leaks=0" UBSAN_OPTIONS="$san:print_stacktrace=1" \
		WARDEN="$top/$ASAN_BUILD/warden" bats --tap \
		-f "$(asan_tests | grep -vxF "$(printf '%s\n%s\n' "$asan_exclude" "$asan_small_quarantine")" | asan_re)" \
		$(for s in $asan_suites; do printf '%s\n' "$top/tests/$s.bats"; done) 2>&1
	  echo $? >"$log.asanrc"
	  ASAN_OPTIONS="$san:detect_leaks=0:quarantine_size_mb=4" UBSAN_OPTIONS="$san:print_stacktrace=1" \
		WARDEN="$top/$ASAN_BUILD/warden" bats --tap \
		-f "$(printf '%s\n' "$asan_small_quarantine" | asan_re)" \
		$(for s in $asan_suites; do printf '%s\n' "$top/tests/$s.bats"; done) 2>&1
	  echo $? >>"$log.asanrc"; } | sed -u 's/^\(not \)\{0,1\}ok [0-9][0-9]* /&asan: /'
	grep -qvx 0 "$log.asanrc" && return 1
	[ -s "$log.asanrc" ] || return 255
}
section "session suites under AddressSanitizer and UndefinedBehaviorSanitizer (root)"
if [ "${WARDEN_NO_ASAN:-0}" = 1 ]; then
	skipped "asan: session suites" "WARDEN_NO_ASAN=1"
elif [ "$(id -u)" != 0 ]; then
	if [ "$must" = 1 ]; then failure "the session suites under ASan need root: run make test as root"
	else skipped "asan: session suites" "they run as root"; fi
elif [ ! -x "$top/$ASAN_BUILD/warden" ] || [ ! -x "$top/$ASAN_BUILD/warden-broker" ] ||
     [ ! -x "$top/$ASAN_BUILD/warden-egress" ]; then
	failure "asan: no $top/$ASAN_BUILD/warden, warden-broker or warden-egress (make asan-bins)"
else
	sandir=$(mktemp -d /tmp/warden-asan.XXXXXX)
	chmod 0777 "$sandir"  # not sticky: the symlinks below are followed by every uid
	for p in 1 2 3 4; do ln -s /dev/null "$sandir/san.$p"; done
	# a listed name that no test has any more (renamed) would silently drop it
	printf '%s\n%s\n' "$asan_exclude" "$asan_small_quarantine" | while IFS= read -r t; do
		[ -z "$t" ] || asan_tests | grep -qxF "$t" ||
			failure "asan: the listed test \"$t\" is in none of the suites (tests/run.sh)"
	done
	start=$(date +%s)
	san="log_path=$sandir/san:halt_on_error=1:abort_on_error=1"
	run_tap "asan: session suites" asan_bats
	expect_count "asan: session suites" "$(asan_tests | grep -cvxF -e "$asan_exclude")"
	echo "# the session suites under ASan took $(($(date +%s) - start)) s"
	# A report on a stderr the test showed (UBSan's, see above; the
	# broker's) fails the stage too, even if its test passed.
	if grep -q -e ': runtime error: ' -e '^==[0-9]*==ERROR: ' "$log.out"; then
		failure "asan: a sanitizer report in the output above:"
		grep -e ': runtime error: ' -e '^==[0-9]*==ERROR: ' "$log.out" | head -n 20 | sed 's/^/#   /'
	fi
	n=0
	for f in "$sandir"/san.*; do
		if [ ! -f "$f" ] || [ -L "$f" ]; then continue; fi
		n=$((n + 1))
		failure "asan: a sanitizer report, $f$([ "$n" -le 3 ] && echo :)"
		[ "$n" -le 3 ] && sed 's/^/#   /' "$f"
	done
	rm -rf "$sandir"
fi

# The Debian package: built, installed with dpkg -i, used and purged.  It
# changes this machine's packages, so it runs as root only, never twice.
section "package tests"
if [ "$(id -u)" = 0 ]; then
	run_tap "bats package (root)" bats --tap "$top"/tests/package/*.bats
elif [ "$must" = 1 ]; then
	failure "tests/package/*.bats need root (dpkg -i): run make test as root"
else
	skipped "package tests" "they need root (dpkg -i)"
fi

# The same suites as an unprivileged user: user namespaces, no cgroup
# delegation, rlimit fallbacks.  Files are copied where that user can read.
section "unprivileged tests"
if [ "$(id -u)" = 0 ]; then
	user=$unpriv_user
	if id "$user" >/dev/null 2>&1; then
		stage=$(mktemp -d /tmp/warden-unpriv.XXXXXX)
		mkdir -p "$stage/build"
		if cp -a "$build/warden" "$build/warden-broker" "$build/warden-egress" "$build/probes" \
			"$build/filters.o" "$stage/build/" &&
		   mkdir -p "$stage/build/tests" && cp -a "$build/tests/proxyd" "$stage/build/tests/" &&
		   cp -a "$top/tests" "$top/policy" "$top/tools" "$top/examples" "$top/drivers" "$top/supervisor" \
			"$top/man" "$top/completion" "$top/bench" "$top/include" "$top/SECURITY.md" "$top/Makefile" \
			"$top/README.md" "$top/docs" "$top/clients" "$top/systemd" "$stage/" &&
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
