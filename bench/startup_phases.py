#!/usr/bin/env python3
# Start-up phases of `warden run -- /bin/true`, old against new, interleaved.
#   bench/startup_phases.py N WARDEN_A WARDEN_B ...
# runs each binary in turn, N rounds, with WARDEN_TIMING=1 (NOTIMING=1: the
# wall time alone, without the timing output's own cost), and prints the
# median of each phase and of the wall time (which includes this script's
# fork+exec: compare columns, not absolute values).  One run after another
# of the same binary is not a fair comparison on a shared machine: load
# moves in spells, so the binaries alternate run by run.  As the
# unprivileged user: runuser -u warden-test -- env -i PATH=$PATH python3 ...
import os, re, statistics as st, subprocess, sys, tempfile, time
n = int(sys.argv[1]); bins = sys.argv[2:]
ws = tempfile.mkdtemp(prefix="mounts-bench.")
os.chmod(ws, 0o777)
keys = ["mounts", "child ready+exec", "caps+nnp", "init: clone+exec", "program ran",
        "program exec'd -> its exit seen", "main -> program exec'd (setup)", "main -> exit"]
data = {b: {k: [] for k in keys + ["wall"]} for b in bins}
env = dict(os.environ) if os.environ.get("NOTIMING") else dict(os.environ, WARDEN_TIMING="1")
for i in range(n):
    for b in bins:
        t = time.perf_counter()
        p = subprocess.run([b, "run", "--quiet", "--no-stdin", "--audit-log", "/dev/null",
                            "--workspace", ws, "--", "/bin/true"], env=env, capture_output=True, text=True)
        data[b]["wall"].append((time.perf_counter() - t) * 1e3)
        for line in p.stderr.splitlines():
            for k in keys:
                m = re.search(r"(?:\] |  )" + re.escape(k) + r"\s+([0-9.]+) ms", line)
                if m:
                    data[b][k].append(float(m.group(1)))
print("%-34s" % "phase (median ms)" + "".join("%14s" % os.path.basename(b) for b in bins))
for k in keys + ["wall"]:
    print("%-34s" % k + "".join("%14s" % ("%.3f" % st.median(data[b][k]) if data[b][k] else "-") for b in bins))
