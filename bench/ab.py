#!/usr/bin/env python3
"""Interleaved A/B timing of whole commands: ab.py ROUNDS NAME=COMMAND...

Each round runs every command once, in an order that rotates from round to
round, and times it from spawn to exit (stdin and stdout on /dev/null).
Prints the median, mean and quartiles per command.  GAP=SECONDS sleeps
that long before each run (untimed): isolated runs, as one-shot `warden
run`s issued seconds apart see the kernel (cgroup v1's grace period).

Example (docs/design.md, "The root path"):
  ws=$(mktemp -d); C="run --quiet --no-stdin --audit-log /dev/null --workspace $ws -- /bin/true"
  python3 bench/ab.py 300 "old=/tmp/old/warden $C" "new=build/warden $C"
  GAP=0.1 python3 bench/ab.py 100 "old=/tmp/old/warden $C" "new=build/warden $C"
"""
import os
import shlex
import statistics
import sys
import time


def main():
    if len(sys.argv) < 3 or "=" not in sys.argv[2]:
        sys.exit(__doc__)
    rounds = int(sys.argv[1])
    gap = float(os.environ.get("GAP", "0"))
    cmds = [a.split("=", 1) for a in sys.argv[2:]]
    times = {name: [] for name, _ in cmds}
    devnull = os.open(os.devnull, os.O_RDWR)
    actions = [(os.POSIX_SPAWN_DUP2, devnull, 0), (os.POSIX_SPAWN_DUP2, devnull, 1)]
    for i in range(rounds):
        k = i % len(cmds)
        for name, cmd in cmds[k:] + cmds[:k]:
            argv = shlex.split(cmd)
            if gap:
                time.sleep(gap)
            t = time.perf_counter()
            pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=actions)
            _, st = os.waitpid(pid, 0)
            times[name].append((time.perf_counter() - t) * 1000)
            if st:
                print("%s: exit status %#x" % (name, st), file=sys.stderr)
    for name, v in times.items():
        v.sort()
        print("%-10s median %7.2f ms  mean %7.2f  p25 %7.2f  p75 %7.2f  n=%d" %
              (name, statistics.median(v), statistics.mean(v), v[len(v) // 4],
               v[3 * len(v) // 4], len(v)))


if __name__ == "__main__":
    main()
