#!/usr/bin/python3
"""A hostile broker for tests/security/broker.bats (G17).

Installed as `warden-broker` next to a copy of `warden` (serve.c's
broker_path looks there first), so the real supervisor starts it on fd 3
in place of the real broker.  It speaks the frame protocol of
include/warden/proto.h and common/proto.c:

    u32 big-endian length of (type + body), u8 type, body; u32 fields
    big-endian; strings and byte strings as u32 length + bytes.

HOSTILE_SCENARIO says what it does; HOSTILE_CODE is the shell code of the
block it keeps running first (all but before_hello).  Progress goes to
stderr, one line each, so the test can tell that a jail was running when
the hostile frame went out."""
import os
import socket
import struct
import sys

WM_HELLO, WM_OPEN, WM_RUN, WM_INTERRUPT, WM_CLOSE, WM_LANGS, WM_EDIT = 1, 2, 3, 4, 5, 6, 7
WM_WIDEN, WM_REVOKE, WM_SAVE = 8, 9, 10
WM_WELCOME, WM_OPENED, WM_OUTPUT, WM_RESULT, WM_ERROR, WM_WIDENED = 64, 65, 66, 67, 71, 75


def say(msg):
    sys.stderr.write("hostile broker: %s\n" % msg)
    sys.stderr.flush()


def u32(v):
    return struct.pack(">I", v)


def s(v):
    b = v.encode() if isinstance(v, str) else v
    return u32(len(b)) + b


def frame(t, body):
    return u32(1 + len(body)) + bytes([t]) + body


sock = socket.socket(fileno=3)
buf = b""


def recv_frame():
    global buf
    while True:
        if len(buf) >= 4:
            n = struct.unpack(">I", buf[:4])[0]
            if len(buf) >= 4 + n:
                t, body = buf[4], buf[5:4 + n]
                buf = buf[4 + n:]
                return t, body
        chunk = sock.recv(65536)
        if not chunk:
            say("the supervisor closed the connection")
            sys.exit(0)
        buf += chunk


def wait_for(t):
    while True:
        ft, body = recv_frame()
        if ft == t:
            return body
        if ft == WM_ERROR:
            say("ERROR frame: %r" % body)


scenario = os.environ.get("HOSTILE_SCENARIO", "")
code = os.environ.get("HOSTILE_CODE", "echo READY; sleep 600")

HOSTILE = {
    # a field that says it is longer than the frame: truncated
    "malformed": frame(WM_RUN, u32(1) + u32(2) + u32(1000) + b"shell"),
    # a string with a NUL byte
    "nul": frame(WM_OPEN, u32(9) + s("work\0space") + s("") + u32(0)),
    # trailing bytes after the last field
    "trailing": frame(WM_INTERRUPT, u32(1) + b"junk"),
    # a length over WPROTO_FRAME_MAX (4 MiB), with nothing after it
    "oversize": u32(64 * 1024 * 1024) + bytes([WM_RUN]),
    # HELLO is permitted once, before anything else
    "hello_again": frame(WM_HELLO, u32(3)),
    # a frame only the supervisor sends
    "supervisor_frame": frame(WM_ERROR, u32(0) + u32(0) + u32(0) + s("forged")),
    # a type no one sends
    "unknown_type": frame(200, b""),
    # EDIT is permitted only to `warden chat` on a terminal, never to serve
    "edit_in_serve": frame(WM_EDIT, u32(1) + s("x = 1")),
    # SAVE (a profile of the caller's) likewise: chat only
    "save_in_serve": frame(WM_SAVE, u32(1) + u32(1) + s("mine")),
}

if scenario == "widen":
    # A broker that widens its session by itself (issue 23): WIDEN for
    # HOSTILE_VALUE (read; "write" or "host" by HOSTILE_KIND), the answer
    # said on stderr, then HOSTILE_CODE in the session, to its end.  The
    # session learns (WOPEN_LEARN) unless HOSTILE_LEARN=0.
    kinds = {"read": 0, "write": 1, "host": 2}
    sock.sendall(frame(WM_HELLO, u32(4)))
    wait_for(WM_WELCOME)
    learn = 0x2 if os.environ.get("HOSTILE_LEARN", "1") == "1" else 0
    sock.sendall(frame(WM_OPEN, u32(1) + s("") + s("") + u32(learn)))
    body = wait_for(WM_OPENED)
    session = struct.unpack(">I", body[4:8])[0]
    sock.sendall(frame(WM_WIDEN, u32(2) + u32(session) +
                       bytes([kinds[os.environ.get("HOSTILE_KIND", "read")]]) +
                       s(os.environ["HOSTILE_VALUE"]) + u32(1)))   # flags: WVIA_SERVE
    body = wait_for(WM_WIDENED)
    status = body[8]
    n = struct.unpack(">I", body[13:17])[0]
    say("WIDENED status %d: %s" % (status, body[17:17 + n].decode(errors="replace")))
    sock.sendall(frame(WM_RUN, u32(session) + u32(1) + s("shell") + s(code) + u32(0)))
    while True:
        t, body = recv_frame()
        if t == WM_RESULT:
            say("the block ended")
            sys.exit(0)

if scenario == "before_hello":
    say("sending OPEN before HELLO")
    sock.sendall(frame(WM_OPEN, u32(1) + s("") + s("") + u32(0)))
    while True:
        recv_frame()

if scenario not in HOSTILE and scenario != "quiet":
    say("unknown HOSTILE_SCENARIO %r" % scenario)
    sys.exit(2)

sock.sendall(frame(WM_HELLO, u32(4)))   # WPROTO_VERSION
wait_for(WM_WELCOME)
sock.sendall(frame(WM_OPEN, u32(1) + s("") + s("") + u32(0)))
body = wait_for(WM_OPENED)
session = struct.unpack(">I", body[4:8])[0]
sock.sendall(frame(WM_RUN, u32(session) + u32(1) + s("shell") + s(code) + u32(0)))
out = b""
while b"READY" not in out:
    t, body = recv_frame()
    if t == WM_OUTPUT:
        n = struct.unpack(">I", body[9:13])[0]
        out += body[13:13 + n]
    elif t == WM_ERROR:
        say("ERROR frame: %r" % body)
say("the jail is running; sending %s" % scenario)
if scenario != "quiet":
    sock.sendall(HOSTILE[scenario])
while True:
    recv_frame()
