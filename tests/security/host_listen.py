#!/usr/bin/env python3
"""host_listen.py PORTFILE LOG [@NAME]: listen on the host, write the
address to PORTFILE once listening, and append one line to LOG for every
connection accepted, until killed.  A jail must never reach it.

Without NAME: TCP on 127.0.0.1, a free port (PORTFILE holds the port).
With @NAME: the abstract unix socket "\\0NAME" (PORTFILE holds NAME)."""
import os
import socket
import sys

portfile, log = sys.argv[1], sys.argv[2]
if len(sys.argv) > 3 and sys.argv[3].startswith("@"):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind("\0" + sys.argv[3][1:])
    addr = sys.argv[3][1:]
else:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    addr = str(s.getsockname()[1])
s.listen(16)
open(log, "a").close()
with open(portfile + ".tmp", "w") as f:
    f.write(addr + "\n")
os.rename(portfile + ".tmp", portfile)
while True:
    c, peer = s.accept()
    with open(log, "a") as f:
        f.write("connection from %r\n" % (peer,))
    c.close()
