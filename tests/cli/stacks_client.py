#!/usr/bin/env python3
"""Scenarios of tests/cli/stacks.bats through `warden serve --stdio`.

    stacks_client.py SCENARIO [WARDEN-SERVE-OPTIONS...]

Uses the client of tests/cli/serve_client.py (every wait bounded); exits 0
when every check held, 1 with one line on stderr saying which did not.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import check, ok_result, scenario_main  # noqa: E402


def sc_r_session(s, args):
    sid = s.open()
    langs = [e for e in s.events if e.get("event") == "opened"][-1].get("languages", [])
    names = [l.get("name") for l in langs]
    check("r" in names, "OPENED does not list r: %s" % names)
    out, err, res, _ = s.run(sid, "r", "x <- 41\nf <- function(a) a + 1\nsetwd('sub')")
    ok_result(res, "r first")
    check(out == "" and err == "", "r first printed %r %r" % (out, err))
    out, err, res, _ = s.run(sid, "R", "f(x)\ncat(basename(getwd()), '\\n')")
    ok_result(res, "r second")
    check(out == "[1] 42\nsub \n", "r state: %r (stderr %r)" % (out, err))
    out, err, res, _ = s.run(sid, "rscript", "stop('boom')")
    check(res.get("event") == "result" and res.get("exit_code") == 1, "r error: %s" % res)
    check("boom" in err, "r error message: %r" % err)
    # a plot, written in the workspace (judged on the host by stacks.bats)
    out, err, res, _ = s.run(sid, "r", "png('../r-plot.png', width = 400, height = 300)\n"
                             "plot(1:10, main = 'squares')\ninvisible(dev.off())\nx")
    ok_result(res, "r plot")
    check(out == "[1] 41\n" and err == "", "r plot printed %r %r" % (out, err))


def sc_python_plot(s, args):
    sid = s.open()
    code = ("import numpy as np, pandas as pd\n"
            "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
            "df = pd.DataFrame({'x': np.arange(10), 'y': np.arange(10) ** 2})\n"
            "fig, ax = plt.subplots(figsize=(4, 3), dpi=100)\n"
            "df.plot(x='x', y='y', ax=ax)\nfig.savefig('session-plot.png')\n"
            "print(int(df.y.sum()))\n")
    out, err, res, _ = s.run(sid, "python", code, timeout=120)
    ok_result(res, "python plot")
    err = "".join(l for l in err.splitlines(True)
                  if "Matplotlib is building the font cache" not in l)
    check(out == "285\n" and err == "", "python plot printed %r, stderr %r" % (out, err))


def sc_refused(s, args):
    """Languages without a driver are refused with the list of the available ones."""
    sid = s.open()
    for lang in ("java", "jshell", "powershell", "pwsh", "cobol"):
        rid = s.start(sid, lang, "1")
        ev = s.wait_id(rid)
        check(ev.get("event") == "error", "%s was not refused: %s" % (lang, ev))
        msg = ev.get("message", "")
        check(lang in msg and "available:" in msg and "python" in msg and
              re.search(r"(: |, )r( \(|,|$)", msg),
              "%s refused without the list: %s" % (lang, msg))
    out, err, res, _ = s.run(sid, "r", "cat(1)")
    check(out == "1", "after the refusals: %r" % out)


SCENARIOS = {name[3:]: fn for name, fn in globals().items() if name.startswith("sc_")}


def main():
    return scenario_main("stacks_client.py", SCENARIOS)


if __name__ == "__main__":
    sys.exit(main())
