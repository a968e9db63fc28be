#!/usr/bin/env bats
# The Makefile on a machine that lacks the build packages (issue 18): the
# deps step (tools/deps.sh) runs before anything that needs what it
# installs, and the pkg-config flags are read after it, not when make
# parses the Makefile; clean, install and uninstall never run it; NO_DEPS=1
# (debian/rules) never runs it and says what is missing.
# Judged on a small tree with the real Makefile and fakes for what it runs:
# tools/deps.sh "installs" (a marker that the fake pkg-config needs before
# it finds anything), cc and ar record their calls, tools/*.sh record that
# they ran; order.log shows what ran in which order.  Nothing is compiled
# and no package is installed.
load ../helpers

setup() {
	T=$(mktemp -d /tmp/warden-makefile.XXXXXX)
	S="$T/src"
	export MARK="$T/mark" FAKE_MISSING=""
	mkdir -p "$S" "$T/bin" "$MARK"
	touch "$MARK/order.log"
	cp "$WARDEN_TOP/Makefile" "$S/"
	mkdir -p "$S/include/warden" "$S/common" "$S/supervisor" "$S/cli" "$S/broker" "$S/tools" "$S/bench" \
		"$S/tests/unit" "$S/tests/helpers" "$S/tests/security/probes" "$S/tests/fuzz" \
		"$S/policy/profiles" "$S/drivers" "$S/egress"
	for f in common/a.c cli/main.c cli/cmd_a.c supervisor/s.c supervisor/lang.h broker/main.c broker/b.c egress/main.c egress/e.c \
		tools/gen-filters.c tests/unit/test_a.c tests/unit/cmocka_filter.c tests/helpers/proxyd.c \
		tests/security/probes/p.c tests/security/probes/probe.h tests/fuzz/fuzz_a.c tests/fuzz/replay.c; do
		echo "/* $f */" >"$S/$f"
	done
	# the steps the Makefile runs, each recording itself
	cat >"$S/tools/deps.sh" <<-'EOF'
		echo deps >>"$MARK/order.log"
		touch "$MARK/installed"
	EOF
	for s in tools/demo.sh tools/fuzz.sh tools/install.sh tools/test-fresh.sh tests/run.sh bench/run.sh; do
		printf 'echo "%s $*" >>"$MARK/order.log"\n' "$s" >"$S/$s"
	done
	printf 'echo "/* embedded */"\n' >"$S/tools/embed-profiles.sh"
	printf 'echo "/* embedded */"\n' >"$S/tools/embed-drivers.sh"
	# pkg-config finds nothing before the deps step ran (nor what FAKE_MISSING names)
	cat >"$T/bin/pkg-config" <<-'EOF'
		#!/bin/sh
		[ -e "$MARK/installed" ] || { echo "fake pkg-config: not installed" >&2; exit 1; }
		for a; do
			case " $FAKE_MISSING " in *" $a "*) echo "Package $a was not found" >&2; exit 1 ;; esac
		done
		for a; do
			case $a in
			--cflags) echo "-DFAKE_PKG_CFLAGS" ;;
			--libs) echo "-lfakepkg" ;;
			esac
		done
		exit 0
	EOF
	# cc records its arguments and makes its -o output (an empty program)
	cat >"$T/bin/cc" <<-'EOF'
		#!/bin/sh
		echo "cc $*" >>"$MARK/order.log"
		out=
		while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
		[ -n "$out" ] && printf '#!/bin/sh\n' >"$out" && chmod +x "$out"
	EOF
	cat >"$T/bin/ar" <<-'EOF'
		#!/bin/sh
		echo "ar $*" >>"$MARK/order.log"
		touch "$2"
	EOF
	chmod +x "$T/bin/pkg-config" "$T/bin/cc" "$T/bin/ar"
	export PATH="$T/bin:$PATH"
}

teardown() {
	rm -rf "$T"
}

mk() { run make -C "$S" --no-print-directory CC="$T/bin/cc" "$@"; }

@test "make: on a machine without the packages, the compiler gets the pkg-config flags read after tools/deps.sh ran" {
	mk all
	echo "$output"
	[ "$status" -eq 0 ]
	cat "$MARK/order.log"
	[ "$(head -n 1 "$MARK/order.log")" = deps ]
	# every compilation of a source, the broker's too, has the flags
	run grep -c '^cc .* -c ' "$MARK/order.log"
	[ "$output" -ge 5 ]
	run grep '^cc .* -c ' "$MARK/order.log"
	[[ "$output" == *"broker/b.c"* ]]
	run grep -v -e '-DFAKE_PKG_CFLAGS' <(grep '^cc .* -c ' "$MARK/order.log")
	[ "$status" -ne 0 ]
	# the programs are linked with the libraries
	run grep -e '-o build/warden-broker .*-lfakepkg' "$MARK/order.log"
	[ "$status" -eq 0 ]
}

@test "make: every goal that builds or runs something runs tools/deps.sh first" {
	local goal
	for goal in all probes unit demo test bench fuzz asan-bins; do
		rm -rf "$S/build" "$S/build-asan" "$MARK"/*
		touch "$MARK/order.log"
		mk "$goal"
		echo "make $goal: $output"
		[ "$status" -eq 0 ]
		[ -s "$MARK/order.log" ]
		echo "make $goal ran first: $(head -n 1 "$MARK/order.log")"
		[ "$(head -n 1 "$MARK/order.log")" = deps ]
	done
}

@test "make: clean, install, uninstall and test-fresh never run tools/deps.sh" {
	mk all
	[ "$status" -eq 0 ]
	# as after a build with NO_DEPS=1, or after tools/deps.sh changed
	rm -f "$S/build/.deps-ok" "$MARK/order.log"
	local goal
	for goal in install uninstall test-fresh clean; do
		mk DESTDIR="$T/dest" "$goal"
		echo "make $goal: $output"
		[ "$status" -eq 0 ]
	done
	cat "$MARK/order.log"
	run grep -c -x deps "$MARK/order.log"
	[ "$output" = 0 ]
	grep -q '^tools/install.sh install' "$MARK/order.log"
	grep -q '^tools/install.sh uninstall' "$MARK/order.log"
	grep -q '^tools/test-fresh.sh' "$MARK/order.log"
	[ ! -e "$S/build" ]
}

@test "make NO_DEPS=1: never runs tools/deps.sh, still reads pkg-config" {
	touch "$MARK/installed"   # the caller provided the packages
	mk NO_DEPS=1 all
	echo "$output"
	[ "$status" -eq 0 ]
	run grep -c -x deps "$MARK/order.log"
	[ "$output" = 0 ]
	run grep -c '^cc .* -c ' "$MARK/order.log"
	[ "$output" -ge 5 ]
	run grep -v -e '-DFAKE_PKG_CFLAGS' <(grep '^cc .* -c ' "$MARK/order.log")
	[ "$status" -ne 0 ]
}

@test "make NO_DEPS=1 with a package missing: stops before compiling, naming the package and the fix" {
	touch "$MARK/installed"
	FAKE_MISSING="libnl-route-3.0" mk NO_DEPS=1 all
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"libnl-route-3.0"* ]]
	[[ "$output" == *"tools/deps.sh"* ]]
	[[ "$output" == *"Makefile:"* ]]
	run grep -c '^cc .* -c ' "$MARK/order.log"
	[ "$output" = 0 ]
}

# Issue 20 (11): nothing said how long `make test` takes (about 15 minutes now)
# or that the whole run needs root.  The README says it, and `make test`
# says it first, before it builds anything.
@test "make test: says first how long it takes and what it needs" {
	mk test
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "make test: about 15 minutes on 2 cores"* ]]
	if is_root; then
		[[ "${lines[0]}" == *"as root: the full run"* ]]
	else
		[[ "${lines[0]}" == *"as $(id -un): the stages that need root"*"are reported as skipped"* ]]
	fi
	# only make test says it
	mk all
	[[ "$output" != *"about 15 minutes"* ]]
	grep -A1 '^make test ' "$WARDEN_TOP/README.md" | grep -q 'about 15 minutes on 2 cores; the full run needs root'
}
