#!/usr/bin/env python3
"""The warm pool's refill and its warming jails' CPU weight (issue 11), for
tests/cli/pool.bats.

    pool_client.py SCENARIO --workspace WS --audit-log LOG [WARDEN-SERVE-OPTIONS...]

Plays one scenario with serve_client.py's bounded client and exits 0 when
every check held, 1 with one line saying which did not.  Everything is
judged from outside: the jails' processes and cgroup files on the host.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import (Fail, Serve, audit_records, check, children, jail_inits,  # noqa: E402
                          ok_result, pooled_open, scenario_main, wait_until)


def comm(pid):
    try:
        with open("/proc/%d/comm" % pid) as f:
            return f.read().strip()
    except OSError:
        return ""


def ready_jails(s):
    """Jails whose Python driver runs: init's child has exec'ed python."""
    return [i for i in jail_inits(s) if any(comm(c).startswith("python") for c in children(i))]


def start_time(pid):
    with open("/proc/%d/stat" % pid) as f:
        return int(f.read().rsplit(")", 1)[1].split()[19])


def cgroup_dirs(pid):
    """{controller: host directory} of pid's cgroups (v1 by controller, v2
    as "2"), from /proc/PID/cgroup and this process's mountinfo."""
    mounts = []   # (root, mount point, fstype, super options)
    with open("/proc/self/mountinfo") as f:
        for line in f:
            a, b = line.split(" - ", 1)
            a, b = a.split(), b.split()
            if b[0] in ("cgroup", "cgroup2"):
                mounts.append((a[3], a[4], b[0], b[2].split(",")))
    out = {}
    with open("/proc/%d/cgroup" % pid) as f:
        for line in f:
            hid, ctls, path = line.rstrip("\n").split(":", 2)
            for root, mp, fs, opts in mounts:
                if (hid == "0") != (fs == "cgroup2"):
                    continue
                if hid != "0" and not (set(ctls.split(",")) & set(opts)):
                    continue
                if not (path + "/").startswith(root.rstrip("/") + "/"):
                    continue
                d = mp + path[len(root.rstrip("/")):]
                for c in (["2"] if hid == "0" else ctls.split(",")):
                    out[c] = d
                break
    return out


LIMIT_FILES = ["cpu.shares", "cpu.cfs_quota_us", "cpu.cfs_period_us", "cpu.weight", "cpu.max",
               "memory.limit_in_bytes", "memory.memsw.limit_in_bytes", "memory.max",
               "memory.swap.max", "pids.max"]


def limit_files(pid):
    """{file: value} of every limit file of pid's own groups."""
    out = {}
    for c, d in cgroup_dirs(pid).items():
        for name in LIMIT_FILES:
            try:
                with open(os.path.join(d, name)) as f:
                    out[name] = f.read().strip()
            except OSError:
                pass
    return out


def own_groups(pid, sv_pid):
    """pid's cgroup directories that are not the supervisor's: the jail's own."""
    sv = cgroup_dirs(sv_pid)
    return {c: d for c, d in cgroup_dirs(pid).items() if sv.get(c) != d}


WAITER = ("import os, time\nprint('waiting', flush=True)\n"
          "while not os.path.exists(%r):\n    time.sleep(0.01)\nprint('went')\n")


def sc_pool_refill(s, args):
    """The pool is topped up after a session took its jail -- never while
    that session's first block runs (its start would compete with the
    block), but once that block ended, or once the session stayed idle, or
    when it closed with its block -- each time judged by the jails'
    processes: a Python driver running in one more jail."""
    ws = args["workspace"]
    a = s.open()
    out, err, res, _ = s.run(a, "python", "print(1)")
    ok_result(res, "a's first block")
    wait_until(lambda: len(ready_jails(s)) == 2, "a ready jail waits in the pool (a's + 1)")

    b = pooled_open(s, args)
    rid = s.start(b, "python", WAITER % os.path.join(ws, "go-b"))
    s.wait(lambda e: e.get("id") == rid and e.get("stream") == "stdout" and
           str(e.get("content")).startswith("waiting"), what="b's block runs")
    # Nothing may start while b's first block runs: two jails stay (a's and
    # b's), however long we look.  A negative check needs a wait; 2 s is
    # well past the idle delay after which an idle session's refill starts.
    time.sleep(2)
    check(len(jail_inits(s)) == 2,
          "a jail started during b's first block: %d jails" % len(jail_inits(s)))
    open(os.path.join(ws, "go-b"), "w").close()
    out, err, res, _ = s.collect(rid)
    ok_result(res, "b's block")
    check(out.endswith("went\n"), "b: %r" % out)   # "waiting" was taken above
    wait_until(lambda: len(ready_jails(s)) == 3, "the pool is topped up after b's block")

    c = pooled_open(s, args)   # and sends nothing
    wait_until(lambda: len(ready_jails(s)) == 4, "the pool is topped up while c stays idle")

    d = pooled_open(s, args)
    rr = s.start(d, "python", "print(1)")
    rc = s.send({"op": "close", "session": d})
    s.wait_id(rc, "closed")
    s.wait(lambda e: e.get("id") == rr and e.get("event") in ("result", "error"),
           what="d's block's answer")
    wait_until(lambda: len(ready_jails(s)) == 4, "the pool is topped up after d closed")
    for x in (a, b, c):
        out, err, res, _ = s.run(x, "python", "print('still')")
        ok_result(res, "a later block")


def sc_pool_protect_stale(s, args):
    """Issue 19: a pooled jail whose protected paths changed since it
    started is never used.  .vscode existed when the pooled jail started
    (a read-only bind of that directory); the person then replaces the
    directory (a new inode at the path, which the pooled jail's bind does
    not cover).  The next session must get a fresh jail, where .vscode is
    protected: its write is refused, judged by the host's file."""
    ws = args["workspace"]
    os.makedirs(os.path.join(ws, ".vscode"), exist_ok=True)
    with open(os.path.join(ws, ".vscode", "settings.json"), "w") as f:
        f.write("{}\n")
    a = s.open()
    out, err, res, _ = s.run(a, "python", "print(1)")
    ok_result(res, "a's first block")
    wait_until(lambda: len(ready_jails(s)) == 2, "a ready jail waits in the pool (a's + 1)")
    os.rename(os.path.join(ws, ".vscode"), os.path.join(ws, "old-vscode"))
    os.makedirs(os.path.join(ws, ".vscode"))
    before = len(audit_records(args, "jail"))
    b = s.open()
    out, err, res, _ = s.run(b, "python",
                             "try:\n open('.vscode/tasks.json', 'w').write('planted')\n"
                             " print('written')\nexcept OSError as e:\n print('refused', e.errno)")
    ok_result(res, "b's block")
    check(out.startswith("refused"), "b's jail could write the new .vscode: %r" % out)
    check(not os.path.exists(os.path.join(ws, ".vscode", "tasks.json")),
          "the host's .vscode/tasks.json was written")
    taken = [r for r in audit_records(args, "jail")[before:] if r.get("session") == b]
    check(not taken, "b got the stale pooled jail: %s" % taken)


def sc_pool_weight(s, args):
    """A jail warming up in the pool runs at the lowest CPU weight (where the
    jail has a cpu group of its own); the session that takes it gets exactly
    the limits a cold jail has: every limit file of its groups, read on the
    host, equals a cold jail's."""
    a = s.open()
    out, err, res, _ = s.run(a, "python", "print(1)")
    ok_result(res, "a's first block (a cold jail: the pool was empty)")
    wait_until(lambda: len(ready_jails(s)) == 2, "a ready jail waits in the pool")
    inits = sorted(jail_inits(s), key=start_time)
    cold, pooled = inits[0], inits[1]
    cold_files = limit_files(cold)
    own = own_groups(pooled, s.proc.pid)
    if "cpu" in own or "2" in own:
        w = limit_files(pooled)
        check(w.get("cpu.shares", "2") == "2" and w.get("cpu.weight", "1") == "1",
              "a pooled jail warms up at the cold jail's CPU weight: %s" % w)
        check(cold_files.get("cpu.shares", "1024") == "1024" and
              cold_files.get("cpu.weight", "100") == "100",
              "the cold jail is not at the kernel's default weight: %s" % cold_files)
    b = pooled_open(s, args)
    rec = audit_records(args, "jail")[-1]
    check(rec.get("pid") == pooled, "b took jail %s, not the pooled %d" % (rec.get("pid"), pooled))
    got = limit_files(pooled)
    check(got == cold_files, "a claimed pooled jail's limits differ from a cold one's:\n"
          "pooled %s\ncold   %s" % (got, cold_files))
    check(own_groups(pooled, s.proc.pid).keys() == own_groups(cold, s.proc.pid).keys(),
          "the pooled jail's groups are not a cold one's: %s vs %s" %
          (own_groups(pooled, s.proc.pid), own_groups(cold, s.proc.pid)))
    out, err, res, _ = s.run(b, "python", "print(2)")
    ok_result(res, "b's block")
    for c in children(pooled):   # the driver is in the jail's groups too
        check(limit_files(c) == cold_files, "b's driver's limits differ: %s" % limit_files(c))


def sc_pool_profile(s, args):
    """Issue 18: the pool keys its jails by profile too.  With a jail of
    the default profile (workspace: read-write) ready in the pool, a
    session under strict (the workspace read-only) opens on the same
    workspace and language: it must get a strict jail of its own, never the
    pooled one -- judged from the host by a file its block tries to write,
    and by the audit log (no pooled jail record for it).  A session of the
    default profile then takes the pooled jail (the control)."""
    ws = args["workspace"]
    a = s.open()
    ok_result(s.run(a, "python", "print(1)")[2], "a's first block")
    wait_until(lambda: len(ready_jails(s)) == 2, "a ready jail waits in the pool (a's + 1)")
    b = s.open(profile="strict")
    out, err, res, _ = s.run(b, "python", "open('written-by-strict', 'w').write('x')\n")
    check(res.get("event") == "result", "b: %s" % res)
    check(not os.path.exists(os.path.join(ws, "written-by-strict")),
          "a strict session wrote into the workspace: it ran in the pooled jail of the "
          "default profile")
    check("Read-only file system" in err, "b's write did not fail as strict: %r" % err)
    check(not [r for r in audit_records(args, "jail") if r.get("session") == b],
          "the strict session took a pooled jail: %s" % audit_records(args, "jail"))
    c = pooled_open(s, args)
    ok_result(s.run(c, "python", "open('written-by-c', 'w').write('x')\n")[2], "c's block")
    check(os.path.exists(os.path.join(ws, "written-by-c")), "c could not write the workspace")



def sc_pool_stale_hides(s, args):
    """Issue 18: a pooled jail hides what existed when it started.  Once one
    is ready, the host creates private.key, which the profile (hidex, from
    pool.bats) hides and no catalog names: only the hides change, not the
    protections, so the hides' own check is what is judged.  The next
    session must not take that jail (the hide paths' identities changed),
    so in its jail, as in a cold one, the file cannot be read."""
    ws = args["workspace"]
    a = s.open()
    ok_result(s.run(a, "python", "print(1)")[2], "a's first block")
    wait_until(lambda: len(ready_jails(s)) == 2, "a ready jail waits in the pool (a's + 1)")
    with open(os.path.join(ws, "private.key"), "w") as f:
        f.write("stale-hide-canary\n")
    b = s.open()
    out, err, res, _ = s.run(b, "python", "try:\n    print(open('private.key').read())\n"
                             "except OSError as e:\n    print('unreadable', e.errno)\n")
    ok_result(res, "b's block: %r" % err)
    check("canary" not in out, "a hidden file is readable in b's jail: %r" % out)
    check("unreadable" in out, "b: %r" % out)
    check(not [r for r in audit_records(args, "jail") if r.get("session") == b],
          "b took the pooled jail started before the hides changed")


if __name__ == "__main__":
    sys.exit(scenario_main("pool_client.py",
                           {n[3:]: f for n, f in globals().items() if n.startswith("sc_")}))
