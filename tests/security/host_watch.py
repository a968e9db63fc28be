#!/usr/bin/env python3
"""host_watch.py FILE... -- CMD ARGS: run CMD with an inotify watch on each
FILE (on the host), and report every open, read or change of them.

The watch is in place before CMD starts and its events are read after CMD
has exited, so no access can slip between the two.  inotify reports an
access to the inode whatever the mount namespace or path it came through,
which makes this the host's own view of whether a jail reached a file.
Prints CMD's output, then one "host_watch: FILE: EVENT" line per event on
stderr; exits with CMD's status, or 3 when any event was seen."""
import ctypes, ctypes.util, os, struct, subprocess, sys

IN_ACCESS, IN_MODIFY, IN_ATTRIB, IN_OPEN = 0x1, 0x2, 0x4, 0x20
NAMES = {IN_ACCESS: "read", IN_MODIFY: "written", IN_ATTRIB: "attributes changed", IN_OPEN: "opened"}
IN_NONBLOCK = os.O_NONBLOCK

sep = sys.argv.index("--")
files, cmd = sys.argv[1:sep], sys.argv[sep + 1:]
libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
fd = libc.inotify_init1(IN_NONBLOCK | os.O_CLOEXEC)
if fd < 0:
    sys.exit("host_watch: inotify_init1: " + os.strerror(ctypes.get_errno()))
wds = {}
for f in files:
    wd = libc.inotify_add_watch(fd, f.encode(), IN_ACCESS | IN_MODIFY | IN_ATTRIB | IN_OPEN)
    if wd < 0:
        sys.exit("host_watch: watching %s: %s" % (f, os.strerror(ctypes.get_errno())))
    wds[wd] = f
rc = subprocess.call(cmd)
seen = 0
while True:
    try:
        buf = os.read(fd, 65536)
    except BlockingIOError:
        break
    off = 0
    while off < len(buf):
        wd, mask, _cookie, size = struct.unpack_from("iIII", buf, off)
        off += 16 + size
        for bit, name in NAMES.items():
            if mask & bit:
                print("host_watch: %s: %s" % (wds.get(wd, "?"), name), file=sys.stderr)
                seen += 1
sys.exit(3 if seen else rc)
