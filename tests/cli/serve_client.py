#!/usr/bin/env python3
"""Drives `warden serve --stdio` for tests/cli/serve.bats.

    serve_client.py SCENARIO [WARDEN-SERVE-OPTIONS...]

Runs $WARDEN serve --stdio with the options, plays one scenario against it
and exits 0 when every check held, 1 with one line on stderr saying which
did not.  Every wait is bounded (WAIT seconds), so nothing here can hang.
Each line warden writes must be one JSON object of valid UTF-8.
"""
import json
import os
import queue
import random
import signal
import subprocess
import sys
import threading
import time

WAIT = 60.0


class Fail(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)


class Serve:
    def __init__(self, args, env=None):
        warden = os.environ.get("WARDEN") or os.path.join(
            os.path.dirname(__file__), "../../build/warden")
        self.proc = subprocess.Popen([warden, "serve", "--stdio"] + list(args),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env)
        self.q = queue.Queue()
        self.events = []       # every event, in order
        self.backlog = []      # read but not yet taken by a wait
        self.stderr = b""
        self.next_id = 1
        threading.Thread(target=self._read_out, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read_out(self):
        for raw in self.proc.stdout:
            try:
                text = raw.decode("utf-8", errors="strict")
                ev = json.loads(text)
                if not isinstance(ev, dict) or not text.endswith("\n"):
                    ev = {"_bad": text}
            except (UnicodeDecodeError, ValueError) as e:
                ev = {"_bad": repr(raw[:200]) + ": " + str(e)}
            self.q.put(ev)
        self.q.put(None)

    def _read_err(self):
        self.stderr = self.proc.stderr.read()

    def send(self, obj):
        if "id" not in obj:
            obj = dict(obj, id=self.next_id)
            self.next_id += 1
        self.send_raw(json.dumps(obj).encode() + b"\n")
        return obj["id"]

    def send_raw(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def _next(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            raise Fail("timed out waiting for an event; stderr: %s" %
                       self.stderr.decode(errors="replace")[-500:])
        try:
            ev = self.q.get(timeout=left)
        except queue.Empty:
            raise Fail("timed out waiting for an event; stderr: %s" %
                       self.stderr.decode(errors="replace")[-500:])
        if ev is None:
            self.q.put(None)
            raise Fail("warden closed its stdout; stderr: %s" %
                       self.stderr.decode(errors="replace")[-500:])
        check("_bad" not in ev, "not a JSON object line: %s" % ev.get("_bad"))
        self.events.append(ev)
        return ev

    def wait(self, pred, timeout=WAIT, what="an event"):
        for i, ev in enumerate(self.backlog):
            if pred(ev):
                return self.backlog.pop(i)
        deadline = time.monotonic() + timeout
        while True:
            try:
                ev = self._next(deadline)
            except Fail as e:
                raise Fail("waiting for %s: %s" % (what, e))
            if pred(ev):
                return ev
            self.backlog.append(ev)

    def wait_id(self, rid, event=None, timeout=WAIT):
        return self.wait(lambda e: e.get("id") == rid and (event is None or e.get("event") == event),
                         timeout, "%s for request %r" % (event or "an event", rid))

    def open(self, **kw):
        rid = self.send(dict(op="open", **kw))
        ev = self.wait_id(rid)
        check(ev.get("event") == "opened", "open: %s" % ev)
        check(isinstance(ev.get("session"), str) and ev["session"], "opened without a session")
        return ev["session"]

    def start(self, session, language, code):
        return self.send(dict(op="run", session=session, language=language, code=code))

    def collect(self, rid, timeout=WAIT):
        """The events of run rid up to its result or error: (stdout, stderr, result, events)."""
        out, err, evs = [], [], []
        while True:
            ev = self.wait_id(rid, timeout=timeout)
            evs.append(ev)
            if ev.get("event") in ("result", "error"):
                break
            if ev.get("type") == "console" and "content" in ev:
                (err if ev.get("stream") == "stderr" else out).append(ev["content"])
        return "".join(out), "".join(err), evs[-1], evs

    def run(self, session, language, code, timeout=WAIT):
        return self.collect(self.start(session, language, code), timeout)

    def finish(self, expect_rc=0):
        self.proc.stdin.close()
        try:
            rc = self.proc.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise Fail("warden did not exit after stdin closed")
        # drain what is left, each line must still be valid
        while True:
            try:
                ev = self.q.get(timeout=5)
            except queue.Empty:
                break
            if ev is None:
                break
            check("_bad" not in ev, "not a JSON object line: %s" % ev.get("_bad"))
            self.events.append(ev)
        check(rc == expect_rc, "warden exited %s, want %s; stderr: %s" %
              (rc, expect_rc, self.stderr.decode(errors="replace")[-500:]))

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def ok_result(res, what):
    check(res.get("event") == "result", "%s: %s" % (what, res))
    check(res.get("reason") == "exited" and res.get("exit_code") == 0,
          "%s: %s" % (what, res))


# ---- scenarios ---------------------------------------------------------------

def sc_open(s, args):
    rid = s.send({"op": "open"})
    ev = s.wait_id(rid)
    check(ev.get("event") == "opened", "open: %s" % ev)
    check(ev.get("profile") == "workspace", "default profile: %s" % ev.get("profile"))
    names = [l.get("name") for l in ev.get("languages", [])]
    for want in ("python", "javascript", "shell"):
        check(want in names, "languages: %s" % names)
    check(ev.get("oneshot") is False, "oneshot: %s" % ev.get("oneshot"))
    sid = ev["session"]
    rid = s.send({"op": "languages"})
    ev = s.wait_id(rid)
    check(ev.get("event") == "languages" and "python" in
          [l.get("name") for l in ev["languages"]], "languages: %s" % ev)
    rid = s.send({"op": "close", "session": sid})
    ev = s.wait_id(rid)
    check(ev.get("event") == "closed" and ev.get("session") == sid, "close: %s" % ev)
    # a closed session is unknown
    rid = s.start(sid, "python", "print(1)")
    ev = s.wait_id(rid)
    check(ev.get("event") == "error" and "unknown session" in ev.get("message", ""),
          "run after close: %s" % ev)


def sc_python_state(s, args):
    ws = args["workspace"]
    sid = s.open()
    os.makedirs(os.path.join(ws, "sub"), exist_ok=True)
    out, err, res, evs = s.run(sid, "python",
                               "x = 41\ndef f():\n    return x + 1\nimport json\n"
                               "import os\nos.chdir(%r)\nprint('set')\n" % os.path.join(ws, "sub"))
    ok_result(res, "first block")
    check(out == "set\n", "first block output: %r (stderr %r)" % (out, err))
    # console framing: start first, end before the result
    check(evs[0].get("start") is True and evs[0].get("role") == "computer" and
          evs[0].get("format") == "output", "first event: %s" % evs[0])
    check(evs[-2].get("end") is True, "event before the result: %s" % evs[-2])
    out, err, res, _ = s.run(sid, "py",
                             "print(f(), json.dumps({'a': 1}), os.path.basename(os.getcwd()))")
    ok_result(res, "second block")
    check(out == '42 {"a": 1} sub\n', "state did not persist: %r (stderr %r)" % (out, err))
    check(res.get("fresh_jail") is False and res.get("state_lost") is False,
          "second block: %s" % res)
    # an exception is an error of the block, not of the session
    out, err, res, _ = s.run(sid, "python", "raise ValueError('boom')")
    check(res.get("event") == "result" and res.get("exit_code") == 1, "exception: %s" % res)
    check("ValueError: boom" in err, "traceback on stderr: %r" % err)
    out, err, res, _ = s.run(sid, "python", "print(x)")
    check(out == "41\n", "after an exception: %r" % out)


def sc_js_shell_state(s, args):
    sid = s.open()
    out, err, res, _ = s.run(sid, "javascript",
                             "var a = 5; function g() { return a * 2; }; console.log('ok')")
    ok_result(res, "js first")
    out, err, res, _ = s.run(sid, "js", "console.log(g() + 1)")
    ok_result(res, "js second")
    check(out == "11\n", "javascript state: %r (stderr %r)" % (out, err))
    out, err, res, _ = s.run(sid, "shell", "X=7; f() { echo $((X * 6)); }; cd /tmp; echo set")
    ok_result(res, "shell first")
    out, err, res, _ = s.run(sid, "bash", "f; pwd")
    ok_result(res, "shell second")
    check(out == "42\n/tmp\n", "shell state: %r (stderr %r)" % (out, err))


def sc_markers(s, args):
    sid = s.open()
    code = ("import sys\nprint('D 0')\nprint('R 5')\nprint('{\"event\":\"result\"}')\n"
            "sys.stdout.flush()\nsys.stderr.write('D 1\\n')\nprint('after')\n")
    out, err, res, evs = s.run(sid, "python", code)
    ok_result(res, "marker block")
    check(out == 'D 0\nR 5\n{"event":"result"}\nafter\n', "relayed: %r" % out)
    check(err == "D 1\n", "stderr relayed: %r" % err)
    check(sum(1 for e in evs if e.get("event") == "result") == 1, "one result: %s" % evs)
    out, err, res, _ = s.run(sid, "shell", "printf 'D 0\\n'; echo 'R 3'; echo done")
    ok_result(res, "shell marker block")
    check(out == "D 0\nR 3\ndone\n", "shell relayed: %r" % out)
    out, err, res, _ = s.run(sid, "python", "print('next')")
    check(out == "next\n", "next block: %r" % out)


def sc_interrupt(s, args):
    sid = s.open()
    ok_result(s.run(sid, "python", "import time\ny = 3")[2], "setup")
    rid = s.start(sid, "python", "print('sleeping', flush=True)\ntime.sleep(60)\nprint('woke')")
    # print() may write "sleeping" and "\n" in two chunks
    s.wait(lambda e: e.get("id") == rid and "sleeping" in e.get("content", ""),
           what="the block to start sleeping")
    iid = s.send({"op": "interrupt", "session": sid})
    ev = s.wait_id(iid)
    check(ev.get("event") == "ok", "interrupt: %s" % ev)
    out, err, res, _ = s.collect(rid)
    check(res.get("event") == "result" and res.get("reason") == "interrupted",
          "interrupted block: %s" % res)
    check("woke" not in out, "the block went on: %r" % out)
    check(res.get("state_lost") is False, "state lost on interrupt: %s" % res)
    out, err, res, _ = s.run(sid, "python", "print(y)")
    ok_result(res, "after the interrupt")
    check(out == "3\n", "state after the interrupt: %r (stderr %r)" % (out, err))


def sc_timeout(s, args):
    sid = s.open()
    ok_result(s.run(sid, "python", "z = 1")[2], "setup")
    out, err, res, _ = s.run(sid, "python", "import time\ntime.sleep(30)")
    check(res.get("event") == "result" and res.get("reason") == "timeout", "timeout: %s" % res)
    check(res.get("state_lost") is True, "state_lost: %s" % res)
    check("wall-time" in res.get("message", ""), "message: %s" % res)
    out, err, res, _ = s.run(sid, "python", "print('z' in globals())")
    ok_result(res, "after the timeout")
    check(res.get("fresh_jail") is True, "fresh_jail: %s" % res)
    check(out == "False\n", "old variables survived the timeout: %r (stderr %r)" % (out, err))
    out, err, res, _ = s.run(sid, "python", "w = 2\nprint(w)")
    check(res.get("fresh_jail") is False, "the new jail persists: %s" % res)


def sc_flood(s, args):
    sid = s.open()
    out, err, res, evs = s.run(sid, "python", "print('H' + 'x' * 10**7 + 'T')")
    check(res.get("event") == "result", "flood: %s" % res)
    check(res.get("truncated") is True, "truncated: %s" % res)
    check(res.get("output_bytes", 0) >= 10**7 + 3, "output_bytes: %s" % res.get("output_bytes"))
    check(out.startswith("Hxxx"), "head kept: %r" % out[:20])
    check(out.endswith("xxT\n"), "tail kept: %r" % out[-20:])
    check(len(out) < 1024 * 1024, "relayed %d bytes of a 64K-limited block" % len(out))


def sc_parallel(s, args):
    ws = args["workspace"]
    a, b = s.open(), s.open()
    check(a != b, "two sessions, one id")
    code = ("import os, time\nopen(%r, 'w').close()\n"
            "for i in range(600):\n"
            "    if os.path.exists(%r):\n        print('saw-other'); break\n"
            "    time.sleep(0.05)\nelse:\n    print('alone')\n")
    ra = s.start(a, "python", code % (os.path.join(ws, "a.ready"), os.path.join(ws, "b.ready")))
    rb = s.start(b, "python", code % (os.path.join(ws, "b.ready"), os.path.join(ws, "a.ready")))
    out_a, _, res_a, _ = s.collect(ra)
    out_b, _, res_b, _ = s.collect(rb)
    ok_result(res_a, "session a")
    ok_result(res_b, "session b")
    check(out_a == "saw-other\n" and out_b == "saw-other\n",
          "the blocks did not run at the same time: %r %r" % (out_a, out_b))


def sc_queue(s, args):
    """Runs sent while a block runs wait their turn, in order."""
    sid = s.open()
    go = os.path.join(args["workspace"], "queue.go")
    # the first block runs until every other run was sent (a condition,
    # not a sleep that might end before the others arrive)
    ids = [s.start(sid, "python", "import os, time\nwhile not os.path.exists(%r):\n"
                   "    time.sleep(0.01)\nq = [1]" % go)]
    for i in range(2, 6):
        ids.append(s.start(sid, "python", "q.append(%d)\nprint(q)" % i))
    open(go, "w").close()
    outs = []
    for rid in ids:
        out, err, res, _ = s.collect(rid)
        ok_result(res, "queued block %s" % rid)
        outs.append(out)
    check(outs[-1] == "[1, 2, 3, 4, 5]\n", "queued blocks ran out of order: %r" % outs)


def sc_malformed(s, args):
    sid = s.open()
    s.send_raw(b"this is not json\n")
    ev = s.wait(lambda e: e.get("event") == "error", what="an error for a non-JSON line")
    check(ev.get("id") is None and "not JSON" in ev.get("message", ""), "error: %s" % ev)
    s.send_raw(b'{"id":"m1","op":"frobnicate"}\n')
    ev = s.wait_id("m1")
    check(ev.get("event") == "error" and "unknown op" in ev["message"], "unknown op: %s" % ev)
    s.send_raw(b'{"id":"m2","op":"run","session":"%s","language":"python"}\n' % sid.encode())
    ev = s.wait_id("m2")
    check(ev.get("event") == "error" and '"code"' in ev["message"], "missing code: %s" % ev)
    s.send_raw(b'{"id":"m3","op":"run","session":"nope","language":"python","code":""}\n')
    ev = s.wait_id("m3")
    check(ev.get("event") == "error" and "unknown session" in ev["message"], "%s" % ev)
    s.send_raw(b'{"id":"m4","op":"run","session":"%s","language":"python","code":"a\\u0000"}\n'
               % sid.encode())
    ev = s.wait_id("m4")
    check(ev.get("event") == "error" and "NUL" in ev["message"], "NUL: %s" % ev)
    s.send_raw(b"[1,2]\n\n   \n")
    ev = s.wait(lambda e: e.get("event") == "error" and "object" in e.get("message", ""),
                what="an error for an array")
    # a line over 2 MiB: one error, skipped to its newline, nothing lost after it
    s.send_raw(b'{"id":"big","op":"run","code":"' + b"x" * (3 * 1024 * 1024) + b'"}\n')
    ev = s.wait(lambda e: e.get("event") == "error" and "longer than" in e.get("message", ""),
                what="an error for a long line")
    check(ev.get("id") is None, "long line: %s" % ev)
    # code over the 1 MiB limit, in a line under 2 MiB
    rid = s.start(sid, "python", "#" * (1024 * 1024 + 1))
    ev = s.wait_id(rid)
    check(ev.get("event") == "error" and "limit" in ev["message"], "large code: %s" % ev)
    out, err, res, _ = s.run(sid, "python", "print('still here')")
    ok_result(res, "after malformed lines")
    check(out == "still here\n", "after malformed lines: %r" % out)


def sc_refusals(s, args):
    """G16: the broker may only ask; a profile that was not allowed and a
    workspace outside the roots are refused with an error, and the session
    goes on.  Run with --allow-profile short --allow-workspace WS.other, so
    that the positive controls (an allowed profile, a second root) open."""
    ws = args["workspace"]
    other = ws + ".other"
    for prof in ("strict", "flood", "no-such-profile"):
        rid = s.send({"op": "open", "profile": prof})
        ev = s.wait_id(rid)
        check(ev.get("event") == "error" and "not allowed" in ev.get("message", "")
              and "--allow-profile" in ev.get("message", ""), "profile %s: %s" % (prof, ev))
    os.symlink("/etc", os.path.join(ws, "to-etc"))
    for bad in ("/etc", "/", os.path.join(ws, ".."), os.path.join(ws, "to-etc"),
                os.path.dirname(ws)):
        rid = s.send({"op": "open", "workspace": bad})
        ev = s.wait_id(rid)
        msg = ev.get("message", "")
        check(ev.get("event") == "error" and ("outside the allowed workspace" in msg
                                             or (bad == "/" and "cannot be /" in msg)),
              "workspace %s: %s" % (bad, ev))
    # no session came of any of them, and the session goes on; the default
    # profile stays the default (workspace) when others are allowed
    rid = s.send({"op": "open"})
    ev = s.wait_id(rid)
    check(ev.get("event") == "opened" and ev.get("profile") == "workspace",
          "default open with --allow-profile: %s" % {k: ev.get(k) for k in ("event", "profile", "message")})
    sid = ev["session"]
    out, err, res, _ = s.run(sid, "shell", "pwd")
    ok_result(res, "after the refusals")
    check(out.strip() == os.path.realpath(ws), "default workspace: %r" % out)
    # positive controls: what the user allowed opens
    sid2 = s.open(profile="short")
    os.makedirs(other, exist_ok=True)
    sid3 = s.open(workspace=other)
    out, err, res, _ = s.run(sid3, "shell", "pwd")
    ok_result(res, "second root")
    check(out.strip() == os.path.realpath(other), "second root: %r" % out)
    check(len({sid, sid2, sid3}) == 3, "sessions: %s" % [sid, sid2, sid3])


def sc_unknown_language(s, args):
    sid = s.open()
    rid = s.start(sid, "cobol", "DISPLAY 'HI'.")
    ev = s.wait_id(rid)
    check(ev.get("event") == "error", "unknown language: %s" % ev)
    msg = ev.get("message", "")
    check("cobol" in msg and "python" in msg and "shell" in msg, "message: %s" % msg)
    out, err, res, _ = s.run(sid, "python", "print(1)")
    check(out == "1\n", "after the error: %r" % out)


def sc_utf8(s, args):
    sid = s.open()
    code = ("import sys\nb = sys.stdout.buffer\n"
            "b.write(b'a\\xc3'); b.flush()\n"
            "b.write(b'\\xa9 \\xff z\\n'); b.flush()\n")
    out, err, res, _ = s.run(sid, "python", code)
    ok_result(res, "utf8 block")
    check(out == "a\u00e9 \ufffd z\n", "repaired output: %r" % out)


def sc_oneshot(s, args):
    sid = s.open(oneshot=True)
    out, err, res, _ = s.run(sid, "python", "v = 1\nprint(v)")
    ok_result(res, "oneshot first")
    out, err, res, _ = s.run(sid, "python", "print('v' in globals())")
    ok_result(res, "oneshot second")
    check(out == "False\n" and res.get("fresh_jail") is True, "oneshot: %r %s" % (out, res))


def broker_pids(s):
    r = subprocess.run(["pgrep", "-P", str(s.proc.pid), "-f", "warden-broker"],
                       capture_output=True, text=True)
    return [int(p) for p in r.stdout.split()]


def sc_confined(s, args):
    """What can be seen of the broker's confinement from outside."""
    sid = s.open()
    brokers = broker_pids(s)
    check(len(brokers) == 1, "warden-broker processes under warden: %s" % brokers)
    with open("/proc/%d/status" % brokers[0]) as f:
        status = dict(l.split(":", 1) for l in f if ":" in l)
    check(status.get("NoNewPrivs", "").strip() == "1", "NoNewPrivs: %r" % status.get("NoNewPrivs"))
    check(status.get("Seccomp", "").strip() == "2", "Seccomp: %r" % status.get("Seccomp"))
    check(status.get("CapEff", "").strip() == "0000000000000000",
          "the broker holds capabilities: %r" % status.get("CapEff"))
    out, err, res, _ = s.run(sid, "python", "print('fine')")
    check(out == "fine\n", "run: %r" % out)


def pgrep(pattern):
    r = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True)
    return [int(p) for p in r.stdout.split()]


def sc_broker_death(s, args):
    marker = "1234.%05d" % random.randint(0, 99999)
    sid = s.open()
    rid = s.start(sid, "shell", "echo started; sleep %s; echo never" % marker)
    s.wait(lambda e: e.get("id") == rid and "started" in e.get("content", ""),
           what="the block to start")
    deadline = time.monotonic() + WAIT
    pids = []
    while not pids and time.monotonic() < deadline:
        pids = pgrep("sleep %s" % marker)
        time.sleep(0.05)
    check(pids, "the jailed sleep %s is not visible" % marker)
    cgroups = set()
    for pid in pids:
        try:
            with open("/proc/%d/cgroup" % pid) as f:
                for line in f:
                    path = line.strip().split(":", 2)[2]
                    ctrl = line.split(":")[1].split(",")[0] if line.split(":")[1] else ""
                    if "/warden-" in path:
                        base = "/sys/fs/cgroup" + ("/" + ctrl if ctrl and os.path.isdir(
                            "/sys/fs/cgroup/" + ctrl) else "") + path
                        cgroups.add(base)
        except OSError:
            pass
    # only paths that exist now: what must be gone afterwards
    cgroups = {c for c in cgroups if os.path.isdir(c)}
    if os.geteuid() == 0:
        check(cgroups, "no warden-* cgroup found for the jail (root has cgroups)")
    brokers = broker_pids(s)
    check(len(brokers) == 1, "warden-broker processes under warden: %s" % brokers)
    os.kill(brokers[0], signal.SIGKILL)
    try:
        rc = s.proc.wait(timeout=WAIT)
    except subprocess.TimeoutExpired:
        raise Fail("warden did not exit after its broker died")
    check(rc != 0, "warden exited 0 after its broker was killed")
    deadline = time.monotonic() + 10
    while pgrep("sleep %s" % marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    check(not pgrep("sleep %s" % marker), "a jail process survived: sleep %s" % marker)
    left = [c for c in cgroups if os.path.exists(c)]
    check(not left, "cgroups left behind: %s" % left)
    print("# cgroups checked: %d" % len(cgroups))


SCENARIOS = {name[3:]: fn for name, fn in globals().items() if name.startswith("sc_")}


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in SCENARIOS:
        print("usage: serve_client.py {%s} [warden serve options]" % ",".join(sorted(SCENARIOS)),
              file=sys.stderr)
        return 2
    name, wargs = sys.argv[1], sys.argv[2:]
    args = {}
    if "--workspace" in wargs:
        args["workspace"] = wargs[wargs.index("--workspace") + 1]
    s = Serve(wargs)
    try:
        SCENARIOS[name](s, args)
        if name != "broker_death":
            s.finish(0)
            closed = [e for e in s.events if e.get("event") == "closed"]
            opened = [e for e in s.events if e.get("event") == "opened"]
            check(len(closed) == len(opened),
                  "stdin EOF: %d sessions opened, %d closed" % (len(opened), len(closed)))
    except Fail as e:
        print("FAIL %s: %s" % (name, e), file=sys.stderr)
        s.kill()
        return 1
    finally:
        s.kill()
    print("ok %s (%d events)" % (name, len(s.events)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
