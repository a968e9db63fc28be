#!/usr/bin/env python3
"""make bench, part 2: sessions through `warden serve --stdio`, against
their peers in the same run.  Prints medians and ratios; asserts nothing.

  round trip   print(1) in an open Python session: warden (jailed driver,
               two processes and a socketpair away) against the same
               driver run bare over a socketpair (no jail, no supervisor)
  flood        the same round trip while another session floods denied
               syscalls (distinct unknown numbers, as fast as it can)
  cold start   open + first print(1) in a fresh Python session (--pool 0), against
               bare `python3 -c pass` and `bwrap ... python3 -c pass`
  from pool    open + first print(1) when the pool (--pool 1) holds a ready
               jail, against bare `python3 -c 'print(1)'` (target 0.25x);
               BENCH_ONLY=pool runs this row alone
  pool of 8    the supervisor's RSS with 8 ready Python jails waiting
  100 sessions 100 idle Python sessions: the supervisor's own RSS, and the
               broker's
  one-shot     jails per second, one-shot sessions run back to back, against
               bwrap and a bare fork+exec of `python3 -c pass`
  N sessions   BENCH_SESSIONS (default 1000) Python sessions open at once,
               each running print(1), all blocks sent together: the total
               time and the supervisor's RSS and fds
"""
import json, os, shutil, socket, statistics, subprocess, sys, tempfile, time

W = sys.argv[1]
RUNS = int(os.environ.get("BENCH_RUNS", "100"))
ws = tempfile.mkdtemp(prefix="warden-bench-")
py = "/usr/bin/python3"


class Serve:
    def __init__(self, *extra):
        self.p = subprocess.Popen([W, "serve", "--stdio", "--workspace", ws,
                                   "--audit-log", os.path.join(ws, "audit.jsonl")] + list(extra),
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ws,
                                  text=True, bufsize=1)
        self.id = 0

    def req(self, **o):
        self.id += 1
        o["id"] = self.id
        self.p.stdin.write(json.dumps(o) + "\n")
        self.p.stdin.flush()
        return self.id

    def wait(self, rid, event):
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise SystemExit("bench: warden serve ended")
            o = json.loads(line)
            if o.get("id") == rid and o.get("event") == "error":
                raise SystemExit("bench: " + o["message"])
            if o.get("id") == rid and o.get("event") == event:
                return o

    def open(self, **kw):
        return self.wait(self.req(op="open", **kw), "opened")["session"]

    def run(self, s, code, lang="python"):
        return self.wait(self.req(op="run", session=s, language=lang, code=code), "result")

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)


def ms(f, n):
    out = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        out.append((time.perf_counter() - t) * 1000)
    return statistics.median(out)


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def jail_inits(pid):
    """warden's children in a pid namespace of their own: its jails."""
    out = []
    for k in children(pid):
        try:
            with open("/proc/%d/status" % k) as f:
                ns = [l for l in f if l.startswith("NSpid:")]
        except OSError:
            continue
        if ns and len(ns[0].split()) >= 3:
            out.append(k)
    return out


def driver_waits(init):
    """True when the jail's driver has started and waits for a block on its
    control socket (its wchan), or is stopped between blocks (a session's
    jail is frozen after each block: do_signal_stop); None when wchan
    cannot be read."""
    for k in children(init):
        try:
            with open("/proc/%d/wchan" % k) as f:
                if f.read().strip() in ("unix_stream_read_generic", "do_signal_stop"):
                    return True
        except OSError:
            return None
    return False


def wait_jails(pid, n):
    """Until n jails' drivers wait for a block: a pooled jail measured before
    its driver finished importing would charge that start-up to the pool
    (a fixed 0.15 s was not always enough on a loaded machine)."""
    deadline = time.monotonic() + 60
    while True:
        ready = [driver_waits(i) for i in jail_inits(pid)]
        if None in ready and len(ready) >= n:
            time.sleep(0.15)    # wchan unreadable here: give the driver time
            return
        if sum(r is True for r in ready) >= n:
            return
        if time.monotonic() > deadline:
            raise SystemExit("bench: the pool did not fill")
        time.sleep(0.005)


def ratio(a, b):
    return "%.2fx" % (a / b) if a and b else "NA"


def bare_driver_round_trip(n):
    """The same Python driver, unjailed, over a socketpair on fd 4."""
    src = open(os.path.join(os.path.dirname(__file__), "..", "drivers", "python.py")).read()
    a, b = socket.socketpair()
    os.set_inheritable(b.fileno(), True)
    fd = b.fileno()
    p = subprocess.Popen(["/bin/sh", "-c", 'exec "$0" -u -c "$1" 4<&%d %d<&-' % (fd, fd), py, src],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, pass_fds=(fd,))
    b.close()
    out = os.fdopen(os.dup(p.stdout.fileno()), "rb", buffering=0)

    def one():
        code = b"print(1)"
        a.sendall(b"R %d\n" % len(code) + code)
        buf = b""
        while not buf.endswith(b"\n"):
            buf += a.recv(64)
        out.read(2)
    one()
    t = ms(one, n)
    a.close()
    p.wait(timeout=10)
    return t


def pool_row():
    # from the pool: a session that finds a ready jail.  Each round waits
    # (outside the measure) until the pool holds one again.
    sv = Serve("--pool", "1")
    keep = sv.open()           # its block makes (profile, workspace, python) the pool's key
    sv.run(keep, "print(1)")
    pooled = []
    for _ in range(max(10, RUNS // 4)):
        wait_jails(sv.p.pid, 2)
        t = time.perf_counter()
        s2 = sv.open()
        sv.run(s2, "print(1)")
        pooled.append((time.perf_counter() - t) * 1000)
        sv.wait(sv.req(op="close", session=s2), "closed")
    pool_ms = statistics.median(pooled)
    pooled.sort()
    pool_spread = "%.2f-%.2f" % (pooled[len(pooled) // 10], pooled[len(pooled) * 9 // 10])
    p1_ms = ms(lambda: subprocess.run([py, "-c", "print(1)"], stdout=subprocess.DEVNULL),
               max(10, RUNS // 4))
    print("| cold Python session from the pool (open + first print(1)) | warden | warden p10-p90 | python3 -c 'print(1)' | warden/python3 (target 0.25x) |")
    print("|---|---|---|---|---|")
    print("| median ms | %.2f | %s | %.2f | %s |" % (pool_ms, pool_spread, p1_ms, ratio(pool_ms, p1_ms)))
    print()
    sv.close()


def main():
    bwrap = shutil.which("bwrap")
    bwrap_cmd = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr",
                 "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64",
                 "/lib64", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--bind", ws, ws,
                 "--chdir", ws] if bwrap else None

    print("warden session benchmark: medians (ms) of %d runs, same machine, same run" % RUNS)
    print("kernel %s, %d CPUs, uid %d" % (os.uname().release, os.cpu_count(), os.getuid()))
    print()
    if os.environ.get("BENCH_ONLY") == "pool":    # the pool's row alone
        pool_row()
        shutil.rmtree(ws, ignore_errors=True)
        return

    sv = Serve("--pool", "0")     # cold: every session starts its own jail
    s = sv.open()
    sv.run(s, "print(1)")
    rt = ms(lambda: sv.run(s, "print(1)"), RUNS * 5)
    bare_rt = bare_driver_round_trip(RUNS * 5)
    print("| round trip of print(1) in an open Python session | warden | bare driver | warden/bare |")
    print("|---|---|---|---|")
    print("| median ms | %.3f | %.3f | %s |" % (rt, bare_rt, ratio(rt, bare_rt)))
    print()

    # one session floods denied syscalls until told to stop; the other's
    # round trip is measured meanwhile (the loop serves one notification
    # per wakeup, so the flood should cost it little)
    fl = sv.open()
    stop = os.path.join(ws, "flood.stop")
    fid = sv.req(op="run", session=fl, language="python", code=(
        "import ctypes, os\nlibc = ctypes.CDLL(None)\nn = 0\n"
        "while not os.path.exists(%r):\n    libc.syscall(1000 + n %% 1000000)\n    n += 1\n"
        "print(n)\n" % stop))
    sv.wait(fid, "audit")    # the flood has started
    flood_rt = ms(lambda: sv.run(s, "print(1)"), RUNS * 5)
    open(stop, "w").close()
    calls = sv.wait(fid, "result")
    print("| round trip of print(1) while another session floods denied syscalls | idle | flooded | flooded/idle |")
    print("|---|---|---|---|")
    print("| median ms | %.3f | %.3f | %s |" % (rt, flood_rt, ratio(flood_rt, rt)))
    print("(the flooding block made %s denied calls in all)" %
          sum(d["count"] for d in calls.get("denied_syscalls", [])))
    print()
    sv.wait(sv.req(op="close", session=fl), "closed")

    def cold():
        s2 = sv.open()
        sv.run(s2, "print(1)")
        sv.wait(sv.req(op="close", session=s2), "closed")
    cold_ms = ms(cold, max(10, RUNS // 4))
    pass_ms = ms(lambda: subprocess.run([py, "-c", "pass"]), max(10, RUNS // 4))
    bw_ms = ms(lambda: subprocess.run(bwrap_cmd + [py, "-c", "pass"]), max(10, RUNS // 4)) if bwrap else 0
    print("| cold Python session (open + first print(1)) | warden | python3 -c pass | bwrap python3 -c pass | warden - python3 | warden/bwrap |")
    print("|---|---|---|---|---|---|")
    print("| median ms | %.2f | %.2f | %s | %+.2f | %s |" % (cold_ms, pass_ms, "%.2f" % bw_ms if bw_ms else "NA",
                                                            cold_ms - pass_ms, ratio(cold_ms, bw_ms)))
    print()

    sv.close()

    pool_row()

    sv = Serve("--pool", "8")
    keep = sv.open()
    sv.run(keep, "print(1)")
    wait_jails(sv.p.pid, 9)
    jails_kb = sum(rss_kb(j) + sum(rss_kb(c) for c in children(j)) for j in jail_inits(sv.p.pid))
    print("| a pool of 8 ready Python jails (+ 1 session) | supervisor RSS | jails' RSS (inits + drivers) |")
    print("|---|---|---|")
    print("| KiB | %d | %d |" % (rss_kb(sv.p.pid), jails_kb))
    print()
    sv.close()

    sv = Serve()
    sup = sv.p.pid
    before = rss_kb(sup)
    sess = [sv.open() for _ in range(100)]
    for x in sess:
        sv.run(x, "x = 1")
    after = rss_kb(sup)
    kids = children(sup)
    broker = [k for k in kids if "warden-broker" in open("/proc/%d/cmdline" % k).read()]
    print("| 100 idle Python sessions | supervisor RSS | supervisor RSS before | broker RSS |")
    print("|---|---|---|---|")
    print("| KiB | %d | %d | %s |" % (after, before, rss_kb(broker[0]) if broker else "NA"))
    print()
    sv.close()

    sv = Serve()
    n = max(20, RUNS // 2)

    def oneshot():
        s3 = sv.open(oneshot=True)
        sv.run(s3, "pass")
        sv.wait(sv.req(op="close", session=s3), "closed")
    t = time.perf_counter()
    for _ in range(n):
        oneshot()
    w_rate = n / (time.perf_counter() - t)
    t = time.perf_counter()
    for _ in range(n):
        subprocess.run([py, "-c", "pass"])
    bare_rate = n / (time.perf_counter() - t)
    bw_rate = 0
    if bwrap:
        t = time.perf_counter()
        for _ in range(n):
            subprocess.run(bwrap_cmd + [py, "-c", "pass"])
        bw_rate = n / (time.perf_counter() - t)
    print("| one-shot Python jails per second (sequential) | warden | bwrap | bare | warden/bwrap |")
    print("|---|---|---|---|---|")
    print("| per s | %.1f | %s | %.1f | %s |" % (w_rate, "%.1f" % bw_rate if bw_rate else "NA", bare_rate,
                                               ratio(w_rate, bw_rate)))
    sv.close()
    print()

    many_sessions(int(os.environ.get("BENCH_SESSIONS", "1000")))
    shutil.rmtree(ws, ignore_errors=True)


def many_sessions(n):
    """n Python sessions at once, each running print(1); every block is
    sent before any result is read, so they all run together."""
    sv = Serve("--max-sessions", str(n))
    t = time.perf_counter()
    opened = [sv.req(op="open") for _ in range(n)]
    sess = [sv.wait(rid, "opened")["session"] for rid in opened]
    runs = [sv.req(op="run", session=x, language="python", code="print(1)") for x in sess]
    want, ok, errors = set(runs), 0, []
    while want:     # results come in any order
        line = sv.p.stdout.readline()
        if not line:
            raise SystemExit("bench: warden serve ended")
        o = json.loads(line)
        if o.get("id") in want and o.get("event") in ("result", "error"):
            want.discard(o["id"])
            good = o.get("event") == "result" and o.get("exit_code") == 0
            ok += good
            if not good and not errors:
                errors.append(o.get("message") or o.get("reason"))
    total = time.perf_counter() - t
    fds = len(os.listdir("/proc/%d/fd" % sv.p.pid))
    print("| %d Python sessions at once, print(1) in each | total s | per session ms | ok | "
          "supervisor RSS KiB | supervisor fds |" % n)
    print("|---|---|---|---|---|---|")
    print("| | %.2f | %.1f | %d | %d | %d |" % (total, total * 1000 / n, ok, rss_kb(sv.p.pid), fds))
    if errors:
        print("(the first block that failed: %s)" % errors[0])
    sv.close()


if __name__ == "__main__":
    main()
