#!/usr/bin/env python3
"""Drives the serve protocol's "chat" op for tests/cli/chat_api.bats, with
the fake model server (tests/fakes/llm_server.py) and the Python client.

    chat_api_client.py SCENARIO stdio|listen

Environment: WARDEN, WS (a workspace), T (a private directory),
WARDEN_AUDIT_LOG.  Exits 0 printing "ok SCENARIO TRANSPORT" when every
check held, 1 with the failed check on stderr.  Every wait is bounded.
"""
import json
import os
import re
import subprocess
import sys
import threading
import time

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(TOP, "clients", "python"))
from warden_client import Connection, Session, WardenError  # noqa: E402

WAIT = 60.0
T = os.environ["T"]
WS = os.environ["WS"]
WARDEN = os.environ.get("WARDEN") or os.path.join(TOP, "build", "warden")
AUDIT = os.environ.get("WARDEN_AUDIT_LOG")
KEY = "sk-warden-test-SECRET-4242"


class Fail(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)


class Fake:
    """The fake model server playing script (a list of responses)."""

    def __init__(self, script):
        self.dir = os.path.join(T, "fake%d" % time.monotonic_ns())
        os.makedirs(self.dir)
        with open(os.path.join(self.dir, "script.json"), "w") as f:
            json.dump(script, f)
        self.log = os.path.join(self.dir, "req.log")
        self.proc = subprocess.Popen([sys.executable, os.path.join(TOP, "tests", "fakes",
                                                                    "llm_server.py"),
                                      os.path.join(self.dir, "script.json"), "--log", self.log,
                                      "--idle", "300"], stdout=subprocess.PIPE)
        self.port = int(self.proc.stdout.readline())

    def requests(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return [json.loads(l) for l in f]

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


class Server:
    """warden serve over the transport, with the model; .session()."""

    def __init__(self, transport, fake, *extra):
        self.transport = transport
        self.args = ["--workspace", WS, "--model", "openai/fake",
                     "--api-base", "http://127.0.0.1:%d/v1" % fake.port] + list(extra)
        self.env = dict(os.environ, OPENAI_API_KEY=KEY, XDG_RUNTIME_DIR=os.path.join(T, "rt"))
        os.makedirs(self.env["XDG_RUNTIME_DIR"], mode=0o700, exist_ok=True)
        self.proc = None
        self.seen = []      # every event's text, as it came
        if transport == "listen":
            self.proc = subprocess.Popen([WARDEN, "serve", "--listen", "127.0.0.1:0"] + self.args,
                                         env=self.env, stdin=subprocess.DEVNULL,
                                         stderr=subprocess.PIPE)
            for raw in self.proc.stderr:
                m = re.search(rb"listening on (\S+):", raw)
                if m:
                    self.url = "ws://" + m.group(1).decode()
                    break
            threading.Thread(target=lambda: self.proc.stderr.read(), daemon=True).start()
            with open(os.path.join(self.env["XDG_RUNTIME_DIR"], "warden", "token")) as f:
                self.token = f.read().strip()

    def connection(self):
        if self.transport == "listen":
            c = Connection(url=self.url, token=self.token, timeout=WAIT)
        else:
            c = Connection(warden=WARDEN, args=self.args, env=self.env, timeout=WAIT)
        deliver = c._deliver

        def record(ev):
            self.seen.append(json.dumps(ev))
            deliver(ev)
        c._deliver = record
        return c

    def session(self):
        c = self.connection()
        return c, c.session(workspace=WS)

    def stop(self):
        if self.proc:
            self.proc.terminate()
            self.proc.wait(timeout=WAIT)
        check(not any(KEY in t for t in self.seen), "the API key crossed the API")


def audit_blocks():
    out = []
    if AUDIT and os.path.exists(AUDIT):
        with open(AUDIT) as f:
            for line in f:
                r = json.loads(line)
                if r.get("event") == "block":
                    out.append(r)
    return out


def turn(s, message, answer=None):
    """One chat turn: (every message, the turn_end event).  answer(msg) is
    called on a confirmation; its value is the approval."""
    msgs = []
    gen = s.chat(message, approve=answer)
    while True:
        try:
            msgs.append(next(gen))
        except StopIteration as stop:
            return msgs, stop.value


def text_of(msgs, role="assistant"):
    return "".join(m.get("content", "") for m in msgs if m.get("role") == role and
                   m.get("type") == "message" and isinstance(m.get("content"), str))


def console_of(msgs):
    return "".join(m.get("content", "") for m in msgs if m.get("type") == "console" and
                   m.get("format") == "output" and isinstance(m.get("content"), str))


# ---- scenarios -----------------------------------------------------------------------

def sc_approve(transport):
    """A turn with approval: the text streams, the code is confirmed, runs
    in the jail after "yes", its output goes back to the model, the answer
    streams, the turn ends "done"."""
    fake = Fake([{"text": "Let me check.",
                  "tool_call": {"language": "python",
                                "code": "st = open('/proc/self/status').read()\n"
                                        "print('nnp', st.split('NoNewPrivs:')[1].split()[0])\n"
                                        "open('approved.txt', 'w').write('ran\\n')\n"
                                        "print('product', 6 * 7)"}},
                 {"text": "The answer is 42."}])
    srv = Server(transport, fake)
    try:
        c, s = srv.session()
        confirmations = []
        msgs, end = turn(s, "what is 6 times 7?", lambda m: confirmations.append(m) or True)
        check(end["reason"] == "done", "turn_end: %s" % end)
        check(end.get("role") == "server" and end.get("type") == "status" and
              end.get("content") == "complete", "not Open Interpreter's end of turn: %s" % end)
        check(len(confirmations) == 1, "%d confirmations" % len(confirmations))
        cf = confirmations[0]
        check(cf["role"] == "computer" and cf["format"] == "execution" and
              cf["content"]["format"] == "python" and "product" in cf["content"]["content"],
              "the confirmation: %s" % cf)
        check("Let me check." in text_of(msgs) and "The answer is 42." in text_of(msgs),
              "the model's text: %r" % text_of(msgs))
        check(any(m.get("start") for m in msgs if m.get("type") == "message"),
              "no start of an assistant message")
        out = console_of(msgs)
        check("nnp 1" in out and "product 42" in out, "the block's output: %r" % out)
        with open(os.path.join(WS, "approved.txt")) as f:
            check(f.read() == "ran\n", "the jail's file")
        reqs = fake.requests()
        check(len(reqs) == 2, "%d model requests" % len(reqs))
        check("product 42" in json.dumps(reqs[1]["body"]), "the output did not reach the model")
        check("runs inside a jail" in json.dumps(reqs[0]["body"]), "no jail facts in the prompt")
        check(reqs[0]["headers"].get("authorization") == "Bearer " + KEY,
              "the model did not get the key from the environment")
        blocks = [b for b in audit_blocks() if b.get("session") == s.id]
        check(blocks and blocks[-1].get("approval") == "user",
              "the audit's approval: %s" % [b.get("approval") for b in blocks])
        # a second turn: the conversation goes on
        s.close()
        c.close()
    finally:
        srv.stop()
        fake.stop()


def sc_edit(transport):
    """An approval with edited code: the edited code runs, the audit says so."""
    fake = Fake([{"tool_call": {"language": "python", "code": "print('original')"}},
                 {"text": "Done."}])
    srv = Server(transport, fake)
    try:
        c, s = srv.session()
        msgs, end = turn(s, "go", lambda m: "print('edited', 2 + 3)")
        out = console_of(msgs)
        check("edited 5" in out and "original" not in out, "the output: %r" % out)
        check(end["reason"] == "done", "turn_end: %s" % end)
        body = json.dumps(fake.requests()[1]["body"])
        check("edited" in body, "the model was not told the edited code ran")
        blocks = [b for b in audit_blocks() if b.get("session") == s.id]
        check(blocks and blocks[-1].get("approval") == "edited",
              "the audit's approval: %s" % [b.get("approval") for b in blocks])
        s.close()
        c.close()
    finally:
        srv.stop()
        fake.stop()


def sc_decline(transport):
    """A declined block does not run; the turn ends "declined" and the
    model hears of it in the next turn."""
    fake = Fake([{"text": "I will write a file.",
                  "tool_call": {"language": "shell", "code": "touch declined.txt"}},
                 {"text": "Understood, nothing ran."}])
    srv = Server(transport, fake)
    try:
        c, s = srv.session()
        msgs, end = turn(s, "write a file", lambda m: False)
        check(end["reason"] == "declined", "turn_end: %s" % end)
        check(not os.path.exists(os.path.join(WS, "declined.txt")), "a declined block ran")
        check(not any(m.get("type") == "console" for m in msgs), "console output of a "
              "declined block")
        check(len(fake.requests()) == 1, "the model was asked again after a decline")
        check(not [b for b in audit_blocks() if b.get("session") == s.id],
              "a declined block reached the supervisor")
        msgs, end = turn(s, "ok, never mind")
        check(end["reason"] == "done", "the next turn: %s" % end)
        check("declined to run this code" in json.dumps(fake.requests()[1]["body"]),
              "the model was not told of the decline")
        s.close()
        c.close()
    finally:
        srv.stop()
        fake.stop()


def sc_autorun(transport):
    """-y at start: no confirmation, the block runs, the audit says auto."""
    fake = Fake([{"tool_call": {"language": "shell", "code": "echo auto $((6 * 7))"}},
                 {"text": "It printed 42."}])
    srv = Server(transport, fake, "-y")
    try:
        c, s = srv.session()
        msgs, end = turn(s, "go", lambda m: (_ for _ in ()).throw(Fail("asked under -y")))
        check(end["reason"] == "done", "turn_end: %s" % end)
        check(not any(m.get("type") == "confirmation" for m in msgs), "a confirmation under -y")
        check("auto 42" in console_of(msgs), "the output: %r" % console_of(msgs))
        blocks = [b for b in audit_blocks() if b.get("session") == s.id]
        check(blocks and blocks[-1].get("approval") == "auto",
              "the audit's approval: %s" % [b.get("approval") for b in blocks])
        s.close()
        c.close()
    finally:
        srv.stop()
        fake.stop()


def sc_interrupt(transport):
    """interrupt during a running block, and during the model's reply: the
    turn ends "interrupted", the model is not asked again, the session
    goes on."""
    fake = Fake([{"tool_call": {"language": "python",
                                "code": "import time\nprint('sleeping', flush=True)\n"
                                        "time.sleep(1000)"}},
                 {"text": "Thinking very slowly", "stall_ms": 300000, "chunk": 4},
                 {"text": "Still here."}])
    srv = Server(transport, fake, "-y")
    try:
        c, s = srv.session()
        def on_block(m):
            if m.get("type") == "console" and "sleeping" in str(m.get("content")):
                check(s.interrupt(), "interrupt: nothing ran")
        msgs, end = drive(s.chat("sleep"), on_block)
        check(end["reason"] == "interrupted", "block interrupted: turn_end %s" % end)
        res = [m for m in msgs if m.get("event") == "result"]
        check(res and res[-1]["reason"] == "interrupted", "the block's result: %s" % res)
        check(len(fake.requests()) == 1, "the model was asked again after an interrupt")

        # now the model's reply stalls after its first piece
        def on_reply(m):
            if m.get("type") == "message" and m.get("content"):
                check(s.interrupt(), "interrupt: no turn ran")
        msgs, end = drive(s.chat("think"), on_reply)
        check(end["reason"] == "interrupted", "reply interrupted: turn_end %s" % end)
        check(text_of(msgs).startswith("Thin"), "what streamed: %r" % text_of(msgs))
        # the session and the conversation go on
        msgs, end = turn(s, "again")
        check(end["reason"] == "done" and "Still here." in text_of(msgs), "after: %s" % end)
        s.close()
        c.close()
    finally:
        srv.stop()
        fake.stop()


def drive(gen, on_msg):
    """Every message of a turn, on_msg called on each: (messages, turn_end)."""
    msgs = []
    while True:
        try:
            m = next(gen)
        except StopIteration as stop:
            return msgs, stop.value
        msgs.append(m)
        on_msg(m)


def sc_key(transport):
    """The key never crosses the API: a provider error that echoes it is
    redacted; a request cannot name a model, an endpoint or a key."""
    fake = Fake([{"status": 401, "echo_key": True}])
    srv = Server(transport, fake)
    try:
        c, s = srv.session()
        msgs, end = turn(s, "hello")
        check(end["reason"] == "error", "turn_end: %s" % end)
        errs = [m for m in msgs if m.get("event") == "error"]
        check(errs and "401" in errs[0]["message"], "the error: %s" % errs)
        for field in ("api_key", "api_base", "model"):
            rid = c.request("chat", session=s.id, message="x", **{field: "http://evil/"})
            ev = c.next_event(rid)
            c.done(rid)
            check(ev.get("event") == "error" and "unknown field" in ev.get("message", ""),
                  "a chat with %s: %s" % (field, ev))
        s.close()
        c.close()
    finally:
        srv.stop()   # checks that no event held the key
        fake.stop()
    check(any("Bearer " + KEY == r["headers"].get("authorization") for r in fake.requests()),
          "the key did not reach the model")


def sc_nomodel(transport):
    """Without --model, chat is refused with the fix; run still works."""
    env = dict(os.environ, XDG_RUNTIME_DIR=os.path.join(T, "rt"))
    os.makedirs(env["XDG_RUNTIME_DIR"], mode=0o700, exist_ok=True)
    with Session(warden=WARDEN, args=["--workspace", WS], env=env, timeout=WAIT) as s:
        try:
            turn(s, "hello")
            raise Fail("a chat without a model")
        except WardenError as e:
            check("--model" in str(e), "the refusal: %s" % e)
        out, res = s.execute("print(1)", "python")
        check(out == "1\n", "run after the refusal: %r" % out)


SCENARIOS = {"approve": sc_approve, "edit": sc_edit, "decline": sc_decline,
             "autorun": sc_autorun, "interrupt": sc_interrupt, "key": sc_key,
             "nomodel": sc_nomodel}


def main():
    name, transport = sys.argv[1], sys.argv[2]
    try:
        SCENARIOS[name](transport)
    except (Fail, WardenError, OSError) as e:
        print("FAIL %s %s: %s" % (name, transport, e), file=sys.stderr)
        sys.exit(1)
    print("ok %s %s" % (name, transport))


if __name__ == "__main__":
    main()
