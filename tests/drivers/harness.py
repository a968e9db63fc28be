#!/usr/bin/env python3
"""Runs warden's language drivers (drivers/*) outside any jail and checks
the protocol of supervisor/lang.h against the real interpreters.

    harness.py CASE LANG...     run one case for some languages
    harness.py list             the cases

The argv and the driver file of each language are read from
supervisor/lang.c, so the harness starts exactly what the supervisor starts
(argv[0] becomes /usr/bin/<argv[0]>, what the jail sees).  The driver gets a
real socketpair on fd 4, /dev/null on stdin and pipes on stdout/stderr, and
runs as pid 1 of a new pid namespace (unshare, when user namespaces are
available) in its own process group, as in a jail.  Every wait is bounded
(WAIT seconds) and fails the case when it runs out.

Prints one line per language and case; exits 1 if any failed."""

import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

TOP = os.environ.get("WARDEN_TOP") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
WAIT = 20.0


class Fail(Exception):
    pass


def lang_table():
    """{name: (driver file, argv, SIGINT repeat ms)} as written in supervisor/lang.c."""
    with open(os.path.join(TOP, "supervisor", "lang.c")) as f:
        src = f.read()
    arrays = {}
    for m in re.finditer(r"^static const char \*const (\w+_argv)\[\] = \{([^}]*)\};", src, re.M):
        items = [x.strip() for x in m.group(2).split(",")]
        if items[-1] != "NULL":
            raise SystemExit("lang.c: %s is not NULL-terminated" % m.group(1))
        arrays[m.group(1)] = [json_str(x) for x in items[:-1]]
    table = {}
    for m in re.finditer(r'\{ "(\w+)", "([^"]*)", "([^"]+)", (\w+), (true|false), (?:"\w+"|NULL), (\d+) \}', src):
        table[m.group(1)] = (m.group(3), arrays[m.group(4)], int(m.group(6)))
    if not table:
        raise SystemExit("lang.c: no table found")
    return table


def json_str(lit):
    if not (lit.startswith('"') and lit.endswith('"')) or "\\" in lit:
        raise SystemExit("lang.c: unexpected argv element %s" % lit)
    return lit[1:-1]


def can_unshare():
    try:
        r = subprocess.run(["unshare", "-Urpf", "true"], stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=WAIT)
        return r.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


PID1 = can_unshare()


class Driver:
    def __init__(self, lang, table):
        file, argv, self.sigint_repeat_ms = table[lang]
        with open(os.path.join(TOP, "drivers", file)) as f:
            text = f.read()
        argv = ["/usr/bin/" + argv[0]] + [text if a == "@DRIVER@" else a for a in argv[1:]]
        self.dir = tempfile.mkdtemp(prefix="warden-drv.")
        try:
            self._start(argv)
        except BaseException:
            if getattr(self, "proc", None):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)   # unshare: its pid ns dies
                except OSError:
                    pass
                self.proc.wait()
            shutil.rmtree(self.dir, ignore_errors=True)
            raise

    def _start(self, argv):
        os.mkdir(os.path.join(self.dir, "sub"))
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        fd = theirs.fileno()

        def child():
            # fd 4 is the socket, and no other fd but 0-2 reaches the driver
            # (whatever the test runner left open): as in the jail
            os.dup2(fd, 4, inheritable=True)
            os.set_inheritable(4, True)  # dup2(4, 4) keeps close-on-exec
            # the test runner may ignore SIGINT (a background job does);
            # the supervisor resets signals for the jail, and so does this
            for sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGTERM):
                signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            for name in os.listdir("/proc/self/fd"):
                n = int(name)
                if n > 2 and n != 4:
                    try:
                        if os.get_inheritable(n):
                            os.close(n)
                    except OSError:
                        pass
        if PID1:
            # unshare forks the driver as pid 1 of a new pid namespace;
            # setsid gives it its own process group (SIGINT goes there).
            argv = ["unshare", "-Urpf", "--", "setsid", "--"] + argv
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": self.dir}
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, cwd=self.dir, env=env,
                                     preexec_fn=child, close_fds=False, start_new_session=True)
        theirs.close()
        self.pid = self.proc.pid
        if PID1:
            self.pid = self._child_of(self.proc.pid)
        self.out = bytearray()
        self.err = bytearray()
        self.ctl = bytearray()
        for f in (self.proc.stdout, self.proc.stderr):
            os.set_blocking(f.fileno(), False)
        self.sock.setblocking(False)

    def _child_of(self, pid):
        end = time.monotonic() + WAIT
        while time.monotonic() < end:
            try:
                with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
                    kids = f.read().split()
            except OSError:
                kids = []
            if kids:
                return int(kids[0])
            if self.proc.poll() is not None:
                raise Fail("unshare exited with %d" % self.proc.returncode)
            time.sleep(0.01)
        raise Fail("the driver did not start")

    def close(self):
        for p in (self.pid, self.proc.pid):
            try:
                os.killpg(p, signal.SIGKILL)
            except OSError:
                pass
        try:
            self.proc.wait(WAIT)
        except subprocess.TimeoutExpired:
            pass
        self.sock.close()
        self.proc.stdout.close()
        self.proc.stderr.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    # -- I/O -----------------------------------------------------------
    def pump(self, until, what, every=None):
        """Read stdout, stderr and fd 4 until until() is true (bounded);
        every: (seconds, f), f called that often meanwhile."""
        end = time.monotonic() + WAIT
        next_call = time.monotonic() + every[0] if every else None
        fds = {self.proc.stdout.fileno(): self.out, self.proc.stderr.fileno(): self.err,
               self.sock.fileno(): self.ctl}
        live = set(fds)
        while not until():
            left = end - time.monotonic()
            if left <= 0:
                raise Fail("no %s within %ds; stdout %r stderr %r fd4 %r"
                           % (what, WAIT, bytes(self.out), bytes(self.err), bytes(self.ctl)))
            if not live:
                raise Fail("all streams closed waiting for %s; stderr %r" % (what, bytes(self.err)))
            if every and time.monotonic() >= next_call:
                every[1]()
                next_call = time.monotonic() + every[0]
            r, _, _ = select.select(list(live), [], [], min(left, every[0]) if every else left)
            for fd in r:
                try:
                    data = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                except ConnectionResetError:
                    data = b""
                if not data:
                    live.discard(fd)
                fds[fd].extend(data)

    def drain(self):
        """What is already in the stdout/stderr pipes (flushed before D)."""
        for fd, b in ((self.proc.stdout.fileno(), self.out), (self.proc.stderr.fileno(), self.err)):
            while True:
                try:
                    data = os.read(fd, 65536)
                except BlockingIOError:
                    break
                if not data:
                    break
                b.extend(data)

    def send(self, data):
        self.sock.setblocking(True)
        self.sock.sendall(data)
        self.sock.setblocking(False)

    def start(self, code):
        b = code.encode("utf-8")
        self.send(b"R %d\n" % len(b) + b)

    def strip_rich(self):
        """Drop the rich-output frames ("A <line>", "M <fmt> <len>" + bytes,
        supervisor/rich.h) from the front of fd 4's bytes; True when what
        is left starts with a line that is neither."""
        while True:
            b = bytes(self.ctl)
            line, nl, rest = b.partition(b"\n")
            if not nl:
                return False
            if re.fullmatch(rb"A [1-9][0-9]{0,9}", line):
                del self.ctl[:len(line) + 1]
                continue
            m = re.fullmatch(rb"M (png|jpeg|html) ([1-9][0-9]{0,9}|0)", line)
            if m:
                if len(rest) < int(m.group(2)):
                    return False
                del self.ctl[:len(line) + 1 + int(m.group(2))]
                continue
            return True

    def wait_done(self, every=None):
        self.pump(self.strip_rich, "D reply", every)
        line, _, rest = bytes(self.ctl).partition(b"\n")
        m = re.fullmatch(rb"D (0|[1-9][0-9]{0,2})", line)
        if not m or int(m.group(1)) > 255 or rest:
            raise Fail("bad reply on fd 4: %r" % bytes(self.ctl))
        self.ctl.clear()
        self.drain()
        out, err = self.out.decode("utf-8", "replace"), self.err.decode("utf-8", "replace")
        self.out.clear()
        self.err.clear()
        return int(m.group(1)), out, err

    def run(self, code):
        self.start(code)
        return self.wait_done()

    def wait_stdout(self, text):
        self.pump(lambda: text.encode() in self.out, "%r on stdout" % text)

    def wait_exit(self):
        try:
            self.sock.setblocking(True)
            self.sock.settimeout(WAIT)
            rest = self.sock.recv(4096)   # the driver must not answer
            if rest:
                raise Fail("unexpected bytes on fd 4: %r" % rest)
        except socket.timeout:
            raise Fail("the driver did not close fd 4 within %ds" % WAIT)
        except ConnectionResetError:
            pass
        try:
            rc = self.proc.wait(WAIT)
        except subprocess.TimeoutExpired:
            raise Fail("the driver did not exit within %ds" % WAIT)
        self.drain()
        return rc

    def wait_child(self, comm):
        """Wait until the driver has a child process running comm."""
        end = time.monotonic() + WAIT
        while time.monotonic() < end:
            try:
                with open("/proc/%d/task/%d/children" % (self.pid, self.pid)) as f:
                    kids = f.read().split()
            except OSError:
                kids = []
            for k in kids:
                try:
                    with open("/proc/%s/comm" % k) as f:
                        if f.read().strip() == comm:
                            return
                except OSError:
                    pass
            time.sleep(0.01)
        raise Fail("no %s child process within %ds" % (comm, WAIT))

    def sigint_group(self):
        os.killpg(self.pid, signal.SIGINT)

    def sigint_settled(self):
        """Wait until no SIGINT is pending for the driver: it was handled."""
        end = time.monotonic() + WAIT
        while time.monotonic() < end:
            with open("/proc/%d/status" % self.pid) as f:
                st = dict(l.split(":", 1) for l in f.read().splitlines() if ":" in l)
            if not (int(st["SigPnd"], 16) | int(st["ShdPnd"], 16)) & (1 << (signal.SIGINT - 1)):
                return
            time.sleep(0.01)
        raise Fail("SIGINT still pending after %ds" % WAIT)


def expect(cond, msg):
    if not cond:
        raise Fail(msg)


def check(d, code, status=0, out=None, err_has=None, out_has=None):
    st, o, e = d.run(code)
    where = "block %r gave status %d, stdout %r, stderr %r" % (code, st, o, e)
    expect(st == status, "want status %d: %s" % (status, where))
    if out is not None:
        expect(o == out, "want stdout %r: %s" % (out, where))
    if out_has is not None:
        expect(out_has in o, "want %r on stdout: %s" % (out_has, where))
    if err_has is not None:
        expect(err_has in e, "want %r on stderr: %s" % (err_has, where))
    return o, e


# -- per-language snippets ---------------------------------------------
# state: a block that defines x = 41, f(a) = a + 1, imports a library and
# changes to ./sub; show: prints "<f(x)> <library result> <cwd>".
SNIP = {
    "python": dict(
        state="x = 41\ndef f(a):\n    return a + 1\nimport json, os\nos.chdir('sub')\n",
        show="print(f(x), json.dumps([1]), os.getcwd())",
        lib="[1]",
        error=("1/0", "ZeroDivisionError"),
        markers="print('D 0')\nprint('R 99')\nprint('R 5\\nD 1')",
        utf8='print("héllo ✓")',
        sleep="print('ready', flush=True)\nimport time\ntime.sleep(30)",
        busy="print('ready', flush=True)\nwhile True:\n    pass",
        intr_err="KeyboardInterrupt",
        one="print(1)",
        printing="i = 0\nwhile True:\n    print(i)\n    i += 1",
        lsfd="import os\nos.system(\"ls /proc/self/fd | tr '\\\\n' ' '\")",
        fork="import os\npid = os.fork()\nif pid == 0:\n    print('child', flush=True)\nelse:\n    os.waitpid(pid, 0)\n    print('parent')",
        alive="print(x)",
        close_out="import sys\nsys.stdout.close()",
        after_close="print('back')",
    ),
    "javascript": dict(
        state="var x = 41\nfunction f(a) { return a + 1 }\nconst path = require('path')\nprocess.chdir('sub')\n",
        show="console.log(f(x), path.basename('/a/b.txt'), process.cwd())",
        lib="b.txt",
        error=("null.foo", "TypeError"),
        markers="console.log('D 0'); console.log('R 99'); console.log('R 5\\nD 1')",
        utf8='console.log("héllo ✓")',
        sleep="console.log('ready'); const t0 = Date.now(); while (Date.now() - t0 < 30000) {}",
        busy="console.log('ready'); for (;;) {}",
        intr_err="interrupted",
        one="console.log(1)",
        printing="var i = 0; for (;;) { console.log(i++) }",
        lsfd="require('child_process').execSync(\"ls /proc/self/fd | tr '\\\\n' ' '\", {stdio: 'inherit'}); undefined",
        alive="console.log(x)",
        close_out="process.stdout.end()",
        after_close="console.error('back')",
    ),
    "shell": dict(
        state="declare x=41\nf() { echo $(( $1 + 1 )); }\nsource /dev/null\ncd sub\n",
        show='echo "$(f $x) $(basename /a/b.txt) $PWD"',
        lib="b.txt",
        error=("false", ""),
        markers="echo 'D 0'; echo 'R 99'; printf 'R 5\\nD 1\\n'",
        utf8='echo "héllo ✓"',
        sleep="echo ready; sleep 30",
        busy=None,                       # a builtin loop is not interruptible
        intr_err="",
        one="echo 1",
        printing=None,
        lsfd="ls /proc/self/fd | tr '\\n' ' '",
        alive='echo "$x"',
        close_out="exec >&-",
        after_close="echo back >&2",
    ),
    "perl": dict(
        state="our $x = 41;\nsub f { $_[0] + 1 }\nuse List::Util qw(sum);\nuse Cwd;\nchdir 'sub' or die;\n",
        show='print f($x), " ", sum(0.5, 0.5) . "b.txt", " ", getcwd(), "\\n";',
        lib="1b.txt",
        error=("die 'boom'", "boom at block line 1."),
        markers="print \"D 0\\nR 99\\nR 5\\nD 1\\n\";",
        utf8='print "héllo ✓\\n";',
        sleep="$| = 1; print \"ready\\n\"; sleep 30;",
        busy="$| = 1; print \"ready\\n\"; 1 while 1;",
        intr_err="Interrupted",
        one="print \"1\\n\";",
        printing="$| = 1; my $i = 0; while (1) { print $i++, \"\\n\" }",
        lsfd="system(\"ls /proc/self/fd | tr '\\\\n' ' '\");",
        fork="my $p = fork(); if (!$p) { print \"child\\n\" } else { waitpid($p, 0); print \"parent\\n\" }",
        alive='print "$x\\n";',
        close_out="close STDOUT;",
        after_close="print STDERR \"back\\n\";",
    ),
    "ruby": dict(
        # the final nil: Dir.chdir's value (0) would be shown
        state="x = 41\ndef f(a) = a + 1\nrequire 'json'\nDir.chdir('sub')\nnil\n",
        show='puts "#{f(x)} #{JSON.generate([1])} #{Dir.pwd}"',
        lib="[1]",
        error=("nil.foo", "NoMethodError"),
        markers="puts 'D 0'; puts 'R 99'; puts \"R 5\\nD 1\"",
        utf8='puts "héllo ✓"',
        sleep="puts 'ready'; $stdout.flush; sleep 30",
        busy="puts 'ready'; $stdout.flush; loop {}",
        intr_err="Interrupt",
        one="puts 1",
        printing="$stdout.sync = true; i = 0; loop { puts i; i += 1 }",
        lsfd="system(\"ls /proc/self/fd | tr '\\\\n' ' '\")",
        fork="if (pid = fork).nil? then puts 'child' else Process.wait(pid); puts 'parent' end",
        alive="puts x",
        close_out="$stdout.close",
        after_close="$stderr.puts 'back'",
    ),
    "r": dict(
        state="x <- 41\nf <- function(a) a + 1\nlibrary(tools)\nsetwd('sub')\n",
        show="cat(f(x), file_ext('/a/b.txt'), getwd(), '\\n')",
        lib="txt",
        error=("stop('boom')", "boom"),
        markers="cat('D 0\\nR 99\\nR 5\\nD 1\\n')",
        utf8='cat("héllo ✓\\n")',
        sleep="cat('ready\\n'); flush(stdout()); Sys.sleep(30)",
        busy="cat('ready\\n'); flush(stdout()); repeat {}",
        intr_err="Interrupted",
        one="cat(1, '\\n', sep = '')",
        printing="i <- 0; repeat { cat(i, '\\n', sep = ''); i <- i + 1 }",
        lsfd="system(\"ls /proc/self/fd | tr '\\\\n' ' '\")",
        fork="p <- parallel::mcparallel(cat('child\\n')); invisible(parallel::mccollect(p)); cat('parent\\n')",
        alive="cat(x, '\\n', sep = '')",
        close_out=None,
        after_close=None,
    ),
}


def case_state(d, s):
    _, e = check(d, s["state"], out="")
    expect(e == "", "noise on stderr: %r" % e)      # no start-up noise either
    o, _ = check(d, s["show"])
    want = "42 %s %s" % (s["lib"], os.path.realpath(os.path.join(d.dir, "sub")))
    expect(o.strip() == want, "state did not persist: want %r, got %r" % (want, o))


def case_error(d, s):
    code, what = s["error"]
    _, e = check(d, code, status=1, err_has=what)
    for word in ("warden", "driver", "[eval]", "node:vm", "-e:", "<string>", "run_block"):
        expect(word not in e, "the driver's own frames show in the error: %r" % e)
    check(d, s["one"], out="1\n")


def case_markers(d, s):
    # marker-like text in the code and on stdout is only text
    check(d, s["markers"], out="D 0\nR 99\nR 5\nD 1\n")
    check(d, s["utf8"], out="héllo ✓\n")


def case_utf8(d, s):
    # the frame length counts bytes: multi-byte code followed at once by
    # another frame must split exactly
    code = s["utf8"]
    b = code.encode()
    d.send(b"R %d\n" % len(b) + b + b"R %d\n" % len(b) + b)
    d.pump(lambda: bytes(d.ctl).count(b"D 0\n") >= 2, "two D replies")
    d.drain()
    d.ctl[:] = re.sub(rb"A [0-9]+\n", b"", bytes(d.ctl))
    expect(d.ctl == b"D 0\nD 0\n" and d.out == "héllo ✓\n".encode() * 2,
           "two utf8 blocks gave %r, stdout %r" % (bytes(d.ctl), bytes(d.out)))


def interrupt(d, s, key):
    check(d, "x = 41" if d.lang in ("python", "ruby", "r") else
          "var x = 41" if d.lang == "javascript" else
          "x=41" if d.lang == "shell" else "our $x = 41;", out=None)
    d.start(s[key])
    d.wait_stdout("ready")
    if d.lang == "shell":
        d.wait_child("sleep")   # bash ignores a SIGINT between two commands
    d.sigint_group()
    # as warden does (supervisor/lang.c's sigint_repeat_ms): the SIGINT
    # again until the block ends, for a language that needs it (Perl: one
    # that lands just before sleep() waits for it)
    r = d.sigint_repeat_ms
    st, o, e = d.wait_done((r / 1000.0, d.sigint_group) if r else None)
    want = 130
    expect(st == want, "interrupt gave status %d (want %d); stdout %r stderr %r" % (st, want, o, e))
    expect(s["intr_err"] in e, "want %r on stderr after interrupt: %r" % (s["intr_err"], e))
    check(d, s["alive"], out="41\n")


def case_sigint_sleep(d, s):
    interrupt(d, s, "sleep")


def case_sigint_busy(d, s):
    if s["busy"] is None:
        return "n/a"
    interrupt(d, s, "busy")


def case_sigint_print(d, s):
    # interrupts that land anywhere in a loop that prints (inside the
    # language's print machinery too) leave a working session
    for i in range(5):
        d.start(s["printing"])
        d.wait_stdout("100\n")
        d.sigint_group()
        st, o, e = d.wait_done()
        expect(st == 130, "interrupting a printing loop gave %d: stderr %r" % (st, e[-300:]))
    check(d, s["one"], out="1\n")


def case_sigint_idle(d, s):
    # a SIGINT between blocks must not end the driver
    check(d, s["one"], out="1\n")
    for _ in range(3):
        d.sigint_group()
        d.sigint_settled()
    check(d, s["one"], out="1\n")


def case_close_stdout(d, s):
    d.run(s["close_out"])
    st, o, e = d.run(s["after_close"])
    expect(st == 0 and "back" in e + o, "after closing stdout: %d %r %r" % (st, o, e))


def case_fd4_hidden(d, s):
    # a program started by a block does not get fd 4
    o, _ = check(d, s["lsfd"])
    fds = o.split()
    expect(fds[:3] == ["0", "1", "2"] and "4" not in fds, "a child's fds: %r" % o)


def case_fork(d, s):
    # a child forked by a block must not go on as a second driver
    o, _ = check(d, s["fork"])
    expect(sorted(o.split()) == ["child", "parent"], "fork block printed %r" % o)
    check(d, s["one"], out="1\n")


def case_eof(d, s):
    check(d, s["one"], out="1\n")
    d.sock.shutdown(socket.SHUT_WR)
    rc = d.wait_exit()
    expect(rc == 0, "EOF on fd 4: exit status %d, stderr %r" % (rc, bytes(d.err)))


def garbage(d, data):
    d.send(data)
    rc = d.wait_exit()
    expect(rc != 0, "garbage %r on fd 4: exit status 0" % data)


def case_garbage_header(d, s):
    garbage(d, b"X 12\nprint(1)\n")


def case_garbage_number(d, s):
    garbage(d, b"R 1x\n")


def case_garbage_long(d, s):
    garbage(d, b"R " + b"1" * 200)


def case_truncated(d, s):
    d.send(b"R 100\nabc")
    d.sock.shutdown(socket.SHUT_WR)
    rc = d.wait_exit()
    expect(rc != 0, "a truncated frame: exit status 0")


def case_empty(d, s):
    check(d, "", out="")


# -- language-specific cases -------------------------------------------
def case_python_display(d, s):
    check(d, "1 + 1", out="2\n")
    check(d, "None", out="")
    check(d, "y = 3", out="")
    check(d, "y * 2\n", out="6\n")
    check(d, "'a'", out="'a'\n")
    check(d, "import sys\nsys.exit(3)", status=3)
    check(d, "raise SystemExit", status=0)
    check(d, "raise SystemExit('bye')", status=1, err_has="bye")
    check(d, "y", out="3\n")


def case_python_namespace(d, s):
    o, _ = check(d, "print(sorted(k for k in dir() if not k.startswith('__')))")
    expect(o == "[]\n", "__main__ is not clean: %r" % o)
    check(d, "import os\nprint(os.get_inheritable(4))", out="False\n")
    check(d, "import os\nprint(os.environ['MPLBACKEND'])", out="module://_warden_mpl\n")  # figures come back (issue 12)
    with open(os.path.join(d.dir, "mymod.py"), "w") as f:
        f.write("V = 5\n")
    check(d, "import mymod\nprint(mymod.V)", out="5\n")
    check(d, "import pickle\nclass P:\n    pass\nprint(type(pickle.loads(pickle.dumps(P()))).__name__)", out="P\n")
    _, e = check(d, "def g():\n    raise ValueError('bad v')\n\ng()", status=1, err_has="ValueError: bad v")
    expect('File "<block' in e and "raise ValueError" in e, "traceback lacks the block's lines: %r" % e)
    check(d, "import asyncio\nawait asyncio.sleep(0)\n5", out="5\n")
    check(d, "def (", status=1, err_has="SyntaxError")


def case_javascript_extra(d, s):
    check(d, "1 + 1", out="2\n")
    check(d, "let z = 3", out="")
    check(d, "z * 2", out="6\n")
    check(d, "new Promise(r => setTimeout(() => r(5), 1))", out="5\n")
    check(d, "const v = await Promise.resolve(7); console.log(v)", out="7\n")
    check(d, "typeof require", out="'function'\n")
    check(d, "setTimeout(() => require('fs').writeFileSync('late', 'x'), 1); undefined", out="")
    path = os.path.join(d.dir, "late")
    end = time.monotonic() + WAIT
    while not os.path.exists(path):          # the event loop runs between blocks
        expect(time.monotonic() < end, "a timer did not fire between blocks")
        time.sleep(0.01)
    check(d, "throw 5", status=1, err_has="5")
    check(d, "Promise.reject(new Error('rej'))", status=1, err_has="rej")
    check(d, "let (", status=1, err_has="SyntaxError")
    o, _ = check(d, "Object.keys(globalThis).filter(k => !['global','clearImmediate','setImmediate','clearInterval','clearTimeout','setInterval','setTimeout','queueMicrotask','structuredClone','atob','btoa','performance','fetch','crypto','navigator','module','exports','require','__filename','__dirname','x','f','path','z','v'].includes(k)).join(',')")
    expect(o.strip() in ("", "''"), "driver names in the global object: %r" % o)
    # the 1 ms timer fires before the 5 ms one of the next block: during
    # the first block's flush or during the second block
    _, e1 = check(d, "setTimeout(() => { throw new Error('later') }, 1); undefined", out="")
    _, e2 = check(d, "await new Promise(r => setTimeout(r, 5)); console.log(1)", out="1\n")
    expect("Error: later" in e1 + e2, "an error thrown by a timer was not shown: %r" % (e1 + e2))
    check(d, s["one"], out="1\n")


def case_shell_extra(d, s):
    check(d, "x=1; declare -i y=2; z() { echo $((x + y)); }", out="")
    check(d, "z", out="3\n")
    check(d, "exit_code() { return 7; }; exit_code", status=7)
    check(d, "read -r line; echo \"[$line] $?\"", out="[] 1\n")
    check(d, "ls /proc/self/fd | tr '\\n' ' '", out_has="0 1 2 3 ")
    o, _ = check(d, "ls /proc/self/fd | tr '\\n' ' '")
    expect(" 4 " not in " " + o, "fd 4 is visible to the block's commands: %r" % o)
    check(d, "echo é | wc -c", out="3\n")
    check(d, "printf '%s\\n' \"${#x}\"", out="1\n")


def case_perl_extra(d, s):
    check(d, "my $lex = 5; our $pkg = 6;", out="")
    check(d, "no strict; print defined($lex) ? 'def' : 'undef', \" $pkg\\n\";", out="undef 6\n")
    check(d, "exit 4;", status=4)
    check(d, "print \"$pkg\\n\";", out="6\n")
    check(d, "sub {", status=1, err_has="block line")


def case_ruby_extra(d, s):
    check(d, "exit 4", status=4)
    check(d, "y = 2", out="")
    check(d, "puts y * 3", out="6\n")
    check(d, "def (", status=1, err_has="SyntaxError")
    check(d, "puts local_variables.inspect", out="[:y]\n")


def case_r_extra(d, s):
    check(d, "1 + 1", out="[1] 2\n")
    check(d, "y <- invisible(5)\ninvisible(6)", out="")
    check(d, "y", out="[1] 5\n")
    check(d, "warning('careful'); cat('on\\n')", out="on\n", err_has="careful")
    check(d, "parse(text = '1 +')", status=1, err_has="unexpected end of input")
    check(d, s["one"], out="1\n")


CASES = {n[5:]: f for n, f in globals().items() if n.startswith("case_")}
COMMON = ["state", "error", "markers", "utf8", "sigint_sleep", "sigint_busy", "sigint_idle",
          "close_stdout", "eof", "garbage_header", "garbage_number", "garbage_long",
          "truncated", "empty"]


def main(argv):
    if len(argv) < 2 or argv[1] == "list":
        print("\n".join(sorted(CASES)))
        return 0
    table = lang_table()
    case = CASES.get(argv[1])
    if not case:
        print("harness.py: unknown case %r (see harness.py list)" % argv[1], file=sys.stderr)
        return 2
    failed = 0
    for lang in argv[2:]:
        if lang not in table:
            print("harness.py: %s is not in supervisor/lang.c" % lang, file=sys.stderr)
            return 2
        try:
            d = Driver(lang, table)
        except Fail as e:
            failed += 1
            print("FAIL %s %s: %s" % (lang, argv[1], e))
            continue
        d.lang = lang
        try:
            r = case(d, SNIP.get(lang))
            print("ok %s %s%s" % (lang, argv[1], " (%s)" % r if r else ""))
        except Fail as e:
            failed += 1
            print("FAIL %s %s: %s" % (lang, argv[1], e))
        finally:
            d.close()
    if not PID1:
        print("# note: no user namespaces here; the drivers did not run as pid 1")
        if os.environ.get("WARDEN_MUST_WORK") == "1":
            # the fallback hides the pid-1 behaviour the drivers have in a jail
            print("FAIL: WARDEN_MUST_WORK=1 and `unshare -Urpf` failed: the drivers must run as pid 1")
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
