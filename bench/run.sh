#!/bin/sh
# make bench: start-up cost of one jailed program, warden against its peers
# in the same run.  Prints medians (ms) and ratios; never asserts a time.
#
#   bare      fork+exec of the program, no isolation
#   warden    warden run (namespaces, seccomp + notify, Landlock, cgroups)
#   bwrap     bwrap --unshare-all with equivalent mounts
#   firejail  firejail --noprofile --net=none (when installed)
# then the kernel's floor under warden, layer by layer (bench/floor.sh),
# sessions (bench/sessions.py), warden mcp against serve (bench/mcp.py),
# the protected paths (bench/protect.py),
# the output relay, and the egress proxy
# against a direct loopback connection (bench/proxy.py).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
W="$top/${BUILD:-build}/warden"
RUNS=${BENCH_RUNS:-100}
ws=$(mktemp -d /tmp/warden-bench.XXXXXX)
trap 'rm -rf "$ws"' EXIT

need=""
command -v hyperfine >/dev/null || need="$need hyperfine"
command -v bwrap >/dev/null || need="$need bubblewrap"
command -v firejail >/dev/null || need="$need firejail"
if [ -n "$need" ]; then
	if [ "$(id -u)" = 0 ]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >/dev/null 2>&1 || true
	else
		echo "bench: missing$need; run: sudo apt-get install -y$need" >&2
	fi
fi
command -v hyperfine >/dev/null || { echo "bench: hyperfine is required" >&2; exit 1; }

bwrap_cmd="bwrap --unshare-all --die-with-parent --new-session --ro-bind /usr /usr \
--symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64 --symlink usr/sbin /sbin \
--ro-bind-try /etc/ssl /etc/ssl --ro-bind-try /etc/alternatives /etc/alternatives \
--ro-bind-try /etc/ld.so.cache /etc/ld.so.cache --proc /proc --dev /dev --tmpfs /tmp \
--bind $ws $ws --chdir $ws"
warden_cmd="$W run --quiet --no-stdin --audit-log /dev/null --workspace $ws --"
fj_cmd="firejail --quiet --noprofile --net=none --private-tmp"

median() { # hyperfine json -> median ms
	python3 -c 'import json,sys; print("%.3f" % (json.load(open(sys.argv[1]))["results"][0]["median"]*1000))' "$1"
}

row() { # name, program...
	name=$1; shift
	prog="$*"
	hyperfine -N --style none --warmup 5 --runs "$RUNS" --export-json "$ws/bare.json" "$prog" >/dev/null 2>&1
	bare=$(median "$ws/bare.json")
	hyperfine -N --style none --warmup 5 --runs "$RUNS" --export-json "$ws/w.json" "$warden_cmd $prog" >/dev/null 2>&1
	w=$(median "$ws/w.json")
	b=NA; f=NA
	if command -v bwrap >/dev/null; then
		hyperfine -N --style none --warmup 5 --runs "$RUNS" --export-json "$ws/b.json" "$bwrap_cmd $prog" >/dev/null 2>&1 &&
			b=$(median "$ws/b.json")
	fi
	if command -v firejail >/dev/null; then
		hyperfine -N --style none --warmup 2 --runs "$((RUNS / 4 + 1))" --export-json "$ws/f.json" "$fj_cmd $prog" >/dev/null 2>&1 &&
			f=$(median "$ws/f.json")
	fi
	python3 - "$name" "$bare" "$w" "$b" "$f" <<'PY'
import sys
name, bare, w, b, f = sys.argv[1:]
def r(x, y):
    return "NA" if "NA" in (x, y) else "%.2fx" % (float(x) / float(y))
print("| %-18s | %8s | %8s | %8s | %8s | %12s | %12s |" % (name, bare, w, b, f, r(w, b), r(w, bare)))
PY
}

echo "warden start-up benchmark: median wall time of $RUNS runs (ms), same machine, same run"
echo "kernel $(uname -r), $(nproc) CPUs, uid $(id -u); bwrap $(bwrap --version 2>/dev/null | cut -d' ' -f2 || echo -)"
echo
echo "| program            |     bare |   warden |    bwrap | firejail | warden/bwrap | warden/bare |"
echo "|--------------------|----------|----------|----------|----------|--------------|-------------|"
row "/bin/true" /bin/true
row "python3 -c pass" /usr/bin/python3 -c pass
echo
# The floors under the /bin/true row, same run: the kernel's cost of these
# namespaces (unshare(1), no mounts, filter or cgroup), and warden's own
# process start (exec, dynamic loading, constructors) against /bin/true.
# The target is warden/bwrap <= 0.60; WARDEN_TIMING=1 shows where it goes.
hyperfine -N --style none --warmup 5 --runs "$RUNS" --export-json "$ws/floor.json" \
	"unshare -Urnmpf --mount-proc /bin/true" "$W --version" /bin/true >/dev/null 2>&1 &&
python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))["results"]
print("floors: unshare -Urnmpf --mount-proc /bin/true %.3f ms; warden --version %.3f ms; /bin/true %.3f ms" %
      tuple(x["median"] * 1000 for x in r))' "$ws/floor.json" || true
echo
# The same kernel work as warden's jail and nothing else, layer by layer
# (bench/jail_floor.c, built here; docs/design.md "The floor").
W="$W" BWRAP_CMD="$bwrap_cmd" sh "$top/bench/floor.sh" || true
echo
echo "warden's protections in this run:"
"$W" run --quiet --no-stdin --audit-log /dev/null --workspace "$ws" --json "$ws/s.json" -- /bin/true
python3 -c 'import json,sys; print("  " + ", ".join("%s=%s" % kv for kv in json.load(open(sys.argv[1]))["limits"].items()))' "$ws/s.json"
echo
python3 "$top/bench/sessions.py" "$W"
python3 "$top/bench/mcp.py" "$W"
echo
# The protected and hidden catalogs (issue 19): a jail's start in a project
# and a home with a dozen nested repositories, against a plain workspace
# and bwrap, warm (placeholders reused) and cold (made again).
python3 "$top/bench/protect.py" "$W"
echo
# Output relay: 1 GiB through `warden run --output unlimited` into a pipe,
# against the plain pipe and against the floor of any relaying process (a
# bare blocking-splice loop, bench/relay_floor.c); runs interleaved (a
# shared machine drifts), medians.  As root the program writes into the
# pipe itself (SECURITY.md G130); as anyone else warden relays.
cc -O2 -D_GNU_SOURCE -o "$ws/relay_floor" "$top/bench/relay_floor.c" 2>/dev/null || true
python3 - "$W" "$ws" "${BENCH_RELAY_RUNS:-5}" <<'PY'
import os, statistics, subprocess, sys, time
w, ws, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
cmds = {"plain pipe": "head -c 1G /dev/zero | cat >/dev/null",
        "warden run --output unlimited": "%s run --quiet --no-stdin --audit-log /dev/null "
        "--workspace %s --output unlimited -- head -c 1G /dev/zero | cat >/dev/null" % (w, ws)}
if os.access(ws + "/relay_floor", os.X_OK):
    cmds["any relay (splice loop)"] = "%s/relay_floor head -c 1G /dev/zero | cat >/dev/null" % ws
t = {k: [] for k in cmds}
for _ in range(n):
    for k, c in cmds.items():
        a = time.monotonic()
        subprocess.run(["sh", "-c", c], check=True)
        t[k].append(time.monotonic() - a)
p = statistics.median(t["plain pipe"])
print("output relay, 1 GiB, median of %d runs, interleaved (ratio: plain pipe's time / this one's; target >= 0.90):" % n)
for k in t:
    m = statistics.median(t[k])
    print("  %-32s %.3f s  %.2fx" % (k, m, p / m))
PY
echo
# The egress proxy (network mode proxy): 1 GiB and new connections through
# it against a direct loopback connection, alternated, medians.
python3 "$top/bench/proxy.py" "$W"
# Seccomp on the syscall path: ns per getppid(2), bare, under a one-rule
# libseccomp filter (the slow entry path that any filter forces) and under
# warden's whole filter; interleaved, medians.
if cc -O2 -D_GNU_SOURCE -o "$ws/getppid" "$top/bench/getppid.c" -lseccomp 2>/dev/null; then
	python3 - "$W" "$ws" "${BENCH_SECCOMP_RUNS:-7}" <<'PY'
import statistics, subprocess, sys
w, ws, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
g = ws + "/getppid"
cmds = {"bare": [g, "bare"], "one-rule filter": [g, "filter"],
        "warden": [w, "run", "--quiet", "--no-stdin", "--audit-log", "/dev/null", "--workspace", ws, "--", g, "bare"]}
t = {k: [] for k in cmds}
for _ in range(n):
    for k, c in cmds.items():
        t[k].append(float(subprocess.run(c, check=True, capture_output=True, text=True).stdout))
b = statistics.median(t["bare"])
print("seccomp cost, getppid(2) loop, median of %d runs, interleaved:" % n)
for k in t:
    m = statistics.median(t[k])
    print("  %-16s %7.1f ns/call  %.2fx bare" % (k, m, m / b))
PY
fi
echo
# Costs and effects measured by the tests, which report them but never judge
# a time (a shared machine makes thresholds flaky): judged by eye here.
cg="$top/${BUILD:-build}/tests/test_cgroup_limits"
if [ -x "$cg" ]; then
	echo "cgroup cost per run (tests/unit/test_cgroup_limits.c test_timing; was a 20 ms bound):"
	"$cg" 2>&1 | grep 'create+destroy' | sed 's/^/  /'
fi
"$W" run --quiet --no-stdin --audit-log /dev/null --workspace "$ws" --cpus 0.2 --timeout 1s \
	--json "$ws/cpus.json" -- /bin/sh -c 'while :; do :; done' 2>/dev/null || true
python3 -c 'import json,sys; d = json.load(open(sys.argv[1]))
print("--cpus 0.2 for 1 s of a busy loop: cpu_ms %s by %s (about 200 expected; 1000 unthrottled; was a 600 ms bound in run.bats)" % (d["cpu_ms"], d["limits"]["cpus"]))' "$ws/cpus.json"
