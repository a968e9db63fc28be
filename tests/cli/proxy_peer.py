#!/usr/bin/env python3
"""Peers of the egress proxy for tests/cli/proxy_engine.bats: a TCP echo
server on the host's loopback, and clients that speak to the proxy the way
hostile or careless jailed code would.

  proxy_peer.py echo PORTFILE [LOG]      echo server; its port into PORTFILE;
                                         with LOG, one line "closed N" there
                                         when a connection ends (N bytes)
  proxy_peer.py blackhole PORTFILE       a listener whose accept queue is
                                         full: every further SYN is dropped,
                                         so a connect to it never completes
  proxy_peer.py tunnel PROXY TARGET      CONNECT TARGET, send a line with the
                                         head (early data), print the echo
  proxy_peer.py many PROXY TARGET N      N tunnels open at once, then each
                                         echoes; prints "N ok"
  proxy_peer.py stall PROXY READY DONE   sends half a head and waits; touches
                                         READY once sent; prints what the
                                         proxy answered when it hangs up
  proxy_peer.py giant PROXY              a 20 KiB head; prints the answer
  proxy_peer.py hold PROXY N             N connections that never send; then
                                         one more; prints its answer
  proxy_peer.py queue PROXY TARGET N READY GO
                                         N connections that never send, then
                                         CONNECT TARGET on one more (READY
                                         once sent); once the file GO
                                         exists, the N leave; prints the
                                         answer's first line
  proxy_peer.py raw PROXY TEXT           sends TEXT (\\r\\n escapes) and
                                         half-closes; prints the answer
  proxy_peer.py idle PROXY TARGET        CONNECT TARGET, one echoed line,
                                         then silence: prints "eof" when the
                                         proxy closes the tunnel
  proxy_peer.py active PROXY TARGET STOP CONNECT TARGET, then one byte back
                                         and forth every 10 ms until the
                                         file STOP exists, then one more
                                         (STOP.ready once established);
                                         prints "active ok" or where it broke
Every wait on the proxy is bounded (30 s) so a broken proxy fails the test,
never hangs it; queue's wait for GO, the test's own signal, is longer (300
s), so that the test's polls end first."""
import os
import socket
import socketserver
import sys
import threading
import time

T = 30


def conn(proxy):
    s = socket.create_connection(("127.0.0.1", int(proxy)), timeout=T)
    return s


def read_all(s):
    out = b""
    while True:
        try:
            b = s.recv(65536)
        except ConnectionResetError:
            break
        if not b:
            break
        out += b
    return out


def read_head(s):
    buf = b""
    while b"\r\n\r\n" not in buf:
        b = s.recv(1)
        if not b:
            break
        buf += b
    return buf


def echo(portfile, log=None):
    class H(socketserver.BaseRequestHandler):
        def handle(self):
            n = 0
            try:
                while True:
                    b = self.request.recv(65536)
                    if not b:
                        break
                    n += len(b)
                    self.request.sendall(b)
            except OSError:
                pass
            if log:
                with open(log, "a") as f:
                    f.write("closed %d\n" % n)

    class S(socketserver.ThreadingTCPServer):
        daemon_threads = True
        allow_reuse_address = True
        request_queue_size = 512

    srv = S(("127.0.0.1", 0), H)
    with open(portfile + ".tmp", "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(portfile + ".tmp", portfile)
    srv.serve_forever()


def blackhole(portfile):
    # backlog 0: the accept queue holds one connection, never accepted;
    # with it (and a second, to be sure) queued, the kernel drops every
    # further SYN, and the connecting side retries for minutes
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(0)
    port = srv.getsockname()[1]
    fill = [socket.create_connection(("127.0.0.1", port), timeout=T)]
    s = socket.socket()
    s.setblocking(False)
    s.connect_ex(("127.0.0.1", port))
    fill.append(s)
    with open(portfile + ".tmp", "w") as f:
        f.write("%d\n" % port)
    os.rename(portfile + ".tmp", portfile)
    threading.Event().wait()


def established(proxy, target):
    s = conn(proxy)
    s.sendall(b"CONNECT " + target.encode() + b" HTTP/1.1\r\n\r\n")
    head = read_head(s)
    if b" 200 " not in head.split(b"\r\n")[0]:
        sys.exit("not established: %r" % head)
    return s


def idle(proxy, target):
    s = established(proxy, target)
    s.sendall(b"one line\n")
    got = b""
    while not got.endswith(b"\n"):
        got += s.recv(100)
    # then nothing: the proxy must end the tunnel (bounded by T)
    try:
        b = s.recv(100)
        print("eof" if not b else "got %r" % b)
    except socket.timeout:
        print("no eof within %d s" % T)


def active(proxy, target, stop):
    s = established(proxy, target)
    open(stop + ".ready", "w").close()
    n = 0
    while True:
        last = os.path.exists(stop)
        try:
            s.sendall(b"x")
            b = s.recv(1)
        except OSError as e:
            print("cut after %d round trips: %s" % (n, e))
            return
        if b != b"x":
            print("cut after %d round trips: %r" % (n, b))
            return
        n += 1
        if last:
            break
        time.sleep(0.01)   # pace it: far below the limit, and not a busy loop
    print("active ok")


def tunnel(proxy, target):
    s = conn(proxy)
    s.sendall(b"CONNECT " + target.encode() + b" HTTP/1.1\r\nHost: x\r\n\r\nearly line\n")
    head = read_head(s)
    sys.stdout.write(head.decode().splitlines()[0] + "\n")
    if b" 200 " not in head.split(b"\r\n")[0]:
        sys.stdout.write(read_all(s).decode())
        return
    got = b""
    while not got.endswith(b"\n"):
        got += s.recv(100)
    s.sendall(b"second line\n")
    got2 = b""
    while not got2.endswith(b"\n"):
        got2 += s.recv(100)
    sys.stdout.write(got.decode() + got2.decode())


def many(proxy, target, n):
    socks = []
    for _ in range(n):
        s = conn(proxy)
        s.sendall(b"CONNECT " + target.encode() + b" HTTP/1.1\r\n\r\n")
        socks.append(s)
    # every tunnel is established while all are open
    for s in socks:
        head = read_head(s)
        if b" 200 " not in head.split(b"\r\n")[0]:
            print("refused:", head)
            return
    for i, s in enumerate(socks):
        msg = b"hello %d\n" % i
        s.sendall(msg)
        got = b""
        while len(got) < len(msg):
            b = s.recv(100)
            if not b:
                break
            got += b
        if got != msg:
            print("bad echo on", i, got)
            return
    for s in socks:
        s.close()
    print("%d ok" % n)


def stall(proxy, ready, done):
    s = conn(proxy)
    s.sendall(b"GET http://127.0.0.1:1/ HTTP/1.1\r\nHost: 127.")
    open(ready, "w").close()
    out = read_all(s)
    sys.stdout.write(out.decode(errors="replace"))


def giant(proxy):
    s = conn(proxy)
    try:
        s.sendall(b"GET http://127.0.0.1:1/ HTTP/1.1\r\n" + b"X-Big: " + b"a" * 20000 + b"\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass
    sys.stdout.write(read_all(s).decode(errors="replace"))


def hold(proxy, n):
    socks = [conn(proxy) for _ in range(n)]
    # a round trip on the last one: by then the proxy accepted all of them
    s = conn(proxy)
    out = read_all(s)
    sys.stdout.write(out.decode(errors="replace"))
    del socks


def queue(proxy, target, n, ready, go):
    socks = [conn(proxy) for _ in range(n)]
    s = conn(proxy)
    s.sendall(b"CONNECT " + target.encode() + b" HTTP/1.1\r\n\r\n")
    open(ready, "w").close()
    for _ in range(10 * T * 20):   # the test's to end: longer than any of its waits
        if os.path.exists(go):
            break
        time.sleep(0.05)
    for h in socks:
        h.close()
    head = read_head(s)
    sys.stdout.write(head.decode(errors="replace").split("\r\n")[0] + "\n")


def raw(proxy, text):
    s = conn(proxy)
    s.sendall(text.encode().decode("unicode_escape").encode("latin-1"))
    s.shutdown(socket.SHUT_WR)   # an echo upstream ends when the request does
    sys.stdout.write(read_all(s).decode(errors="replace"))


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "echo":
        echo(*args[:2])
    elif cmd == "queue":
        queue(args[0], args[1], int(args[2]), args[3], args[4])
    elif cmd == "blackhole":
        blackhole(args[0])
    elif cmd == "idle":
        idle(args[0], args[1])
    elif cmd == "active":
        active(args[0], args[1], args[2])
    elif cmd == "tunnel":
        tunnel(args[0], args[1])
    elif cmd == "many":
        many(args[0], args[1], int(args[2]))
    elif cmd == "stall":
        stall(args[0], args[1], args[2])
    elif cmd == "giant":
        giant(args[0])
    elif cmd == "hold":
        hold(args[0], int(args[1]))
    elif cmd == "raw":
        raw(args[0], args[1])
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
