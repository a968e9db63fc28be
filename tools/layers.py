#!/usr/bin/env python3
"""The shape of the tree, drawn from the objects' own symbols (nm): which
file calls which, which folder calls which, and whether any of them call
each other in a circle; and the size of every source file against the
limits (1,000 lines anywhere outside tests/, 800 in the privileged process:
what is linked into `warden`).

    layers.py BUILD_DIR [--graph]

Prints one TAP line per check ("ok"/"not ok" with the circle or the file),
the folder graph with --graph, and exits 1 when a check failed.  make test
runs it (tests/run.sh); docs/design.md's map is its --graph output.
"""
import collections, os, re, subprocess, sys

top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = sys.argv[1]
graph = "--graph" in sys.argv

# The objects of the two executables (and the egress proxy's, if any):
# every build/<folder>/.../<file>.o whose source is in the tree.
objs = {}
for root, _, files in os.walk(build):
    rel = os.path.relpath(root, build)
    if rel.startswith("tests") or rel.startswith("probes"):
        continue
    for f in files:
        if f.endswith(".o"):
            src = os.path.normpath(os.path.join(rel, f[:-2] + ".c"))
            if os.path.exists(os.path.join(top, src)):
                objs[src] = os.path.join(root, f)


def syms(path, defined):
    args = ["nm", "--defined-only" if defined else "--undefined-only", "-P", path]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    res = set()
    for line in out.splitlines():
        p = line.split()
        if len(p) >= 2 and (not defined or p[1] in "TDBRVW"):
            res.add(p[0])
    return res


owner = {}
uses = {}
for src, o in objs.items():
    for s in syms(o, True):
        owner.setdefault(s, src)
    uses[src] = syms(o, False)

edges = collections.defaultdict(set)
for src, us in uses.items():
    for s in us:
        o = owner.get(s)
        if o and o != src:
            edges[src].add(o)


def folder(src):
    d = os.path.dirname(src)
    return d if d else "."


fedges = collections.defaultdict(set)
for a, bs in edges.items():
    for b in bs:
        if folder(a) != folder(b):
            fedges[folder(a)].add(folder(b))


def sccs(nodes, edges):
    """Tarjan: the strongly connected components with more than one node."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


n = 0
bad = 0


def tap(ok, what):
    global n, bad
    n += 1
    if not ok:
        bad += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", n, what))


# every source of the code folders has its object: a missing one (a build
# that is stale, or not there at all) would leave its calls out of the graph
code = ("common", "policy", "limits", "jail", "learn", "supervisor", "cli", "broker", "egress")
missing = []
for d in code:
    for root, _, fs in os.walk(os.path.join(top, d)):
        for f in fs:
            src = os.path.relpath(os.path.join(root, f), top)
            if f.endswith(".c") and src not in objs:
                missing.append(src)
tap(objs and not missing, "every source of %s is built (%d objects in %s)%s" % (
    ", ".join(code), len(objs), build, "".join("\n#   not built: " + m for m in sorted(missing))))

files = set(objs)
fc = sccs(files, edges)
tap(not fc, "no circle between files (%d files)%s" % (len(files), "".join(
    "\n#   circle: " + " -> ".join(c) for c in fc)))
folders = set(folder(f) for f in files)
dc = sccs(folders, fedges)
tap(not dc, "no circle between folders (%d folders)%s" % (len(folders), "".join(
    "\n#   circle: " + " -> ".join(c) for c in dc)))

# sizes: the privileged process is what `warden` links (Makefile: LIB_SRC,
# main.c); the broker's and the egress proxy's folders are not in it
priv_dirs = ("common", "policy", "limits", "jail", "supervisor", "cli")
over = []
for root, dirs, fs in os.walk(top):
    rel = os.path.relpath(root, top)
    if rel.startswith((".git", "build", "tests")) or "/." in "/" + rel:
        continue
    for f in fs:
        if not f.endswith((".c", ".h", ".py", ".sh", ".js", ".mjs", ".R", ".rb", ".pl")):
            continue
        p = os.path.normpath(os.path.join(rel, f))
        with open(os.path.join(top, p), errors="replace") as fh:
            lines = sum(1 for _ in fh)
        limit = 800 if p.split("/")[0] in priv_dirs and f.endswith((".c", ".h")) else 1000
        if lines > limit:
            over.append("%s: %d lines (at most %d)" % (p, lines, limit))
tap(not over, "no source file over 1,000 lines, none over 800 in the privileged process%s" % "".join(
    "\n#   " + o for o in over))

if graph:
    memo = {}

    def depth(f, es, seen=()):
        if f in seen:
            return 0
        if (f, id(es)) not in memo:
            memo[(f, id(es))] = 1 + max((depth(g, es, seen + (f,)) for g in es.get(f, ())),
                                        default=0)
        return memo[(f, id(es))]
    print("# folders, each with the folders it calls (from the objects' symbols):")
    for f in sorted(folders, key=lambda x: (-depth(x, fedges), x)):
        print("#   %-22s -> %s" % (f, ", ".join(sorted(fedges.get(f, ()))) or "(nothing)"))
    deepest = max(files, key=lambda f: depth(f, edges))
    print("# the longest chain of calls between files: %d files, from %s" %
          (depth(deepest, edges), deepest))
print("1..%d" % n)
sys.exit(1 if bad else 0)
