#!/usr/bin/env python3
"""bind_hosts.py [--name NAME] HOSTS PROGRAM [ARG...]: in a mount namespace of
the caller's own (unshare -m, or unshare -Urm --map-current-user --keep-caps
when not root), bind HOSTS over /etc/hosts, print how the test name NAME
(rebound.warden-test.example unless given) resolves (the control), drop the
ambient capabilities, and exec PROGRAM.  mount(8) refuses a non-root uid
even with the capability, hence mount(2) here."""
import ctypes
import os
import socket
import sys

MS_BIND = 4096
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4

args = sys.argv[1:]
name = "rebound.warden-test.example"
if args[0] == "--name":
    name, args = args[1], args[2:]
libc = ctypes.CDLL(None, use_errno=True)
if libc.mount(args[0].encode(), b"/etc/hosts", None, MS_BIND, None) != 0:
    sys.exit("bind_hosts.py: mount over /etc/hosts: " + os.strerror(ctypes.get_errno()))
print(socket.gethostbyname(name), name, flush=True)
libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
os.execvp(args[1], args[1:])
