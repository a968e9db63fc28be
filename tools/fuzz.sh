#!/bin/sh
# make fuzz: build each tests/fuzz/fuzz_*.c with libFuzzer (clang) and run it
# for SECONDS.  It fails when the fuzzer fails (its exit status), when an
# input of tests/fuzz/regress fails again, or when a crash-, leak-, timeout-
# or oom- artifact is in build-fuzz/ (an earlier run's too: copy it to
# tests/fuzz/regress/NAME-WHAT, fix, then delete it).
#   seeds     tests/fuzz/corpus/NAME (committed; make test replays it)
#   new finds build-fuzz/corpus/NAME (libFuzzer writes to its first corpus);
#             add those with new coverage to the seeds, kept small (edges
#             only, no hit counts):  build-fuzz/NAME -merge=1 -use_counters=0
#             tests/fuzz/corpus/NAME build-fuzz/corpus/NAME
set -eu
secs=$1; shift
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
command -v clang >/dev/null || { echo "fuzz: clang is required (apt-get install clang)" >&2; exit 1; }
B=build-fuzz
# per input: longer is a hang (a timeout- artifact); more memory is an oom-
TIMEOUT=10 RSS_MB=2048
SAN="-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer"
make -s BUILD=$B CC=clang WARN="-Wall -Wno-unused-parameter" OPT="-O1 -g $SAN" HARDEN="" LDFLAGS="-fsanitize=address,undefined" \
	$B/libwarden.a $B/libbroker.a $B/libegress.a $B/filters.o
libs="$(pkg-config --libs libseccomp libcap json-c libnl-3.0 libnl-route-3.0 nettle libcares libcurl libedit libwebsockets)"
cflags="-std=gnu11 -D_GNU_SOURCE -Iinclude -Ibroker -Isupervisor -Iegress $(pkg-config --cflags json-c libnl-3.0)"
rc=0
for src in "$@"; do
	name=$(basename "$src" .c)
	mkdir -p "$B/corpus/$name" tests/fuzz/corpus/"$name"
	# shellcheck disable=SC2086
	clang $cflags -O1 -g -fsanitize=fuzzer,address,undefined -o "$B/$name" "$src" \
		$B/filters.o $B/libbroker.a $B/libegress.a $B/libwarden.a $libs
	# earlier finds first: each must now pass
	for seed in tests/fuzz/regress/"$name"-*; do
		[ -f "$seed" ] || continue
		"$B/$name" -timeout=$TIMEOUT -rss_limit_mb=$RSS_MB "$seed" >"$B/$name.log" 2>&1 ||
			{ echo "fuzz: $name fails again on $seed:"; tail -n 30 "$B/$name.log"; rc=1; }
	done
	echo "== $name ($secs s)"
	st=0
	"$B/$name" -max_total_time="$secs" -timeout=$TIMEOUT -rss_limit_mb=$RSS_MB \
		-artifact_prefix="$B/$name-" "$B/corpus/$name" tests/fuzz/corpus/"$name" \
		>"$B/$name.log" 2>&1 || st=$?
	grep -E '^(#[0-9]+[[:space:]]+DONE|Done [0-9]+ runs|==[0-9]+==ERROR|SUMMARY|artifact|.*: runtime error: )' \
		"$B/$name.log" || :
	if [ "$st" != 0 ]; then
		echo "fuzz: $name exited with status $st (its log: $B/$name.log):"
		tail -n 30 "$B/$name.log"
		rc=1
	fi
	for a in "$B/$name"-crash-* "$B/$name"-leak-* "$B/$name"-timeout-* "$B/$name"-oom-*; do
		[ -e "$a" ] || continue
		echo "fuzz: $name: $a (copy it to tests/fuzz/regress/$name-WHAT, fix, then delete it)"
		rc=1
	done
done
exit $rc
