#!/usr/bin/env python3
"""warden's WARDEN_TIMING=1 phases next to jail_floor's FLOOR_TIMING=1 steps.

    python3 bench/floor_phases.py [N] [WARDEN] [JAIL_FLOOR]

Runs `warden run -- /bin/true` and `jail_floor WS /bin/true` alternately N
times (default 80) and prints each phase's median (p25, p75) in ms, with the
wall time of each run and the sum of the outer process's phases (the wall
time minus that sum is exec, loading and exit, plus this script's spawn).
jail_floor is built by bench/floor.sh (or: cc -O2 -D_GNU_SOURCE -Iinclude
-o /tmp/jail_floor bench/jail_floor.c build/filters.o).  docs/design.md,
"The floor", quotes it.  Asserts nothing."""
import os, re, statistics, subprocess, sys, tempfile, time

top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
n = int(sys.argv[1]) if len(sys.argv) > 1 else 80
w = sys.argv[2] if len(sys.argv) > 2 else os.path.join(top, "build", "warden")
f = sys.argv[3] if len(sys.argv) > 3 else "/tmp/jail_floor"
ws = tempfile.mkdtemp(prefix="warden-phases.")
runs = (("warden", [w, "run", "--quiet", "--no-stdin", "--audit-log", "/dev/null",
                    "--workspace", ws, "--", "/bin/true"], "WARDEN_TIMING"),
        ("floor", [f, ws, "/bin/true"], "FLOOR_TIMING"))
ph = {k: {} for k, _, _ in runs}
line_re = re.compile(r".*timing: \[(\d+)\] (.+?)\s+([\d.]+) ms$")
total_re = re.compile(r".*timing:\s+(\S.+?)\s{2,}([\d.]+) ms")
for _ in range(n):
    for k, cmd, var in runs:
        env = dict(os.environ, **{var: "1"})
        t0 = time.perf_counter()
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
        wall = (time.perf_counter() - t0) * 1000
        outer = 0.0
        for line in r.stderr.splitlines():
            m = line_re.match(line)
            if m:
                who = {"1": "init", "2": "program"}.get(m.group(1), "outer")
                ph[k].setdefault("%s: %s" % (who, m.group(2).strip()), []).append(float(m.group(3)))
                if who == "outer" and "init exit" not in m.group(2):
                    outer += float(m.group(3))
                continue
            m = total_re.match(line)
            if m:
                ph[k].setdefault("total: " + m.group(1), []).append(float(m.group(2)))
        ph[k].setdefault("wall (spawned from python)", []).append(wall)
        ph[k].setdefault("sum of the outer process's phases", []).append(outer)
os.rmdir(ws)
for k in ph:
    print("== %s, uid %d, median of %d runs (ms)" % (k, os.getuid(), n))
    for name, v in ph[k].items():
        q = statistics.quantiles(v, n=4) if len(v) > 1 else [v[0]] * 3
        print("  %-45s %7.3f  (p25 %.3f, p75 %.3f)" % (name, statistics.median(v), q[0], q[2]))
