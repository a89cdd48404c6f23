"""Containing what a runner runs with bubblewrap: a read-only host, one writable folder, no network, no secrets.

    sandbox_argv(writable, path=...)          the `bwrap ... --` prefix (pure)
    timed_argv(status_fd, memory_bytes, argv) the timing shim that runs inside it (pure)
    read_status(data)                         what the shim reported: seconds, returncode, user, system, faults
    sandbox_problem() / sandbox_available()   whether bwrap really works on this host, checked once

Inside: the whole filesystem read-only, `writable` (and only it) writable and the working folder, a private
/tmp, fresh /dev and /proc, no network (its own loopback only), its own pids, no capabilities even for root,
an empty environment but PATH, HOME (the writable folder), TMPDIR and LANG, and the files that
PERFBOT_*_FILE settings name (secrets) replaced by empty ones. It dies with the runner.

Setting up the namespaces costs 7-20 ms a run, more than some programs run for; the shim therefore times
the program from inside and reports on a pipe the program cannot reach, so the sandbox never skews a ratio.
Install bwrap with scripts/ensure-bwrap (Debian: apt-get install bubblewrap).
"""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Mapping, Sequence

BWRAP = "bwrap"

# Runs in the sandbox under the bot's own Python (-I -S: no site, no PYTHON* variables; it needs only the
# standard library). The memory cap is set in the child alone so the shim itself is never the one refused.
SHIM = r"""
import os, resource, sys, time
status, memory, argv = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
started = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.close(status)
        if memory:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        os.execvp(argv[0], argv)
    except OSError as exc:
        os.write(2, f"cannot run {argv[0]}: {exc.strerror}\n".encode())
    os._exit(127)
_, code, usage = os.wait4(pid, 0)
seconds = time.perf_counter() - started
os.write(status, f"{seconds!r} {os.waitstatus_to_exitcode(code)} {usage.ru_utime!r} {usage.ru_stime!r} "
                 f"{usage.ru_minflt + usage.ru_majflt}\n".encode())
"""


def sandbox_argv(writable: Path, *, path: str, hidden: Sequence[Path] = (), readable: Sequence[Path] = (),
                 bwrap: str = BWRAP) -> list[str]:
    """The prefix that runs a command contained, working in `writable`; `writable` must be absolute.
    `readable` folders stay visible read-only even under the private /tmp (a workspace cache may live there)."""
    folder = str(writable)
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for shown in readable:
        argv += ["--ro-bind", str(shown), str(shown)]
    argv += ["--bind", folder, folder,
            # --unshare-all: user, pid, ipc, uts, cgroup and network namespaces; the last one leaves only a
            # private loopback, so nothing on the host or beyond is reachable.
            "--unshare-all", "--die-with-parent",
            # A new session: no TIOCSTI keystrokes into a terminal the bot was started from.
            "--new-session",
            # As root bwrap keeps every capability inside, enough to remount / read-write; drop them all.
            "--cap-drop", "ALL",
            "--clearenv", "--setenv", "PATH", path, "--setenv", "HOME", folder, "--setenv", "TMPDIR", "/tmp",
            "--setenv", "LANG", "C.UTF-8", "--chdir", folder]
    for secret in hidden:
        argv += ["--ro-bind", "/dev/null", str(secret)]
    return argv + ["--"]


def timed_argv(status_fd: int, memory_bytes: int, argv: Sequence[str], python: str = sys.executable) -> list[str]:
    """`argv` run by the shim: it reports "seconds returncode" on `status_fd`; memory 0 means no cap."""
    return [python, "-I", "-S", "-c", SHIM, str(status_fd), str(memory_bytes), *argv]


def read_status(data: bytes) -> tuple[float, int, float | None, float | None, int | None] | None:
    """The shim's report: (seconds, returncode, user, system, page faults) of the program (wait4's rusage, so
    its children count too), or None when it never finished (killed at a timeout, or by the program)."""
    try:
        words = data.decode().split()
        if len(words) == 2:
            return float(words[0]), int(words[1]), None, None, None
        seconds, code, user, system, faults = words
        return float(seconds), int(code), float(user), float(system), int(faults)
    except ValueError:
        return None


def secret_files(environ: Mapping[str, str]) -> tuple[Path, ...]:
    """Existing files that PERFBOT_*_FILE settings name: the ways secrets reach the bot on disk."""
    named = (Path(value) for key, value in environ.items() if key.startswith("PERFBOT_") and key.endswith("_FILE"))
    return tuple(sorted({p.resolve() for p in named if p.is_file()}))


@functools.cache
def sandbox_problem() -> str | None:
    """None when bwrap runs a command contained here; otherwise what is missing, in words for a person."""
    found = shutil.which(BWRAP)
    if found is None:
        return "bwrap is not installed (Debian: apt-get install bubblewrap, or run scripts/ensure-bwrap)"
    with tempfile.TemporaryDirectory(prefix="perfbot-sandbox-check-") as folder:
        argv = sandbox_argv(Path(folder).resolve(), path=os.environ.get("PATH", "/usr/bin:/bin"), bwrap=found)
        try:
            result = subprocess.run(argv + ["true"], capture_output=True, text=True, timeout=30,
                                    stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"bwrap could not be started: {exc}"
    if result.returncode != 0:
        why = result.stderr.strip()[-300:] or f"exit {result.returncode}"
        return f"bwrap cannot create its namespaces here (user/mount/network namespaces refused?): {why}"
    return None


def sandbox_available() -> bool:
    return sandbox_problem() is None
