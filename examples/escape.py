# What a hostile or careless LLM might run.  `make demo` runs it in a jail.
import ctypes, errno, os, socket, sys

libc = ctypes.CDLL(None, use_errno=True)
host_home = sys.argv[1] if len(sys.argv) > 1 else os.path.expanduser("~")
escaped = 0

def attempt(what, fn):
    global escaped
    try:
        result = fn()
        print(f"  ESCAPED  {what}: {result!r}"[:120])
        escaped += 1
    except Exception as e:
        print(f"  blocked  {what}: {type(e).__name__}: {e}"[:120])

def cfail(name, rc):
    if rc == -1:
        e = ctypes.get_errno()
        raise OSError(e, f"{name}: {os.strerror(e)}")
    return rc

def fork_bomb():
    kids = 0
    try:
        while kids < 5000:
            pid = os.fork()
            if pid == 0:
                import time; time.sleep(30); os._exit(0)
            kids += 1
    except OSError as e:
        raise OSError(e.errno, f"stopped after {kids} processes: {e.strerror}")
    return f"{kids} processes"

def host_uid(uid):
    """The host's uid behind uid, from the jail's own uid_map."""
    try:
        for line in open("/proc/self/uid_map"):
            inside, outside, count = map(int, line.split())
            if inside <= uid < inside + count:
                return outside + uid - inside
    except (OSError, ValueError):
        pass
    return None

uid = os.getuid()
hu = host_uid(uid)
on_host = ("uid %s on the host" % hu if hu is None or hu != uid else "the same uid on the host")
if uid == 0 and hu not in (None, 0):
    on_host = "which on the host is uid %d, with no privilege there" % hu
print(f"inside the jail: uid {uid}, {on_host}; cwd {os.getcwd()}, hostname {socket.gethostname()}")
attempt("read the host's ~/.ssh/id_ed25519", lambda: open(f"{host_home}/.ssh/id_ed25519").read())
attempt("write /etc/cron.d/backdoor", lambda: open("/etc/cron.d/backdoor", "w").write("* * * * * root sh\n"))
attempt("write outside the workspace (../escaped)", lambda: open("../escaped", "w").write("x"))
attempt("connect to 1.1.1.1:443", lambda: socket.create_connection(("1.1.1.1", 443), timeout=2))
attempt("open a raw packet socket", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW))
attempt("ptrace pid 1", lambda: cfail("ptrace", libc.ptrace(16, 1, 0, 0)))
attempt("mount a tmpfs over /tmp", lambda: cfail("mount", libc.mount(b"x", b"/tmp", b"tmpfs", 0, None)))
attempt("load a BPF program", lambda: cfail("bpf", libc.syscall(321, 5, 0, 0)))
attempt("fork bomb", fork_bomb)
print(f"{escaped} of 9 attempts escaped")
sys.exit(1 if escaped else 0)
