#!/usr/bin/env python3
"""Learning's cost (docs/learn.md): an import-heavy Python program bare,
under `warden run`, and under `warden run --learn`, interleaved round by
round (a shared machine drifts), medians and ratios.  Every path and
network call of a learning run goes through the supervisor and the
learner; a normal run loads the filter compiled at build time, unchanged.

    learn.py WARDEN [OLD_WARDEN]

With OLD_WARDEN (or BENCH_OLD_WARDEN: a warden built before learning), the
normal run is also timed against it, interleaved, to show that normal runs
pay nothing for learning.  BENCH_LEARN_RUNS rounds (default 15).
Never asserts a time."""
import os
import statistics
import subprocess
import sys
import tempfile
import time


def program():
    """pandas when it is installed (thousands of stats and opens), else a
    dozen standard modules."""
    heavy = "import pandas, numpy"
    if subprocess.run(["python3", "-c", heavy], capture_output=True).returncode == 0:
        return heavy, "import pandas, numpy"
    std = ("import json, csv, email.mime.text, http.client, urllib.request, decimal, "
           "fractions, statistics, sqlite3, unittest, xml.etree.ElementTree, asyncio")
    return std, "a dozen standard modules"


def timed(argv):
    t = time.perf_counter()
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
    dt = (time.perf_counter() - t) * 1000
    return dt, r


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    w = sys.argv[1]
    old = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("BENCH_OLD_WARDEN")
    n = int(os.environ.get("BENCH_LEARN_RUNS", "15"))
    code, what = program()
    ws = tempfile.mkdtemp(prefix="warden-bench-learn.")
    run = ["run", "--quiet", "--no-stdin", "--audit-log", "/dev/null", "--workspace", ws,
           "--memory", "unlimited"]
    cmds = {
        "bare": ["python3", "-c", code],
        "warden run": [w] + run + ["--", "python3", "-c", code],
        "warden run --learn": [w] + run + ["--learn", "--", "python3", "-c", code],
    }
    if old:
        cmds["warden run (before learning)"] = [old] + run + ["--", "python3", "-c", code]
    t = {k: [] for k in cmds}
    report = ""
    names = list(cmds)
    for i in range(n):
        k = i % len(names)
        for name in names[k:] + names[:k]:
            dt, r = timed(cmds[name])
            if r.returncode:
                print("%s: exit status %d: %s" % (name, r.returncode, r.stderr.decode()[-300:]),
                      file=sys.stderr)
            t[name].append(dt)
            if name == "warden run --learn":
                report = r.stderr.decode()
    med = {k: statistics.median(v) for k, v in t.items()}
    print("learning's cost: `python3 -c \"%s\"` (%s), median of %d interleaved rounds (ms):"
          % (code if len(code) < 40 else code[:37] + "...", what, n))
    for k, m in med.items():
        print("  %-30s %8.1f ms  %5.2fx bare" % (k, m, m / med["bare"]))
    print("  --learn against a normal run: %.2fx" % (med["warden run --learn"] / med["warden run"]))
    if old:
        print("  a normal run against the same warden before learning: %.3fx"
              % (med["warden run"] / med["warden run (before learning)"]))
    else:
        print("  (BENCH_OLD_WARDEN=path/to/older/warden compares normal runs before and after)")
    last = [line for line in report.splitlines() if "addition" in line or "INCOMPLETE" in line]
    if last:
        print("  the learning run's report ends: " + last[-1].strip())
    subprocess.run(["rm", "-rf", ws])


if __name__ == "__main__":
    main()
