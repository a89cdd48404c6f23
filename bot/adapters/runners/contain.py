"""Running code perfbot did not write: contained, bounded, and timed on its own clock, here or on a bench host.

The ssh runner sends this whole file as `python3 -c <source> COMMAND ARG`, so it stays standard library only,
Python 3.8+, and works on Linux and macOS. The local runner imports it, so both keep one contract:

    run  JSON   {"argv", "cwd", "timeout", "memory_mb", "processes", "output_bytes", "sandbox": "bwrap"|"none",
                 "workspace": folder shown read-only, "readable": [folders]} -> one JSON line on stdout:
                {"returncode", "seconds", "timed_out", "stdout", "stderr", "user", "system", "faults",
                 "limit": None|"time"|"memory"|"processes"|"output", "sandbox", "refused",
                 "load", "steal", "cores": the host's 1-minute load before the run, its CPU steal during it}
    root PATH   the folder expanded on this host (~ is the remote user's home), created 0700, printed
    lock PATH   flock PATH, print "locked", hold it until stdin ends (the ssh session closes or dies)

Containment (sandbox "bwrap"): a view of the system folders a compiler and a runtime need (/usr and its
links, a few /etc files), the workspace read-only, the run's folder writable, a private /tmp, fresh /dev
and /proc, its own pids and network (loopback only, no host socket), no capabilities, a clean environment.
Limits for the whole tree: a cgroup's pids.max and memory limit where this host lets us make one (v1 or a
delegated v2); otherwise RLIMIT_NPROC inside the sandbox's own user namespace (which counts only that
namespace's processes) and RLIMIT_AS per process, so the tree stays under processes x memory_mb. Output is
kept up to `output_bytes` a stream and the rest read and dropped, so the caller's memory stays flat.
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
UNPRIVILEGED = 65534  # the uid a root caller drops to when no cgroup bounds the tree (RLIMIT_NPROC spares root)
CHUNK = 1 << 16

# Runs first inside the sandbox: times the program alone (bwrap's 7-20 ms of namespace setup never reaches a
# sample) and sets the per-process limits in the child only, so the timer itself is never refused.
SHIM = r"""
import os, resource, sys, time
status, memory, processes, argv = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
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
    """None when bwrap contains a command on this host; otherwise what is missing, in words for a person."""
    found = shutil.which(BWRAP)
    if found is None:
        return "bwrap is not installed (Debian: apt-get install bubblewrap, or run scripts/ensure-bwrap)"
    folder = tempfile.mkdtemp(prefix="perfbot-sandbox-check-")
    try:
        argv = sandbox_argv(os.path.realpath(folder), os.path.realpath(folder), (), _interpreter(), {}, found)
        argv.append("true")
        done = subprocess.run(argv, capture_output=True, timeout=30, stdin=subprocess.DEVNULL, env={})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap could not be started: {exc}"
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if done.returncode != 0:
        why = done.stderr.decode(errors="replace").strip()[-300:] or f"exit {done.returncode}"
        return "bwrap cannot create its namespaces here (user, mount or network namespaces refused?): " + why
    return None


def sandbox_argv(cwd, workspace, readable, python, env, bwrap=BWRAP):
    """The `bwrap ... --` prefix: only what a build or a program needs is there, and only `cwd` is writable."""
    argv = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv"]
    for key, value in sorted(env.items()):
        argv += ["--setenv", key, value]
    for folder in SYSTEM:
        if os.path.islink(folder):  # merged /usr: /bin -> usr/bin
            argv += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            argv += ["--ro-bind", folder, folder]
    for name in ETC:
        argv += ["--ro-bind-try", "/etc/" + name, "/etc/" + name]
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--dir", "/run"]
    prefix = os.path.dirname(os.path.dirname(python))  # the timer's own Python, wherever it is installed
    for shown in (prefix, *readable, workspace):
        if shown and not any(shown == s or shown.startswith(s + "/") for s in SYSTEM):
            argv += ["--ro-bind-try", shown, shown]  # a readable folder this host lacks is simply not there
    return [*argv, "--bind", cwd, cwd, "--chdir", cwd, "--"]


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
    group = Cgroup.make(memory, processes) if request.get("cgroups", True) else None
    drop = group is None and os.geteuid() == 0 and sandbox == "bwrap"
    if os.geteuid() == 0 and sandbox == "bwrap":
        # RLIMIT_NPROC spares uid 0, so without a cgroup the tree runs as a uid of its own; a sandbox keeps no
        # capability, so whichever uid runs must own the folder it writes.
        _hand_over(cwd, UNPRIVILEGED if drop else 0)
    python = os.path.realpath(request.get("python") or _interpreter())
    status_read, status_write = os.pipe()
    # The sandbox's own processes (bwrap's init, the timer) live in the namespace beside the program.
    nproc = 0 if group else processes + 2
    full = [python, "-I", "-S", "-c", SHIM, str(status_write), str(memory), str(nproc), *argv]
    env = {key: os.environ[key] for key in ENV if key in os.environ}
    env.update(HOME=cwd, TMPDIR="/tmp" if sandbox == "bwrap" else cwd, LANG=env.get("LANG", "C.UTF-8"))
    if sandbox == "bwrap":
        workspace = os.path.realpath(request.get("workspace") or cwd)
        readable = [os.path.realpath(r) for r in request.get("readable", ())]
        full = sandbox_argv(cwd, workspace, readable, python, env) + full

    def enter():  # in the child, before exec
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if group:
            group.enter()
        if drop:
            os.setgroups([])
            os.setresgid(UNPRIVILEGED, UNPRIVILEGED, UNPRIVILEGED)
            os.setresuid(UNPRIVILEGED, UNPRIVILEGED, UNPRIVILEGED)

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
    limit = "time" if timed_out else group.limit_hit() if group else None
    if group:
        group.close()
    limit = limit or ("output" if clipped else None)
    answer = _answer(process.returncode, out, err, seconds, limit, sandbox)
    answer.update(load=load, steal=_steal(ticks, _cpu_ticks()), cores=_cores())
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


def _interpreter():
    """The timer's Python: one in the system folders the sandbox shows anyway, else this one (shown read-only)."""
    own = os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)
    if any(own.startswith(folder + "/") for folder in SYSTEM):
        return own
    system = shutil.which("python3", path="/usr/bin:/usr/local/bin")
    return os.path.realpath(system) if system else own


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
    if len(args) != 2 or args[0] not in ("run", "root", "lock"):
        sys.stderr.write("usage: run JSON | root PATH | lock PATH\n")
        return 2
    command, arg = args
    if command == "run":
        # own line: a chatty login shell can't spoil it
        sys.stdout.write("\n" + json.dumps(run(json.loads(arg))) + "\n")
    elif command == "root":
        sys.stdout.write("\n" + make_root(arg) + "\n")
    else:
        hold_lock(arg)
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
