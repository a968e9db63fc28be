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
import shlex
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
            if ev.get("type") == "console" and ev.get("format") == "output" and "content" in ev:
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


def sc_limits(s, args):
    """Issue 13: the opened event names the mechanism of each limit, and a
    result without a memory counter says so (null, never 0).  As root every
    cgroup limit is a cgroup; unprivileged without a delegated cgroup
    (tests/run.sh's warden-test) they are the fallbacks."""
    rid = s.send({"op": "open"})
    ev = s.wait_id(rid)
    check(ev.get("event") == "opened", "open: %s" % ev)
    lim = ev.get("limits")
    check(isinstance(lim, dict), "opened without limits: %s" % ev)
    for k in ("memory", "pids", "cpus", "cpu_time", "wall_time", "file_size",
              "open_files", "output"):
        check(isinstance(lim.get(k), str), "limits.%s: %s" % (k, lim))
    check(lim["wall_time"] == "timerfd" and lim["output"] == "supervisor"
          and lim["file_size"] == "rlimit", "always-on limits: %s" % lim)
    if os.geteuid() == 0:
        for k in ("memory", "pids", "cpus", "cpu_time"):
            check(lim[k] in ("cgroup-v1", "cgroup-v2"), "as root, %s: %s" % (k, lim))
    else:
        check(lim["memory"] == "rlimit" and lim["pids"] == "rlimit"
              and lim["cpu_time"] == "rlimit", "unprivileged fallbacks: %s" % lim)
        check(lim["cpus"] == "unavailable", "unprivileged cpus: %s" % lim)
    out, err, res, _ = s.run(ev["session"], "python", "x = bytearray(32 << 20)\nprint(len(x))")
    ok_result(res, "a block")
    check("peak_memory_bytes" in res, "result without peak_memory_bytes: %s" % res)
    if lim["memory"] in ("cgroup-v1", "cgroup-v2"):
        check(isinstance(res["peak_memory_bytes"], int) and res["peak_memory_bytes"] >= 32 << 20,
              "peak memory with a cgroup: %s" % res)
    else:
        check(res["peak_memory_bytes"] is None, "peak memory without a counter: %s" % res)
    # issue 20 (7): a block that fails while the memory limit (1G, the
    # profile's) is an rlimit is told so; 8 GiB is past it.  With a cgroup
    # the untouched allocation may even succeed: never such a note there.
    out, err, res, _ = s.run(ev["session"], "python", "x = bytearray(8 << 30)")
    msg = res.get("message") or ""
    if lim["memory"] == "rlimit":
        check("MemoryError" in out + err, "the block's own error: %r %r" % (out, err))
        check(res.get("exit_code") not in (None, 0), "a failed block: %s" % res)
        check("memory: the block failed while its memory limit (1G) was an rlimit "
              "(RLIMIT_AS, no memory cgroup here)" in msg and
              "a profile with a larger limits.memory raises it" in msg, "message: %s" % res)
        out, err, res, _ = s.run(ev["session"], "python", "print(1)")
        check("memory" not in (res.get("message") or ""), "a block that did not fail: %s" % res)
    else:
        check("RLIMIT_AS" not in msg, "a cgroup's limit is no rlimit: %s" % res)


def sc_net_off(s, args):
    """Issue 20 (4): a block that tries the network while it is off gets a
    result whose message says where it tried, that the network is off and
    how to allow it (chat shows the same message to the person and the
    model); the next block, which does not try, gets none, and a third
    that tries the same places again is told again: init forgets what it
    reported at each block's sweep, and the supervisor at each block's
    start.  The block_end records have the places."""
    sid = s.open()
    code = ("import socket\n"
            "for host in ('pypi.org', '203.0.113.9'):\n"
            "    try: socket.create_connection((host, 443), timeout=2)\n"
            "    except OSError as e: print(host, e)\n")
    out, err, res, _ = s.run(sid, "python", code)
    ok_result(res, "the block that tries")
    msg = res.get("message") or ""
    check("the block tried to reach pypi.org (a name lookup) and 203.0.113.9 port 443, "
          "but the network is off under profile workspace (network mode none)" in msg and
          "--profile network, or --net proxy --allow pypi.org, lets it out" in msg,
          "message: %s" % res)
    check("Network is unreachable" in out, "the program's own error: %r" % out)
    out, err, res, _ = s.run(sid, "python", "print(1)")
    ok_result(res, "the next block")
    check("network" not in (res.get("message") or ""), "a block that did not try: %s" % res)
    out, err, res, _ = s.run(sid, "python", code)
    ok_result(res, "the block that tries again")
    check("the block tried to reach pypi.org (a name lookup) and 203.0.113.9 port 443"
          in (res.get("message") or ""), "told again: %s" % res)
    ends = audit_records({"audit": os.environ["WARDEN_AUDIT_LOG"]}, "block_end")
    tried = [e.get("network_tried", {}).get("count") for e in ends]
    check(len(ends) == 3 and tried == [2, 0, 2] and
          ends[0]["network_tried"]["first"][1] ==
          {"address": "203.0.113.9", "port": 443, "protocol": "tcp"},
          "block_end records: %s" % ends)


def sc_jail_facts(s, args):
    """Issue 20: the opened event carries what OPENED says of the jail on
    this machine (chat's %info shows the same): where the policy came
    from, the Landlock ABI (the one `warden doctor` reports), whether the
    caller's home lies in the workspace."""
    ws = os.path.realpath(args["workspace"])
    home = os.environ.get("HOME", "")
    rid = s.send({"op": "open"})
    ev = s.wait_id(rid)
    check(ev.get("event") == "opened", "open: %s" % ev)
    jail = ev.get("jail")
    check(isinstance(jail, dict), "opened without jail: %s" % ev)
    check(jail.get("policy_source") == "built-in:workspace.json", "policy_source: %s" % jail)
    abi = jail.get("landlock_abi")
    check(isinstance(abi, int) and not isinstance(abi, bool) and abi >= 0,
          "landlock_abi: %s" % jail)
    doctor = subprocess.run([os.environ["WARDEN"], "doctor"], capture_output=True, text=True)
    want = "ABI %d" % abi if abi else "not available"
    check(want in doctor.stdout or want in doctor.stderr,
          "landlock_abi %s, but warden doctor says: %s" % (abi, doctor.stdout))
    inside = home == ws or home.startswith(ws + "/")
    check(jail.get("home_in_workspace") is inside,
          "home_in_workspace: %s (HOME %s, workspace %s)" % (jail, home, ws))


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


def interrupt_keeps_state(s, sid, rid, lang, read_y):
    """Interrupt block rid of session sid (it prints "woke" if it goes on):
    the interrupt is taken, the block ends as interrupted without going
    on, and the session keeps its state (read_y prints y, which is 3)."""
    iid = s.send({"op": "interrupt", "session": sid})
    ev = s.wait_id(iid)
    check(ev.get("event") == "ok", "interrupt: %s" % ev)
    out, err, res, _ = s.collect(rid)
    check(res.get("event") == "result" and res.get("reason") == "interrupted",
          "interrupted block: %s" % res)
    check("woke" not in out, "the block went on: %r" % out)
    check(res.get("state_lost") is False, "state lost on interrupt: %s" % res)
    out, err, res, _ = s.run(sid, lang, read_y)
    ok_result(res, "after the interrupt")
    check(out == "3\n", "state after the interrupt: %r (stderr %r)" % (out, err))


def sc_interrupt(s, args):
    sid = s.open()
    ok_result(s.run(sid, "python", "import time\ny = 3")[2], "setup")
    rid = s.start(sid, "python", "print('sleeping', flush=True)\ntime.sleep(60)\nprint('woke')")
    # print() may write "sleeping" and "\n" in two chunks
    s.wait(lambda e: e.get("id") == rid and "sleeping" in str(e.get("content", "")),
           what="the block to start sleeping")
    interrupt_keeps_state(s, sid, rid, "python", "print(y)")


def sc_interrupt_perl_window(s, args):
    """Perl runs a signal's handler between two of its ops: a SIGINT that
    lands just before a blocking call (here: while the block ignores it)
    is acted on only when the call returns.  warden sends the interrupt
    again while the block runs, so a sleeping Perl block still stops within
    the grace time and keeps its session (once, the jail was killed after
    the grace and the state lost: make test-fresh saw the drivers' test
    wait for the whole sleep)."""
    sid = s.open()
    ok_result(s.run(sid, "perl", "our $y = 3;")[2], "setup")
    rid = s.start(sid, "perl", "$| = 1; { local $SIG{INT} = 'IGNORE'; print \"ignoring\\n\"; "
                  "sleep 1; } sleep 60; print \"woke\\n\";")
    s.wait(lambda e: e.get("id") == rid and "ignoring" in str(e.get("content", "")),
           what="the block to ignore SIGINT")
    interrupt_keeps_state(s, sid, rid, "perl", "print \"$y\\n\";")


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


def sc_sigxcpu(s, args):
    """Issue 9: sessions judge a jail's end by the same rule as `warden run`
    (include/warden/reason.h).  SIGXCPU is how the RLIMIT_CPU fallback ends
    a process; under a policy that limits cpu time it is "cpu_time", not
    "signaled".  The driver sends it to itself so the test does not race the
    supervisor's own cpu tick."""
    sid = s.open()
    ok_result(s.run(sid, "python", "v = 1")[2], "setup")
    out, err, res, _ = s.run(sid, "python", "import os, signal\nos.kill(os.getpid(), signal.SIGXCPU)")
    check(res.get("event") == "result" and res.get("reason") == "cpu_time", "SIGXCPU: %s" % res)
    check(res.get("signal") == 24 and res.get("state_lost") is True, "SIGXCPU: %s" % res)
    out, err, res, _ = s.run(sid, "python", "print('v' in globals())")
    ok_result(res, "after SIGXCPU")
    check(out == "False\n" and res.get("fresh_jail") is True, "fresh jail: %r %s" % (out, res))


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


def sc_many_fds(s, args):
    """More sessions than the profile's open_files (64): each jail's child
    must drop the supervisor's inherited fds before it applies the limit,
    or duplicating stdio fails with EMFILE once warden holds more than 64.
    Run with --profile fds64."""
    n = 80
    sids = [s.open() for _ in range(n)]
    check(len(set(sids)) == n, "sessions: %d distinct of %d" % (len(set(sids)), n))
    rids = [s.start(sid, "shell", "echo ok-$((20+22))") for sid in sids]
    for i, rid in enumerate(rids):
        out, err, res, _ = s.collect(rid)
        ok_result(res, "block of session %d of %d (err %r)" % (i + 1, n, err[-300:]))
        check(out == "ok-42\n", "session %d: %r" % (i + 1, out))


def sc_max_sessions(s, args):
    """Run with --max-sessions 3: the fourth open is refused with an error
    that names the setting, every session that opened runs its first block,
    and closing one makes room for the next."""
    sids = [s.open() for _ in range(3)]
    rid = s.send({"op": "open"})
    ev = s.wait_id(rid)
    check(ev.get("event") == "error" and "--max-sessions" in ev.get("message", "")
          and "3" in ev.get("message", ""), "a 4th open: %s" % ev)
    for sid in sids:
        out, err, res, _ = s.run(sid, "shell", "echo ran")
        ok_result(res, "session %s under the cap" % sid)
        check(out == "ran\n", "session %s: %r" % (sid, out))
    s.wait_id(s.send({"op": "close", "session": sids[0]}), "closed")
    sid = s.open()
    out, err, res, _ = s.run(sid, "shell", "echo ran")
    ok_result(res, "a session opened after a close")


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


def sc_broker_env(s, args):
    """The broker's environment, read from /proc: the supervisor scrubs it to
    an allowlist, so the ways to the caller's desktop services (ssh-agent,
    D-Bus, the display) never reach it (G47).  As root, EXPECT_BROKER_UID
    is the uid it must run as."""
    s.open()
    brokers = broker_pids(s)
    check(len(brokers) == 1, "warden-broker processes under warden: %s" % brokers)
    with open("/proc/%d/environ" % brokers[0], "rb") as f:
        env = dict(v.split(b"=", 1) for v in f.read().split(b"\0") if b"=" in v)
    for name in (b"SSH_AUTH_SOCK", b"DBUS_SESSION_BUS_ADDRESS", b"XDG_RUNTIME_DIR", b"DISPLAY",
                 b"WAYLAND_DISPLAY", b"WARDEN_TEST_SECRET"):
        check(name not in env, "the broker got %s=%r" % (name.decode(), env.get(name)))
    check(env.get(b"LANG") == os.environ.get("LANG", "").encode() or "LANG" not in os.environ,
          "LANG did not reach the broker: %r" % env.get(b"LANG"))
    want = os.environ.get("EXPECT_BROKER_UID")
    if want:
        with open("/proc/%d/status" % brokers[0]) as f:
            uids = [l.split()[1:] for l in f if l.startswith("Uid:")][0]
        check(uids == [want] * 4, "the broker's uids: %s, want %s" % (uids, want))


def pgrep(pattern):
    r = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True)
    return [int(p) for p in r.stdout.split()]


def pgrep_name(name):
    r = subprocess.run(["pgrep", "-x", name], capture_output=True, text=True)
    return [int(p) for p in r.stdout.split()]


def wait_gone(pattern, what, timeout=30.0, find=pgrep):
    """Wait (bounded) until no host process matches pattern."""
    deadline = time.monotonic() + timeout
    while find(pattern):
        check(time.monotonic() < deadline, "%s still running %.0f s later: %s" %
              (what, timeout, find(pattern)))
        time.sleep(0.05)


def wait_running(pattern, what, find=pgrep):
    deadline = time.monotonic() + WAIT
    while not find(pattern):
        check(time.monotonic() < deadline, "%s never started" % what)
        time.sleep(0.05)


BG_WALL = 10.0   # the bg profile's wall_time (serve.bats)
BG_JOB = ("sh -c 'while :; do touch \"%s/bg\"; sleep 0.1; done; : %s' &\n"
          "( while :; do sleep 0.1%s; done ) &\necho started")


def sc_leftovers(s, args):
    """Finding 7: a block's background processes die when the block ends
    (limits.background false, the default), judged from the host."""
    m = "%06d" % random.randint(0, 999999)
    sid = s.open()
    out, err, res, _ = s.run(sid, "shell", BG_JOB % (args["workspace"], "bgjob" + m, m))
    ok_result(res, "the block starting a background job")
    check(out == "started\n", "output: %r (stderr %r)" % (out, err))
    # by the time the result is sent, nothing of the block is left alive
    check(not pgrep("bgjob" + m), "the background job outlived its block: %s" % pgrep("bgjob" + m))
    wait_gone("sleep 0.1" + m, "the subshell's loop")
    out, err, res, _ = s.run(sid, "shell", "echo still here")
    ok_result(res, "the next block")
    check(out == "still here\n" and res.get("fresh_jail") is False,
          "the session goes on in the same jail: %r %s" % (out, res))


def sc_forged_done(s, args):
    """Finding 7: Python forges "D 0" on fd 4 while a thread keeps burning
    cpu in short-lived processes; the cpu burnt between blocks counts, and
    the jail is killed at cpu_time."""
    m = "wdn%06d" % random.randint(0, 999999)
    sid = s.open()
    code = ("import ctypes, os, threading, time\n"
            "ctypes.CDLL(None).prctl(15, b'%s', 0, 0, 0)\n"
            # each process stays under RLIMIT_CPU (1 s): only the jail's
            # total can stop this
            "def spin():\n"
            "    open('spin-%s', 'w').close()\n"
            "    while True:\n"
            "        pid = os.fork()\n"
            "        if pid == 0:\n"
            "            while time.process_time() < 0.4: pass\n"
            "            os._exit(0)\n"
            "        os.waitpid(pid, 0)\n"
            "threading.Thread(target=spin, daemon=True).start()\n"
            # one line: the driver's next active line (an "A" after the
            # forged "D") would end the jail at once (supervisor/rich.c)
            "os.write(4, b'D 0\\n'); time.sleep(1000)\n" % (m, m))
    out, err, res, _ = s.run(sid, "python", code)
    check(res.get("event") == "result", "the forged block: %s" % res)
    # the spinner ran (a file on the host, not a process seen alive: with
    # 1 s of cpu on two cores the jail may be gone before a pgrep sees it)
    wait_until(lambda: os.path.exists(os.path.join(args["workspace"], "spin-" + m)),
               "the spinning driver's mark")
    wait_gone(m, "the driver spinning between blocks", find=pgrep_name)
    out, err, res, _ = s.run(sid, "python", "print(1)")
    ok_result(res, "the block after")
    check(res.get("fresh_jail") is True, "a fresh jail: %s" % res)


def jail_tasks(s):
    """Every thread of every process of the server's jails but their
    inits, seen from the host: (pid, tid, state) from /proc, the jails'
    processes found from their inits down (task/*/children).  With a
    pool, its ready jails are among them: use --pool 0 to see only the
    sessions' jails."""
    out, todo = [], []
    for init in jail_inits(s):
        todo += [c for c in children_all(init)]
    seen = set()
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        todo += children_all(pid)
        try:
            tids = [int(t) for t in os.listdir("/proc/%d/task" % pid)]
        except OSError:
            continue
        for tid in tids:
            try:
                with open("/proc/%d/task/%d/stat" % (pid, tid)) as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            out.append((pid, tid, state))
    return out


def children_all(pid):
    """The children of every thread of pid (a leader that exited keeps
    its threads' children in their own children files)."""
    kids = []
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return kids
    for t in tids:
        try:
            with open("/proc/%d/task/%s/children" % (pid, t)) as f:
                kids += [int(x) for x in f.read().split()]
        except OSError:
            pass
    return kids


def check_still(s, path, what, quiet=1.5):
    """Between blocks nothing of the jail runs: every thread of it but
    init's is stopped (T) or dead (Z), judged from the host, and path (a
    file a jailed thread appends to every 0.1 s) does not grow for
    `quiet` seconds (there is no event to wait for when nothing happens)."""
    running = [t for t in jail_tasks(s) if t[2] not in ("T", "t", "Z", "X")]
    check(not running, "%s: jailed threads run between blocks (pid, tid, state): %s" %
          (what, running))
    size = os.path.getsize(path)
    time.sleep(quiet)
    now = os.path.getsize(path)
    check(now == size, "%s: %s grew between blocks from %d to %d bytes" % (what, path, size, now))


TICKER = ("import os, threading, time\n"
          "def tick():\n"
          "    while True:\n"
          "        with open(%r, 'a') as f: f.write('x')\n"
          "        time.sleep(0.1)\n"
          "threading.Thread(target=tick, daemon=True).start()\n"
          "while not os.path.exists(%r): time.sleep(0.01)\n")


def sc_frozen_between(s, args):
    """Issue 18, finding 2: a thread left in the driver by a block that
    forged its end ("D 0" on its stdout, stderr and, once, the control
    socket; then waiting for ever) runs nothing between blocks; it runs
    again once a block is sent."""
    m = "%06d" % random.randint(0, 999999)
    path = os.path.join(args["workspace"], "tick-" + m)
    sid = s.open()
    code = (TICKER % (path, path) +
            # one line: the driver's next active line (an "A" after the
            # forged "D") would end the jail at once (supervisor/rich.c)
            "os.write(1, b'D 0\\n'); os.write(2, b'D 0\\n'); "
            "os.write(4, b'D 0\\n'); time.sleep(1000)\n")
    out, err, res, _ = s.run(sid, "python", code)
    check(res.get("event") == "result" and res.get("reason") == "exited" and
          res.get("state_lost") is False, "the forged block ends, its jail kept: %s" % res)
    check_still(s, path, "after a forged D")
    # the next block thaws the jail: the ticker runs again (the driver's
    # main thread still sleeps in the first block, so this one times out)
    size = os.path.getsize(path)
    rid = s.start(sid, "python", "print(2)")
    wait_until(lambda: os.path.getsize(path) > size, "the thread runs again in the next block")
    out, err, res, _ = s.collect(rid)
    check(res.get("reason") == "timeout", "the block behind the stuck driver: %s" % res)
    out, err, res, _ = s.run(sid, "python", "print(3)")
    ok_result(res, "the block after the timeout")
    check(out == "3\n" and res.get("fresh_jail") is True, "a fresh jail: %r %s" % (out, res))


def sc_leader_exited(s, args):
    """Issue 18, finding 2: a background process whose main thread has
    exited (SYS_exit: the leader is a zombie, its thread runs on) is
    killed at the block's end like any other."""
    m = "%06d" % random.randint(0, 999999)
    path = os.path.join(args["workspace"], "tick-" + m)
    prog = (TICKER % (path, path) +
            "import ctypes\n"
            "ctypes.CDLL(None).syscall(60, 0)\n")   # exit(2) of the main thread only
    # the block ends once the leader is a zombie: a sweep that came
    # before its exit would kill it by its leader's state alone
    code = ("python3 -c %s &\nwhile [ ! -e %s ]; do sleep 0.01; done\n"
            "while [ \"$(cut -d' ' -f3 /proc/$!/stat)\" != Z ]; do sleep 0.01; done\n"
            "echo started\n") % (shlex.quote(prog), shlex.quote(path))
    sid = s.open()
    out, err, res, _ = s.run(sid, "shell", code)
    ok_result(res, "the block starting the process")
    check(out == "started\n", "output: %r (stderr %r)" % (out, err))
    check_still(s, path, "after a block whose process's leader exited")
    out, err, res, _ = s.run(sid, "shell", "echo still here")
    ok_result(res, "the next block")
    check(out == "still here\n" and res.get("fresh_jail") is False,
          "the session goes on in the same jail: %r %s" % (out, res))
    size = os.path.getsize(path)
    check_still(s, path, "after the next block")
    check(os.path.getsize(path) == size, "the process came back in the next block")


def sc_background(s, args):
    """limits.background true: a job outlives its block, and dies when the
    wall_time of the last block (from its start) expires."""
    m = "%06d" % random.randint(0, 999999)
    sid = s.open()
    # the job may die once the wall time of the last block's start has
    # passed (BG_WALL, the bg profile's, serve.bats): before, it must live
    start = time.monotonic()
    out, err, res, _ = s.run(sid, "shell", BG_JOB % (args["workspace"], "bgjob" + m, m))
    ok_result(res, "the block starting a background job")
    check(pgrep("bgjob" + m) or time.monotonic() - start >= BG_WALL,
          "the background job was killed at the end of its block")
    start = time.monotonic()
    out, err, res, _ = s.run(sid, "shell", "echo next")
    ok_result(res, "the next block")
    check(pgrep("bgjob" + m) or time.monotonic() - start >= BG_WALL,
          "the background job was killed by the next block")
    wait_gone("bgjob" + m, "the background job past the wall time")
    wait_gone("sleep 0.1" + m, "the subshell's loop past the wall time")
    out, err, res, _ = s.run(sid, "shell", "echo after")
    ok_result(res, "the block after the sweep")
    check(res.get("fresh_jail") is False, "the driver survived the sweep: %s" % res)


def sc_broker_death(s, args):
    marker = "1234.%05d" % random.randint(0, 99999)
    sid = s.open()
    rid = s.start(sid, "shell", "echo started; sleep %s; echo never" % marker)
    s.wait(lambda e: e.get("id") == rid and "started" in str(e.get("content", "")),
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


def host_dir(ws):
    """A host directory outside the workspace with a canary in it (made by
    the test, so a jail that reaches it is judged from the host)."""
    d = ws + ".host"
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "canary"), "w") as f:
        f.write("host-canary-7f3a\n")
    return d


def open_error(s, **kw):
    rid = s.send(dict(op="open", **kw))
    ev = s.wait_id(rid)
    check(ev.get("event") == "error", "open %s was not refused: %s" % (kw, ev))
    return ev.get("message", "")


def sc_ws_swap(s, args):
    """Finding 1: session B's workspace is swapped for a symlink to the
    host's root after B opened it; B's next jail must not follow it.  (B's
    shell jail starts when B opens, before the swap, and holds the opened
    directory; the checks run Python, whose jail starts after it.)"""
    ws = args["workspace"]
    hd = host_dir(ws)
    a = s.open()
    ok_result(s.run(a, "shell", "mkdir sub")[2], "mkdir sub")
    b = s.open(workspace=os.path.join(ws, "sub"))
    # B's shell jail is up (its start made the catalogs' placeholders in
    # sub, jail/protect.c): A's rm below does not race with it
    ok_result(s.run(b, "shell", "true")[2], "b's shell jail")
    # in A's jail, /oldroot does not exist; in a jail being built, it is the host
    # rm -r: the placeholders of B's jail stand in sub
    ok_result(s.run(a, "shell", "rm -r sub && ln -s /oldroot sub")[2], "swap")
    code = ("cat %s/canary; touch %s/escaped; ls -a %s | head -3" %
            ((os.path.join(ws, "sub") + hd,) * 2 + (os.path.join(ws, "sub"),)))
    out, err, res, _ = s.run(b, "python", "import subprocess\nsubprocess.run(%r, shell=True)" % code)
    check(not os.path.exists(os.path.join(hd, "escaped")),
          "the jail wrote into the host's %s through the swapped workspace" % hd)
    check("host-canary" not in out, "the jail read the host's canary: %r" % out)
    check(res.get("event") == "result" and res.get("reason") == "error" and
          "changed since it was opened" in res.get("message", ""),
          "the swapped workspace was not refused clearly: %s (out %r err %r)" % (res, out, err))
    # the same with a link to / (the jail's own root while it is built)
    ok_result(s.run(a, "shell", "rm sub && ln -s / sub")[2], "swap to /")
    out, err, res, _ = s.run(b, "python", "print(open(%r).read())" % (ws + "/sub/oldroot" + hd + "/canary"))
    check("host-canary" not in out, "the jail read the host's canary: %r" % out)
    check(res.get("reason") == "error", "a workspace swapped for / was used: %s" % res)
    # A is unharmed
    out, err, res, _ = s.run(a, "python", "print('a fine')")
    check(out == "a fine\n", "session A after the swap: %r %r" % (out, err))


def sc_hide_swap(s, args):
    """Finding 1, mount targets: another session turns a hidden path of the
    shared workspace into a symlink to the host; new jails mount over the
    link itself, never over what it points to, and still start."""
    ws = args["workspace"]
    hd = host_dir(ws)
    a = s.open()
    ok_result(s.run(a, "shell", "ln -s /oldroot%s .ssh && ln -s /oldroot%s/canary .env"
                    % (hd, hd))[2], "plant links")
    b = s.open()
    out, err, res, _ = s.run(b, "shell", "cat .ssh/canary .env; readlink .ssh .env; "
                             "touch .ssh/new; echo started")
    check(res.get("event") == "result", "b: %s" % res)
    check("started" in out, "a jail with a symlink at a hide path did not start: %s %r" % (res, err))
    check("host-canary" not in out and "oldroot" not in out,
          "the hidden links are visible: %r" % out)
    check(sorted(os.listdir(hd)) == ["canary"], "the host dir changed: %s" % os.listdir(hd))
    with open(os.path.join(hd, "canary")) as f:
        check(f.read() == "host-canary-7f3a\n", "the host's canary was changed")
    check(os.readlink(os.path.join(ws, ".ssh")) == "/oldroot" + hd, "the link itself changed")


def sc_hidden_ws(s, args):
    """Finding 3: a workspace at or below a hidden path of a directory
    between the allowed root and it is refused; the session goes on."""
    ws = args["workspace"]
    for d in (".ssh/sub", ".aws", "proj/.gnupg/x", "proj/.env"):
        os.makedirs(os.path.join(ws, d), exist_ok=True)
    for rel in (".ssh", ".ssh/sub", ".aws", "proj/.gnupg", "proj/.gnupg/x", "proj/.env"):
        msg = open_error(s, workspace=os.path.join(ws, rel))
        check("hidden" in msg, "refusal of %s does not say why: %s" % (rel, msg))
    # what is not hidden still opens, and runs
    sid = s.open(workspace=os.path.join(ws, "proj"))
    out, err, res, _ = s.run(sid, "shell", "ls -A .gnupg .env; echo ok")
    ok_result(res, "proj")
    check(out == ".env:\n\n.gnupg:\nok\n", "a hidden directory is not empty: %r" % out)


def sc_deep_hide(s, args):
    """Finding 3: a hide pattern of the root that lands inside a workspace
    below it ($WORKSPACE/proj/secret, workspace ROOT/proj) is hidden there."""
    ws = args["workspace"]
    os.makedirs(os.path.join(ws, "proj", "secret"), exist_ok=True)
    with open(os.path.join(ws, "proj", "secret", "key"), "w") as f:
        f.write("deep-canary-51c2\n")
    sid = s.open(profile="deephide", workspace=os.path.join(ws, "proj"))
    out, err, res, _ = s.run(sid, "shell", "cat secret/key; ls -A secret; echo done")
    check(res.get("event") == "result", "deep hide: %s" % res)
    check("deep-canary" not in out and out.endswith("done\n"),
          "the root's hidden path is readable in a workspace below it: %r" % out)
    # at the root itself it is hidden as before
    sid = s.open(profile="deephide")
    out, err, res, _ = s.run(sid, "shell", "cat proj/secret/key; echo done")
    check("deep-canary" not in out and out.endswith("done\n"), "at the root: %r" % out)
def vmrss(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise Fail("no VmRSS for pid %d" % pid)


# Calls syscall(1000 + n) for distinct n (numbers the kernel does not have)
# until at least N were made and the file STOP exists, then mount() 20 times.
FLOOD = ("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
         "n = 0\nwhile n < %d or not os.path.exists(%r):\n"
         "    libc.syscall(1000 + n)\n    n += 1\n"
         "for i in range(20):\n    libc.syscall(165, 0, 0, 0, 0, 0)\n"
         "print('flooded', n)\n")


def sc_denied_flood(s, args):
    """Finding 5: one session floods distinct syscall numbers while another
    session's blocks keep completing; the supervisor's memory, the audit
    events and the audit log stay bounded; each block reports its own
    denials only."""
    ws = args["workspace"]
    log = os.environ["WARDEN_AUDIT_LOG"]
    a, b = s.open(), s.open()
    ok_result(s.run(a, "python", "import ctypes\nlibc = ctypes.CDLL(None)")[2], "a setup")
    ok_result(s.run(b, "python", "x = 0")[2], "b setup")
    idle = vmrss(s.proc.pid)
    stop = os.path.join(ws, "b.done")
    ra = s.start(a, "python", FLOOD % (200000, stop))
    s.wait(lambda e: e.get("id") == ra and e.get("event") == "audit", what="the flood to start")
    for i in range(1, 6):
        out, err, res, _ = s.run(b, "python", "x += 1\nprint(x)")
        ok_result(res, "session b, block %d, during the flood" % i)
        check(out == "%d\n" % i, "session b output: %r" % out)
    open(stop, "w").close()
    out, err, res, evs = s.collect(ra)
    ok_result(res, "the flood block")
    check(out.startswith("flooded "), "flood output: %r (stderr %r)" % (out, err[-300:]))
    made = int(out.split()[1])
    names = {d["name"]: d["count"] for d in res.get("denied_syscalls", [])}
    check(names.get("unknown") == made and names.get("mount") == 20,
          "the flood's denied_syscalls: %s" % res.get("denied_syscalls"))
    audits = [e for e in evs if e.get("event") == "audit"]
    check(len(audits) <= 32, "%d audit events for one block (16 per name)" % len(audits))
    rss = vmrss(s.proc.pid)
    check(rss <= 2 * idle, "warden serve grew from %d to %d bytes of RSS" % (idle, rss))
    # the next block reports its own denials only
    out, err, res, _ = s.run(a, "python", "libc.syscall(165, 0, 0, 0, 0, 0)")
    ok_result(res, "the block after the flood")
    check(res.get("denied_syscalls") == [{"name": "mount", "count": 1}],
          "the next block reports earlier denials: %s" % res.get("denied_syscalls"))
    # the audit log, from the host
    size = os.path.getsize(log)
    recs = [json.loads(line) for line in open(log)]
    mine = [r for r in recs if r.get("session") == a]
    denied = [r for r in mine if r["event"] == "denied"]
    ends = [r for r in mine if r["event"] == "block_end"]
    check(size < 1024 * 1024 and len(denied) <= 512,
          "audit log: %d bytes, %d denied records of the flooding session" % (size, len(denied)))
    check(len(ends) == 3 and ends[2].get("denied_syscalls") == [{"name": "mount", "count": 1}],
          "block_end records: %s" % [e.get("denied_syscalls") for e in ends])
    print("# idle RSS %d, after the flood %d; %d calls; log %d bytes" % (idle, rss, made, size))


def sc_audit_forgery(s, args):
    """Finding 6: a block of ~64 KiB padding then a JSON-looking line made
    `warden audit` (which read 64 KiB at a time) show a forged denied
    record.  The padding is sized from the session's first block record so
    that the forged object starts exactly at byte 65535 of the line."""
    log = os.environ["WARDEN_AUDIT_LOG"]
    warden = os.environ.get("WARDEN")
    sid = s.open()
    ok_result(s.run(sid, "python", "pass")[2], "first block")
    first = [l for l in open(log) if '"event":"block"' in l and sid in l][0]
    prefix = first[:first.index('"code":"') + len('"code":"')]
    forged = ("{'ts':'2026-01-01T00:00:00.000Z','event':'denied','session':'FORGED',"
              "'syscall':'forged_call','nr':1,'args':['0x1'],'host_pid':1,'count':1}")
    code = "#" + "x" * (65535 - len(prefix) - 1) + forged
    ok_result(s.run(sid, "python", code)[2], "the padded block")
    second = [l for l in open(log) if '"event":"block"' in l and sid in l][1]
    check(second.index(forged) == 65535, "the forged object is at %d" % second.index(forged))
    for view in (["--json"], [], ["--denied"], ["--denied", "--json"]):
        r = subprocess.run([warden, "audit", "--audit-log", log] + view,
                           capture_output=True, text=True, errors="replace")
        check(r.returncode == 0, "warden audit %s: %d %s" % (view, r.returncode, r.stderr))
        if "--json" in view:
            # the code itself holds the text: judge the records
            recs = [json.loads(l) for l in r.stdout.splitlines()]
            check(not [x for x in recs if x.get("session") == "FORGED" or
                       x.get("syscall") == "forged_call"],
                  "warden audit %s shows the forged record" % view)
            check("--denied" in view or len([x for x in recs if x.get("session") == sid]) >= 4,
                  "warden audit %s lost the session's records" % view)
        else:
            check("forged_call" not in r.stdout and "FORGED" not in r.stdout,
                  "warden audit %s shows the forged record" % view)
        check("malformed" not in r.stderr and "unreadable" not in r.stderr,
              "warden audit %s: %s" % (view, r.stderr))
    r = subprocess.run([warden, "audit", "--audit-log", log, "--json", "--session", sid],
                       capture_output=True, text=True)
    recs = [json.loads(l) for l in r.stdout.splitlines()]
    blocks = [x for x in recs if x["event"] == "block"]
    check(len(blocks) == 2 and blocks[1]["code"] == code, "the long block record was not read whole")


def sc_net_proxy(s, args):
    """Issue 10: a session's jails use the proxy with the list warden was
    started with (--net proxy --allow ...; tests/cli/net.bats passes the
    URLs in NET_URL, NET_DENIED_URL and the entry in NET_ENTRY).  The
    broker only picks a profile: an "allow" in open is refused, and the
    network profile gets warden's --allow, not more."""
    url, denied, entry = os.environ["NET_URL"], os.environ["NET_DENIED_URL"], os.environ["NET_ENTRY"]
    rid = s.send({"op": "open"})
    ev = s.wait_id(rid)
    check(ev.get("event") == "opened", "open: %s" % ev)
    net = (ev.get("policy") or {}).get("network", {})
    check(net.get("mode") == "proxy" and entry in net.get("allow", []),
          "opened policy network: %s" % net)
    sid = ev["session"]
    fetch_py = ("import urllib.request, urllib.error\n"
                "try:\n    print(urllib.request.urlopen(%r).read().decode().strip())\n"
                "except urllib.error.HTTPError as e:\n    print('HTTP', e.code)\n")
    out, err, res, _ = s.run(sid, "python", fetch_py % url)
    ok_result(res, "python fetch")
    check(out == "hello through the proxy\n", "python through the proxy: %r (stderr %r)" % (out, err))
    out, err, res, _ = s.run(sid, "python", fetch_py % denied)
    check(out == "HTTP 403\n", "python, a host not allowed: %r (stderr %r)" % (out, err))
    out, err, res, _ = s.run(sid, "javascript",
                             "fetch(%r).then(r => r.text()).then(t => console.log(t.trim()))" % url)
    ok_result(res, "javascript fetch")
    check(out == "hello through the proxy\n", "node fetch through the proxy: %r (stderr %r)" % (out, err))
    # the broker cannot add a host: open takes no list
    rid = s.send({"op": "open", "allow": [denied]})
    ev = s.wait_id(rid)
    check(ev.get("event") == "error", "open with an allow list: %s" % ev)
    # the network profile (allowed at start) has warden's --allow too, and
    # still not the denied host
    sid2 = s.open(profile="network")
    out, err, res, _ = s.run(sid2, "python", fetch_py % url)
    check(out == "hello through the proxy\n", "network profile: %r (stderr %r)" % (out, err))
    out, err, res, _ = s.run(sid2, "python", fetch_py % denied)
    check(out == "HTTP 403\n", "network profile, a host not allowed: %r (stderr %r)" % (out, err))


def sc_start_burst(s, args):
    """Many sessions' jails start at once (every block sent before any
    result is read), more than the kernel queues on a unix socket
    (net.unix.max_dgram_qlen, 10 on Debian): the supervisor and its cgroup
    attacher must never wait on each other.  Every block gets its result."""
    n = int(os.environ.get("BURST", "60"))
    opened = [s.send({"op": "open"}) for _ in range(n)]
    sids = []
    for rid in opened:
        ev = s.wait_id(rid)
        check(ev.get("event") == "opened", "open: %s" % ev)
        sids.append(ev["session"])
    runs = [s.start(sid, "shell", "echo burst") for sid in sids]
    for rid in runs:
        out, err, res, _ = s.collect(rid, timeout=120)
        ok_result(res, "a block of the burst (%r)" % err)
        check(out == "burst\n", "a block of the burst: %r" % out)


# ---- the warm pool (tests/cli/pool.bats) -------------------------------------

def children(pid):
    """pid's children (its main thread's), from /proc."""
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def jail_inits(s):
    """Host pids of the jails' init processes: warden's children in a pid
    namespace of their own (two NSpid values), seen from the host."""
    r = subprocess.run(["pgrep", "-P", str(s.proc.pid)], capture_output=True, text=True)
    pids = []
    for p in r.stdout.split():
        try:
            with open("/proc/%s/status" % p) as f:
                ns = [l for l in f if l.startswith("NSpid:")]
        except OSError:
            continue
        if ns and len(ns[0].split()) >= 3:
            pids.append(int(p))
    return pids


def wait_until(cond, what):
    """Poll cond (every 20 ms) until it holds, at most WAIT seconds."""
    deadline = time.monotonic() + WAIT
    while not cond():
        if time.monotonic() > deadline:
            raise Fail("timed out waiting until %s" % what)
        time.sleep(0.02)


def audit_records(args, event=None):
    recs = []
    with open(args["audit"]) as f:
        for l in f:
            if l.strip():
                r = json.loads(l)
                if event is None or r.get("event") == event:
                    recs.append(r)
    return recs


def audit_id(s, sid):
    """The audit log's session id of the API's session sid."""
    return sid   # the API names sessions by their audit id


def pooled_open(s, args, **kw):
    """Open a session once the pool holds a ready jail for it, and check
    from the audit log that it got that pooled jail."""
    before = len(audit_records(args, "jail"))
    sid = s.open(**kw)
    wait_until(lambda: len(audit_records(args, "jail")) > before, "the pooled jail is taken")
    rec = audit_records(args, "jail")[-1]
    check(rec.get("session") == audit_id(s, sid) and rec.get("pooled") is True,
          "the session did not get a pooled jail: %s" % rec)
    return sid


PROBES = ["proc_self_exe", "open_by_handle_at", "io_uring", "userns", "mount_api", "keyrings",
          "bpf", "perf_event", "userfaultfd", "ptrace", "chroot", "sysfs", "proc_sys",
          "capabilities", "nnp_seccomp", "init_confined", "af_packet"]

PROBE_LOOP = ("for p in %s; do ./$p >/dev/null 2>&1; echo \"$p=$?\"; done; "
              "grep -E '^(NoNewPrivs|Seccomp|Seccomp_filters|CapInh|CapPrm|CapEff|CapBnd|CapAmb):' "
              "/proc/self/status | tr -d ' \\t'")


def sc_pool_confined(s, args):
    """A session's cold jail and another's pooled one, from the same server:
    every security probe a session can run is blocked in both, with the
    same results, and the same status seen from inside and from the host."""
    a = s.open()                              # the pool was empty: cold
    ok_result(s.run(a, "python", "pass")[2], "a's first block")
    wait_until(lambda: len(jail_inits(s)) >= 2, "a jail waits in the pool")
    b = pooled_open(s, args)
    # a's cold and b's pooled Python jail, judged below without a jail the
    # pool starts later (b's refill, once its block ended: still being set
    # up, it is not yet confined)
    inits = jail_inits(s)
    check(len(inits) == 2, "want a's and b's jails, not %s" % inits)
    # the probes from those very jails: a block in another language would
    # run in a new, cold jail of its own (and end b's unused pooled one)
    code = ("import subprocess\nprint(subprocess.run(%r, shell=True, capture_output=True, "
            "text=True).stdout, end='')\n" % (PROBE_LOOP % " ".join(PROBES)))
    outs = []
    for sid in (a, b):
        out, err, res, _ = s.run(sid, "python", code)
        ok_result(res, "probes in %s" % sid)
        outs.append(out)
        for p in PROBES:
            check("%s=0\n" % p in out, "probe %s not blocked in session %s: %r" % (p, sid, out))
    check(outs[0] == outs[1], "a pooled jail differs from a cold one:\n%s\n%s" % (outs[0], outs[1]))
    # from the host: every process of both jails, as the kernel sees it
    seen = []
    for init in inits:
        for pid in [init] + [int(x) for x in subprocess.run(
                ["pgrep", "-P", str(init)], capture_output=True, text=True).stdout.split()]:
            with open("/proc/%d/status" % pid) as f:
                st = dict(l.split(":", 1) for l in f if ":" in l)
            seen.append(tuple(st[k].strip() for k in ("NoNewPrivs", "Seccomp", "CapEff", "CapBnd")))
    check(seen and all(x == ("1", "2", "0000000000000000", "0000000000000000") for x in seen),
          "a jailed process seen from the host: %s" % seen)


STATE_CODE = r"""
import os, subprocess
open('/tmp/left-by-a', 'w').write('secret-a')
os.environ['LEFT_BY_A'] = '1'
os.chdir('/tmp')
p = subprocess.Popen(['sleep', '1000'], start_new_session=True)
# planted once it is sleep: under load the child may not have exec'd by
# the next block (a flake: the check below read python's cmdline)
for _ in range(3000):
    if open('/proc/%d/cmdline' % p.pid, 'rb').read().startswith(b'sleep'):
        break
    import time; time.sleep(0.01)
left_by_a = 1
print('planted')
"""

CHECK_CODE = r"""
import os
procs = []
for p in os.listdir('/proc'):
    if p.isdigit():
        try:
            procs.append(open('/proc/%s/cmdline' % p, 'rb').read().split(b'\0')[0])
        except OSError:
            pass
print(os.path.exists('/tmp/left-by-a'), os.environ.get('LEFT_BY_A'), os.getcwd() == '/tmp',
      b'sleep' in procs, 'left_by_a' in globals())
"""


def sc_pool_no_state(s, args):
    """Nothing crosses from one session's jail to another's: session A (the
    bg profile: its background process lives on) leaves a file in /tmp, a
    process, an environment variable, a cwd and a global, and closes; B,
    with a pooled jail, sees none of it.  A one-shot session's next block
    gets a fresh pooled jail that does not see its previous block's."""
    a = s.open(profile="bg")
    out, err, res, _ = s.run(a, "python", STATE_CODE)
    ok_result(res, "plant in a")
    out, err, res, _ = s.run(a, "python", CHECK_CODE)
    check(out == "True 1 True True True\n", "the state did not hold in a itself: %r" % out)
    s.wait_id(s.send({"op": "close", "session": a}), "closed")
    b = pooled_open(s, args, profile="bg")
    out, err, res, _ = s.run(b, "python", CHECK_CODE)
    ok_result(res, "check in b")
    check(out == "False None False False False\n", "state crossed from a to b: %r" % out)
    # one-shot: each block after the first takes a ready jail
    o = s.open(profile="bg", oneshot=True)
    out, err, res, _ = s.run(o, "python", STATE_CODE)
    ok_result(res, "plant in the one-shot session")
    out, err, res, _ = s.run(o, "python", CHECK_CODE)
    check(out == "False None False False False\n" and res.get("fresh_jail") is True,
          "state crossed between one-shot blocks: %r %s" % (out, res))
    # ... and that second block ran in a pooled jail, taken after the first
    # block ended.  Judged from the order of the audit log (a block_end is
    # written before its RESULT goes out), not by waiting: the take follows
    # the RESULT within milliseconds, often before this client has read it,
    # so "one more jail record than when the RESULT arrived" waited for a
    # record that was already counted (issue 18, a flake under load).
    # (The third block's jail may be taken already, after the second's end.)
    seq = [(r["event"], r.get("pooled")) for r in audit_records(args)
           if r.get("session") == audit_id(s, o) and r["event"] in ("jail", "block_end")]
    ends = [i for i, e in enumerate(seq) if e[0] == "block_end"]
    check(len(ends) == 2 and ("jail", True) in seq[ends[0] + 1:ends[1]],
          "the one-shot session's second block did not run in a pooled jail taken after "
          "its first ended: %s" % seq)


def sc_pool_audit(s, args):
    """A pooled jail's records carry the session that used it: the denied
    syscall of a probe run in B is B's, never the pool's or another's."""
    a = s.open()
    ok_result(s.run(a, "shell", "true")[2], "a's first block")
    wait_until(lambda: len(jail_inits(s)) >= 2, "a jail waits in the pool")
    b = pooled_open(s, args)
    out, err, res, _ = s.run(b, "shell", "./bpf")
    ok_result(res, "bpf probe in b")
    denied = [r for r in audit_records(args, "denied") if r.get("syscall") == "bpf"]
    check(denied and all(r.get("session") == audit_id(s, b) for r in denied),
          "the denied records are not b's (%s): %s" % (b, denied))
    ends = [r for r in audit_records(args, "block_end") if r.get("session") == audit_id(s, b)]
    check(len(ends) == 1 and ends[0].get("denied_syscalls"), "b's block_end: %s" % ends)


def sc_pool_idle(s, args):
    """Run with --pool-idle 1: the pooled jail ends once unused that long;
    the session's own jail stays."""
    a = s.open()
    ok_result(s.run(a, "python", "x = 1")[2], "a's first block")
    wait_until(lambda: len(jail_inits(s)) == 2, "a jail waits in the pool")
    wait_until(lambda: len(jail_inits(s)) == 1, "the idle pool is emptied")
    out, err, res, _ = s.run(a, "python", "print(x)")
    ok_result(res, "the session's own jail")
    check(res.get("fresh_jail") is False and out == "1\n", "a: %r %s" % (out, res))


def sc_pool_max(s, args):
    """Run with --max-sessions 3 --pool 4: sessions and pooled jails together
    stay within 3 jails; the 4th open is refused naming --max-sessions,
    while pooled jails give way to sessions that open."""
    a = s.open()
    ok_result(s.run(a, "python", "pass")[2], "a's first block")
    wait_until(lambda: len(jail_inits(s)) == 3, "the pool fills the budget")
    check(len(jail_inits(s)) == 3, "more jails than --max-sessions")
    b = pooled_open(s, args)
    c = pooled_open(s, args)
    check(len(jail_inits(s)) <= 3, "more jails than --max-sessions: %s" % jail_inits(s))
    rid = s.send({"op": "open"})
    ev = s.wait_id(rid)
    check(ev.get("event") == "error" and "--max-sessions" in ev.get("message", ""),
          "a 4th open: %s" % ev)
    for sid in (a, b, c):
        out, err, res, _ = s.run(sid, "python", "print(2)")
        ok_result(res, "session %s" % sid)
        check(out == "2\n", "%s: %r" % (sid, out))
    check(len(jail_inits(s)) <= 3, "more jails than --max-sessions: %s" % jail_inits(s))


def attacher_pids(s):
    """warden's cgroup attacher (supervisor/attach.c), by its name."""
    r = subprocess.run(["pgrep", "-P", str(s.proc.pid), "-x", "warden-attach"],
                       capture_output=True, text=True)
    return [int(p) for p in r.stdout.split()]


def sc_start_off_loop(s, args):
    """A jail start never holds up other sessions: session A streams output
    and session C answers round trips while session B's jail start is held
    at its cgroup attach (warden's attacher stopped with SIGSTOP: the start
    cannot complete), then B's block runs once it is let go.  Where no
    cgroup needs an attach, B's start goes through without the attacher:
    as root on cgroup v1 the jail is born in its groups (jail_clone_as
    joins them), so B's block runs while the attacher is still stopped."""
    a = s.open()
    c = s.open()
    out, err, res, _ = s.run(c, "python", "print('c ready')")
    ok_result(res, "c's first block")
    ev = [e for e in s.events if e.get("event") == "opened" and e.get("session") == a][0]
    mechs = [str(v) for v in (ev.get("limits") or {}).values()]
    # what the attacher still does: v2 groups, and v1 ones unless root
    cgroup = "cgroup-v2" in mechs or ("cgroup-v1" in mechs and os.geteuid() != 0)
    born_in = "cgroup-v1" in mechs and os.geteuid() == 0 and "cgroup-v2" not in mechs
    att = attacher_pids(s)
    check(len(att) == 1, "warden's cgroup attacher: %s" % att)
    stream = s.start(a, "python", "import time\nfor i in range(100000):\n"
                     "    print('a', i, flush=True)\n    time.sleep(0.01)")
    s.wait(lambda e: e.get("id") == stream and "content" in e, what="a's output")
    os.kill(att[0], signal.SIGSTOP)
    try:
        b = s.open()
        rb = s.start(b, "python", "print('b ran')")
        if cgroup:
            # b's start is held; the loop serves everyone else meanwhile
            for i in range(5):
                s.backlog = [e for e in s.backlog if e.get("id") != stream]
                s.wait(lambda e: e.get("id") == stream and "content" in e,
                       what="a's output while b's jail starts")
                out, err, res, _ = s.run(c, "python", "print(%d)" % i)
                ok_result(res, "c's round trip while b's jail starts")
                check(out == "%d\n" % i, "c: %r" % out)
            early = [e for e in s.events if e.get("id") == rb and
                     ("content" in e or e.get("event") in ("result", "error"))]
            check(not early, "b's block ran while its jail start was held: %s" % early)
        elif born_in:
            out, err, res, _ = s.collect(rb)
            ok_result(res, "b's block with the attacher stopped (born in its v1 groups)")
            check(out == "b ran\n", "b: %r" % out)
    finally:
        os.kill(att[0], signal.SIGCONT)
    if not born_in:
        out, err, res, _ = s.collect(rb)
        ok_result(res, "b's block once its jail started")
        check(out == "b ran\n", "b: %r" % out)
    s.send({"op": "interrupt", "session": a})
    s.wait(lambda e: e.get("id") == stream and e.get("event") == "result", what="a's result")


def scenario_main(prog, scenarios):
    """main() of a client that plays its scenarios (sc_* functions, in
    scenarios by name) against `warden serve --stdio`: rich_client.py,
    stacks_client.py, pool_client.py.  Exit 0 and "ok NAME" when the
    scenario held.  The scenario's args carry the --workspace and
    --audit-log given, if any."""
    if len(sys.argv) < 2 or sys.argv[1] not in scenarios:
        print("usage: %s {%s} [warden serve options]" % (prog, ",".join(sorted(scenarios))),
              file=sys.stderr)
        return 2
    name, wargs = sys.argv[1], sys.argv[2:]
    args = {key: wargs[wargs.index(opt) + 1]
            for key, opt in (("workspace", "--workspace"), ("audit", "--audit-log"))
            if opt in wargs[:-1]}
    s = Serve(wargs)
    try:
        scenarios[name](s, args)
        s.finish(0)
    except Fail as e:
        print("FAIL %s: %s" % (name, e), file=sys.stderr)
        return 1
    finally:
        s.kill()
    print("ok %s (%d events)" % (name, len(s.events)))
    return 0


# ---- learning sessions (issue 23): refusals as questions, widening --------
# LEARN_DATA: a directory outside the workspace with sales.csv in it (the
# bats test makes it); HOME: one with .ssh/id_rsa (dangerous to read).

def learn_read(path):
    return "print(open(%r).read())" % path


def learn_fail(s, sid, code):
    """A block that fails, and the confirmations that follow its result."""
    rid = s.start(sid, "python", code)
    out, err, res, _ = s.collect(rid)
    check(res.get("event") == "result" and res.get("exit_code") == 1,
          "the refused block should exit 1: %s %s" % (res, err[-300:]))
    confs, refused = [], []
    # what follows the result: confirmations and refused events of the block
    rid2 = s.send({"op": "languages"})
    while True:
        ev = s.wait(lambda e: e.get("id") in (rid, rid2), what="after the result")
        if ev.get("id") == rid2:
            break
        if ev.get("type") == "confirmation":
            check(ev.get("format") == "widen", "confirmation format: %s" % ev)
            confs.append(ev["content"])
        elif ev.get("event") == "refused":
            refused.append(ev)
    return err, confs, refused


def sc_learn_widen(s, args):
    """yes within the operator's bound (--allow-workspace DATA): granted, the
    block runs again and reads the file; the audit log says who and how."""
    data = os.environ["LEARN_DATA"]
    sid = s.open(learn=True)
    err, confs, _ = learn_fail(s, sid, learn_read(data + "/sales.csv"))
    check("FileNotFoundError" in err, "the block was not refused: %s" % err[-300:])
    mine = [c for c in confs if c.get("value") == data + "/sales.csv"]
    check(len(mine) == 1, "no question for the file: %s" % confs)
    c = mine[0]
    check(c["kind"] == "read" and c["restarts"] == "python" and
          c["question"] == "the code tried to read %s/sales.csv (refused by profile "
          "workspace). Allow read for this session?" % data, "the question: %s" % c)
    rid = s.send({"op": "widen", "session": sid, "ask": c["ask"], "answer": "yes"})
    ev = s.wait_id(rid)
    check(ev.get("event") == "widened" and ev.get("granted") is True and
          ev.get("value") == data + "/sales.csv" and ev.get("new_jail") is True,
          "widen: %s" % ev)
    out, err, res, _ = s.run(sid, "python", learn_read(data + "/sales.csv"))
    ok_result(res, "the block again")
    check(out == "region,total\nnorth,12\n\n" and res.get("fresh_jail") is True,
          "the block again read %r (fresh %s)" % (out, res.get("fresh_jail")))
    rec = [r for r in audit_records(args, "widen") if r.get("session") == sid]
    check(len(rec) == 1 and rec[0]["granted"] is True and rec[0]["kind"] == "read" and
          rec[0]["value"] == data + "/sales.csv" and rec[0]["by"] == "serve client" and
          rec[0]["by_source"] == "broker" and rec[0]["in_bound"] is True,
          "the audit's widen record: %s" % rec)
    # a widening is its session's: another session does not have it
    other = s.open(learn=True)
    _, err, res, _ = s.run(other, "python", learn_read(data + "/sales.csv"))
    check(res.get("exit_code") == 1 and "FileNotFoundError" in err,
          "another session read it: %s" % res)


def sc_learn_bound(s, args):
    """yes past the operator's bound: serve never widens there, whatever the
    client answers; the file stays out of the jail."""
    data = os.environ["LEARN_DATA"]
    sid = s.open(learn=True)
    _, confs, _ = learn_fail(s, sid, learn_read(data + "/sales.csv"))
    mine = [c for c in confs if c.get("value") == data + "/sales.csv"]
    check(len(mine) == 1, "no question for the file: %s" % confs)
    rid = s.send({"op": "widen", "session": sid, "ask": mine[0]["ask"], "answer": "yes"})
    ev = s.wait_id(rid)
    check(ev.get("event") == "widened" and ev.get("granted") is False and
          ev.get("status") == "refused" and "--allow-workspace" in ev.get("message", ""),
          "widen past the bound: %s" % ev)
    _, err, res, _ = s.run(sid, "python", learn_read(data + "/sales.csv"))
    check(res.get("exit_code") == 1 and "FileNotFoundError" in err,
          "the block read the file after a refused widening: %s" % res)
    rec = [r for r in audit_records(args, "widen") if r.get("session") == sid]
    check(len(rec) == 1 and rec[0]["granted"] is False and rec[0]["in_bound"] is False,
          "the audit's widen record: %s" % rec)


def sc_learn_no(s, args):
    """no keeps the refusal: nothing reaches the supervisor, the next run is
    refused again; a question of an earlier block cannot be answered."""
    data = os.environ["LEARN_DATA"]
    sid = s.open(learn=True)
    _, confs, _ = learn_fail(s, sid, learn_read(data + "/sales.csv"))
    mine = [c for c in confs if c.get("value") == data + "/sales.csv"]
    check(len(mine) == 1, "no question for the file: %s" % confs)
    rid = s.send({"op": "widen", "session": sid, "ask": mine[0]["ask"], "answer": "no"})
    ev = s.wait_id(rid)
    check(ev.get("event") == "widened" and ev.get("granted") is False and
          ev.get("status") == "declined", "no: %s" % ev)
    _, err, res, _ = s.run(sid, "python", learn_read(data + "/sales.csv"))
    check(res.get("exit_code") == 1, "refused no longer: %s" % res)
    check(not [r for r in audit_records(args, "widen") if r.get("session") == sid],
          "a declined question widened something")
    # a block that succeeded leaves no questions: the old ask is gone
    ok_result(s.run(sid, "python", "print(1)")[2], "a good block")
    rid = s.send({"op": "widen", "session": sid, "ask": mine[0]["ask"], "answer": "yes"})
    ev = s.wait_id(rid)
    check(ev.get("event") == "error" and "no question" in ev.get("message", ""),
          "an old question answered: %s" % ev)


def sc_learn_dangerous(s, args):
    """A dangerous refusal (a key in HOME) is never a question: a refused
    event says why and who can allow it."""
    key = os.path.join(os.environ["HOME"], ".ssh", "id_rsa")
    sid = s.open(learn=True)
    _, confs, refused = learn_fail(s, sid, learn_read(key))
    check(not [c for c in confs if c.get("value") == key], "a dangerous question: %s" % confs)
    mine = [r for r in refused if r.get("value") == key]
    check(len(mine) == 1 and "catalog" in mine[0].get("dangerous", "") and
          "only the person who starts warden" in mine[0].get("message", ""),
          "the refused event: %s" % refused)


def sc_learn_net(s, args):
    """A host the proxy refused becomes a question (or a refused event) of
    the block that asked for it, though the program still holds the
    connection (urllib's HTTPError keeps it open in the session's
    interpreter): the proxy's record of the refusal is sent as it answers,
    and read before the block is reported.  Before, it came only when the
    connection ended, after the block's report, and nothing was asked."""
    sid = s.open(learn=True, profile="netlearn")
    code = ("import urllib.request\n"
            "try:\n    urllib.request.urlopen('http://refused.invalid:8080/x')\n"
            "except Exception as e:\n    held = e\n    raise\n")
    err, confs, refused = learn_fail(s, sid, code)
    check("403" in err, "the proxy did not refuse it: %s" % err[-300:])
    asked = [c for c in confs if c.get("value") == "refused.invalid:8080"] + \
            [r for r in refused if r.get("value") == "refused.invalid:8080"]
    check(len(asked) == 1, "nothing asked about the host: %s %s" % (confs, refused))


def sc_learn_revoke(s, args):
    """revoke drops the session's widenings: the next block is refused again
    (a new jail), and the audit log has it."""
    data = os.environ["LEARN_DATA"]
    sid = s.open(learn=True)
    _, confs, _ = learn_fail(s, sid, learn_read(data + "/sales.csv"))
    mine = [c for c in confs if c.get("value") == data + "/sales.csv"]
    rid = s.send({"op": "widen", "session": sid, "ask": mine[0]["ask"], "answer": "yes"})
    check(s.wait_id(rid).get("granted") is True, "not granted")
    ok_result(s.run(sid, "python", learn_read(data + "/sales.csv"))[2], "widened")
    rid = s.send({"op": "revoke", "session": sid})
    ev = s.wait_id(rid)
    check(ev.get("event") == "revoked" and ev.get("done") is True, "revoke: %s" % ev)
    _, err, res, _ = s.run(sid, "python", learn_read(data + "/sales.csv"))
    check(res.get("exit_code") == 1 and "FileNotFoundError" in err and
          res.get("fresh_jail") is True, "revoked, still read: %s" % res)
    rec = [r for r in audit_records(args, "revoke") if r.get("session") == sid]
    check(len(rec) == 1 and rec[0]["widenings"] == ["read %s/sales.csv" % data],
          "the audit's revoke record: %s" % rec)


def sc_learn_off(s, args):
    """A session opened without "learn" asks nothing."""
    data = os.environ["LEARN_DATA"]
    sid = s.open()
    _, confs, refused = learn_fail(s, sid, learn_read(data + "/sales.csv"))
    check(not confs and not refused, "questions without learn: %s %s" % (confs, refused))


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
    if "--audit-log" in wargs:
        args["audit"] = wargs[wargs.index("--audit-log") + 1]
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
