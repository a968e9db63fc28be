# warden's persistent Python driver (supervisor/lang.h has the protocol).
# Run as `python3 -u -c <this text>` inside the jail.  Reads "R <len>\n" +
# <len> bytes of UTF-8 code from fd 4, runs the block in __main__'s globals,
# flushes stdout/stderr and answers "D <status>\n" on fd 4.  EOF: exit 0.
# While a block runs: "A <line>\n" when its running top-level line changes,
# "M <png|jpeg|html> <len>\n<bytes>" for a figure (plt.show(), a figure
# left open at the block's end), a PIL Image.show(), display(obj) or a final
# expression with a _repr_png_/_repr_jpeg_/_repr_html_ (supervisor/rich.h).
# Everything lives inside _warden_main so that __main__ holds only the
# user's names.


def _warden_main():
    import ast
    import builtins
    import importlib.abc
    import importlib.util
    import inspect
    import io
    import linecache
    import os
    import re
    import signal
    import sys
    import traceback

    globals().pop("_warden_main", None)   # keep __main__ clean
    g = sys.modules["__main__"].__dict__
    pid = os.getpid()
    ctl = 4
    os.set_inheritable(ctl, False)        # subprocesses never get fd 4
    sys.argv = [""]
    if not sys.path or sys.path[0] != "":
        sys.path.insert(0, "")            # modules in the working directory
    # figures go to warden (the backend below), never to a window
    os.environ["MPLBACKEND"] = "module://_warden_mpl"

    header = re.compile(rb"R (0|[1-9][0-9]{0,9})\n")
    limit = 1 << 30
    buf = bytearray()
    state = {"running": False, "n": 0, "loop": None}

    def on_sigint(signum, frame):
        # Only a running block is interrupted; a SIGINT that arrives while
        # the driver waits for the next frame is dropped.
        if state["running"]:
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_sigint)

    def bad(msg):
        sys.stderr.write("warden python driver: %s\n" % msg)
        sys.stderr.flush()
        os._exit(2)

    def fill():
        """Read more bytes from fd 4; False on EOF."""
        chunk = os.read(ctl, 65536)
        buf.extend(chunk)
        return bool(chunk)

    def read_frame():
        """The next block's bytes, or None on a clean EOF."""
        while b"\n" not in buf[:32]:
            if len(buf) >= 32:
                bad("bad frame header on fd 4")
            if not fill():
                if buf:
                    bad("fd 4 closed inside a frame header")
                return None
        m = header.match(bytes(buf[:buf.index(b"\n") + 1]))
        if not m:
            bad("bad frame header on fd 4")
        n = int(m.group(1))
        if n > limit:
            bad("code block too large")
        del buf[:m.end()]
        while len(buf) < n:
            if not fill():
                bad("fd 4 closed inside a code block")
        code = bytes(buf[:n])
        del buf[:n]
        return code

    def fix_stream(name, fd):
        # Code that closed sys.stdout/sys.stderr must not break the session
        # (the fds stay open: Python's std streams never close them).
        s = getattr(sys, name, None)
        if s is None or getattr(s, "closed", False):
            try:
                s = open(fd, "w", buffering=1, closefd=False,
                         errors="backslashreplace")
                setattr(sys, name, s)
                setattr(sys, "__%s__" % name, s)
            except Exception:
                return
        for f in (s, getattr(sys, "__%s__" % name, None)):
            try:
                f.flush()
            except Exception:
                pass

    def send(data, reraise=False):
        # a frame is written whole: an interrupt that lands inside is
        # raised once it is out (reraise), or dropped (the "D" reply)
        hit = False
        while data:
            try:
                data = data[os.write(ctl, data):]
            except KeyboardInterrupt:
                hit = True
            except OSError:
                os._exit(3)              # the supervisor is gone
        if hit and reraise:
            raise KeyboardInterrupt

    def emit(fmt, data):
        """Rich output of the running block (png, jpeg or html bytes)."""
        if not state["running"] or os.getpid() != pid:
            return
        if isinstance(data, str):
            data = data.encode("utf-8", "backslashreplace")
        fix_stream("stdout", 1)      # what was printed before comes first
        fix_stream("stderr", 2)
        send(b"M %s %d\n" % (fmt.encode(), len(data)) + bytes(data), True)

    lines = {"last": 0, "n": 0, "t": 0.0}
    mono = __import__("time").monotonic

    def active_line(n):
        # every change of line while few have been sent; past 1000 in a
        # block (a loop), at most one every 50 ms
        if n == lines["last"] or not state["running"]:
            return
        if lines["n"] >= 1000:
            t = mono()
            if t - lines["t"] < 0.05:
                return
            lines["t"] = t
        lines["last"] = n
        lines["n"] += 1
        if os.getpid() == pid:
            send(b"A %d\n" % n, True)

    builtins.__warden_line__ = active_line

    class Lines(ast.NodeTransformer):
        """Before each statement of the block's top level (and of the
        loops, ifs, withs and trys in it, not of functions or classes it
        defines): __warden_line__(its line)."""

        def mark(self, body):
            out = []
            for st in body:
                if isinstance(st, ast.ImportFrom) and st.module == "__future__":
                    out.append(st)       # must stay first
                    continue
                call = ast.Expr(ast.Call(ast.Name("__warden_line__", ast.Load()),
                                         [ast.Constant(st.lineno)], []))
                out.append(ast.copy_location(call, st))
                if not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef,
                                       ast.ClassDef)):
                    self.visit(st)
                out.append(st)
            return out

        def generic_visit(self, node):
            for field in ("body", "orelse", "finalbody"):
                b = getattr(node, field, None)
                if isinstance(b, list) and b and isinstance(b[0], ast.stmt):
                    setattr(node, field, self.mark(b))
            for h in getattr(node, "handlers", ()) or ():
                h.body = self.mark(h.body)
            for c in getattr(node, "cases", ()) or ():
                c.body = self.mark(c.body)
            return node

    def figure_png(fig):
        b = io.BytesIO()
        fig.savefig(b, format="png")
        return b.getvalue()

    def rich(obj):
        """Send obj's richest representation; False when it has none."""
        try:
            mpl_fig = sys.modules.get("matplotlib.figure")
            if mpl_fig is not None and isinstance(obj, mpl_fig.Figure):
                emit("png", figure_png(obj))
                return True
            for meth, fmt in (("_repr_png_", "png"), ("_repr_jpeg_", "jpeg"),
                              ("_repr_html_", "html")):
                f = getattr(type(obj), meth, None)
                if f is None:
                    continue
                data = f(obj)
                if isinstance(data, tuple):   # (data, metadata)
                    data = data[0]
                if data:
                    emit(fmt, data)
                    return fmt
        except Exception:
            traceback.print_exc()
        return False

    def display(*objs, **kw):
        """IPython's display(): images and HTML come back as such."""
        for o in objs:
            if not rich(o):
                print(repr(o))

    builtins.display = display

    def displayhook(value):
        if value is None:
            return
        builtins._ = value
        kind = rich(value)
        if kind == "html" or not kind:   # a table: its text for the model too
            print(repr(value))

    def show_figures():
        pyplot = sys.modules.get("matplotlib.pyplot")
        if pyplot is None:
            return
        for num in pyplot.get_fignums():
            emit("png", figure_png(pyplot.figure(num)))
        pyplot.close("all")

    mpl_backend = (
        "from matplotlib.backends.backend_agg import FigureCanvasAgg as FigureCanvas\n"
        "from matplotlib.backend_bases import FigureManagerBase as FigureManager\n"
        "def show(*args, **kwargs):\n"
        "    _warden_show()\n")

    def pil_viewer():
        from PIL import ImageShow

        class Viewer(ImageShow.Viewer):
            def show(self, image, **options):
                b = io.BytesIO()
                image.save(b, format="PNG")
                emit("png", b.getvalue())
                return 1
        ImageShow.register(Viewer(), 0)

    class Hooks(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        """The matplotlib backend module, and PIL's viewer registered
        once PIL.ImageShow is imported; nothing else is touched."""

        def find_spec(self, name, path, target=None):
            if name == "_warden_mpl":
                return importlib.util.spec_from_loader(name, self)
            if name != "PIL.ImageShow":
                return None
            sys.meta_path.remove(self)
            try:
                spec = importlib.util.find_spec(name)
            finally:
                sys.meta_path.insert(0, self)
            if spec is None or spec.loader is None:
                return spec
            real = spec.loader.exec_module

            def exec_module(module):
                real(module)
                try:
                    pil_viewer()
                except Exception:
                    pass
            spec.loader.exec_module = exec_module
            return spec

        def create_module(self, spec):
            return None

        def exec_module(self, module):
            module.__dict__["_warden_show"] = show_figures
            exec(mpl_backend, module.__dict__)

    sys.meta_path.insert(0, Hooks())
    sys.displayhook = displayhook

    def run_code(code):
        if code.co_flags & inspect.CO_COROUTINE:   # top-level await
            if state["loop"] is None:
                import asyncio
                state["loop"] = asyncio.new_event_loop()
            state["loop"].run_until_complete(eval(code, g))
        else:
            exec(code, g)

    def run_block(data):
        state["n"] += 1
        name = "<block %d>" % state["n"]
        try:
            src = data.decode("utf-8")
        except UnicodeDecodeError as e:
            sys.stderr.write("the code is not valid UTF-8: %s\n" % e)
            return 1
        # tracebacks and inspect.getsource() find the block's lines here
        linecache.cache[name] = (len(src), None, src.splitlines(True), name)
        flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        try:
            tree = compile(src, name, "exec", ast.PyCF_ONLY_AST | flags)
            last = None
            if tree.body and isinstance(tree.body[-1], ast.Expr):
                # like Jupyter: the value of a final expression is shown
                last = ast.Interactive(body=[tree.body.pop()])
                Lines().generic_visit(last)
            Lines().generic_visit(tree)
            ast.fix_missing_locations(tree)
            if last is not None:
                ast.fix_missing_locations(last)
            codes = [compile(tree, name, "exec", flags)]
            if last is not None:
                codes.append(compile(last, name, "single", flags))
        except (SyntaxError, ValueError, OverflowError, MemoryError) as e:
            traceback.print_exception(type(e), e, None)
            return 1
        try:
            state["running"] = True
            lines["last"] = lines["n"] = 0
            for c in codes:
                run_code(c)
            show_figures()               # as Jupyter's inline backend does
            state["running"] = False
            return 0
        except SystemExit as e:
            state["running"] = False
            code = e.code
            if code is None:
                return 0
            if isinstance(code, int):
                return code & 0xff
            try:
                sys.stderr.write("%s\n" % (code,))
            except Exception:
                pass
            return 1
        except KeyboardInterrupt:
            state["running"] = False
            try:
                sys.stderr.write("KeyboardInterrupt\n")
            except Exception:
                pass
            return 130
        except BaseException as e:
            state["running"] = False
            # drop the driver's own frames: start at the block's frame
            tb = e.__traceback__
            while tb is not None and tb.tb_frame.f_code.co_filename != name:
                tb = tb.tb_next
            if tb is None:
                tb = e.__traceback__
            try:
                traceback.print_exception(type(e), e, tb)
            except Exception:
                pass
            return 1
        finally:
            state["running"] = False

    while True:
        data = read_frame()
        if data is None:
            os._exit(0)
        try:
            status = run_block(data)
        except KeyboardInterrupt:        # landed between the block and here
            status = 130
        if os.getpid() != pid:           # a child forked by the block
            os._exit(status)
        fix_stream("stdout", 1)
        fix_stream("stderr", 2)
        send(b"D %d\n" % status)


_warden_main()
