#!/usr/bin/env python3
"""The Python client (clients/python, package warden_client) driving a
session and a chat, as a user's program would: for tests/cli/client.bats.

    client_check.py stdio|listen

Imports warden_client as installed (client.bats runs it with the python of
a venv that pip installed the package into).  Environment: WARDEN, WS, T,
WARDEN_TOP.  Exits 0 printing "ok TRANSPORT", 1 with the failed check.
"""
import json
import os
import re
import subprocess
import sys
import threading

import warden_client
from warden_client import Session, WardenError

WAIT = 60.0
T, WS, TOP = os.environ["T"], os.environ["WS"], os.environ["WARDEN_TOP"]
WARDEN = os.environ["WARDEN"]


class Fail(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)


def fake_model(script):
    path = os.path.join(T, "script.json")
    with open(path, "w") as f:
        json.dump(script, f)
    p = subprocess.Popen([sys.executable, os.path.join(TOP, "tests", "fakes", "llm_server.py"),
                          path, "--idle", "300"], stdout=subprocess.PIPE)
    return p, int(p.stdout.readline())


def main(transport):
    check(not warden_client.__file__.startswith(os.path.join(TOP, "clients")),
          "warden_client was imported from the source tree, not as installed: %s"
          % warden_client.__file__)
    fake, port = fake_model([
        {"text": "Running it.", "tool_call": {"language": "python", "code": "print('via', 6 * 7)"}},
        {"text": "It printed 42."},
        {"tool_call": {"language": "shell", "code": "echo second"}},
        {"text": "Declined, fine."}])
    args = ["--workspace", WS, "--model", "openai/fake",
            "--api-base", "http://127.0.0.1:%d/v1" % port]
    rt = os.path.join(T, "rt")
    os.makedirs(rt, mode=0o700, exist_ok=True)
    env = dict(os.environ, OPENAI_API_KEY="sk-client-test", XDG_RUNTIME_DIR=rt)
    srv = None
    try:
        if transport == "listen":
            srv = subprocess.Popen([WARDEN, "serve", "--listen", "127.0.0.1:0"] + args, env=env,
                                   stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)
            for raw in srv.stderr:
                m = re.search(rb"listening on (\S+):", raw)
                if m:
                    url = "ws://" + m.group(1).decode()
                    break
            threading.Thread(target=srv.stderr.read, daemon=True).start()
            os.environ["XDG_RUNTIME_DIR"] = rt     # the client's default token
            mk = lambda: Session(url=url, timeout=WAIT, workspace=WS)   # noqa: E731
        else:
            mk = lambda: Session(warden=WARDEN, args=args, env=env, timeout=WAIT)  # noqa: E731
        with mk() as s:
            # run: LMC chunks, then the result as the generator's value
            gen = s.run("import os\nx = 41\nprint('x+1 =', x + 1)", "python")
            chunks = []
            while True:
                try:
                    chunks.append(next(gen))
                except StopIteration as stop:
                    result = stop.value
                    break
            check(result["event"] == "result" and result["exit_code"] == 0, "result %s" % result)
            check(s.result is result, "s.result")
            check(any(c.get("start") for c in chunks) and any(c.get("end") for c in chunks),
                  "no console start/end")
            out, res = s.execute("print(x)", "python")
            check(out == "41\n", "state: %r" % out)
            # a large block crosses in one message (a 64-bit WebSocket length)
            big = "s = '" + "a" * 300000 + "'\nprint(len(s))"
            out, res = s.execute(big, "python")
            check(out == "300000\n", "a large block: %r" % out[:80])
            # an unknown language is the server's error, raised
            try:
                s.execute("x", "cobol")
                raise Fail("cobol ran")
            except WardenError as e:
                check("unknown language" in str(e), "the error: %s" % e)
            # interrupt a sleeping block from another thread
            def stop_it(s=s):
                for m in gen2:
                    if "sleeping" in str(m.get("content")):
                        check(s.interrupt(), "interrupt said nothing ran")
            gen2 = s.run("import time\nprint('sleeping', flush=True)\ntime.sleep(1000)", "python")
            t = threading.Thread(target=stop_it)
            t.start()
            t.join(WAIT)
            check(not t.is_alive(), "the interrupted block did not end")
            check(s.result["reason"] == "interrupted", "interrupt: %s" % s.result)
            # chat: approvals through the callback, then explicitly
            seen = []
            gen = s.chat("compute", approve=lambda m: seen.append(m) or True)
            msgs = list(gen)
            check(len(seen) == 1 and seen[0]["type"] == "confirmation", "confirmations %s" % seen)
            text = "".join(m.get("content", "") for m in msgs if m.get("type") == "message"
                           and isinstance(m.get("content"), str))
            check("Running it." in text and "It printed 42." in text, "text %r" % text)
            out = "".join(m.get("content", "") for m in msgs if m.get("format") == "output"
                          and isinstance(m.get("content"), str))
            check("via 42" in out, "the chat's block output %r" % out)
            gen = s.chat("and now")
            end = None
            while True:
                try:
                    m = next(gen)
                except StopIteration as stop:
                    end = stop.value
                    break
                if m.get("type") == "confirmation":
                    s.approve(False)
            check(end["reason"] == "declined", "declined turn: %s" % end)
    finally:
        if srv:
            srv.terminate()
            srv.wait(timeout=WAIT)
        fake.terminate()
        fake.wait()
    print("ok " + transport)


if __name__ == "__main__":
    try:
        main(sys.argv[1])
    except (Fail, WardenError, OSError) as e:
        print("FAIL: %s" % e, file=sys.stderr)
        sys.exit(1)
