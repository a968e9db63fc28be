#!/usr/bin/env python3
"""Host-side servers for tests/cli/net.bats and bench/proxy.py.

  net_server.py http ADDR DIR PORTFILE LOG [CERT KEY]
      HTTP (HTTPS with CERT and KEY) serving DIR on ADDR, a free port; one
      line in LOG per request ("GET /path").
  net_server.py blob ADDR SIZE PORTFILE
      HTTP on ADDR answering every GET with SIZE zero bytes (sendfile from a
      sparse file: the server costs little), for bench/proxy.py.
  net_server.py sink PORTFILE LOG
      TCP and UDP on every address (0.0.0.0 and ::), the same free port;
      one line in LOG per connection or datagram.  A jail must never reach it.

Each writes its port to PORTFILE (atomically) once it is listening, then
serves until killed."""
import http.server
import os
import socket
import ssl
import sys
import threading


def ready(portfile, port):
    with open(portfile + ".tmp", "w") as f:
        f.write("%d\n" % port)
    os.rename(portfile + ".tmp", portfile)


def logline(log, text):
    with open(log, "a") as f:
        f.write(text + "\n")


def serve_http(addr, root, portfile, log, cert=None, key=None):
    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **kw):
            super().__init__(*a, directory=root, **kw)

        def log_message(self, fmt, *args):
            logline(log, "%s %s" % (self.command, self.path))

    open(log, "a").close()
    srv = http.server.ThreadingHTTPServer((addr, 0), Handler)
    srv.daemon_threads = True
    if cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    ready(portfile, srv.server_address[1])
    srv.serve_forever()


def serve_blob(addr, size, portfile):
    import socketserver
    import tempfile
    size = int(size)
    blob = tempfile.TemporaryFile()
    blob.truncate(size)

    class Handler(socketserver.StreamRequestHandler):
        def handle(self):
            while True:
                line = self.rfile.readline(65536)
                if not line:
                    return
                while line not in (b"\r\n", b"\n", b""):
                    line = self.rfile.readline(65536)
                self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n"
                                 b"Content-Type: application/octet-stream\r\n\r\n" % size)
                self.wfile.flush()
                if size:
                    self.connection.sendfile(blob, 0, size)

    class Server(socketserver.ThreadingTCPServer):
        daemon_threads = True
        allow_reuse_address = True

    srv = Server((addr, 0), Handler)
    ready(portfile, srv.server_address[1])
    srv.serve_forever()


def serve_sink(portfile, log):
    open(log, "a").close()
    tcp = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    tcp.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    tcp.bind(("::", 0))
    port = tcp.getsockname()[1]
    tcp.listen(64)
    udp = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    udp.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    udp.bind(("::", port))

    def udp_loop():
        while True:
            data, peer = udp.recvfrom(65536)
            logline(log, "udp from %s: %r" % (peer[0], data[:64]))

    threading.Thread(target=udp_loop, daemon=True).start()
    ready(portfile, port)
    while True:
        c, peer = tcp.accept()
        logline(log, "tcp from %s" % peer[0])
        c.close()


if __name__ == "__main__":
    if sys.argv[1] == "http":
        serve_http(*sys.argv[2:])
    elif sys.argv[1] == "blob":
        serve_blob(*sys.argv[2:])
    elif sys.argv[1] == "sink":
        serve_sink(*sys.argv[2:])
    else:
        sys.exit("usage: net_server.py http|sink ...")
