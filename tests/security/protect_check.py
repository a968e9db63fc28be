#!/usr/bin/env python3
"""Issue 19: every catalog entry (warden policy show --catalog --json), in a
home directory used as the workspace and in a git project with a nested
repository, existing or not yet existing; a real jail tries to read, write,
create, rename and remove each, and to shed a protection by renaming the
directory above it; everything is judged from the host afterwards.

    protect_check.py home|project existing|missing DIR

DIR is a fresh empty directory (the home, or the project).  Exit 0 and
"ok" when every check held; else one line per failure on stderr, exit 1.
"""
import json
import os
import subprocess
import sys
import time

W = os.environ["WARDEN"]
MARK = "orig-content"
PWN = "PWNED-by-the-jail"
TARGET = "/dev/null/warden: protected while a jail runs"   # warden/protect.h


def catalog():
    # CATALOG_WARDEN: the catalog from another binary (to run this against
    # a warden that predates it, which must fail)
    out = subprocess.run([os.environ.get("CATALOG_WARDEN", W), "policy", "show", "--catalog",
                          "--json"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def make(path, kind):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if kind == "dir":
        os.makedirs(path, exist_ok=True)
        with open(os.path.join(path, "inside"), "w") as f:
            f.write(MARK + ":" + path + "\n")
    else:
        with open(path, "w") as f:
            f.write(MARK + ":" + path + "\n")


# What the jail tries, for each path: read it, write or create in it, rename
# it and put a fresh one in its place, remove it, and for a missing one
# create it.  It reports what it read (for the hidden entries) and what
# succeeded; the host judges by the files themselves.
JAIL = r'''
import json, os, shutil, sys
PWN = %r
targets = json.loads(sys.argv[1])
report = {}
def attempt(what, f):
    try:
        f(); return what + ":ok"
    except OSError as e:
        return what + ":" + (e.strerror or str(e))
for t in targets:
    p, kind = t["path"], t["kind"]
    r = []
    try:
        if os.path.isdir(p):
            for root, _, files in os.walk(p):
                for n in files:
                    with open(os.path.join(root, n), errors="replace") as f:
                        r.append("read:" + f.read())
        elif os.path.exists(p):
            with open(p, errors="replace") as f:
                r.append("read:" + f.read())
    except OSError as e:
        r.append("read-failed:" + (e.strerror or ""))
    def write():
        if os.path.isdir(p):
            with open(os.path.join(p, "planted"), "w") as f: f.write(PWN)
        else:
            with open(p, "a") as f: f.write(PWN)
    def create():
        if kind == "dir":
            os.makedirs(os.path.join(p, "sub"), exist_ok=True)
            with open(os.path.join(p, "sub", "planted"), "w") as f: f.write(PWN)
        else:
            with open(p, "w") as f: f.write(PWN)
    def rename():
        os.rename(p, p + ".moved")
    def remove():
        if os.path.isdir(p) and not os.path.islink(p): shutil.rmtree(p)
        else: os.unlink(p)
    r.append(attempt("write", write))
    r.append(attempt("rename", rename))
    r.append(attempt("create-after-rename", create))
    r.append(attempt("remove", remove))
    r.append(attempt("create", create))
    report[p] = r
# shed the protection by moving the directory above it (a nested
# repository's parent, or ~/.config) and planting a fresh file at the
# protected path, where the host will look for it
for src, plant_at in json.loads(sys.argv[2]):
    r = [attempt("rename-parent", lambda: os.rename(src, src + ".moved"))]
    def plant():
        os.makedirs(os.path.dirname(plant_at), exist_ok=True)
        with open(plant_at, "w") as f: f.write(PWN)
    r.append(attempt("plant", plant))
    report[src + " (parent)"] = r
json.dump(report, sys.stdout)
''' % PWN

fails = []


def fail(msg):
    fails.append(msg)


def host_files_with_pwn(top):
    """Every host file under top whose content the jail wrote."""
    hits = []
    for root, dirs, files in os.walk(top):
        for n in files:
            p = os.path.join(root, n)
            try:
                with open(p, errors="replace") as f:
                    if PWN in f.read():
                        hits.append(p)
            except OSError:
                pass
    return hits


def inside(path, base):
    return path == base or path.startswith(base.rstrip("/") + "/")


def main():
    scenario, variant, top = sys.argv[1], sys.argv[2], os.path.realpath(sys.argv[3])
    cat = catalog()
    home = top if scenario == "home" else os.path.join(top, "not-here-home")
    roots = [top]                  # project roots
    parents = []                   # directories whose rename would shed a protection
    if scenario == "project":
        nested = os.path.join(top, "a", "b", "c", "nested")
        os.makedirs(nested)
        for r in (top, nested):
            subprocess.run(["git", "init", "-q", r], check=True)
        roots.append(nested)
        hook = os.path.join(nested, ".git", "hooks", "pre-commit")
        parents = [(os.path.join(top, "a", "b"), hook), (nested, hook)]
    else:
        os.makedirs(os.path.join(top, ".config"), exist_ok=True)
        parents = [(os.path.join(top, ".config"),
                    os.path.join(top, ".config", "fish", "config.fish"))]
    targets = []
    for e in cat:
        if not (e["protected"] or e["hidden"]):
            continue
        name = e["name"]
        if e["where"] == "home":
            if scenario != "home":
                continue
            paths = [os.path.join(home, name[2:])]
        else:
            if name.endswith("*"):
                name = name[:-1] + "local"
            paths = [os.path.join(r, name) for r in roots]
        for p in paths:
            # a nested repository's missing entries get no placeholder
            # (jail/protect.c, project_at): only what exists there
            nested_root = e["where"] == "project" and os.path.dirname(p) != top
            if name == ".git" and os.path.isdir(p):
                exists = True      # the repositories' own
            elif variant == "existing":
                make(p, e["kind"])
                exists = True
            else:
                exists = False
            targets.append(dict(path=p, kind=e["kind"], protected=e["protected"],
                                hidden=e["hidden"], exists=exists, where=e["where"],
                                name=e["name"], cover=not (e["where"] == "project" and
                                                           (e["kind"] == "file" or nested_root))))
    # the state of the host before: each existing target's files and contents
    before = {}
    for t in targets:
        if t["exists"]:
            snap = {}
            for root, dirs, files in os.walk(t["path"]) if os.path.isdir(t["path"]) else [(os.path.dirname(t["path"]), [], [os.path.basename(t["path"])])]:
                for n in files:
                    p = os.path.join(root, n)
                    with open(p, "rb") as f:
                        snap[p] = f.read()
            before[t["path"]] = snap
    env = dict(os.environ, HOME=home)
    r = subprocess.run([W, "run", "--workspace", top, "--", "python3", "-c", JAIL,
                        json.dumps([dict(path=t["path"], kind=t["kind"]) for t in targets]),
                        json.dumps(parents)],
                       env=env, capture_output=True, text=True, timeout=120)
    try:
        report = json.loads(r.stdout)
    except ValueError:
        print("the jail's report is not JSON: %r\nstderr: %s" % (r.stdout[:2000], r.stderr[-2000:]),
              file=sys.stderr)
        return 1
    # judged from the host
    for t in targets:
        p = t["path"]
        if t["exists"]:
            for f, data in before[p].items():
                try:
                    with open(f, "rb") as fh:
                        now = fh.read()
                except OSError as e:
                    fail("%s: %s is gone from the host (%s)" % (t["name"], f, e))
                    continue
                if now != data:
                    fail("%s: %s changed on the host" % (t["name"], f))
            if os.path.lexists(p + ".moved"):
                fail("%s: renamed to %s.moved on the host" % (t["name"], p))
            if t["hidden"]:
                seen = [x for x in report.get(p, []) if x.startswith("read:") and MARK in x]
                if seen:
                    fail("%s: the jail read the hidden content: %s" % (t["name"], seen[0][:80]))
        elif t["protected"] and t["cover"]:
            # a missing protected path: nothing the jail made is there
            # (a placeholder may stand until the cleaner removes it)
            if os.path.islink(p) and os.readlink(p) != TARGET:
                fail("%s: the jail made a symlink at %s" % (t["name"], p))
            elif os.path.isfile(p):
                fail("%s: the jail created %s" % (t["name"], p))
            elif os.path.isdir(p) and not os.path.islink(p) and os.listdir(p):
                fail("%s: the jail created %s with %s" % (t["name"], p, os.listdir(p)))
    for d, planted in parents:
        if not os.path.isdir(d) or os.path.lexists(d + ".moved"):
            fail("%s: the jail renamed it (%s)" % (d, report.get(d + " (parent)")))
        if os.path.isfile(planted):
            fail("%s: the jail planted %s after moving %s" % (d, planted, d))
    for f in host_files_with_pwn(top):
        for t in targets:
            protected_here = t["protected"] and (t["exists"] or t["cover"])
            if (protected_here or t["hidden"] and t["exists"]) and inside(f, t["path"]):
                fail("%s: the jail wrote %s on the host" % (t["name"], f))
    if r.returncode != 0:
        fail("the jail's script failed (%d): %s" % (r.returncode, r.stderr[-1000:]))
    if fails:
        for f in fails[:40]:
            print("FAIL " + f, file=sys.stderr)
        print("%d failures among %d targets" % (len(fails), len(targets)), file=sys.stderr)
        return 1
    print("ok %s %s: %d targets" % (scenario, variant, len(targets)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
