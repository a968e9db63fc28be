#!/bin/sh
# make fuzz: build each tests/fuzz/fuzz_*.c with libFuzzer (clang) and run it
# for SECONDS.  A crash leaves its input in build-fuzz/ and fails.
set -eu
secs=$1; shift
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
command -v clang >/dev/null || { echo "fuzz: clang is required (apt-get install clang)" >&2; exit 1; }
B=build-fuzz
SAN="-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer"
make -s BUILD=$B CC=clang WARN="-Wall -Wno-unused-parameter" OPT="-O1 -g $SAN" HARDEN="" LDFLAGS="-fsanitize=address,undefined" \
	$B/libwarden.a $B/libbroker.a $B/filters.o
libs="$(pkg-config --libs libseccomp libcap json-c libnl-3.0 libnl-route-3.0 nettle libcares libcurl libedit)"
cflags="-std=gnu11 -D_GNU_SOURCE -Iinclude -Ibroker -Isupervisor $(pkg-config --cflags json-c libnl-3.0)"
rc=0
for src in "$@"; do
	name=$(basename "$src" .c)
	mkdir -p "$B/corpus/$name"
	# shellcheck disable=SC2086
	clang $cflags -O1 -g -fsanitize=fuzzer,address,undefined -o "$B/$name" "$src" \
		$B/filters.o $B/libbroker.a $B/libwarden.a $libs
	# earlier finds first: each must now pass
	for seed in tests/fuzz/regress/"$name"-*; do
		[ -f "$seed" ] || continue
		"$B/$name" -timeout=10 "$seed" >/dev/null 2>&1 || { echo "fuzz: $name fails again on $seed"; rc=1; }
	done
	echo "== $name ($secs s)"
	"$B/$name" -max_total_time="$secs" -artifact_prefix="$B/$name-" "$B/corpus/$name" 2>&1 \
		| grep -E '^(#[0-9]+[[:space:]]+DONE|Done [0-9]+ runs|==[0-9]+==ERROR|SUMMARY|artifact)' || true
	[ -z "$(ls "$B/$name"-crash-* "$B/$name"-leak-* 2>/dev/null)" ] || { echo "fuzz: $name found a crash"; rc=1; }
done
exit $rc
