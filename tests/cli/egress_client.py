#!/usr/bin/env python3
"""The egress proxy's process under `warden serve` (issue 21), for
tests/cli/egress.bats.

    egress_client.py SCENARIO --workspace WS --audit-log LOG [WARDEN-SERVE-OPTIONS...]

Plays one scenario with serve_client.py's bounded client and exits 0 when
every check held, 1 with one line saying which did not.  The process is
judged from the host (/proc/PID of it) and from the audit log, whose
egress_start record (written once the process is confined and READY)
names its pid.  NET_URL is a page on a host server the session may reach;
EGRESS_DIR the directory of the test's WARDEN_EGRESS wrapper or fake.
"""
import json
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import Fail, audit_records, check, ok_result, scenario_main, wait_until  # noqa: E402

FETCH = ("import urllib.request, urllib.error\n"
         "try:\n    print(urllib.request.urlopen(%r, timeout=60).read().decode().strip())\n"
         "except urllib.error.HTTPError as e:\n"
         "    print('HTTP', e.code, e.read().decode().strip())\n")
DOWN = ("HTTP 502 warden proxy: warden's egress proxy stopped and is being restarted; this "
        "request was not sent anywhere. Try again in a moment.")


def status_of(pid):
    with open("/proc/%d/status" % pid) as f:
        return {k: v.strip() for k, v in (l.split(":", 1) for l in f if ":" in l)}


def confined(s, pid):
    """What can be seen from the host of the egress process pid."""
    st = status_of(pid)
    check(int(st["PPid"]) == s.proc.pid, "the egress process %d is not warden's child: %s" %
          (pid, st["PPid"]))
    check(st["Name"] == "warden-egress", "its name: %r" % st["Name"])
    uids = st["Uid"].split()
    if os.geteuid() == 0:
        check(all(u != "0" for u in uids), "as root, the egress process runs as uid %s" % uids)
        check(st["CapBnd"] == "0000000000000000", "CapBnd %s" % st["CapBnd"])
    else:
        check(uids == [str(os.getuid())] * 4, "its uids %s, not the caller's" % uids)
    for cap in ("CapInh", "CapPrm", "CapEff", "CapAmb"):
        check(st[cap] == "0000000000000000", "%s %s" % (cap, st[cap]))
    check(st["NoNewPrivs"] == "1", "NoNewPrivs %s" % st["NoNewPrivs"])
    check(st["Seccomp"] == "2", "Seccomp %s" % st["Seccomp"])
    # not dumpable: the kernel gives the files of its /proc/PID to root,
    # whatever its uid
    check(os.stat("/proc/%d/status" % pid).st_uid == 0, "its /proc/PID/status is not root's: dumpable")


def starts(args):
    return audit_records(args, "egress_start")


def ends(args):
    return audit_records(args, "egress_end")


def fetch(s, sid, url):
    out, err, res, _ = s.run(sid, "python", FETCH % url)
    ok_result(res, "the fetch block (%r)" % err)
    return out.strip()


def sc_egress_kill(s, args):
    """SIGKILL the egress process while a session uses it: the session runs
    code on; its requests get the 502 that says why while the process is
    down (kept down by the test's wrapper: EGRESS_DIR/hold), and reach the
    allowed server again once it is back; the death and the restart are
    audited."""
    url, d = os.environ["NET_URL"], os.environ["EGRESS_DIR"]
    sid = s.open()
    check(fetch(s, sid, url) == "hello through the proxy", "before: the page")
    first = starts(args)
    check(len(first) == 1 and first[0].get("restart") is False, "egress_start: %s" % first)
    pid = first[0]["pid"]
    confined(s, pid)
    open(os.path.join(d, "hold"), "w").close()
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: any(e.get("pid") == pid for e in ends(args)), "its death is audited")
    end = [e for e in ends(args) if e["pid"] == pid][0]
    check(end.get("signal") == 9 and end.get("reason") == "it died", "egress_end: %s" % end)
    got = fetch(s, sid, url)
    check(got == DOWN, "while it is down: %r" % got)
    out, err, res, _ = s.run(sid, "python", "print(6 * 7)")
    ok_result(res, "a block while it is down")
    check(out == "42\n", "a block while it is down: %r" % out)
    os.remove(os.path.join(d, "hold"))
    wait_until(lambda: len(starts(args)) == 2, "it is restarted")
    again = starts(args)[1]
    check(again.get("restart") is True and again["pid"] != pid and again.get("refused", 0) >= 1,
          "the restart's egress_start: %s" % again)
    confined(s, again["pid"])
    check(fetch(s, sid, url) == "hello through the proxy", "after the restart: the page")


# The hostile fake's frames (tests/cli/egress.bats writes the fake; each
# start sends the next): what the supervisor must say when it kills it.
HOSTILE = ["an egress frame of unknown type 238", "an AUDIT for a jail it does not serve",
           "a malformed egress AUDIT frame: host", "it sent a file descriptor"]


def sc_egress_hostile(s, args):
    """A fake egress process that sends what it must not: each is killed
    (and its successor started), never the supervisor; sessions go on, and
    their requests get the 502 that says why."""
    url = os.environ["NET_URL"]
    sid = s.open()
    out, err, res, _ = s.run(sid, "python", "print(6 * 7)")   # its jail, and the proxy, start
    ok_result(res, "the first block")

    def killed():
        return [e.get("reason", "") for e in ends(args) if e.get("reason", "").startswith("killed:")]
    wait_until(lambda: len(killed()) >= len(HOSTILE), "every hostile frame ended its sender")
    reasons = killed()
    for want in HOSTILE:
        check(any(want in r for r in reasons), "no kill for %r in %s" % (want, reasons))
    check(s.proc.poll() is None, "warden itself ended")
    out, err, res, _ = s.run(sid, "python", "print(6 * 7)")
    ok_result(res, "a block after the hostile frames")
    check(out == "42\n", "a block after the hostile frames: %r" % out)
    got = fetch(s, sid, url)
    check(got == DOWN, "a request with no working proxy: %r" % got)
    sid2 = s.open()
    out, err, res, _ = s.run(sid2, "shell", "echo second session")
    check(out == "second session\n", "a second session: %r" % out)


if __name__ == "__main__":
    SC = {name[3:]: fn for name, fn in globals().items() if name.startswith("sc_")}
    sys.exit(scenario_main("egress_client.py", SC))
