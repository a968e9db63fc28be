#!/usr/bin/env python3
"""Drives `warden mcp` for tests/cli/mcp.bats, as an MCP client of either
protocol era would (standard library only).

    mcp_client.py SCENARIO [WARDEN-MCP-OPTIONS...]

Runs $WARDEN mcp with the options, plays one scenario and exits 0 printing
"ok SCENARIO" when every check held, 1 with one line on stderr saying which
did not.  Every wait is bounded (WAIT seconds).  Every line warden writes on
stdout must be one JSON-RPC 2.0 object (or a batch's array) of valid UTF-8:
stdout carries nothing else.
"""
import base64
import json
import os
import queue
import struct
import subprocess
import sys
import threading
import time
import zlib

WAIT = 60.0
MODERN = "2026-07-28"


class Fail(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)


def meta():
    return {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "mcp_client.py", "version": "1"}}


class Mcp:
    def __init__(self, args):
        warden = os.environ.get("WARDEN") or os.path.join(
            os.path.dirname(__file__), "../../build/warden")
        self.proc = subprocess.Popen([warden, "mcp"] + list(args), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.q = queue.Queue()
        self.seen = []          # every message, in order
        self.backlog = []
        self.stderr = b""
        self.next_id = 1
        threading.Thread(target=self._read_out, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read_out(self):
        for raw in self.proc.stdout:
            try:
                text = raw.decode("utf-8", errors="strict")
                msg = json.loads(text)
                ok = text.endswith("\n") and (
                    (isinstance(msg, dict) and msg.get("jsonrpc") == "2.0") or
                    (isinstance(msg, list) and all(isinstance(m, dict) and
                                                   m.get("jsonrpc") == "2.0" for m in msg)))
                if not ok:
                    msg = {"_bad": text[:300]}
            except (UnicodeDecodeError, ValueError) as e:
                msg = {"_bad": repr(raw[:300]) + ": " + str(e)}
            self.q.put(msg)
        self.q.put(None)

    def _read_err(self):
        self.stderr = self.proc.stderr.read()

    def send_raw(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, obj):
        self.send_raw(json.dumps(obj).encode() + b"\n")

    def request(self, method, params=None, modern=False):
        rid = self.next_id
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if modern:
            params = dict(params or {}, _meta=meta())
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return rid

    def _next(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            raise Fail("timed out waiting for a message; stderr: %s" %
                       self.stderr.decode(errors="replace")[-500:])
        try:
            msg = self.q.get(timeout=left)
        except queue.Empty:
            raise Fail("timed out waiting for a message; stderr: %s" %
                       self.stderr.decode(errors="replace")[-500:])
        if msg is None:
            raise Fail("warden closed stdout; stderr: %s" %
                       self.stderr.decode(errors="replace")[-500:])
        check("_bad" not in msg, "stdout carried something that is not JSON-RPC: %s" %
              msg.get("_bad") if isinstance(msg, dict) else "")
        self.seen.append(msg)
        return msg

    def wait(self, pred, what, wait=WAIT):
        for i, m in enumerate(self.backlog):
            if pred(m):
                return self.backlog.pop(i)
        deadline = time.monotonic() + wait
        while True:
            m = self._next(deadline)
            if pred(m):
                return m
            self.backlog.append(m)

    def answer(self, rid, wait=WAIT):
        return self.wait(lambda m: isinstance(m, dict) and m.get("id") == rid,
                         "the answer to %r" % rid, wait)

    def call(self, method, params=None, modern=False):
        return self.answer(self.request(method, params, modern))

    def result(self, method, params=None, modern=False):
        m = self.call(method, params, modern)
        check("result" in m, "%s: %s" % (method, json.dumps(m)[:400]))
        r = m["result"]
        if modern:
            check(r.get("resultType") == "complete", "no resultType complete: %s" % r)
            info = r.get("_meta", {}).get("io.modelcontextprotocol/serverInfo", {})
            check(info.get("name") == "warden", "no serverInfo in _meta: %s" % r)
        else:
            check("resultType" not in r, "a legacy result with resultType: %s" % r)
        return r

    def run(self, code, language="python", session=None, modern=False, timeout=None):
        args = {"language": language, "code": code}
        if session:
            args["session"] = session
        if timeout:
            args["timeout"] = timeout
        return self.result("tools/call", {"name": "run_code", "arguments": args}, modern)

    def initialize(self, version="2025-11-25"):
        r = self.result("initialize", {"protocolVersion": version, "capabilities": {},
                                       "clientInfo": {"name": "mcp_client.py", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return r

    def close(self, wait=WAIT):
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise Fail("warden did not exit after stdin's EOF")


def text_of(r):
    return "".join(c.get("text", "") for c in r["content"][:-1] if c.get("type") == "text")


def sc(r):
    s = r.get("structuredContent")
    check(isinstance(s, dict), "no structuredContent: %s" % r)
    # the spec's advice: the same JSON in the last text block
    check(json.loads(r["content"][-1]["text"]) == s, "the last text block is not "
          "structuredContent: %s" % r["content"][-1])
    return s


# ---- scenarios ---------------------------------------------------------------

def s_legacy(m, ws):
    r = m.initialize("2025-11-25")
    check(r["protocolVersion"] == "2025-11-25", "negotiated %s" % r["protocolVersion"])
    check(r["serverInfo"]["name"] == "warden" and "tools" in r["capabilities"], r)
    # an older revision this server speaks is kept; an unknown one gets ours
    m2 = m.result("initialize", {"protocolVersion": "2024-11-05", "capabilities": {}})
    check(m2["protocolVersion"] == "2025-11-25", "2024-11-05 gave %s" % m2["protocolVersion"])
    m.initialize("2025-06-18")
    check(m.result("ping") == {}, "ping")
    tools = m.result("tools/list")["tools"]
    check([t["name"] for t in tools] == ["run_code", "open_session", "close_session"],
          "tools: %s" % [t["name"] for t in tools])
    desc = tools[0]["description"]
    for word in ("python", "Workspace " + ws, "Network: none", "wall time"):
        check(word in desc, "run_code's description lacks %r: %s" % (word, desc))
    check(tools[0]["inputSchema"]["required"] == ["language", "code"], tools[0])
    # the connection's session keeps state across calls
    a = m.run("x = 41")
    b = m.run("print(x + 1)")
    check(text_of(b) == "42\n", "state lost: %r" % text_of(b))
    check(sc(a)["session"] == sc(b)["session"], "two calls, two sessions")
    check(len(sc(a)["session"]) == 32, "a handle of %d chars" % len(sc(a)["session"]))
    check(b["isError"] is False and sc(b)["exit_code"] == 0, b)
    # an explicit handle: a session of its own, and back again
    h = sc(m.result("tools/call", {"name": "open_session", "arguments": {}}))["session"]
    check(h != sc(a)["session"], "open_session gave the connection's session")
    m.run("y = 5", session=h)
    check(text_of(m.run("print(y)", session=h)) == "5\n", "handle lost its state")
    r = m.run("print(y)")
    check(r["isError"] is True and "NameError" in text_of(r), "sessions share state: %s" % r)
    check(text_of(m.run("print(x)", session=sc(a)["session"])) == "41\n",
          "the connection's handle passed back")
    # an error result: the block's output, isError, its exit code
    r = m.run("print('before'); import sys; sys.exit(3)")
    check(r["isError"] is True and sc(r)["exit_code"] == 3 and "before" in text_of(r), r)
    r = m.run("echo hi", language="cobol")
    check(r["isError"] is True and "unknown language" in r["content"][0]["text"], r)
    r = m.result("tools/call", {"name": "close_session", "arguments": {"session": h}})
    check(sc(r)["closed"] is True, r)
    r = m.run("print(1)", session=h)
    check(r["isError"] is True and "unknown session" in r["content"][0]["text"], r)
    check(m.close() == 0, "exit status")


def s_modern(m, ws):
    d = m.result("server/discover", {}, modern=True)
    check(MODERN in d["supportedVersions"] and "2025-11-25" in d["supportedVersions"], d)
    check("tools" in d["capabilities"] and d["instructions"], d)
    check(d["ttlMs"] >= 0 and d["cacheScope"] in ("public", "private"), d)
    lst = m.result("tools/list", {}, modern=True)
    check(lst["ttlMs"] >= 0 and lst["cacheScope"] in ("public", "private"), lst)
    names = [t["name"] for t in lst["tools"]]
    check(names == ["run_code", "open_session", "close_session"], names)
    check(m.result("tools/list", {}, modern=True)["tools"] == lst["tools"], "order changed")
    # state: the handle carried back, and the connection's default
    a = m.run("x = 'kept'", modern=True)
    h = sc(a)["session"]
    check(text_of(m.run("print(x)", session=h, modern=True)) == "kept\n", "handle")
    check(text_of(m.run("print(x)", modern=True)) == "kept\n", "default session")
    o = sc(m.result("tools/call", {"name": "open_session", "arguments": {}}, modern=True))
    r = m.run("print(x)", session=o["session"], modern=True)
    check(r["isError"] is True and "NameError" in text_of(r), "fresh session has x")
    # long output: its head and its tail, and a note of what was left out
    r = m.run("print('<' + 'a' * 100000 + 'z' * 100000 + '>')", modern=True)
    t = text_of(r)
    check(t.startswith("<aaa") and t.endswith("zzz>\n") and "bytes of output left out" in t,
          "head and tail: %r ... %r" % (t[:60], t[-60:]))
    check(len(t) < 70000 and sc(r)["truncated"] is True and sc(r)["output_bytes"] == 200003,
          "truncation: %d chars, %s" % (len(t), sc(r)))
    r = m.run("throw new Error('boom')", language="javascript", modern=True)
    check(r["isError"] is True and "boom" in text_of(r), r)
    # legacy methods are not modern ones
    e = m.call("ping", {}, modern=True)
    check(e.get("error", {}).get("code") == -32601, "ping in the modern era: %s" % e)
    # a legacy request before initialize: told what to do
    e = m.call("tools/list", {})
    check(e.get("error", {}).get("code") == -32602 and "initialize" in e["error"]["message"], e)
    check(m.close() == 0, "exit status")


def png_code():
    # a 1x1 PNG made by hand in the jail, shown through _repr_png_
    return ("import struct, zlib\n"
            "def chunk(t, d):\n"
            "    c = struct.pack('>I', len(d)) + t + d\n"
            "    return c + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)\n"
            "png = (b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 1, 1, 8, 2, 0, 0, 0))\n"
            "       + chunk(b'IDAT', zlib.compress(b'\\x00\\xff\\x00\\x00')) + chunk(b'IEND', b''))\n"
            "class Img:\n"
            "    def _repr_png_(self):\n"
            "        return png\n"
            "print('text too')\n"
            "Img()\n")


def s_image(m, ws):
    for modern in (False, True):
        if not modern:
            m.initialize()
        r = m.run(png_code(), modern=modern)
        check(r["isError"] is False, r)
        imgs = [c for c in r["content"] if c.get("type") == "image"]
        check(len(imgs) == 1 and imgs[0]["mimeType"] == "image/png", r["content"])
        data = base64.b64decode(imgs[0]["data"], validate=True)
        check(data.startswith(b"\x89PNG\r\n\x1a\n") and b"IEND" in data, data[:40])
        check("text too" in text_of(r) and sc(r)["images"] == 1, r)
    check(m.close() == 0, "exit status")


def wait_file(path):
    deadline = time.monotonic() + WAIT
    while not os.path.exists(path):
        check(time.monotonic() < deadline, "the block never started (%s)" % path)
        time.sleep(0.05)


def s_cancel(m, ws):
    for modern in (False, True):
        tag = "modern" if modern else "legacy"
        if not modern:
            m.initialize()
        m.run("kept = '%s'" % tag, modern=modern)
        marker = os.path.join(ws, "started-" + tag)
        rid = m.request("tools/call", {"name": "run_code", "arguments": {
            "language": "python",
            "code": "import time\nopen(%r, 'w').close()\ntime.sleep(300)" % marker}},
            modern=modern)
        wait_file(marker)
        m.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": rid, "reason": "test"}})
        # the session goes on with its state (a 300 s block would hold it)
        r = m.run("print(kept)", modern=modern)
        check(text_of(r) == tag + "\n", "state after a cancel: %r" % text_of(r))
        check(m.result("ping") == {} if not modern else True, "ping")
        check(all(not (isinstance(x, dict) and x.get("id") == rid) for x in m.seen),
              "the cancelled call was answered")
    # a timeout: interrupted, answered, state kept
    r = m.run("import time\ntime.sleep(300)", timeout=0.5)
    s = sc(r)
    check(r["isError"] is True and s["timed_out"] is True and s["reason"] == "interrupted", r)
    check(text_of(m.run("print(kept)")) == "modern\n", "state after a timeout")
    check(m.close() == 0, "exit status")


def s_malformed(m, ws):
    def err(line, code, with_id=None):
        m.send_raw(line + b"\n")
        e = m.wait(lambda x: isinstance(x, dict) and "error" in x and x.get("id") == with_id,
                   "an error for %r" % line)
        check(e["error"]["code"] == code, "%r gave %s" % (line, e))
        check(with_id is not None or "id" not in e, "an id for an unreadable request: %s" % e)
    err(b"not json", -32700)
    err(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"", -32700)
    err(b"{'jsonrpc':'2.0'}", -32700)
    err(b"{\"jsonrpc\":\"2.0\",\"id\":NaN,\"method\":\"ping\"}", -32700)
    err(b"[]", -32600)
    err(b"42", -32600)
    err(b"[{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}]", -32600)  # no batch before 2025-03-26
    err(b"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", -32600)
    err(b"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", -32600)
    err(b"{\"jsonrpc\":\"1.0\",\"id\":2,\"method\":\"ping\"}", -32600, 2)
    err(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",\"extra\":1}", -32600, 3)
    err(b"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"nope\"}", -32601, 4)
    err(b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\",\"params\":[1]}", -32600, 5)
    err(b"{\"jsonrpc\":\"2.0\",\"id\":\"s\\u0000\",\"method\":\"ping\"}", -32600)
    m.send_raw(b"x" * (2 * 1024 * 1024 + 10) + b"\n")
    e = m.wait(lambda x: isinstance(x, dict) and "error" in x and "longer" in x["error"]["message"],
               "the long line's error")
    check(e["error"]["code"] == -32700, e)
    # a malformed notification is never answered; then the server goes on
    m.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": None}})
    m.initialize("2025-03-26")
    # tools/call's arguments against their schema
    mk = lambda a: {"name": "run_code", "arguments": a}
    for args, what in (({"code": "1"}, "language"), ({"language": "python"}, "code"),
                       ({"language": "python", "code": 1}, "string"),
                       ({"language": "python", "code": "1", "bogus": 1}, "bogus"),
                       ({"language": "python", "code": "1", "timeout": -1}, "timeout")):
        e = m.call("tools/call", mk(args))
        check(e.get("error", {}).get("code") == -32602 and what in e["error"]["message"],
              "%s: %s" % (args, e))
    e = m.call("tools/call", {"name": "rm_rf", "arguments": {}})
    check(e["error"]["code"] == -32602 and "Unknown tool" in e["error"]["message"], e)
    # 2025-03-26's batches: one array of answers, notifications unanswered
    m.send([{"jsonrpc": "2.0", "id": "b1", "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": "b2", "method": "tools/list"},
            {"jsonrpc": "2.0", "id": "b3", "method": "nope"}])
    b = m.wait(lambda x: isinstance(x, list), "the batch's answers")
    check(sorted(a["id"] for a in b) == ["b1", "b2", "b3"], b)
    check(next(a for a in b if a["id"] == "b3")["error"]["code"] == -32601, b)
    r = m.run("print('still here')")
    check(text_of(r) == "still here\n", r)
    check(m.close() == 0, "exit status")


def s_version(m, ws):
    def modern_err(version, caps=True):
        md = {"io.modelcontextprotocol/protocolVersion": version}
        if caps:
            md["io.modelcontextprotocol/clientCapabilities"] = {}
        return m.call("tools/list", {"_meta": md})
    e = modern_err("1900-01-01")
    check(e["error"]["code"] == -32022, e)
    check(e["error"]["data"]["requested"] == "1900-01-01", e)
    check(MODERN in e["error"]["data"]["supported"], e)
    e = modern_err("2025-11-25")   # a legacy version begins with initialize
    check(e["error"]["code"] == -32022, e)
    e = modern_err(MODERN, caps=False)
    check(e["error"]["code"] == -32602 and "clientCapabilities" in e["error"]["message"], e)
    e = m.call("server/discover", {"_meta": {"io.modelcontextprotocol/protocolVersion": 7,
                                             "io.modelcontextprotocol/clientCapabilities": {}}})
    check(e["error"]["code"] == -32602, e)
    check(m.result("server/discover", {}, modern=True)["supportedVersions"][0] == MODERN, "")
    check(m.close() == 0, "exit status")


def descendants(pid):
    """Processes below pid, as (pid, starttime) so a reused pid is told apart."""
    kids = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % p) as f:
                st = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        kids.setdefault(int(st[1]), []).append((int(p), st[19]))
    out, todo = [], [pid]
    while todo:
        for c in kids.get(todo.pop(), []):
            out.append(c)
            todo.append(c[0])
    return out


def alive(p):
    try:
        with open("/proc/%d/stat" % p[0]) as f:
            st = f.read().rsplit(")", 1)[1].split()
        return st[19] == p[1] and st[0] != "Z"
    except OSError:
        return False


def s_eof(m, ws):
    m.initialize()
    h = sc(m.result("tools/call", {"name": "open_session", "arguments": {}}))["session"]
    m.run("x = 1", session=h)
    m.run("echo ready", language="shell")
    marker = os.path.join(ws, "started-eof")
    m.request("tools/call", {"name": "run_code", "arguments": {
        "language": "python",
        "code": "import time\nopen(%r, 'w').close()\ntime.sleep(300)" % marker}})
    wait_file(marker)
    procs = descendants(m.proc.pid)
    drivers = [p for p in procs if b"persistent" in open("/proc/%d/cmdline" % p[0], "rb").read()]
    check(len(drivers) >= 3, "expected three drivers (two python, one shell) below warden: %s"
          % procs)
    rc = m.close()
    check(rc == 0, "exit status %d after EOF" % rc)
    left = [p for p in procs if alive(p)]
    check(not left, "processes of warden's jails outlived it: %s" % left)
    check(all(not (isinstance(x, dict) and "result" in x and x.get("id") == 5) for x in m.seen),
          "a call was answered after EOF")


# ---- learning servers (issue 23): the person is asked, never the model ------
# `warden mcp --learn --allow-workspace LEARN_DATA`: LEARN_DATA holds
# sales.csv, outside the workspace; AUDIT the audit log.

def learn_code():
    return "print(open(%r).read())" % (os.environ["LEARN_DATA"] + "/sales.csv")


def widen_records():
    with open(os.environ["AUDIT"]) as f:
        return [r for r in map(json.loads, filter(str.strip, f)) if r.get("event") == "widen"]


def legacy_init(m, elicit):
    caps = {"elicitation": {}} if elicit else {}
    r = m.result("initialize", {"protocolVersion": "2025-11-25", "capabilities": caps,
                                "clientInfo": {"name": "mcp_client.py", "version": "1"}})
    m.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return r


def check_asked(params, value):
    props = params["requestedSchema"]["properties"]
    check(list(props) == ["allow_1"] and props["allow_1"]["type"] == "boolean" and
          props["allow_1"]["title"] == "read " + value and
          props["allow_1"]["default"] is False, "the form: %s" % params)
    check(value in params["message"], "the message does not name %s: %s" % (value, params))


def s_learn_elicit(m, ws):
    """A legacy client that declared elicitation: warden asks it
    (elicitation/create), the call waits; accept: the session is widened
    and the block's second run answers the call."""
    value = os.environ["LEARN_DATA"] + "/sales.csv"
    legacy_init(m, True)
    rid = m.request("tools/call", {"name": "run_code", "arguments": {"language": "python",
                                                                     "code": learn_code()}})
    q = m.wait(lambda x: isinstance(x, dict) and x.get("method") == "elicitation/create",
               "the elicitation request")
    check("mode" not in q["params"], "a legacy request with mode: %s" % q)
    check_asked(q["params"], value)
    check(not [x for x in m.seen if isinstance(x, dict) and x.get("id") == rid],
          "the call was answered before the person")
    m.send({"jsonrpc": "2.0", "id": q["id"], "result": {"action": "accept",
                                                        "content": {"allow_1": True}}})
    r = m.answer(rid)["result"]
    check(r["isError"] is False and "region,total" in text_of(r), "the second run: %s" % r)
    check("the person allowed the code to read " + value in r["content"][0]["text"],
          "the note: %s" % r["content"][0])
    rec = widen_records()
    check(len(rec) == 1 and rec[0]["granted"] is True and rec[0]["by"] == "mcp elicitation",
          "the audit: %s" % rec)
    check(m.close() == 0, "exit status")


def s_learn_decline(m, ws):
    """decline: the call gets the first run's result, nothing is widened."""
    legacy_init(m, True)
    rid = m.request("tools/call", {"name": "run_code", "arguments": {"language": "python",
                                                                     "code": learn_code()}})
    q = m.wait(lambda x: isinstance(x, dict) and x.get("method") == "elicitation/create",
               "the elicitation request")
    m.send({"jsonrpc": "2.0", "id": q["id"], "result": {"action": "decline"}})
    r = m.answer(rid)["result"]
    check(r["isError"] is True and "FileNotFoundError" in text_of(r), "the result: %s" % r)
    check("did not allow" in r["content"][-2]["text"], "no note: %s" % r["content"][-2])
    sc(r)
    check(not widen_records(), "declined, yet widened")
    check(m.close() == 0, "exit status")


def no_way_for_the_model(text):
    """What a client that cannot elicit shows the model: the refusal and
    who can allow it, and no tool or argument to approve it."""
    check("Only a person can allow it" in text and "elicitation" in text, text)
    for word in ("run_code", "open_session", "\"allow", "answer", "approve"):
        check(word not in text, "the model is shown a way to approve (%r): %s" % (word, text))


def s_learn_plain(m, ws):
    """A legacy client that cannot elicit: no request reaches it; the result
    says what was refused and that only a person can allow it."""
    legacy_init(m, False)
    r = m.run(learn_code())
    check(r["isError"] is True, r)
    check(not [x for x in m.seen if isinstance(x, dict) and "method" in x],
          "a request to a client that cannot elicit")
    no_way_for_the_model(r["content"][-2]["text"])
    sc(r)
    check(not widen_records(), "widened without a person")
    check(m.close() == 0, "exit status")


def s_learn_modern(m, ws):
    """2026-07-28: an input_required result asks; the retry carries the
    answer; the requestState is used once and bound to the code."""
    value = os.environ["LEARN_DATA"] + "/sales.csv"
    mt = dict(meta())
    mt["io.modelcontextprotocol/clientCapabilities"] = {"elicitation": {"form": {}}}
    args = {"language": "python", "code": learn_code()}

    def call(extra):
        rid = m.next_id
        m.next_id += 1
        m.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                "params": dict({"_meta": mt, "name": "run_code", "arguments": args}, **extra)})
        return m.answer(rid)

    r = call({})["result"]
    check(r.get("resultType") == "input_required" and "content" not in r, "first: %s" % r)
    req = r["inputRequests"]["warden_widen"]
    check(req["method"] == "elicitation/create" and req["params"]["mode"] == "form", req)
    check_asked(req["params"], value)
    state = r["requestState"]
    check(len(state) == 32, "requestState of %d characters" % len(state))
    # another code with this state: refused, and the state is not used up
    args["code"] = "print(2)"
    bad = call({"requestState": state, "inputResponses": {"warden_widen": {
        "action": "accept", "content": {"allow_1": True}}}})["result"]
    check(bad["isError"] is True and "requestState" in bad["content"][0]["text"], bad)
    args["code"] = learn_code()
    ok = call({"requestState": state, "inputResponses": {"warden_widen": {
        "action": "accept", "content": {"allow_1": True}}}})["result"]
    check(ok.get("resultType") == "complete" and ok["isError"] is False and
          "region,total" in text_of(ok), "the retry: %s" % ok)
    again = call({"requestState": state, "inputResponses": {"warden_widen": {
        "action": "accept", "content": {"allow_1": True}}}})["result"]
    check(again["isError"] is True and "requestState" in again["content"][0]["text"],
          "a requestState used twice: %s" % again)
    rec = widen_records()
    check(len(rec) == 1 and rec[0]["granted"] is True and rec[0]["by"] == "mcp elicitation",
          "the audit: %s" % rec)
    check(m.close() == 0, "exit status")


def s_learn_modern_plain(m, ws):
    """2026-07-28 without the elicitation capability: a complete result
    with the refusals; no input_required."""
    r = m.run(learn_code(), modern=True)
    check(r["isError"] is True, r)
    no_way_for_the_model(r["content"][-2]["text"])
    sc(r)
    check(not widen_records(), "widened without a person")
    check(m.close() == 0, "exit status")


SCENARIOS = {"legacy": s_legacy, "modern": s_modern, "image": s_image, "cancel": s_cancel,
             "malformed": s_malformed, "version": s_version, "eof": s_eof,
             "learn_elicit": s_learn_elicit, "learn_decline": s_learn_decline,
             "learn_plain": s_learn_plain, "learn_modern": s_learn_modern,
             "learn_modern_plain": s_learn_modern_plain}


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in SCENARIOS:
        print("usage: mcp_client.py {%s} [warden mcp options]" % "|".join(SCENARIOS),
              file=sys.stderr)
        return 2
    args = sys.argv[2:]
    ws = args[args.index("--workspace") + 1] if "--workspace" in args else os.getcwd()
    m = Mcp(args)
    try:
        SCENARIOS[sys.argv[1]](m, ws)
    except Fail as e:
        print("FAIL %s: %s" % (sys.argv[1], e), file=sys.stderr)
        print("stderr of warden: %s" % m.stderr.decode(errors="replace")[-800:], file=sys.stderr)
        m.proc.kill()
        return 1
    finally:
        if m.proc.poll() is None:
            try:
                m.proc.stdin.close()
            except OSError:
                pass
            try:
                m.proc.wait(timeout=WAIT)
            except subprocess.TimeoutExpired:
                m.proc.kill()
    print("ok %s" % sys.argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
