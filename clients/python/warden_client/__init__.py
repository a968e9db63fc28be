"""A client of warden's serve protocol (docs/serve.md): sessions whose code
runs in warden's jails, over stdio or over a listener.  Standard library
only: the WebSocket framing is in _ws.py.

    from warden_client import Session

    # starts `warden serve --stdio` (WARDEN or PATH's warden), one session
    with Session(workspace="/tmp/ws") as s:
        for chunk in s.run("print(6 * 7)", "python"):
            print(chunk)                  # LMC messages: console output, images...
        print(s.result["exit_code"])      # the block's result event

    # a listener: `warden serve --listen 127.0.0.1:8765`
    with Session(url="ws://127.0.0.1:8765", token=open(TOKEN_FILE).read().strip()) as s:
        for msg in s.chat("plot sin(x)"):  # needs serve --model
            if msg.get("type") == "confirmation":
                s.approve(True)           # or False, or code="edited code"

Several sessions can share one connection: Connection(...).session().
Every wait is bounded by the connection's timeout (seconds, default none).
"""
import itertools
import json
import os
import queue
import shutil
import subprocess
import threading

from ._ws import HandshakeError, WebSocket

__all__ = ["Connection", "Session", "WardenError", "HandshakeError", "default_token"]


class WardenError(Exception):
    """An error event of the protocol (event["message"]), or a lost server."""

    def __init__(self, message, event=None):
        super().__init__(message)
        self.event = event or {}


def default_token():
    """The token a listener started without --token-file made:
    $XDG_RUNTIME_DIR/warden/token."""
    rt = os.environ.get("XDG_RUNTIME_DIR")
    if not rt:
        raise WardenError("no token given and XDG_RUNTIME_DIR is not set")
    with open(os.path.join(rt, "warden", "token")) as f:
        return f.read().strip()


_END = object()


class Connection:
    """One transport to warden: stdio (a `warden serve --stdio` child of
    ours) or a listener's /ws.  Requests get ids; each id's events are
    delivered to whoever waits for them."""

    def __init__(self, url=None, token=None, warden=None, args=(), env=None, timeout=None,
                 cafile=None, insecure=False):
        self.timeout = timeout
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._queues = {}           # id -> Queue of events
        self._orphans = queue.Queue()   # events with "id": null
        self._closed = False
        self.proc = None
        self.ws = None
        if url is None:
            exe = warden or os.environ.get("WARDEN") or shutil.which("warden")
            if not exe:
                raise WardenError("warden is not on PATH: pass warden=PATH or set WARDEN")
            self.proc = subprocess.Popen([exe, "serve", "--stdio"] + list(args),
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         env=env)
            self._send_raw = self._send_stdio
        else:
            if token is None:
                token = default_token()
            self.ws = WebSocket.connect(url, headers={"Authorization": "Bearer " + token},
                                        cafile=cafile, insecure=insecure)
            self._send_raw = self.ws.send_text
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    # ---- the wire ----
    def _send_stdio(self, text):
        self.proc.stdin.write(text.encode("utf-8") + b"\n")
        self.proc.stdin.flush()

    def _read(self):
        try:
            while True:
                if self.proc:
                    line = self.proc.stdout.readline()
                    if not line:
                        break
                    text = line.decode("utf-8")
                else:
                    text = self.ws.recv_text()
                    if text is None:
                        break
                self._deliver(json.loads(text))
        finally:
            with self._lock:
                self._closed = True
                qs = list(self._queues.values())
            for q in qs + [self._orphans]:
                q.put(_END)

    def _deliver(self, ev):
        rid = ev.get("id")
        with self._lock:
            q = self._queues.get(rid) if rid is not None else None
        (q or self._orphans).put(ev)

    def request(self, op, **fields):
        """Send one request; its id (its events come from events(id))."""
        rid = next(self._ids)
        msg = {"id": rid, "op": op}
        msg.update({k: v for k, v in fields.items() if v is not None})
        with self._lock:
            if self._closed:
                raise WardenError("the connection to warden is closed")
            self._queues[rid] = queue.Queue()
        self._send_raw(json.dumps(msg))
        return rid

    def next_event(self, rid):
        """The request's next event; WardenError when the server is gone."""
        with self._lock:
            q = self._queues[rid]
        try:
            ev = q.get(timeout=self.timeout)
        except queue.Empty:
            raise WardenError("no answer from warden in %s s" % self.timeout)
        if ev is _END:
            q.put(_END)
            raise WardenError("the connection to warden ended")
        return ev

    def done(self, rid):
        with self._lock:
            self._queues.pop(rid, None)

    def call(self, op, want, **fields):
        """A request answered by one event named want (or error)."""
        rid = self.request(op, **fields)
        try:
            while True:
                ev = self.next_event(rid)
                if ev.get("event") == "error":
                    raise WardenError(ev.get("message", "error"), ev)
                if ev.get("event") == want:
                    return ev
        finally:
            self.done(rid)

    def orphan_events(self):
        """Events that belong to no request (sessions closed by the server,
        ended for idleness, ...), as they came; drained, not waited for."""
        out = []
        while True:
            try:
                ev = self._orphans.get_nowait()
            except queue.Empty:
                return out
            if ev is not _END:
                out.append(ev)

    # ---- what the protocol offers ----
    def languages(self):
        return self.call("languages", "languages")["languages"]

    def session(self, profile=None, workspace=None, oneshot=None):
        opened = self.call("open", "opened", profile=profile, workspace=workspace,
                           oneshot=oneshot)
        return Session(connection=self, opened=opened)

    def close(self):
        if self.proc:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=self.timeout or 60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc.stdout.close()
        if self.ws:
            self.ws.close()
        self._reader.join(timeout=5)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Session:
    """One session: a jail per language, kept across blocks.  Made over its
    own connection (url/token or stdio) unless connection= is given."""

    def __init__(self, url=None, token=None, profile=None, workspace=None, oneshot=None,
                 warden=None, args=(), env=None, timeout=None, connection=None, opened=None,
                 cafile=None, insecure=False):
        self._own = connection is None
        self.conn = connection or Connection(url=url, token=token, warden=warden, args=args,
                                             env=env, timeout=timeout, cafile=cafile,
                                             insecure=insecure)
        try:
            if opened is None:
                opened = self.conn.call("open", "opened", profile=profile,
                                        workspace=workspace, oneshot=oneshot)
        except Exception:
            if self._own:
                self.conn.close()
            raise
        self.opened = opened
        self.id = opened["session"]
        self.result = None
        self._pending = None        # a confirmation waiting for approve()
        self._answered = False

    # ---- code ----
    def run(self, code, language="python"):
        """Yields the block's LMC messages (console output, active lines,
        images, audit events); returns its result event, also kept in
        self.result.  An error event raises WardenError."""
        rid = self.conn.request("run", session=self.id, language=language, code=code)
        try:
            while True:
                ev = self.conn.next_event(rid)
                name = ev.get("event")
                if name == "result":
                    self.result = ev
                    return ev
                if name == "error":
                    raise WardenError(ev.get("message", "error"), ev)
                yield ev
        finally:
            self.conn.done(rid)

    def execute(self, code, language="python"):
        """Runs a block to its end: (stdout + stderr text, result event)."""
        out = []
        gen = self.run(code, language)
        while True:
            try:
                ev = next(gen)
            except StopIteration as stop:
                return "".join(out), stop.value
            if ev.get("type") == "console" and ev.get("format") == "output" \
                    and "content" in ev:
                out.append(ev["content"])

    def interrupt(self):
        """Interrupts the running block or chat turn; True when one ran."""
        return self.conn.call("interrupt", "ok", session=self.id)["running"]

    # ---- chat ----
    def chat(self, message, approve=None):
        """Yields the turn's LMC messages: the assistant's text (start,
        content pieces, end) and code, confirmations, console output,
        images, results, errors; returns the turn_end event.

        A confirmation waits for an answer, given by approve(msg) when
        passed (True, False or the edited code), or by self.approve(...)
        before the next iteration, or by gen.send(answer); with none of
        them the block is declined.  A refused request raises WardenError."""
        rid = self.conn.request("chat", session=self.id, message=message)
        last_error = None
        try:
            while True:
                ev = self.conn.next_event(rid)
                name = ev.get("event")
                if name == "turn_end":
                    if ev.get("reason") == "refused":
                        raise WardenError(last_error or "the chat was refused", ev)
                    return ev
                if name == "error":
                    last_error = ev.get("message")
                    if ev.get("session") is None:     # the request itself was wrong
                        raise WardenError(last_error or "error", ev)
                if ev.get("type") != "confirmation":
                    yield ev
                    continue
                self._pending = ev
                self._answered = False
                sent = yield ev
                if not self._answered:
                    answer = approve(ev) if approve else sent
                    self._approve(False if answer is None else answer)
        finally:
            self._pending = None
            self.conn.done(rid)

    def approve(self, yes=True, code=None):
        """Answers the confirmation the chat is waiting on: run it (yes),
        run this code instead (code=...), or not (False)."""
        self._approve(code if code is not None else yes)

    def _approve(self, answer):
        if self._pending is None or self._answered:
            raise WardenError("no confirmation is waiting for an answer")
        fields = {"answer": "no" if answer is False else "yes"}
        if isinstance(answer, str):
            fields["code"] = answer
        self._answered = True
        self.conn.call("approve", "approved", session=self.id, **fields)

    # ---- the end ----
    def close(self):
        try:
            self.conn.call("close", "closed", session=self.id)
        except WardenError:
            pass
        finally:
            if self._own:
                self.conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
