"""Running code perfbot did not write: contained, bounded, and timed on its own clock, here or on a bench host.

The ssh runner sends this whole file as `python3 -c <source> COMMAND ARG`, so it stays standard library only,
Python 3.8+, and works on Linux and macOS. The local runner imports it, so both keep one contract:

    run  JSON   {"argv", "cwd", "timeout", "memory_mb", "processes", "output_bytes", "sandbox": "bwrap"|"none",
                 "workspace" and "scripts": perfbot's folders shown read-only, "readable": [the operator's
                 folders, checked by shown_problem], "private": [folders none may show], "cgroups": bool}
                -> one JSON line on stdout:
                {"returncode", "seconds", "timed_out", "stdout", "stderr", "user", "system", "faults",
                 "limit": None|"time"|"memory"|"processes"|"output", "sandbox", "refused",
                 "load", "steal", "cores": the host's 1-minute load before the run, its CPU steal during it}
    root PATH   the folder expanded on this host (~ is the remote user's home), created 0700, printed
    lock PATH   flock PATH, print "locked", hold it until stdin ends (the ssh session closes or dies)
    fresh JSON  {"parent", "prefix"}: a new, empty run folder made in `parent` (O_EXCL), printed
    put JSON    {"path", "mode"}: stdin written at `path` without following a link (see put())
    sweep PATH  every run folder under PATH (its runs/ and its projects' runs/) thrown away

Writes never follow a link perfbot did not make: programs, translations and build marks go into folders
perfbot made (run folders are fresh for each verification and thrown away after it, outside the checkout),
through a temporary name made with O_EXCL|O_NOFOLLOW and renamed over whatever was there.

Containment (sandbox "bwrap"): an allow-list of what is shown: the system folders a compiler and a runtime
need (/usr and its links, a few /etc files), the workspace and the operator's readable folders read-only, the
run's folder writable, a private /tmp, fresh /dev and /proc, its own pids and network (loopback only, no host
socket), no capabilities, a clean environment. The tree runs as uid 65534: a root caller's bwrap makes the
mounts as root (so a 0700 folder of root's is reachable) without a user namespace (one would map the tree
to uid 0, owner of every root-only file), and the timer drops to the real uid 65534 before anything of the
report runs; another caller's tree is that caller's uid, shown as 65534 in its user namespace.
Limits for the whole tree: a cgroup's pids.max and memory limit where this host lets us make one (v1 or a
delegated v2); otherwise RLIMIT_NPROC inside a user namespace of the tree's own (which counts only that
namespace's processes) and RLIMIT_AS per process, so the tree stays under processes x memory_mb: without a
cgroup memory is capped per process only. Output is kept up to `output_bytes` a stream and the rest read and
dropped, so the caller's memory stays flat.
"""
from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import resource
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time

BWRAP = "bwrap"
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt/homebrew")
ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime")
ENV = ("PATH", "LANG")  # all a program sees of the caller's environment, besides HOME and TMPDIR
UNPRIVILEGED = 65534  # the uid every sandboxed tree runs as (a root caller's for real: see sandbox_argv)
# Never shown, whatever `readable` says: the host's own state and secrets (logs, backups, mail, keys, services'
# data such as /var/lib/perfbot), people's homes, and /tmp, shared by every program of the host. The one rule:
# the instance file's parse checks only a folder's spelling (core/config/hosts.py).
HIDDEN = ("/proc", "/sys", "/dev", "/run", "/etc", "/root", "/boot", "/var/log", "/var/backups", "/var/spool",
          "/var/mail", "/var/run", "/var/lib", "/home", "/tmp")
CHUNK = 1 << 16

# Runs first inside the sandbox: times the program alone (bwrap's 7-20 ms of namespace setup never reaches a
# sample) and sets the per-process limits in the child only, so the timer itself is never refused.
SHIM = r"""
import os, resource, sys, time
status, memory, processes, drop = (int(a) for a in sys.argv[1:5])
argv = sys.argv[5:]
if drop:  # bwrap made the mounts as root; from here on the tree is the real, unprivileged uid `drop`
    os.setgroups([])
    os.setresgid(drop, drop, drop)
    os.setresuid(drop, drop, drop)
    if processes:  # RLIMIT_NPROC counts a uid's processes per user namespace: one of its own counts this tree
        try:
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE, which the uid change cleared: /proc/self is ours again
            if libc.unshare(0x10000000) == 0:  # CLONE_NEWUSER
                for name, text in (("setgroups", "deny"), ("uid_map", f"{drop} {drop} 1"),
                                   ("gid_map", f"{drop} {drop} 1")):
                    with open("/proc/self/" + name, "w") as handle:
                        handle.write(text)
        except (OSError, AttributeError):
            pass  # no user namespaces here: the limit counts every process of that uid on the host
started = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.close(status)
        if memory:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        if processes:
            resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
        os.execvp(argv[0], argv)
    except OSError as exc:
        os.write(2, f"cannot run {argv[0]}: {exc.strerror}\n".encode())
    os._exit(127)
_, code, usage = os.wait4(pid, 0)
seconds = time.perf_counter() - started
code = os.WEXITSTATUS(code) if os.WIFEXITED(code) else -os.WTERMSIG(code)
os.write(status, f"{seconds!r} {code} {usage.ru_utime!r} {usage.ru_stime!r} "
                 f"{usage.ru_minflt + usage.ru_majflt}\n".encode())
"""


@functools.cache
def bwrap_problem():
    """None when bwrap contains a command on this host, as uid 65534; otherwise what is missing, in words."""
    found = shutil.which(BWRAP)
    if found is None:
        return "bwrap is not installed (Debian: apt-get install bubblewrap, or run scripts/ensure-bwrap)"
    folder = tempfile.mkdtemp(prefix="perfbot-sandbox-check-")
    status_read, status_write = os.pipe()
    try:
        python = _interpreter()
        argv = sandbox_argv(os.path.realpath(folder), os.path.realpath(folder), (), python, {}, found)
        argv += [python, "-I", "-S", "-c", SHIM, str(status_write), "0", "0", str(_dropped_to()), "true"]
        done = subprocess.run(argv, capture_output=True, timeout=30, stdin=subprocess.DEVNULL, env={},
                              pass_fds=(status_write,))
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap could not be started: {exc}"
    finally:
        os.close(status_read)
        os.close(status_write)
        shutil.rmtree(folder, ignore_errors=True)
    if done.returncode != 0:
        why = done.stderr.decode(errors="replace").strip()[-300:] or f"exit {done.returncode}"
        return "bwrap cannot create its namespaces here (user, mount or network namespaces refused?): " + why
    return None


def sandbox_argv(cwd, workspace, readable, python, env, bwrap=BWRAP):
    """The `bwrap ... --` prefix: only what a build or a program needs is there, and only `cwd` is writable."""
    if os.geteuid() == 0:
        # No user namespace: a root caller's would map the tree to uid 0. The timer keeps only what it needs
        # to drop to uid 65534 (SHIM), and bwrap's no_new_privs and nosuid mounts keep it from coming back.
        argv = [bwrap, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
                "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        argv = [bwrap, "--unshare-all", "--unshare-user", "--uid", str(UNPRIVILEGED), "--gid", str(UNPRIVILEGED),
                "--cap-drop", "ALL"]
    argv += ["--die-with-parent", "--new-session", "--clearenv"]
    for key, value in sorted(env.items()):
        argv += ["--setenv", key, value]
    for folder in SYSTEM:
        if os.path.islink(folder):  # merged /usr: /bin -> usr/bin
            argv += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            argv += ["--ro-bind", folder, folder]
    argv += ["--perms", "0755", "--dir", "/etc"]  # bwrap's own folders are 0700 when it runs as root
    for name in ETC:
        argv += ["--ro-bind-try", "/etc/" + name, "/etc/" + name]
    # /tmp and /dev/shm are the tree's, whatever its uid: bwrap would make them root's 0755 as root
    argv += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/dev/shm", "--perms", "1777",
             "--tmpfs", "/tmp", "--dir", "/run"]
    prefix = os.path.dirname(os.path.dirname(python))  # the timer's own Python, wherever it is installed
    shown = [f for f in (prefix, *readable, workspace)
             if f and not any(f == s or f.startswith(s + "/") for s in SYSTEM)]
    made = {"/", "/tmp", "/run", "/proc", "/dev", "/etc"}
    for folder in (*shown, cwd):  # the folders leading to each, 0755: bwrap's own are 0700 as root
        parents: list[str] = []
        while os.path.dirname(folder) != folder and os.path.dirname(folder) not in made:
            folder = os.path.dirname(folder)
            parents.insert(0, folder)
        for parent in parents:
            argv += ["--perms", "0755", "--dir", parent]
            made.add(parent)
    for folder in shown:
        argv += ["--ro-bind-try", folder, folder]  # a readable folder this host lacks is simply not there
    return [*argv, "--bind", cwd, cwd, "--chdir", cwd, "--"]


def _dropped_to():
    """The uid a sandboxed tree runs as when perfbot is root (0: it stays the caller's, mapped to 65534)."""
    return UNPRIVILEGED if os.geteuid() == 0 else 0


def shown_problem(folder, private=()):
    """Why `folder` may not be shown read-only to a report's code (None: it may). Pure: the caller resolves
    links first, so `folder` is the real path. The sandbox shows an allow-list (SYSTEM, a few /etc files, the
    workspace, and these folders); each must be named exactly, below the top of the tree, outside the
    host's own state and secrets, and apart from every `private` folder (perfbot's instance, home, keys)."""
    norm = os.path.normpath(folder) if isinstance(folder, str) and folder.startswith("/") else None
    if norm is None or norm != folder.rstrip("/") or "//" in folder:
        return f"{str(folder)[:120]!r} is not an absolute folder named plainly (no .., no doubled /)"
    if norm.count("/") < 2:
        return f"{norm} is a whole top-level folder of the host: name the folder below it that holds the data"
    for root in HIDDEN:
        if norm == root or norm.startswith(root + "/"):
            return f"{norm} lies in {root}, which holds the host's own state, secrets or other users' files"
    for own in private:
        own = os.path.normpath(str(own))
        if norm == own or norm.startswith(own + "/") or own.startswith(norm + "/"):
            return f"{norm} would show {own}, which holds perfbot's own files"
    return None


def exposed(paths, readable=()):
    """(path, folder) for each of `paths` (perfbot's instance, keys, secret files) the sandbox would show:
    under a system folder, an /etc file it shows, or a readable folder. Pure: the caller resolves links."""
    shown = [*SYSTEM, *("/etc/" + name for name in ETC), *readable]
    found = []
    for path in paths:
        path = os.path.normpath(str(path))
        for folder in shown:
            folder = os.path.normpath(str(folder))
            if path == folder or path.startswith(folder.rstrip("/") + "/"):
                found.append((path, folder))
                break
    return found


def run(request):
    """Run one argument list (never a shell) contained and bounded; the answer is the dict the module doc shows."""
    argv, cwd = [str(a) for a in request["argv"]], os.path.realpath(request["cwd"])
    timeout, memory = float(request["timeout"]), int(request["memory_mb"]) * 1024 * 1024
    processes, cap = int(request.get("processes", 256)), int(request.get("output_bytes", 16 << 20))
    sandbox = request.get("sandbox", "bwrap")
    if sandbox not in ("bwrap", "none"):  # fail closed: only the explicit opt-out runs uncontained
        return {"refused": f"sandbox must be \"bwrap\" or \"none\", not {str(sandbox)[:40]!r}, so nothing runs"}
    if sandbox == "bwrap":
        problem = bwrap_problem()
        if problem:
            return {"refused": "no sandbox on this host, so nothing runs: " + problem + "; the operator installs "
                               "bubblewrap there (docs/deployment.md)"}
    readable = [os.path.realpath(r) for r in request.get("readable", ())]
    for folder in readable if sandbox == "bwrap" else ():  # checked again on the host that shows them
        problem = shown_problem(folder, _own_folders(request))
        if problem:
            return {"refused": f"[sandbox] readable: {problem}, so nothing runs"}
    group = Cgroup.make(memory, processes) if request.get("cgroups", True) else None
    drop = _dropped_to() if sandbox == "bwrap" else 0
    if drop:
        _hand_over(cwd, drop)  # the tree owns the folder it writes, and nothing else
        os.chmod(cwd, os.stat(cwd).st_mode | 0o111)  # bwrap, root without capabilities, enters it first
    python = os.path.realpath(request.get("python") or _interpreter())
    status_read, status_write = os.pipe()
    # The sandbox's own processes (bwrap's init, the timer) live in the namespace beside the program.
    nproc = 0 if group else processes + 2
    full = [python, "-I", "-S", "-c", SHIM, str(status_write), str(memory), str(nproc), str(drop), *argv]
    env = {key: os.environ[key] for key in ENV if key in os.environ}
    env.update(HOME=cwd, TMPDIR="/tmp" if sandbox == "bwrap" else cwd, LANG=env.get("LANG", "C.UTF-8"))
    if sandbox == "bwrap":
        workspace = os.path.realpath(request.get("workspace") or cwd)
        scripts = [os.path.realpath(request["scripts"])] if request.get("scripts") else []  # perfbot's own
        full = sandbox_argv(cwd, workspace, readable + scripts, python, env) + full

    def enter():  # in the child, before exec
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if group:
            group.enter()

    try:
        process = subprocess.Popen(full, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, start_new_session=True, preexec_fn=enter,
                                   pass_fds=(status_write,))
    except (OSError, subprocess.SubprocessError) as exc:
        os.close(status_read)
        os.close(status_write)
        if group:
            group.close()
        return _answer(127, b"", (f"cannot run {argv[0]}: {exc}").encode(), 0.0, None, sandbox)
    os.close(status_write)
    load, ticks = os.getloadavg()[0], _cpu_ticks()
    started = time.perf_counter()
    out, err, timed_out, clipped = _collect(process, started + timeout, cap, group)
    seconds = time.perf_counter() - started
    os.set_blocking(status_read, False)
    try:
        report = os.read(status_read, 256).decode().split()
    except (BlockingIOError, UnicodeDecodeError):
        report = []
    os.close(status_read)
    hit = group.limit_hit() if group else None
    # A fork bomb the process limit held still runs to the timeout: the limit it hit is what ended it.
    limit = hit if hit == "processes" or not timed_out else "time"
    if group:
        group.close()
    limit = limit or ("output" if clipped else None)
    answer = _answer(process.returncode, out, err, seconds, limit, sandbox)
    answer.update(load=load, steal=_steal(ticks, _cpu_ticks()), cores=_cores(), memory_total_mb=_memory_mb())
    if len(report) == 5 and not timed_out:
        answer.update(seconds=float(report[0]), returncode=int(report[1]), user=float(report[2]),
                      system=float(report[3]), faults=int(report[4]))
    if clipped:
        answer["stderr"] += f"\n[perfbot: output past {cap >> 20} MiB a stream was dropped]\n"
    return answer


def _collect(process, deadline, cap, group):
    """Read both streams until they close or the deadline passes: at most `cap` bytes of each are kept. Once the
    run's first process ended, the rest of its tree is killed, so a detached child cannot hold the pipes open."""
    kept = {process.stdout: bytearray(), process.stderr: bytearray()}
    state = {"clipped": False}
    timed_out = False
    ended = 0.0  # when the first process ended, plus a grace period for its pipes; 0: still running
    with selectors.DefaultSelector() as selector:
        for stream in kept:
            selector.register(stream, selectors.EVENT_READ)
        while selector.get_map():
            left = deadline - time.perf_counter()
            if ended:
                left = min(left, ended - time.perf_counter())
            if left <= 0:
                timed_out = not ended
                break
            for key, _ in selector.select(min(left, 0.5)):
                _keep(key, selector, kept, cap, state)
            if not ended and process.poll() is not None:
                _kill(process, group)
                ended = time.perf_counter() + 0.5  # what is still in the pipes, then stop
    _kill(process, group)
    for stream in kept:
        stream.close()
    return bytes(kept[process.stdout]), bytes(kept[process.stderr]), timed_out, state["clipped"]


def _keep(key, selector, kept, cap, state):
    data = os.read(key.fd, CHUNK)
    if not data:
        selector.unregister(key.fileobj)
        return
    room = cap - len(kept[key.fileobj])
    kept[key.fileobj] += data[:max(room, 0)]
    state["clipped"] = state["clipped"] or len(data) > room


def _kill(process, group):
    """Nothing of the run outlives it: its cgroup emptied, else its session's group (bwrap's pid namespace dies
    with its first process)."""
    if group:
        group.kill()
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    if process.returncode is None:
        process.wait()


def _answer(returncode, out, err, seconds, limit, sandbox):
    return {"returncode": returncode, "seconds": seconds, "timed_out": limit == "time", "limit": limit,
            "stdout": out.decode("utf-8", "replace"), "stderr": err.decode("utf-8", "replace"),
            "user": None, "system": None, "faults": None, "sandbox": sandbox}


def _cpu_ticks():
    """(steal, total) jiffies of the whole host since boot; None where there is no /proc/stat (macOS)."""
    try:
        with open("/proc/stat") as stat:
            fields = [int(v) for v in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    return (fields[7] if len(fields) > 7 else 0), sum(fields[:8])


def _steal(before, after):
    if before is None or after is None or after[1] <= before[1]:
        return None
    return (after[0] - before[0]) / (after[1] - before[1])


def _cores():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _memory_mb():
    """The host's memory: a failure hint compares a runtime's reservation with it."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") >> 20
    except (ValueError, OSError, AttributeError):
        return None


def _interpreter():
    """The timer's Python: one in the system folders the sandbox shows anyway, else this one (shown read-only)."""
    own = os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)
    if any(own.startswith(folder + "/") for folder in SYSTEM):
        return own
    system = shutil.which("python3", path="/usr/bin:/usr/local/bin")
    return os.path.realpath(system) if system else own


def _own_folders(request):
    """This host's folders no readable folder may show: the user's home and the runner's own folder."""
    return [os.path.realpath(os.path.expanduser("~")), *(os.path.realpath(p) for p in request.get("private", ()))]


def _hand_over(folder, uid):
    if os.lstat(folder).st_uid == uid:
        return
    for root, dirs, files in os.walk(folder):
        for name in [root] + [os.path.join(root, n) for n in dirs + files]:
            os.lchown(name, uid, uid)


class Cgroup:
    """A cgroup of its own for one run, in each hierarchy that has `pids` or `memory` (v1), or in the one v2
    folder where they are enabled for children; None when this host gives us none."""

    def __init__(self, folders):
        self.folders = folders  # controller -> folder

    @classmethod
    def make(cls, memory, processes):
        name = f"perfbot-run-{os.getpid()}-{time.monotonic_ns()}"
        folders: dict[str, str] = {}
        try:
            for controller, parent in _controller_folders().items():
                folder = os.path.join(parent, name)
                if folder not in folders.values():
                    os.mkdir(folder)
                folders[controller] = folder
            group = cls(folders)
            if set(folders) != {"pids", "memory"} or not group._limit(memory, processes):
                group.close()
                return None
            return group
        except OSError:
            cls(folders).close()
            return None

    def _limit(self, memory, processes):
        pids, mem = self.folders["pids"], self.folders["memory"]
        _write(pids, "pids.max", processes)
        if os.path.exists(os.path.join(mem, "memory.max")):  # v2
            _write(mem, "memory.max", memory)
            _write(mem, "memory.swap.max", 0, optional=True)
        else:
            _write(mem, "memory.limit_in_bytes", memory)
            _write(mem, "memory.memsw.limit_in_bytes", memory, optional=True)
        return True

    def enter(self):
        for folder in set(self.folders.values()):
            _write(folder, "cgroup.procs", os.getpid())

    def limit_hit(self):
        mem = self.folders["memory"]
        events = _read(mem, "memory.events") or _read(mem, "memory.oom_control")
        if _count(events, "oom_kill"):
            return "memory"
        if _count(_read(self.folders["pids"], "pids.events"), "max"):
            return "processes"
        return None

    def kill(self):
        for _ in range(100):
            pids: set[int] = set()
            for folder in set(self.folders.values()):
                pids.update(int(p) for p in (_read(folder, "cgroup.procs") or "").split())
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)

    def close(self):
        self.kill()
        for folder in set(self.folders.values()):
            for _ in range(50):
                try:
                    os.rmdir(folder)
                    break
                except FileNotFoundError:
                    break
                except OSError:  # EBUSY while the last killed process is being reaped
                    time.sleep(0.01)


def _controller_folders():
    """controller -> the folder of this process's cgroup in the hierarchy that has it, where we may write."""
    mounts: dict[str, tuple[str, str]] = {}  # controller ("" for cgroup2) -> mount
    with open("/proc/self/mountinfo") as info:
        for line in info:
            fields = line.split()
            dash = fields.index("-")
            fstype, options = fields[dash + 1], fields[dash + 3].split(",") + fields[5].split(",")
            mount = (fields[4], fields[3].rstrip("/"))  # where it is, and which of its folders it shows
            if fstype == "cgroup":
                for controller in ("pids", "memory"):
                    if controller in options:
                        mounts[controller] = mount
            elif fstype == "cgroup2":
                mounts.setdefault("", mount)
    found: dict[str, str] = {}
    with open("/proc/self/cgroup") as own:
        for line in own:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            for controller in ("pids", "memory"):
                if controller in controllers.split(",") and controller in mounts:
                    found[controller] = _inside(mounts[controller], path)
            if controllers == "" and "" in mounts:
                v2 = _inside(mounts[""], path)
                enabled = (_read(v2, "cgroup.subtree_control") or "").split()
                for controller in ("pids", "memory"):
                    if controller in enabled:
                        found.setdefault(controller, v2)
    return {c: f for c, f in found.items() if os.access(f, os.W_OK)}


def _inside(mount, path):
    point, root = mount
    return point + (path[len(root):] if root and path.startswith(root) else path).rstrip("/")


def _write(folder, name, value, optional=False):
    try:
        with open(os.path.join(folder, name), "w") as handle:
            handle.write(str(value))
    except OSError:
        if not optional:
            raise


def _read(folder, name):
    try:
        with open(os.path.join(folder, name)) as handle:
            return handle.read()
    except OSError:
        return None


def _count(text, key):
    for line in (text or "").splitlines():
        words = line.split()
        if len(words) == 2 and words[0] == key:
            return int(words[1])
    return 0


def put(path, data, mode=0o644):
    """Write `data` at `path` without following a link: into its folder, opened without following one, under
    a fresh name (O_CREAT|O_EXCL|O_NOFOLLOW), then renamed over whatever `path` was (a rename replaces a link,
    never writes through it). The folder must be one perfbot made; a planted name is replaced, never used."""
    folder, name = os.path.split(path)
    where = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        temporary = f".{name}.{os.getpid()}.{time.monotonic_ns()}.tmp"
        handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=where)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
                os.fchmod(out.fileno(), mode)
            os.replace(temporary, name, src_dir_fd=where, dst_dir_fd=where)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=where)
            raise
    finally:
        os.close(where)


def fresh(parent, prefix):
    """A new, empty folder in `parent` (made 0700 if missing, never through a link): a run's folder, its name
    unguessable and made with O_EXCL, so nothing a program left in an earlier one is ever reused."""
    os.makedirs(parent, mode=0o700, exist_ok=True)
    if os.path.islink(parent) or not os.path.isdir(parent):
        raise OSError(f"{parent} is not a folder perfbot made")
    return tempfile.mkdtemp(prefix=prefix, dir=parent)


def sweep(root):
    """Throw away every run folder under `root`: its runs/ and those of its projects/ (reference builds)."""
    folders = [os.path.join(root, "runs")]
    projects = os.path.join(root, "projects")
    if os.path.isdir(projects) and not os.path.islink(projects):
        folders += [os.path.join(projects, key, "runs") for key in os.listdir(projects)]
    for folder in folders:
        if os.path.lexists(folder):
            shutil.rmtree(folder, ignore_errors=True)  # rmtree never follows a link it meets


def make_root(path):
    full = os.path.abspath(os.path.expanduser(path))
    os.makedirs(full, mode=0o700, exist_ok=True)
    return full


def hold_lock(path):
    path = os.path.expanduser(path)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    with open(path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        sys.stdout.write("locked\n")
        sys.stdout.flush()
        # The lock lives exactly as long as the runner's ssh session: its end (or death) is EOF here.
        while os.read(0, 4096):
            pass


def main(args):
    if len(args) != 2 or args[0] not in ("run", "root", "lock", "fresh", "put", "sweep"):
        sys.stderr.write("usage: run JSON | root PATH | lock PATH | fresh JSON | put JSON | sweep PATH\n")
        return 2
    command, arg = args
    if command == "run":
        # own line: a chatty login shell can't spoil it
        sys.stdout.write("\n" + json.dumps(run(json.loads(arg))) + "\n")
    elif command == "root":
        sys.stdout.write("\n" + make_root(arg) + "\n")
    elif command == "fresh":
        request = json.loads(arg)
        sys.stdout.write("\n" + fresh(request["parent"], request["prefix"]) + "\n")
    elif command == "put":
        request = json.loads(arg)
        put(request["path"], sys.stdin.buffer.read(), int(request.get("mode", 0o644)))
    elif command == "sweep":
        sweep(arg)
    else:
        hold_lock(arg)
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
