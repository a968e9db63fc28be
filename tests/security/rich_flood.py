#!/usr/bin/env python3
"""Jailed code floods the control fd with images while the client reads
nothing (tests/security/rich_flood.bats).

    rich_flood.py WORKSPACE [WARDEN-SERVE-OPTIONS...]

Under a profile with no output limit, a block writes IMAGES images of
almost 3 MiB each on fd 4 (the driver's control socket) and counts them in
WORKSPACE/progress.  The client stops reading serve's stdout until the
jail has written them all, or stopped making progress because nothing is
read (what backpressure must do), then reads everything.  The supervisor
(warden serve's own pid) must not have held the flood: its peak memory
(VmHWM, read from the host) grows by less than BOUND.  Exits 0 and prints
"ok" when it held, 1 with the reason otherwise.
"""
import json
import os
import subprocess
import sys
import time

IMAGES = 30
SIZE = 3 * 1024 * 1024 - 64
BOUND = 40 * 1024 * 1024
MIB = 1024 * 1024


def hwm(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM for %d" % pid)


def events(proc):
    for raw in proc.stdout:
        yield json.loads(raw)


def main():
    ws, wargs = sys.argv[1], sys.argv[2:]
    warden = os.environ["WARDEN"]
    progress = os.path.join(ws, "progress")
    proc = subprocess.Popen([warden, "serve", "--stdio", "--workspace", ws] + wargs,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        ev_iter = events(proc)

        def send(obj):
            proc.stdin.write(json.dumps(obj).encode() + b"\n")
            proc.stdin.flush()

        def until(rid, what):
            for ev in ev_iter:
                if ev.get("id") == rid and ev.get("event") in what:
                    return ev
            raise RuntimeError("serve ended before %s of %s" % (what, rid))

        send({"op": "open", "id": 1})
        sid = until(1, ("opened", "error"))["session"]
        send({"op": "run", "id": 2, "session": sid, "language": "python", "code": "x = 1\n"})
        until(2, ("result", "error"))
        before = hwm(proc.pid)
        # one write per frame: a blocking stream socket takes it whole, and
        # the driver's own "A" lines fall between frames
        code = ("import os\nd = b'\\x89PNG' + bytes(%d)\n"
                "for i in range(%d):\n"
                "    os.write(4, b'M png %%d\\n' %% len(d) + d)\n"
                "    with open(%r, 'w') as f:\n"
                "        f.write(str(i + 1))\n"
                "print('done')\n") % (SIZE - 4, IMAGES, progress)
        send({"op": "run", "id": 3, "session": sid, "language": "python", "code": code})
        # nothing is read now: the jail either writes everything (the
        # supervisor took it all in) or stalls behind the full pipes
        last, same = None, 0
        while True:
            try:
                with open(progress) as f:
                    n = int(f.read() or 0)
            except (OSError, ValueError):
                n = 0
            if n >= IMAGES:
                break
            same = same + 1 if n == last else 0
            last = n
            if same >= 30:   # 3 s without an image: the flood is held back
                break
            time.sleep(0.1)
        stalled_at = last
        images = 0
        for ev in ev_iter:
            if ev.get("id") == 3 and ev.get("type") == "image":
                images += 1
            if ev.get("id") == 3 and ev.get("event") in ("result", "error"):
                res = ev
                break
        else:
            raise RuntimeError("serve ended before the flood's result")
        grew = hwm(proc.pid) - before
        if res.get("event") != "result" or res.get("exit_code") != 0:
            print("the flood block did not end well: %s" % res)
            return 1
        if images != IMAGES:
            print("%d images came back, want %d" % (images, IMAGES))
            return 1
        if grew >= BOUND:
            print("the supervisor's peak memory grew by %d MiB (jail wrote %s of %d images "
                  "before the client read): it buffered the jail's images without bound"
                  % (grew // MIB, stalled_at, IMAGES))
            return 1
        print("ok: the supervisor grew by %d MiB; the jail stalled at %s of %d images"
              % (grew // MIB, stalled_at, IMAGES))
        return 0
    finally:
        proc.kill()
        proc.wait()


if __name__ == "__main__":
    sys.exit(main())
