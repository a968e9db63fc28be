#!/bin/sh
# The kernel's floor under `warden run -- /bin/true`, layer by layer
# (bench/jail_floor.c), against unshare(1), bwrap and warden; part of
# `make bench` (bench/run.sh), or alone, as any user:
#   W=build/warden sh bench/floor.sh
# Rounds of one hyperfine call over every command (so a noisy spell hits
# them all), medians of all runs, ratios to bwrap.  Never asserts a time.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
W=${W:-"$top/${BUILD:-build}/warden"}
RUNS=${BENCH_RUNS:-100}
# rounds of 10 runs each: a drift of the shared machine hits every command
ROUNDS=${BENCH_FLOOR_ROUNDS:-$(( (RUNS + 9) / 10 ))}
d=$(mktemp -d /tmp/warden-floor.XXXXXX)
trap 'rm -rf "$d"' EXIT
ws="$d/ws"
mkdir "$ws"

if ! cc -O2 -D_GNU_SOURCE -I"$top/include" -o "$d/jail_floor" "$top/bench/jail_floor.c" \
	"$top/${BUILD:-build}/filters.o" 2>"$d/cc.err"; then
	echo "floor: bench/jail_floor.c did not build:" >&2
	cat "$d/cc.err" >&2
	exit 1
fi
# one run of each stage first: a stage that fails says why, once
for s in ns mounts cgroups confine all; do
	"$d/jail_floor" --upto $s "$ws" /bin/true 2>"$d/err.$s" ||
		{ echo "floor: jail_floor --upto $s failed:" >&2; cat "$d/err.$s" >&2; exit 1; }
done
note=$(cat "$d/err.cgroups")

# bench/run.sh passes its bwrap_cmd; alone, the same command
bwrap="${BWRAP_CMD:+$BWRAP_CMD /bin/true}"
[ -n "$bwrap" ] || bwrap="bwrap --unshare-all --die-with-parent --new-session --ro-bind /usr /usr \
--symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64 --symlink usr/sbin /sbin \
--ro-bind-try /etc/ssl /etc/ssl --ro-bind-try /etc/alternatives /etc/alternatives \
--ro-bind-try /etc/ld.so.cache /etc/ld.so.cache --proc /proc --dev /dev --tmpfs /tmp \
--bind $ws $ws --chdir $ws /bin/true"
set -- "/bin/true" "unshare -Urnmpf --mount-proc /bin/true"
for s in ns mounts cgroups confine all; do
	set -- "$@" "$d/jail_floor --upto $s $ws /bin/true"
done
command -v bwrap >/dev/null && set -- "$@" "$bwrap"
set -- "$@" "$W run --quiet --no-stdin --audit-log /dev/null --workspace $ws -- /bin/true"

per=$(( (RUNS + ROUNDS - 1) / ROUNDS ))
i=0
while [ $i -lt "$ROUNDS" ]; do
	hyperfine -N --style none --warmup 1 --runs "$per" --export-json "$d/r$i.json" "$@" \
		>/dev/null 2>"$d/hf.err" || { echo "floor: hyperfine failed:" >&2; cat "$d/hf.err" >&2; exit 1; }
	i=$((i + 1))
done

echo "The floor under warden run -- /bin/true (bench/jail_floor.c: the same kernel work, nothing else),"
echo "uid $(id -u), median of $((per * ROUNDS)) runs in $ROUNDS interleaved rounds (ms), ratio to bwrap:"
[ -z "$note" ] || echo "  ($note)"
python3 - "$d" "$ROUNDS" <<'PY'
import json, statistics, sys
d, rounds = sys.argv[1], int(sys.argv[2])
times = {}
for i in range(rounds):
    for r in json.load(open("%s/r%d.json" % (d, i)))["results"]:
        times.setdefault(r["command"], []).extend(r["times"])
names = ["bare /bin/true", "unshare -Urnmpf --mount-proc",
         "floor: namespaces + processes", "floor: + mounts", "floor: + cgroups",
         "floor: + fds, rlimits, caps, Landlock", "floor: + seccomp (notify)"]
cmds = list(times)
if len(cmds) == 9:
    names += ["bwrap", "warden"]
else:
    names += ["warden"]
med = [statistics.median(times[c]) * 1000 for c in cmds]
bw = med[names.index("bwrap")] if "bwrap" in names else None
print("| %-38s | %8s | %8s | %8s |" % ("command", "ms", "step", "x bwrap"))
print("|%s|%s|%s|%s|" % ("-" * 40, "-" * 10, "-" * 10, "-" * 10))
for k, (n, m) in enumerate(zip(names, med)):
    step = "%+.3f" % (m - med[k - 1]) if 2 < k < 7 else ""
    print("| %-38s | %8.3f | %8s | %8s |" % (n, m, step, "%.2fx" % (m / bw) if bw else "NA"))
if bw:
    print("0.6x bwrap = %.3f ms; warden - floor = %.3f ms" % (0.6 * bw, med[-1] - med[6]))
PY
