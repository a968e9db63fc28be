#!/usr/bin/env python3
"""host_listen.py PORTFILE LOG: listen on the host's 127.0.0.1 (TCP, a free
port), write the port to PORTFILE once listening, and append one line to LOG
for every connection accepted, until killed.  A jail must never reach it."""
import socket, sys

s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.bind(("127.0.0.1", 0))
s.listen(16)
open(sys.argv[2], "a").close()
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d\n" % s.getsockname()[1])
import os
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    c, peer = s.accept()
    with open(sys.argv[2], "a") as f:
        f.write("connection from %s:%d\n" % peer)
    c.close()
