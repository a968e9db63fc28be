#!/usr/bin/env python3
"""Drives `warden serve --listen` for tests/cli/listen.bats.

    listen_client.py SCENARIO

Environment: WARDEN (the binary), WS (a workspace), T (a private temporary
directory), WARDEN_AUDIT_LOG (the audit log).  Starts warden itself, plays
one scenario through the Python client (clients/python) and raw sockets,
and exits 0 printing "ok SCENARIO" when every check held, 1 with one line
on stderr saying which did not.  Every wait is bounded.
"""
import json
import os
import re
import socket
import ssl
import subprocess
import sys
import threading
import time

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(TOP, "clients", "python"))
from warden_client import Connection, HandshakeError, Session, WardenError  # noqa: E402

WAIT = 60.0
T = os.environ["T"]
WS = os.environ["WS"]
WARDEN = os.environ.get("WARDEN") or os.path.join(TOP, "build", "warden")
AUDIT = os.environ.get("WARDEN_AUDIT_LOG")


class Fail(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)


def poll(pred, what, timeout=WAIT):
    """Polls pred until it is true (no fixed sleep stands for a condition)."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > deadline:
            raise Fail("timed out waiting for " + what)
        time.sleep(0.05)


class Server:
    """warden serve --listen ADDR ...; .url, .token once it listens."""

    def __init__(self, *args, addr="127.0.0.1:0", env=None, expect_fail=False):
        self.rt = os.path.join(T, "rt")
        os.makedirs(self.rt, mode=0o700, exist_ok=True)
        e = dict(os.environ, XDG_RUNTIME_DIR=self.rt)
        e.update(env or {})
        self.proc = subprocess.Popen([WARDEN, "serve", "--listen", addr, "--workspace", WS]
                                     + list(args), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e)
        self.err = []
        self.where = None
        lines = []
        deadline = time.monotonic() + WAIT
        for raw in self.proc.stderr:
            line = raw.decode(errors="replace")
            lines.append(line)
            m = re.search(r"listening on (TLS )?(\S+):", line)
            if m:
                self.where = m.group(2)
                break
            if time.monotonic() > deadline:
                break
        self.err = lines
        threading.Thread(target=self._drain, daemon=True).start()
        if expect_fail:
            return
        check(self.where, "warden did not say where it listens: %s" % "".join(lines))
        tls = "--tls-cert" in args
        if self.where.startswith("/"):
            self.url = "unix:" + self.where
        else:
            self.url = "%s://%s" % ("wss" if tls else "ws", self.where)
        tf = None
        for i, a in enumerate(args):
            if a == "--token-file":
                tf = args[i + 1]
        with open(tf or os.path.join(self.rt, "warden", "token")) as f:
            self.token = f.read().strip()

    def _drain(self):
        for raw in self.proc.stderr:
            self.err.append(raw.decode(errors="replace"))

    def host_port(self):
        h, _, p = self.where.rpartition(":")
        return h.strip("[]"), int(p)

    def broker_pid(self):
        """The broker: the child of warden whose program is warden-broker.
        warden says "listening on" before it starts the broker, and the
        broker names itself (comm) only once it runs: wait, by the program
        it runs (/proc/PID/exe), until it is there."""
        deadline = time.monotonic() + WAIT
        while True:
            with open("/proc/%d/task/%d/children" % (self.proc.pid, self.proc.pid)) as f:
                kids = [int(x) for x in f.read().split()]
            for k in kids:
                try:
                    if os.path.basename(os.readlink("/proc/%d/exe" % k)) == "warden-broker":
                        return k
                except OSError:
                    pass
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise Fail("no warden-broker child of warden %d" % self.proc.pid)
            time.sleep(0.02)

    def session(self, **kw):
        return Session(url=self.url, token=self.token, timeout=WAIT, workspace=WS, **kw)

    def connection(self):
        return Connection(url=self.url, token=self.token, timeout=WAIT)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            self.proc.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def exit_status(srv):
    """The status of a warden expected to stop by itself; one that keeps
    running is stopped (never left behind) and fails the check."""
    try:
        return srv.proc.wait(timeout=WAIT)
    except subprocess.TimeoutExpired:
        srv.stop()
        raise Fail("warden kept running: %s" % "".join(srv.err)[-300:])


def raw_request(srv, head, body=b""):
    """One HTTP/1.1 exchange on a fresh socket: (status, headers text, body)."""
    if srv.where.startswith("/"):
        s = socket.socket(socket.AF_UNIX)
        s.connect(srv.where)
    else:
        s = socket.create_connection(srv.host_port(), timeout=WAIT)
    s.settimeout(WAIT)
    s.sendall(head.encode() + body)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    s.close()
    head_txt = data.split(b"\r\n\r\n")[0].decode(errors="replace")
    m = re.match(r"HTTP/1\.[01] (\d+)", head_txt)
    return (int(m.group(1)) if m else 0), head_txt, data


def upgrade_head(path="/ws", auth=None):
    lines = ["GET %s HTTP/1.1" % path, "Host: localhost", "Upgrade: websocket",
             "Connection: Upgrade", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
             "Sec-WebSocket-Version: 13"]
    if auth is not None:
        lines.append("Authorization: " + auth)
    return "\r\n".join(lines) + "\r\n\r\n"


def audit_events(kind):
    if not AUDIT or not os.path.exists(AUDIT):
        return []
    out = []
    with open(AUDIT) as f:
        for line in f:
            r = json.loads(line)
            if r.get("event") == kind:
                out.append(r)
    return out


# ---- scenarios --------------------------------------------------------------------

def sc_auth():
    """No token, a wrong one, another scheme: 401 for the upgrade and for
    HTTP (a POST with a body too), before any session exists."""
    srv = Server()
    try:
        wrong = "Bearer " + ("0" * len(srv.token) if srv.token[0] != "0" else "1" * len(srv.token))
        cases = [
            ("upgrade without a token", upgrade_head(), b""),
            ("upgrade with a wrong token", upgrade_head(auth=wrong), b""),
            ("upgrade with the token one byte short",
             upgrade_head(auth="Bearer " + srv.token[:-1]), b""),
            ("upgrade with Basic", upgrade_head(auth="Basic " + srv.token), b""),
            ("upgrade with the token alone", upgrade_head(auth=srv.token), b""),
            ("GET /ws without a token", "GET /ws HTTP/1.1\r\nHost: x\r\n\r\n", b""),
            ("GET / with a wrong token", "GET / HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\n\r\n"
             % wrong, b""),
        ]
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize"}).encode()
        cases.append(("POST /mcp with a body, no token",
                      "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      "Content-Length: %d\r\n\r\n" % len(body), body))
        cases.append(("POST /mcp with a wrong token",
                      "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      "Authorization: %s\r\nContent-Length: %d\r\n\r\n" % (wrong, len(body)),
                      body))
        n0 = None
        for what, head, b in cases:
            status, hdrs, _ = raw_request(srv, head, b)
            if n0 is None:   # the server is up: what it opened itself is counted
                n0 = len(audit_events("session_open"))
            check(status == 401, "%s: HTTP %d, want 401 (%s)" % (what, status, hdrs[:200]))
            check("www-authenticate: bearer" in hdrs.lower(),
                  "%s: no WWW-Authenticate: Bearer" % what)
        # what is not HTTP, or asks lws for another protocol: hung up on or
        # refused, and the server goes on
        for what, head in (("a CONNECT", "CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: x\r\n"
                                          "Authorization: Bearer %s\r\n\r\n" % srv.token),
                           ("an h2c upgrade", "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: h2c\r\n"
                                              "Connection: Upgrade, HTTP2-Settings\r\n"
                                              "HTTP2-Settings: AAMAAABkAAQAAP__\r\n"
                                              "Authorization: Bearer %s\r\n\r\n" % srv.token),
                           ("bytes that are not HTTP", "\x16\x03\x01\x02\x00\x01\xff\r\n\r\n"),
                           ("an HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")):
            try:
                status, _, data = raw_request(srv, head)
            except OSError:
                status, data = 0, b""
            check(status not in (101, 200), "%s: HTTP %d" % (what, status))
            check(b"SSH" not in data, "%s reached another service" % what)
        # the client library sees the same
        try:
            Connection(url=srv.url, token="x" * len(srv.token), timeout=WAIT)
            raise Fail("a wrong token was let in")
        except HandshakeError as e:
            check(e.status == 401, "the client's wrong token: HTTP %d" % e.status)
        # nothing started: no session in the audit log, none in the broker
        check(len(audit_events("session_open")) == n0,
              "a session opened before any token was right")
        # and the right token opens the door
        with srv.session() as s:
            out, res = s.execute("print('in', 6 * 7)", "python")
            check(out == "in 42\n", "the block's output: %r" % out)
        check(len(audit_events("session_open")) == n0 + 1, "one session, the authorized one")
    finally:
        srv.stop()


def sc_run():
    """A run over /ws: the code runs in a jail (no_new_privs set)."""
    srv = Server()
    try:
        with srv.session() as s:
            chunks = []
            gen = s.run("st = open('/proc/self/status').read()\n"
                        "print('nnp', st.split('NoNewPrivs:')[1].split()[0])\n"
                        "open('made_over_ws.txt', 'w').write('hello\\n')", "python")
            for ev in gen:
                chunks.append(ev)
            res = s.result
            out = "".join(c.get("content", "") for c in chunks
                          if c.get("format") == "output" and "content" in c)
            check(res["exit_code"] == 0, "exit %r: %s" % (res["exit_code"], out))
            check("nnp 1" in out, "not in a jail: %r" % out)
            check(any(c.get("start") for c in chunks), "no console start message")
            check(any(c.get("end") for c in chunks), "no console end message")
            with open(os.path.join(WS, "made_over_ws.txt")) as f:
                check(f.read() == "hello\n", "the jail's file")
            # state is kept between blocks of the session
            out, res = s.execute("x = 5", "python")
            out, res = s.execute("print(x * 2)", "python")
            check(out == "10\n", "the session kept no state: %r" % out)
            # a message over 2 MiB is skipped, with an error; a binary one is
            # refused; the connection goes on
            c = s.conn
            c.ws.send_text(json.dumps({"id": 99, "op": "run", "session": s.id,
                                       "language": "python", "code": "#" * (2 << 20)}))
            c.ws._send_frame(0x2, b'{"id":98,"op":"languages"}')
            errs = []
            poll(lambda: errs.extend(c.orphan_events()) or len(errs) >= 2,
                 "the errors for a long and a binary message")
            check("longer than 2097152 bytes" in errs[0].get("message", ""), "long: %s" % errs)
            check("binary message" in errs[1].get("message", ""), "binary: %s" % errs)
            out, res = s.execute("print(x * 3)", "python")
            check(out == "15\n", "after the refused messages: %r" % out)
    finally:
        srv.stop()


def sc_isolation():
    """One client cannot see or touch another's sessions; a client that
    goes takes its sessions with it, the others' stay."""
    srv = Server()
    try:
        a = srv.connection()
        b = srv.connection()
        sa = a.session(workspace=WS)
        sb = b.session(workspace=WS)
        out, res = sa.execute("secret = 'A-only'", "python")
        for op, fields in (("run", dict(language="python", code="print(secret)")),
                           ("interrupt", {}), ("close", {}), ("chat", dict(message="hi")),
                           ("approve", dict(answer="yes"))):
            rid = b.request(op, session=sa.id, **fields)
            ev = b.next_event(rid)
            b.done(rid)
            check(ev.get("event") == "error", "B's %s on A's session: %s" % (op, ev))
            check("unknown session" in ev.get("message", ""),
                  "B's %s on A's session was not refused as unknown: %s" % (op, ev))
        # A's session is untouched
        out, res = sa.execute("print(secret)", "python")
        check(out == "A-only\n", "A's session after B's attempts: %r" % out)
        # B's events never carried A's session
        # B goes: its session ends, A's does not
        b.close()
        poll(lambda: any(r.get("session") == sb.id for r in audit_events("session_close")),
             "B's session to close with its connection")
        check(not any(r.get("session") == sa.id for r in audit_events("session_close")),
              "A's session closed with B's connection")
        out, res = sa.execute("print('still', secret)", "python")
        check(out == "still A-only\n", "A's session after B left: %r" % out)
        sa.close()
        a.close()
    finally:
        srv.stop()


def sc_many():
    """100 connections at once, each with a session of its own."""
    srv = Server("--pool", "0")
    errors = []
    conns = []
    lock = threading.Lock()
    try:
        def one(i):
            try:
                c = srv.connection()
                s = c.session(workspace=WS)
                langs = c.languages()
                check(any(l["name"] == "python" for l in langs), "no python")
                with lock:
                    conns.append((c, s))
            except Exception as e:   # noqa: BLE001 - collected and reported below
                with lock:
                    errors.append("%d: %s" % (i, e))
        ths = [threading.Thread(target=one, args=(i,)) for i in range(100)]
        for t in ths:
            t.start()
        for t in ths:
            t.join(WAIT * 2)
        check(not errors, "%d of 100 connections failed: %s" % (len(errors), errors[:3]))
        check(len(conns) == 100, "%d connections of 100" % len(conns))
        ids = {s.id for _, s in conns}
        check(len(ids) == 100, "%d distinct sessions of 100" % len(ids))
        opened = {r.get("session") for r in audit_events("session_open")}
        check(ids <= opened, "%d of the 100 sessions are in the audit log" % len(ids & opened))
        # all 100 open at once, a block runs in one of them
        out, res = conns[57][1].execute("echo fifty-seven", "shell")
        check(out == "fifty-seven\n", "a block among 100 connections: %r" % out)
        for c, s in conns:
            s.close()
            c.close()
    finally:
        srv.stop()


def sc_max_sessions():
    """--max-sessions holds across clients."""
    srv = Server("--max-sessions", "2", "--pool", "0")
    try:
        a, b, c = srv.connection(), srv.connection(), srv.connection()
        a.session(workspace=WS)
        b.session(workspace=WS)
        try:
            c.session(workspace=WS)
            raise Fail("a third session opened under --max-sessions 2")
        except WardenError as e:
            check("session" in str(e), "the refusal: %s" % e)
        for x in (a, b, c):
            x.close()
    finally:
        srv.stop()


def sc_disconnect():
    """A connection dropped while its block runs: the block's jail ends."""
    srv = Server()
    try:
        c = srv.connection()
        s = c.session(workspace=WS)
        marker = os.path.join(WS, "started")
        rid = c.request("run", session=s.id, language="shell",
                        code="touch started; exec sleep 1000")
        poll(lambda: os.path.exists(marker), "the block to start")
        pids = poll(lambda: [p for p in os.listdir("/proc") if p.isdigit() and
                             _cmdline(p) == "sleep 1000"], "the jail's sleep on the host")
        c.ws.sock.shutdown(socket.SHUT_RDWR)   # gone, without a word
        c.close()
        poll(lambda: not any(os.path.exists("/proc/%s" % p) and _cmdline(p) == "sleep 1000"
                             for p in pids), "the jail's process to end with its client")
        poll(lambda: any(r.get("session") == s.id for r in audit_events("session_close")),
             "the session to close")
        del rid
    finally:
        srv.stop()


def _cmdline(pid):
    try:
        with open("/proc/%s/cmdline" % pid, "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def sc_idle():
    """--session-idle: a session nobody uses ends, its client is told."""
    srv = Server("--session-idle", "1")
    try:
        c = srv.connection()
        s = c.session(workspace=WS)
        out, res = s.execute("print(1)", "python")
        # the server ends it; its events have "id": null
        evs = []
        poll(lambda: evs.extend(c.orphan_events()) or
             any(e.get("event") == "closed" and e.get("session") == s.id for e in evs),
             "the idle session to close")
        check(any(e.get("event") == "idle" and e.get("session") == s.id for e in evs),
              "no idle event before closed: %s" % evs)
        rid = c.request("run", session=s.id, language="python", code="print(2)")
        ev = c.next_event(rid)
        check(ev.get("event") == "error" and "unknown session" in ev.get("message", ""),
              "the idle session still runs code: %s" % ev)
        c.close()
    finally:
        srv.stop()


def sc_nonloopback():
    """A non-loopback address without TLS is refused at start, with the
    reason; nothing listens."""
    for addr in ("0.0.0.0:0", "[::]:0"):
        srv = Server(addr=addr, expect_fail=True)
        rc = exit_status(srv)
        err = "".join(srv.err)
        check(rc != 0, "--listen %s without TLS: exit 0" % addr)
        check("not a loopback address" in err and "--tls-cert" in err,
              "--listen %s: the reason: %s" % (addr, err))
        check(srv.where is None, "--listen %s: it listened" % addr)


def sc_tls():
    """With a certificate, a non-loopback address serves wss:// (and the
    client checks the certificate)."""
    cert, key = os.path.join(T, "cert.pem"), os.path.join(T, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", key, "-out", cert], check=True, capture_output=True)
    os.chmod(key, 0o600)
    srv = Server("--tls-cert", cert, "--tls-key", key, addr="0.0.0.0:0")
    try:
        _, port = srv.host_port()
        url = "wss://127.0.0.1:%d" % port
        # plain HTTP on the TLS port gets nothing
        try:
            status, _, _ = raw_request(srv, "GET /ws HTTP/1.1\r\nHost: x\r\n\r\n")
        except OSError:
            status = 0
        check(status != 200 and status != 101, "plain HTTP on the TLS port: %d" % status)
        # a client that does not trust the certificate stops
        try:
            Connection(url=url, token=srv.token, timeout=WAIT)
            raise Fail("an untrusted certificate was accepted")
        except ssl.SSLError:
            pass
        # no token over TLS: 401
        try:
            Connection(url=url, token="y" * len(srv.token), timeout=WAIT, cafile=cert)
            raise Fail("a wrong token over TLS was let in")
        except HandshakeError as e:
            check(e.status == 401, "wrong token over TLS: %d" % e.status)
        with Session(url=url, token=srv.token, timeout=WAIT, cafile=cert, workspace=WS) as s:
            out, res = s.execute("print('tls', 6 * 7)", "python")
            check(out == "tls 42\n", "over TLS: %r" % out)
    finally:
        srv.stop()


def sc_unix():
    """A Unix socket path: made 0600, served, removed at the end."""
    path = os.path.join(T, "w.sock")
    srv = Server(addr=path)
    try:
        st = os.stat(path)
        check(st.st_mode & 0o777 == 0o600, "the socket's mode is %o" % (st.st_mode & 0o777))
        check(st.st_uid == os.getuid(), "the socket is not the caller's")
        status, _, _ = raw_request(srv, upgrade_head())
        check(status == 401, "no token over the Unix socket: %d" % status)
        with srv.session() as s:
            out, res = s.execute("echo unix", "shell")
            check(out == "unix\n", "over the Unix socket: %r" % out)
    finally:
        srv.stop()
    check(not os.path.exists(path), "the socket file outlived warden")


def sc_unix_swap():
    """Red team: the socket's directory is swapped, while warden serves, for
    a symlink to another directory that holds a file of the same name
    (jailed code did it when the socket could lie in its workspace; a
    directory others may write allows it still).  At its end warden
    removes its own socket (where it made it), never what the path leads
    to now."""
    run = os.path.join(T, "run")
    victim = os.path.join(T, "victim")
    os.makedirs(run)
    os.makedirs(victim)
    with open(os.path.join(victim, "w.sock"), "w") as f:
        f.write("the host's\n")
    srv = Server(addr=os.path.join(run, "w.sock"))
    try:
        with srv.session() as s:
            out, res = s.execute("echo before", "shell")
            check(out == "before\n", "a run: %r" % out)
        os.rename(run, run + ".old")
        os.symlink(victim, run)
    finally:
        srv.stop()
    check(os.path.exists(os.path.join(victim, "w.sock")),
          "warden removed %s/w.sock through the swapped directory" % victim)
    check(not os.path.lexists(os.path.join(run + ".old", "w.sock")),
          "warden left its own socket file behind")


def sc_socket_in_workspace():
    """Red team: a Unix socket inside a workspace warden serves.  Its jails
    could remove it and bind their own at the path, and the next client
    sent that socket its bearer token (seen: a block took the token of a
    connection made while it ran).  Refused, naming the path and the fix;
    nothing is left there."""
    path = os.path.join(WS, "w.sock")
    srv = Server(addr=path, expect_fail=True)
    rc = exit_status(srv)
    err = "".join(srv.err)
    check(rc != 0 and "--listen " + path in err and "workspace" in err,
          "a socket in the workspace: rc %d: %s" % (rc, err))
    check(not os.path.lexists(path), "a socket file was made in the workspace")


def _socket_inodes(pid):
    out = set()
    d = "/proc/%d/fd" % pid
    for fd in os.listdir(d):
        try:
            t = os.readlink(os.path.join(d, fd))
        except OSError:
            continue
        m = re.match(r"socket:\[(\d+)\]", t)
        if m:
            out.add(int(m.group(1)))
    return out


def _listen_inode(port):
    """The inode of the TCP socket listening on 127.0.0.1:port (/proc/net/tcp)."""
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            p = line.split()
            local, state, inode = p[1], p[3], int(p[9])
            if state == "0A" and int(local.split(":")[1], 16) == port:
                return inode
    return None


def sc_owner():
    """The listening socket and every connection are the broker's: the
    supervisor holds no listener while it serves, and the broker runs as
    its own user (as root) or the caller, confined."""
    srv = Server()
    try:
        _, port = srv.host_port()
        inode = _listen_inode(port)
        check(inode, "no listening socket on port %d" % port)
        bpid = srv.broker_pid()
        check(inode in _socket_inodes(bpid), "the broker does not hold the listener")
        # warden hands the listener over when the broker has started: once a
        # client was served, it holds none
        with srv.session() as s:
            s.execute("print(0)", "python")
        check(inode not in _socket_inodes(srv.proc.pid), "the supervisor holds the listener")
        with srv.session() as s:
            s.execute("print(1)", "python")
            check(inode not in _socket_inodes(srv.proc.pid), "the supervisor took it later")
        with open("/proc/%d/status" % bpid) as f:
            st = f.read()
        uid = int(re.search(r"Uid:\s+(\d+)", st).group(1))
        check(re.search(r"NoNewPrivs:\s+1", st), "the broker is not no_new_privs")
        check(re.search(r"Seccomp:\s+2", st), "the broker has no seccomp filter")
        if os.getuid() == 0:
            import pwd
            check(uid == pwd.getpwnam("warden").pw_uid,
                  "as root the listener runs as uid %d, not warden's" % uid)
        else:
            check(uid == os.getuid(), "the broker's uid %d" % uid)
    finally:
        srv.stop()


def sc_token_file():
    """--token-file: a 0600 file of the caller's, else refused with the fix;
    without it and without XDG_RUNTIME_DIR, refused with the fix; a made
    token is 256 bits of hex in a 0600 file."""
    good = os.path.join(T, "tok")
    with open(good, "w") as f:
        f.write("Z" * 40 + "\n")
    os.chmod(good, 0o600)
    srv = Server("--token-file", good)
    try:
        check(srv.token == "Z" * 40, "the token read: %r" % srv.token)
        with srv.session() as s:
            s.execute("print(1)", "python")
    finally:
        srv.stop()
    os.chmod(good, 0o644)
    srv = Server("--token-file", good, expect_fail=True)
    rc = exit_status(srv)
    err = "".join(srv.err)
    check(rc != 0 and "chmod 600" in err, "a 0644 token file: rc %d: %s" % (rc, err))
    short = os.path.join(T, "short")
    with open(short, "w") as f:
        f.write("tooshort\n")
    os.chmod(short, 0o600)
    srv = Server("--token-file", short, expect_fail=True)
    rc = exit_status(srv)
    err = "".join(srv.err)
    check(rc != 0 and "32 to 1024 characters" in err, "a short token: rc %d: %s" % (rc, err))
    env = dict(os.environ)
    env.pop("XDG_RUNTIME_DIR", None)
    p = subprocess.run([WARDEN, "serve", "--listen", "127.0.0.1:0", "--workspace", WS],
                       env=env, capture_output=True, timeout=WAIT)
    err = p.stderr.decode(errors="replace")
    check(p.returncode != 0 and "--token-file" in err and "XDG_RUNTIME_DIR" in err,
          "no token and no XDG_RUNTIME_DIR: rc %d: %s" % (p.returncode, err))
    srv = Server()
    try:
        path = os.path.join(srv.rt, "warden", "token")
        st = os.stat(path)
        check(st.st_mode & 0o777 == 0o600, "the made token's mode %o" % (st.st_mode & 0o777))
        check(re.fullmatch(r"[0-9a-f]{64}", srv.token), "the made token: %r" % srv.token)
        check(path in "".join(srv.err), "warden did not say where the token is")
    finally:
        srv.stop()


def sc_secret_in_workspace():
    """Red team: a --token-file (or --tls-key) inside a workspace warden
    serves is readable by every jail there, which then holds the token of
    the listener (reachable over a Unix socket in that workspace, or
    wherever its network leads): refused, naming the file and the fix."""
    tok = os.path.join(WS, ".listen-token")
    with open(tok, "w") as f:
        f.write("Q" * 40 + "\n")
    os.chmod(tok, 0o600)
    srv = Server("--token-file", tok, expect_fail=True)
    rc = exit_status(srv)
    err = "".join(srv.err)
    check(rc != 0 and "--token-file" in err and "workspace" in err and tok in err,
          "a token file in the workspace: rc %d: %s" % (rc, err))
    os.unlink(tok)
    cert, key = os.path.join(T, "c.pem"), os.path.join(WS, "k.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-keyout", key, "-out", cert],
                   check=True, capture_output=True, timeout=WAIT)
    os.chmod(key, 0o600)
    srv = Server("--tls-cert", cert, "--tls-key", key, expect_fail=True)
    rc = exit_status(srv)
    err = "".join(srv.err)
    check(rc != 0 and "--tls-key" in err and "workspace" in err,
          "a TLS key in the workspace: rc %d: %s" % (rc, err))


MODERN = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {}}


def mcp_post(srv, msg, accept="application/json, text/event-stream", extra=None, raw=None):
    """One POST to /mcp: (status, content type, the messages it carried)."""
    import http.client
    host, port = srv.host_port()
    c = http.client.HTTPConnection(host, port, timeout=WAIT)
    body = raw if raw is not None else json.dumps(msg).encode()
    hdrs = {"Authorization": "Bearer " + srv.token, "Content-Type": "application/json",
            "Accept": accept}
    hdrs.update(extra or {})
    c.request("POST", "/mcp", body, hdrs)
    r = c.getresponse()
    data = r.read().decode()
    ctype = r.getheader("content-type") or ""
    c.close()
    if ctype.startswith("text/event-stream"):
        msgs = [json.loads(line[6:]) for line in data.split("\n") if line.startswith("data: ")]
    elif ctype.startswith("application/json"):
        msgs = [json.loads(data)]
    else:
        msgs = []
    return r.status, ctype, msgs


def mcp_call(srv, rid, code, session=None, accept="application/json"):
    args = {"language": "python", "code": code}
    if session:
        args["session"] = session
    st, ct, msgs = mcp_post(srv, {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                                  "params": {"_meta": MODERN, "name": "run_code",
                                             "arguments": args}}, accept=accept)
    check(st == 200 and msgs, "tools/call: HTTP %d %s %s" % (st, ct, msgs))
    return ct, msgs[-1]


def sc_mcp():
    """/mcp: MCP over Streamable HTTP, modern revision: stateless POSTs, a
    JSON answer or an SSE stream for a tools/call; a session lives on by
    its handle (128 random bits), a made-up handle reaches nothing."""
    srv = Server()
    try:
        st, ct, msgs = mcp_post(srv, {"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                                      "params": {"_meta": MODERN}})
        check(st == 200 and ct.startswith("application/json"), "tools/list: %d %s" % (st, ct))
        names = [t["name"] for t in msgs[0]["result"]["tools"]]
        check("run_code" in names, "the tools: %s" % names)
        # a call, answered as events to a client that takes them
        ct, ans = mcp_call(srv, 2, "x = 6 * 7\nprint('mcp', x)",
                           accept="application/json, text/event-stream")
        check(ct.startswith("text/event-stream"), "a tools/call as SSE: %s" % ct)
        res = ans["result"]
        check(res["content"][0]["text"] == "mcp 42\n", "the output: %s" % res["content"])
        handle = res["structuredContent"]["session"]
        check(re.fullmatch(r"[0-9a-f]{32}", handle), "the handle: %r" % handle)
        # the same session by its handle, in another POST: its state is there
        ct, ans = mcp_call(srv, 3, "print('again', x)", session=handle)
        check(ct.startswith("application/json"), "JSON for a JSON-only client: %s" % ct)
        check(ans["result"]["content"][0]["text"] == "again 42\n", "state across POSTs: %s"
              % ans["result"]["content"])
        # a made-up handle reaches nothing
        guess = handle[:-1] + ("0" if handle[-1] != "0" else "1")
        ct, ans = mcp_call(srv, 4, "print(x)", session=guess)
        check("error" in ans or ans.get("result", {}).get("isError"),
              "a guessed handle was served: %s" % ans)
        check("again" not in json.dumps(ans) and "42" not in json.dumps(ans.get("error", {})),
              "a guessed handle saw something: %s" % ans)
        # notifications only: 202, no body
        st, ct, msgs = mcp_post(srv, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        check(st == 202 and not msgs, "a notification: %d %s" % (st, msgs))
        # malformed JSON is the decoder's: a JSON-RPC error, the server goes on
        st, ct, msgs = mcp_post(srv, None, raw=b"{not json")
        check(st == 200 and msgs and msgs[0]["error"]["code"] == -32700, "bad JSON: %s" % msgs)
        # what is not a POST of JSON by a non-browser client is refused at the door
        status, _, _ = raw_request(srv, "GET /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                                   "%s\r\n\r\n" % srv.token)
        check(status == 405, "GET /mcp: %d" % status)
        st, _, _ = mcp_post(srv, {"jsonrpc": "2.0", "id": 5, "method": "tools/list",
                                  "params": {"_meta": MODERN}}, extra={"Origin": "http://evil"})
        check(st == 403, "a request with an Origin: %d" % st)
        st, _, _ = mcp_post(srv, None, raw=b"{}", extra={"Content-Type": "text/plain"})
        check(st == 415, "a text/plain body: %d" % st)
        body = b"x" * (2 * 1024 * 1024 + 1)
        st, _, _ = mcp_post(srv, None, raw=body)
        check(st == 413, "an oversized body: %d" % st)
        # close_session by handle ends it
        st, ct, msgs = mcp_post(srv, {"jsonrpc": "2.0", "id": 6, "method": "tools/call",
                                      "params": {"_meta": MODERN, "name": "close_session",
                                                 "arguments": {"session": handle}}})
        check(st == 200 and "error" not in msgs[0], "close_session: %s" % msgs)
    finally:
        srv.stop()


SCENARIOS = {
    "auth": sc_auth, "run": sc_run, "isolation": sc_isolation, "many": sc_many,
    "max_sessions": sc_max_sessions, "disconnect": sc_disconnect, "idle": sc_idle,
    "nonloopback": sc_nonloopback, "tls": sc_tls, "unix": sc_unix, "unix_swap": sc_unix_swap, "socket_in_workspace": sc_socket_in_workspace, "secret_in_workspace": sc_secret_in_workspace, "owner": sc_owner,
    "token_file": sc_token_file, "mcp": sc_mcp,
}


def main():
    name = sys.argv[1]
    try:
        SCENARIOS[name]()
    except (Fail, WardenError, HandshakeError, OSError) as e:
        print("FAIL %s: %s" % (name, e), file=sys.stderr)
        sys.exit(1)
    print("ok " + name)


if __name__ == "__main__":
    main()
