#!/usr/bin/env python3
"""make bench, part: `warden mcp` against `warden serve --stdio` in the same
run.  Prints medians; asserts nothing.

  warm round trip   print(1) in a warm Python session: a tools/call over MCP
                    stdio (legacy era, and modern with its _meta) against a
                    run over serve's JSON lines, interleaved call by call so
                    both see the same machine; the difference is what the
                    MCP layer costs beyond the code's own round trip
                    (target: under 1 ms)
"""
import json, os, statistics, subprocess, sys, tempfile, time

W = os.path.abspath(sys.argv[1])
RUNS = int(os.environ.get("BENCH_RUNS", "100")) * 2
ws = tempfile.mkdtemp(prefix="warden-bench-mcp-")
audit = os.path.join(ws, "audit.jsonl")
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}


def start(args):
    return subprocess.Popen([W] + args + ["--workspace", ws, "--audit-log", audit],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, cwd=ws, text=True, bufsize=1)


def line_until(p, pred):
    while True:
        line = p.stdout.readline()
        if not line:
            raise SystemExit("bench/mcp.py: warden ended early")
        m = json.loads(line)
        if pred(m):
            return m


def main():
    serve = start(["serve", "--stdio"])
    mcp = start(["mcp"])
    serve.stdin.write(json.dumps({"id": 0, "op": "open"}) + "\n")
    sess = line_until(serve, lambda m: m.get("event") == "opened")["session"]
    mcp.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}}}) + "\n")
    line_until(mcp, lambda m: m.get("id") == 0)
    state = {"id": 1}

    def serve_rt():
        state["id"] += 1
        rid = state["id"]
        t = time.perf_counter()
        serve.stdin.write(json.dumps({"id": rid, "op": "run", "session": sess,
                                      "language": "python", "code": "print(1)"}) + "\n")
        line_until(serve, lambda m: m.get("id") == rid and m.get("event") == "result")
        return (time.perf_counter() - t) * 1000

    def mcp_rt(modern):
        state["id"] += 1
        rid = state["id"]
        params = {"name": "run_code", "arguments": {"language": "python", "code": "print(1)"}}
        if modern:
            params["_meta"] = META
        t = time.perf_counter()
        mcp.stdin.write(json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                                    "params": params}) + "\n")
        m = line_until(mcp, lambda m: m.get("id") == rid)
        dt = (time.perf_counter() - t) * 1000
        if m["result"]["isError"]:
            raise SystemExit("bench/mcp.py: print(1) failed: %s" % m)
        return dt

    for _ in range(10):   # warm: the jails started, the drivers' caches hot
        serve_rt()
        mcp_rt(False)
    s, leg, mod = [], [], []
    for i in range(RUNS):
        s.append(serve_rt())
        leg.append(mcp_rt(False))
        mod.append(mcp_rt(True))
    for p in (serve, mcp):
        p.stdin.close()
        p.wait(timeout=30)
    ms, ml, mm = statistics.median(s), statistics.median(leg), statistics.median(mod)
    print("mcp: warm round trip of print(1), %d interleaved runs each, medians:" % RUNS)
    print("  serve --stdio      %.3f ms" % ms)
    print("  mcp (legacy era)   %.3f ms   +%.3f ms over serve" % (ml, ml - ms))
    print("  mcp (modern era)   %.3f ms   +%.3f ms over serve" % (mm, mm - ms))
    worst = max(ml, mm) - ms
    print("  the MCP layer costs %.3f ms beyond the code's own round trip: %s 1 ms" %
          (worst, "under" if worst < 1.0 else "NOT under"))


if __name__ == "__main__":
    try:
        main()
    finally:
        subprocess.run(["rm", "-rf", ws])
