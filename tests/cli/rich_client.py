#!/usr/bin/env python3
"""Rich output through `warden serve --stdio` (issue 12), for tests/cli/rich.bats.

    rich_client.py SCENARIO [WARDEN-SERVE-OPTIONS...]

Plays one scenario with serve_client.py's bounded client and exits 0 when
every check held, 1 with one line saying which did not.
"""
import base64
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import check, ok_result, scenario_main  # noqa: E402


def rich(evs, typ):
    return [e for e in evs if e.get("role") == "computer" and e.get("type") == typ]


def png_size(b64, what):
    data = base64.b64decode(b64, validate=True)
    check(data[:8] == b"\x89PNG\r\n\x1a\n", "%s: not a PNG: %r" % (what, data[:16]))
    check(data[12:16] == b"IHDR", "%s: no IHDR chunk first" % what)
    return struct.unpack(">II", data[16:24])


def one_image(evs, fmt, what):
    imgs = rich(evs, "image")
    check(len(imgs) == 1, "%s: want one image message, got %s" %
          (what, [dict(e, content=str(e.get("content"))[:40]) for e in imgs]))
    img = imgs[0]
    check(img.get("format") == fmt, "%s: format %r" % (what, img.get("format")))
    check(isinstance(img.get("session"), str) and img.get("id") is not None,
          "%s: an image without id/session: %s" % (what, list(img)))
    return img


def sc_matplotlib(s, args):
    sid = s.open()
    code = ("import matplotlib.pyplot as plt\n"
            "plt.plot([1, 2, 3], [1, 4, 9])\n"
            "plt.show()\n"
            "print('after')\n")
    out, err, res, evs = s.run(sid, "python", code)
    ok_result(res, "matplotlib block: stderr %r" % err)
    img = one_image(evs, "base64.png", "plt.show()")
    w, h = png_size(img["content"], "plt.show()")
    check(100 <= w <= 4000 and 100 <= h <= 4000, "figure of %dx%d" % (w, h))
    check(out == "after\n", "stdout: %r" % out)
    # the image comes in order: after the block's start, before its end
    kinds = [e.get("start") and "start" or e.get("end") and "end" or e.get("type")
             for e in evs if e.get("role") == "computer"]
    check(kinds.index("start") < kinds.index("image") < kinds.index("end"), "order: %s" % kinds)
    # a figure left open at the block's end is shown, as Jupyter's inline backend does
    out, err, res, evs = s.run(sid, "python", "plt.figure(figsize=(2, 1), dpi=100)\n"
                               "plt.plot([0, 1])\nx = 1\n")
    ok_result(res, "open figure block")
    w, h = png_size(one_image(evs, "base64.png", "open figure")["content"], "open figure")
    check((w, h) == (200, 100), "a 2x1 in figure at 100 dpi is %dx%d" % (w, h))
    # and once shown, it is gone: the next block shows nothing
    out, err, res, evs = s.run(sid, "python", "y = 2\n")
    check(not rich(evs, "image"), "an image again: %s" % rich(evs, "image"))


def sc_pil(s, args):
    sid = s.open()
    out, err, res, evs = s.run(sid, "python", "from PIL import Image\n"
                               "im = Image.new('RGB', (32, 16), 'red')\nim.show()\n")
    ok_result(res, "PIL block: stderr %r" % err)
    w, h = png_size(one_image(evs, "base64.png", "Image.show()")["content"], "Image.show()")
    check((w, h) == (32, 16), "PIL image of %dx%d" % (w, h))
    # a final expression with _repr_png_ (a PIL image) is an image too
    out, err, res, evs = s.run(sid, "python", "im.resize((8, 4))\n")
    ok_result(res, "PIL final expression")
    w, h = png_size(one_image(evs, "base64.png", "final image")["content"], "final image")
    check((w, h) == (8, 4), "final image of %dx%d" % (w, h))
    # display() of an object with _repr_jpeg_ only
    out, err, res, evs = s.run(sid, "python",
                               "import io\nclass J:\n"
                               "    def _repr_jpeg_(self):\n"
                               "        b = io.BytesIO(); im.save(b, 'JPEG'); return b.getvalue()\n"
                               "display(J())\n")
    ok_result(res, "jpeg display")
    img = one_image(evs, "base64.jpeg", "display(jpeg)")
    check(base64.b64decode(img["content"])[:3] == b"\xff\xd8\xff", "not a JPEG")


def sc_html(s, args):
    sid = s.open()
    out, err, res, evs = s.run(sid, "python",
                               "class T:\n"
                               "    def _repr_html_(self): return '<b>bold</b>'\n"
                               "    def __repr__(self): return 'T()'\n"
                               "display(T())\nT()\n")
    ok_result(res, "html block: %r" % err)
    html = rich(evs, "code")
    check(len(html) == 2 and all(e.get("format") == "html" and e.get("content") == "<b>bold</b>"
                                 for e in html), "html messages: %s" % html)
    # a final expression's HTML comes with its text, for readers of text
    check(out == "T()\n", "the final expression's text: %r" % out)


def sc_pandas(s, args):
    sid = s.open()
    out, err, res, evs = s.run(sid, "python", "import pandas as pd\n"
                               "pd.DataFrame({'a': [1, 2], 'b': [3, 4]})\n")
    ok_result(res, "pandas block: %r" % err)
    html = rich(evs, "code")
    check(len(html) == 1 and html[0].get("format") == "html" and
          "<table" in html[0].get("content", ""), "DataFrame html: %s" % html)
    check("a  b" in out, "the DataFrame's text: %r" % out)


def active(evs):
    return [e.get("content") for e in evs
            if e.get("type") == "console" and e.get("format") == "active_line"]


def sc_lines(s, args):
    sid = s.open()
    for lang, code in (("python", "a = 1\nb = 2\nprint(a + b)\n"),
                       ("javascript", "let a = 1;\nlet b = 2;\nconsole.log(a + b);\n"),
                       ("shell", "a=1\nb=2\necho $((a + b))\n")):
        out, err, res, evs = s.run(sid, lang, code)
        ok_result(res, "%s lines block" % lang)
        check(out == "3\n", "%s output: %r" % (lang, out))
        check(active(evs) == [1, 2, 3, None], "%s active lines: %s" % (lang, active(evs)))
        # null comes last, before the console's end
        idx = [i for i, e in enumerate(evs) if e.get("format") == "active_line"]
        end = [i for i, e in enumerate(evs) if e.get("end")]
        check(end and idx[-1] < end[0], "%s: null after the end mark" % lang)
    # a loop: lines repeat as they run, and the count stays bounded
    out, err, res, evs = s.run(sid, "python", "t = 0\nfor i in range(3):\n    t += i\nprint(t)\n")
    ok_result(res, "loop")
    # a loop's header is marked once, its body each time: 3 repeats, unsent
    check(active(evs) == [1, 2, 3, 4, None], "loop lines: %s" % active(evs))
    out, err, res, evs = s.run(sid, "python", "for i in range(200000):\n    x = i\n    y = i\n")
    ok_result(res, "long loop")
    check(len(active(evs)) < 5000, "a long loop sent %d active lines" % len(active(evs)))


def sc_final(s, args):
    sid = s.open()
    cases = [("python", "x = 6\nx * 7\n", "42\n"),
             ("javascript", "const x = 6;\nx * 7\n", "42\n"),
             ("javascript", "let o = {a: 1};\no\n", "{ a: 1 }\n"),
             ("javascript", "console.log('hi')\n", "hi\n"),
             ("ruby", "x = 6\nx * 7\n", "42\n"),
             ("ruby", "puts 'hi'\n", "hi\n"),
             ("ruby", "y = 3\n", "")]
    for lang, code, want in cases:
        out, err, res, evs = s.run(sid, lang, code)
        ok_result(res, "%s final expression: %r" % (lang, err))
        check(out == want, "%s: %r gives %r, want %r" % (lang, code, out, want))


def sc_final_r(s, args):
    sid = s.open()
    for code, want in (("x <- 6\nx * 7\n", "[1] 42\n"), ("y <- 1\n", ""),
                       ("invisible(3)\n", "")):
        out, err, res, evs = s.run(sid, "r", code)
        ok_result(res, "r final expression: %r" % err)
        check(out == want, "r: %r gives %r, want %r" % (code, out, want))


def sc_hostile(s, args):
    """Jailed code shares the driver's process and so its control fd: what
    it writes there is bounded and harmless."""
    sid = s.open()
    ok_result(s.run(sid, "python", "keep = 5\n")[2], "setup")
    # an image over the policy's output limit (64K in the flood profile)
    # is read and dropped with a note; the session goes on with its state
    out, err, res, evs = s.run(sid, "python",
                               "import os\nd = b'\\x89PNG' + b'x' * 200000\n"
                               "os.write(4, b'M png %d\\n' % len(d) + d)\nprint(keep)\n")
    ok_result(res, "oversized image")
    check(not rich(evs, "image"), "an oversized image came through")
    check("was dropped" in err and "output limit" in err, "no note: %r" % err)
    check(out == "5\n", "state after the oversized image: %r" % out)
    # a forged image within the limit is just the block's own image
    out, err, res, evs = s.run(sid, "python", "os.write(4, b'M png 4\\nabcd')\n")
    ok_result(res, "forged small image")
    check(base64.b64decode(one_image(evs, "base64.png", "forged")["content"]) == b"abcd",
          "the forged bytes")
    # an image announced past every bound breaks the driver: the jail ends,
    # the block says why, the next block starts fresh
    for bad in (b"M png 99999999999\n", b"M svg 3\n<a>", b"M png 04\n", b"A 0\n", b"A x\n",
                b"M png\n", b"Z\n"):
        out, err, res, evs = s.run(sid, "python", "os.write(4, %r)\nimport time\ntime.sleep(30)\n"
                                   % bad)
        check(res.get("event") == "result" and res.get("reason") == "error" and
              res.get("state_lost") is True, "%r: %s" % (bad, res))
        out, err, res, evs = s.run(sid, "python", "import os\nprint('fresh')\n")
        ok_result(res, "after %r" % bad)
        check(out == "fresh\n", "after %r: %r" % (bad, out))
    # an image cut short by the jail's end never comes through
    out, err, res, evs = s.run(sid, "python", "os.write(4, b'M png 100\\nabc')\nos._exit(0)\n")
    check(res.get("event") == "result" and res.get("state_lost") is True, "cut image: %s" % res)
    check(not rich(evs, "image"), "a cut image came through")
    # forged lines between blocks (a background thread) break only that jail
    ok_result(s.run(sid, "python", "print(1)\n")[2], "still serving")


def sc_image_budget(s, args):
    """Issue 18: a block's images add up against the policy's output limit
    (64K in the flood profile), not each on its own: of two 40,000-byte
    images the first comes through and the second is dropped with a note.
    The next block has the whole limit again."""
    sid = s.open()
    two = ("import os\nd = b'\\x89PNG' + b'%s' * 39996\n"
           "os.write(4, b'M png %%d\\n' %% len(d) + d)\n"
           "os.write(4, b'M png %%d\\n' %% len(d) + d)\nprint('after')\n")
    out, err, res, evs = s.run(sid, "python", two % "a")
    ok_result(res, "two images")
    imgs = rich(evs, "image")
    check(len(imgs) == 1, "two 40,000-byte images under a 64K limit: %d came through" % len(imgs))
    check(base64.b64decode(imgs[0]["content"]) == b"\x89PNG" + b"a" * 39996, "the first image")
    check("was dropped" in err and "25536 bytes left for this block" in err,
          "no note, or not the block's budget: %r" % err)
    check(out == "after\n", "stdout: %r" % out)
    out, err, res, evs = s.run(sid, "python", "import os\nd = b'\\x89PNG' + b'b' * 39996\n"
                               "os.write(4, b'M png %d\\n' % len(d) + d)\n")
    ok_result(res, "the next block's image")
    check(len(rich(evs, "image")) == 1 and not err, "the next block's budget: %s %r" %
          (len(rich(evs, "image")), err))


def sc_len_cap(s, args):
    """Issue 18: an image announced past RICH_LEN_MAX (1 GiB) is malformed:
    2,000,000,000 fits the parser's ten digits and a u32, so only the cap
    refuses it.  The jail ends (reason error, state lost) at once, not after
    the block's wall time; the next block runs fresh."""
    sid = s.open()
    ok_result(s.run(sid, "python", "keep = 1\n")[2], "setup")
    out, err, res, evs = s.run(sid, "python", "import os, time\n"
                               "os.write(4, b'M png 2000000000\\n')\ntime.sleep(30)\n")
    check(res.get("event") == "result" and res.get("reason") == "error" and
          res.get("state_lost") is True, "a 2 GB image announced: %s (stderr %r)" % (res, err))
    check("was dropped" not in err, "the length was taken, and the image dropped: %r" % err)
    out, err, res, evs = s.run(sid, "python", "print('keep' in globals())\n")
    ok_result(res, "after the 2 GB image")
    check(out == "False\n", "not a fresh jail: %r" % out)


def sc_line_cap(s, args):
    """Issue 18: at most RICH_LINES_MAX (100,000) active lines a block: a
    block that writes 100,100 distinct "A" lines on its control fd (besides
    the driver's own) sends exactly 100,000, then the end's null; the next
    block's lines come again."""
    sid = s.open()
    out, err, res, evs = s.run(sid, "python",
                               "import os\nbuf = b''.join(b'A %d\\n' % (1 + i % 2) "
                               "for i in range(100100))\nos.write(4, buf)\nprint('wrote')\n")
    ok_result(res, "100,100 lines")
    lines = active(evs)
    check(out == "wrote\n", "stdout: %r" % out)
    check(len(lines) == 100001 and lines[-1] is None and None not in lines[:-1],
          "want 100,000 active lines and the null: %d lines, ending %s" % (len(lines), lines[-3:]))
    out, err, res, evs = s.run(sid, "python", "a = 1\nb = 2\n")
    ok_result(res, "the next block")
    check(active(evs) == [1, 2, None], "the next block's lines: %s" % active(evs)[:10])


SCENARIOS = {name[3:]: fn for name, fn in globals().items() if name.startswith("sc_")}


def main():
    return scenario_main("rich_client.py", SCENARIOS)


if __name__ == "__main__":
    sys.exit(main())
