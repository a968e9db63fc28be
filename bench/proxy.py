#!/usr/bin/env python3
"""make bench, part 3: the egress proxy (network mode proxy) against a
direct loopback connection, in the same run.  Prints medians and ratios;
asserts nothing.

  download   curl fetching BENCH_PROXY_SIZE (default 1 GiB) of zeros from a
             local HTTP server: direct on the host, and from a jail through
             warden's proxy, as plain HTTP (absolute URI) and through a
             CONNECT tunnel (curl -p), the way HTTPS goes; curl's own
             average speed, so the jail's start-up is not counted
  setup      time to the first byte of a 1-byte answer, a new connection
             each time (BENCH_PROXY_REQS requests, default 200, in one jail):
             connect, the proxy's parse, check and dial, and the answer

Runs alternate direct and proxied (a shared machine drifts); medians.
The server is on 127.0.0.2, allowed by a literal --allow entry."""
import os, statistics, subprocess, sys, tempfile, time

W = sys.argv[1]
top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZE = int(os.environ.get("BENCH_PROXY_SIZE", str(1 << 30)))
ROUNDS = int(os.environ.get("BENCH_PROXY_ROUNDS", "5"))
REQS = int(os.environ.get("BENCH_PROXY_REQS", "200"))
ADDR = "127.0.0.2"
tmp = tempfile.mkdtemp(prefix="warden-bench-proxy-")
srv_py = os.path.join(top, "tests/cli/net_server.py")


def start(size, name):
    pf = os.path.join(tmp, name)
    p = subprocess.Popen([sys.executable, srv_py, "blob", ADDR, str(size), pf])
    for _ in range(400):
        if os.path.exists(pf) and os.path.getsize(pf):
            return p, int(open(pf).read())
        time.sleep(0.05)
    sys.exit("bench: the blob server did not start")


big, big_port = start(SIZE, "big.port")
small, small_port = start(1, "small.port")
allow = ["--allow", "%s:%d" % (ADDR, big_port), "--allow", "%s:%d" % (ADDR, small_port)]
jail = [W, "run", "--quiet", "--no-stdin", "--audit-log", "/dev/null", "--workspace", tmp,
        "--memory", "unlimited", "--net", "proxy"] + allow + ["--"]


def curl_speed(prefix, extra):
    url = "http://%s:%d/blob" % (ADDR, big_port)
    out = subprocess.run(prefix + ["curl", "-sS", "-o", "/dev/null", "-w", "%{speed_download}"]
                         + extra + [url], check=True, capture_output=True, text=True).stdout
    return float(out.strip().splitlines()[-1]) / 1e6      # MB/s


def ttfb(prefix):
    url = "http://%s:%d/x" % (ADDR, small_port)
    loop = ('for i in $(seq %d); do curl -sS -o /dev/null -w "%%{time_starttransfer}\\n" %s; done'
            % (REQS, url))
    out = subprocess.run(prefix + ["sh", "-c", loop], check=True, capture_output=True,
                         text=True).stdout
    return statistics.median(float(x) for x in out.split()) * 1000     # ms


try:
    d, h, c, td, tp = [], [], [], [], []
    direct = ["env", "-u", "http_proxy", "-u", "HTTP_PROXY", "-u", "https_proxy",
              "-u", "HTTPS_PROXY", "-u", "ALL_PROXY", "-u", "all_proxy"]
    for _ in range(ROUNDS):
        d.append(curl_speed(direct, []))
        h.append(curl_speed(jail, []))
        c.append(curl_speed(jail, ["-p"]))
    for _ in range(max(1, ROUNDS // 2)):
        td.append(ttfb(direct))
        tp.append(ttfb(jail))
    md, mh, mc = statistics.median(d), statistics.median(h), statistics.median(c)
    mtd, mtp = statistics.median(td), statistics.median(tp)
    print("egress proxy: %s through warden's proxy against direct, on the loopback, same run "
          "(medians of %d alternated rounds)" % (
              "%d MiB" % (SIZE >> 20) if SIZE >= 1 << 20 else "%d B" % SIZE, ROUNDS))
    print()
    print("| measure                                  |     direct | warden proxy | proxy/direct |")
    print("|------------------------------------------|------------|--------------|--------------|")
    print("| download, plain HTTP (MB/s)              | %10.0f | %12.0f | %11.0f%% |" % (md, mh, 100 * mh / md))
    print("| download, CONNECT tunnel (MB/s)          | %10.0f | %12.0f | %11.0f%% |" % (md, mc, 100 * mc / md))
    print("| new connection, time to first byte (ms)  | %10.3f | %12.3f | %11.2fx |" % (mtd, mtp, mtp / mtd))
finally:
    big.kill()
    small.kill()
    subprocess.run(["rm", "-rf", tmp])
