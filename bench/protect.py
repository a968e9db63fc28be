#!/usr/bin/env python3
"""make bench: the cost of the protected and hidden catalogs (issue 19) on a
jail's start, against the same run in a plain workspace and against
bubblewrap, in the same run.  Prints medians and ratios; asserts nothing.

    protect.py WARDEN

The workspaces, made here:
  plain     an empty directory (the catalogs find nothing to protect there
            but the project entries' placeholders)
  project   a git project of BENCH_PROTECT_FILES files (default 3000) with
            a dozen nested repositories, two to five levels down
  home      the same as a home directory (HOME is the workspace), with the
            usual startup files, ~/.config, ~/.local and credentials
Rows:
  warm      back to back: the placeholders of the run before are reused
  cold      each run after the cleaner removed them (2.5 s apart): the
            placeholders are made again
Runs alternate between rows (a shared machine drifts); medians in ms.
"""
import os, shutil, statistics, subprocess, sys, tempfile, time

W = sys.argv[1]
RUNS = int(os.environ.get("BENCH_RUNS", "100"))
COLD = int(os.environ.get("BENCH_PROTECT_COLD", "5"))
NFILES = int(os.environ.get("BENCH_PROTECT_FILES", "3000"))
top = tempfile.mkdtemp(prefix="warden-bench-protect-")
rt = os.path.join(top, "run")
os.mkdir(rt, 0o700)


def tree(root, nfiles, repos):
    """nfiles files in a few hundred directories, and git repositories at
    the relative paths in repos."""
    for i in range(nfiles):
        d = os.path.join(root, "src", "m%02d" % (i % 40), "d%d" % (i % 7))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "f%d.py" % i), "w") as f:
            f.write("x = %d\n" % i)
    subprocess.run(["git", "init", "-q", root], check=True)
    for r in repos:
        p = os.path.join(root, r)
        os.makedirs(p, exist_ok=True)
        subprocess.run(["git", "init", "-q", p], check=True)
        with open(os.path.join(p, "README"), "w") as f:
            f.write("nested\n")


REPOS = ["vendor/a", "vendor/b", "src/m01/lib", "src/m02/d3/dep", "tools/x/y/z",
         "third/p/q/r/s", "docs/site", "ext/one", "ext/two", "ext/three/sub",
         "plugins/p1", "plugins/p2"]
plain = os.path.join(top, "plain")
os.mkdir(plain)
project = os.path.join(top, "project")
tree(project, NFILES, REPOS)
home = os.path.join(top, "home")
tree(home, NFILES, REPOS)
for f in (".bashrc", ".profile", ".gitconfig", ".bash_history", ".npmrc"):
    with open(os.path.join(home, f), "w") as fh:
        fh.write("# %s\n" % f)
for d in (".ssh", ".config/gh", ".config/git", ".local/bin", ".local/share", ".cache/pip"):
    os.makedirs(os.path.join(home, d), exist_ok=True)

env = dict(os.environ, XDG_RUNTIME_DIR=rt)
henv = dict(env, HOME=home)


def wcmd(ws):
    return [W, "run", "--quiet", "--no-stdin", "--audit-log", "/dev/null", "--workspace", ws,
            "--", "/bin/true"]


bwrap = shutil.which("bwrap")


def bcmd(ws):
    return [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/usr",
            "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
            "--symlink", "usr/lib64", "/lib64", "--proc", "/proc", "--dev", "/dev",
            "--tmpfs", "/tmp", "--bind", ws, ws, "--chdir", ws, "/bin/true"]


def once(cmd, e):
    t = time.monotonic()
    subprocess.run(cmd, env=e, check=True)
    return (time.monotonic() - t) * 1000


rows = {"warden, plain workspace": (wcmd(plain), env),
        "warden, project (warm)": (wcmd(project), env),
        "warden, home (warm)": (wcmd(home), henv)}
if bwrap:
    rows["bwrap, project"] = (bcmd(project), env)
t = {k: [] for k in rows}
for k, (c, e) in rows.items():   # warm-up: placeholders made once
    once(c, e)
for _ in range(RUNS):
    for k, (c, e) in rows.items():
        t[k].append(once(c, e))
cold = {"warden, project (cold)": (wcmd(project), env), "warden, home (cold)": (wcmd(home), henv)}
for k in cold:
    t[k] = []
for _ in range(COLD):
    for k, (c, e) in cold.items():
        time.sleep(2.5)          # the cleaner (2 s) has removed the placeholders
        t[k].append(once(c, e))
p = statistics.median(t["warden, plain workspace"])
b = statistics.median(t["bwrap, project"]) if bwrap else None
print("protected paths (issue 19): warden run -- /bin/true, median ms; %d files and %d nested "
      "repositories in project and home; %d runs warm, %d cold" % (NFILES, len(REPOS), RUNS, COLD))
print("| workspace                | ms      | x plain | x bwrap |")
print("|--------------------------|---------|---------|---------|")
for k in t:
    m = statistics.median(t[k])
    print("| %-24s | %7.2f | %6.2fx | %7s |" % (k, m, m / p, "%.2fx" % (m / b) if b else "NA"))
r = subprocess.run([W, "run", "--no-stdin", "--audit-log", "/dev/null", "--workspace", home,
                    "--json", os.path.join(top, "s.json"), "--", "/bin/true"], env=henv,
                   capture_output=True, text=True)
print("the home's notice: " + r.stderr.strip())
time.sleep(2.5)
shutil.rmtree(top)
