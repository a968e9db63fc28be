"""A small WebSocket client (RFC 6455) on the standard library: what
warden's /ws needs and no more.  Text messages out (masked, as a client
must), text messages in (fragments joined), ping answered, close echoed.

    ws = WebSocket.connect("ws://127.0.0.1:8765/ws", headers={...})
    ws.send_text('{"id":1,"op":"languages"}')
    text = ws.recv_text()      # None once the server closed

The URL may be ws://HOST:PORT/PATH, wss://HOST:PORT/PATH (TLS, checked
against the system's CAs, or cafile=), or unix:/PATH/TO/SOCKET (the path
/ws on a Unix socket).
"""
import base64
import hashlib
import os
import socket
import ssl
import struct
import threading
import urllib.parse

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
MAX_MESSAGE = 64 << 20


class HandshakeError(Exception):
    """The server did not switch to WebSocket: status is its HTTP status."""

    def __init__(self, status, reason, body):
        self.status = status
        self.reason = reason
        self.body = body
        super().__init__("HTTP %d %s: %s" % (status, reason, body.strip()[:200]))


class WebSocket:
    def __init__(self, sock):
        self.sock = sock
        self._buf = b""
        self._wlock = threading.Lock()
        self.closed = False

    # ---- connecting ----
    @classmethod
    def connect(cls, url, headers=None, timeout=30.0, cafile=None, insecure=False):
        sock, host, path = _open(url, timeout, cafile, insecure)
        key = base64.b64encode(os.urandom(16)).decode()
        lines = ["GET %s HTTP/1.1" % path, "Host: %s" % host, "Upgrade: websocket",
                 "Connection: Upgrade", "Sec-WebSocket-Key: %s" % key,
                 "Sec-WebSocket-Version: 13"]
        for k, v in (headers or {}).items():
            lines.append("%s: %s" % (k, v))
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        ws = cls(sock)
        status, reason, hdrs = ws._read_head()
        if status != 101:
            body = ws._read_body(hdrs)
            sock.close()
            raise HandshakeError(status, reason, body)
        want = base64.b64encode(hashlib.sha1(key.encode() + _GUID).digest()).decode()
        if hdrs.get("sec-websocket-accept") != want:
            sock.close()
            raise HandshakeError(101, "bad Sec-WebSocket-Accept", "")
        sock.settimeout(None)
        return ws

    def _read_head(self):
        while b"\r\n\r\n" not in self._buf:
            data = self.sock.recv(4096)
            if not data:
                raise ConnectionError("the server closed the connection during the handshake")
            self._buf += data
            if len(self._buf) > 65536:
                raise ConnectionError("the server's handshake is too long")
        head, self._buf = self._buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        status = int(parts[1])
        reason = parts[2] if len(parts) > 2 else ""
        hdrs = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            hdrs[k.strip().lower()] = v.strip()
        return status, reason, hdrs

    def _read_body(self, hdrs):
        n = int(hdrs.get("content-length") or 0)
        try:
            while len(self._buf) < n:
                data = self.sock.recv(4096)
                if not data:
                    break
                self._buf += data
        except OSError:
            pass
        return self._buf[:n].decode("utf-8", "replace")

    # ---- frames ----
    def _send_frame(self, opcode, payload):
        head = bytes([0x80 | opcode])
        n = len(payload)
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 65536:
            head += bytes([0x80 | 126]) + struct.pack("!H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack("!Q", n)
        mask = os.urandom(4)
        masked = _mask(payload, mask)
        with self._wlock:
            self.sock.sendall(head + mask + masked)

    def send_text(self, text):
        if self.closed:
            raise ConnectionError("the WebSocket is closed")
        self._send_frame(0x1, text.encode("utf-8"))

    def _recv_exact(self, n):
        while len(self._buf) < n:
            data = self.sock.recv(max(65536, n - len(self._buf)))
            if not data:
                raise ConnectionError("the server closed the connection")
            self._buf += data
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def recv_text(self):
        """The next text message, or None once the connection is closed."""
        parts = []
        size = 0
        while True:
            try:
                b0, b1 = self._recv_exact(2)
                n = b1 & 0x7F
                if n == 126:
                    n = struct.unpack("!H", self._recv_exact(2))[0]
                elif n == 127:
                    n = struct.unpack("!Q", self._recv_exact(8))[0]
                mask = self._recv_exact(4) if b1 & 0x80 else None
                if n > MAX_MESSAGE or size + n > MAX_MESSAGE:
                    raise ConnectionError("a message from the server is too long")
                payload = self._recv_exact(n)
            except (ConnectionError, OSError):
                self.closed = True
                return None
            if mask:
                payload = _mask(payload, mask)
            opcode = b0 & 0x0F
            if opcode == 0x8:          # close: echo it, then end
                try:
                    self._send_frame(0x8, payload[:2])
                except OSError:
                    pass
                self.closed = True
                return None
            if opcode == 0x9:          # ping
                self._send_frame(0xA, payload)
                continue
            if opcode == 0xA:
                continue
            parts.append(payload)
            size += n
            if b0 & 0x80:
                return b"".join(parts).decode("utf-8")

    def close(self):
        if not self.closed:
            try:
                self._send_frame(0x8, struct.pack("!H", 1000))
            except OSError:
                pass
        self.closed = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


def _mask(data, mask):
    """data XOR the 4-byte mask repeated (as one big integer: fast enough)."""
    n = len(data)
    if not n:
        return b""
    m = (mask * (n // 4 + 1))[:n]
    return (int.from_bytes(data, "big") ^ int.from_bytes(m, "big")).to_bytes(n, "big")


def _open(url, timeout, cafile, insecure):
    """(socket, Host header, request path) for a ws://, wss:// or unix: URL."""
    if url.startswith("unix:"):
        path = url[5:]
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        s.connect(path)
        return s, "localhost", "/ws"
    u = urllib.parse.urlsplit(url)
    if u.scheme not in ("ws", "wss", "http", "https"):
        raise ValueError("a warden URL is ws://HOST:PORT, wss://HOST:PORT or unix:/PATH, "
                         "not %r" % url)
    tls = u.scheme in ("wss", "https")
    port = u.port or (443 if tls else 80)
    s = socket.create_connection((u.hostname, port), timeout=timeout)
    if tls:
        ctx = ssl.create_default_context(cafile=cafile)
        if insecure:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        s = ctx.wrap_socket(s, server_hostname=u.hostname)
    path = u.path if u.path and u.path != "/" else "/ws"
    if u.query:
        path += "?" + u.query
    host = u.hostname if not u.port else "%s:%d" % (u.hostname, u.port)
    if ":" in (u.hostname or "") and not host.startswith("["):
        host = "[%s]:%d" % (u.hostname, port)
    return s, host, path
