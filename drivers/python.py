# warden's persistent Python driver (supervisor/lang.h has the protocol).
# Run as `python3 -u -c <this text>` inside the jail.  Reads "R <len>\n" +
# <len> bytes of UTF-8 code from fd 4, runs the block in __main__'s globals,
# flushes stdout/stderr and answers "D <status>\n" on fd 4.  EOF: exit 0.
# Everything lives inside _warden_main so that __main__ holds only the
# user's names.


def _warden_main():
    import ast
    import inspect
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
    os.environ.setdefault("MPLBACKEND", "Agg")

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
            codes = [compile(tree, name, "exec", flags)]
            if last is not None:
                codes.append(compile(last, name, "single", flags))
        except (SyntaxError, ValueError, OverflowError, MemoryError) as e:
            traceback.print_exception(type(e), e, None)
            return 1
        try:
            state["running"] = True
            for c in codes:
                run_code(c)
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
        msg = b"D %d\n" % status
        while msg:
            try:
                msg = msg[os.write(ctl, msg):]
            except KeyboardInterrupt:
                continue
            except OSError:
                os._exit(3)              # the supervisor is gone


_warden_main()
