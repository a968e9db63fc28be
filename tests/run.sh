#!/bin/sh
# Runs every test and ends with one line: "N passed, N failed".
#
#   unit tests      build/tests/test_*           (cmocka, TAP output)
#   cli tests       tests/cli/*.bats             (bats, as the caller)
#   security tests  tests/security/*.bats        (probes in real jails)
#   unprivileged    the cli and security suites again as an ordinary user
#                   (created when run as root), with WARDEN_UNPRIV=1
#
# A skipped test counts as a failure when WARDEN_MUST_WORK=1 (CI).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
build="$top/$BUILD"
export WARDEN="$build/warden" WARDEN_PROBES="$build/probes" WARDEN_TOP="$top"
must=${WARDEN_MUST_WORK:-0}
pass=0 fail=0 skip=0
log=$(mktemp /tmp/warden-test.XXXXXX)
trap 'rm -f "$log"' EXIT

# count TAP lines from stdin; echo them; update counters through a file
tap_count() {
	while IFS= read -r line; do
		printf '%s\n' "$line"
		case "$line" in
		"ok "*"# skip"*|"ok "*"# SKIP"*|"not ok "*"# SKIP"*|"not ok "*"# skip"*) echo skip >>"$log" ;;
		"ok "*) echo pass >>"$log" ;;
		"not ok "*) echo fail >>"$log" ;;
		esac
	done
}

section() { printf '\n== %s\n' "$1"; }

section "unit tests"
for t in "$build"/tests/test_*; do
	[ -x "$t" ] || continue
	rc_file=$(mktemp)
	# a hang must fail, not stall CI: 5 minutes per suite at most (rc 124)
	{ CMOCKA_MESSAGE_OUTPUT=TAP timeout 300 "$t" 2>&1; echo $? >"$rc_file"; } | tap_count
	rc=$(cat "$rc_file"); rm -f "$rc_file"
	# a crash before any TAP line must not pass silently
	if [ "$rc" -gt 1 ] && [ "$rc" -ne 77 ]; then
		echo "not ok - $(basename "$t") exited with status $rc"; echo fail >>"$log"
	fi
done

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
bats --tap $(suites "$top") 2>&1 | tap_count

# The same suites as an unprivileged user: user namespaces, no cgroup
# delegation, rlimit fallbacks.  Files are copied where that user can read.
section "unprivileged tests"
if [ "$(id -u)" = 0 ]; then
	user=warden-test
	id "$user" >/dev/null 2>&1 || useradd --system --create-home --shell /bin/sh "$user" \
		|| { echo "not ok - could not create user $user"; echo fail >>"$log"; }
	if id "$user" >/dev/null 2>&1; then
		stage=$(mktemp -d /tmp/warden-unpriv.XXXXXX)
		mkdir -p "$stage/build"
		cp -a "$build/warden" "$build/warden-broker" "$build/probes" "$stage/build/"
		cp -a "$top/tests" "$top/policy" "$top/tools" "$top/examples" "$top/drivers" "$top/supervisor" "$stage/"
		chmod -R a+rX "$stage"
		runuser -u "$user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin \
			HOME="$(getent passwd "$user" | cut -d: -f6)" LANG=C.UTF-8 \
			WARDEN="$stage/build/warden" WARDEN_PROBES="$stage/build/probes" \
			WARDEN_TOP="$stage" WARDEN_UNPRIV=1 WARDEN_MUST_WORK="$must" \
			bats --tap $(suites "$stage") 2>&1 | tap_count
		rm -rf "$stage"
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
