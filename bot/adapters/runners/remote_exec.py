"""The wrapper a runner executes on a bench host: a program run with limits, in its own group, on its own clock."""
# The ssh runner sends this whole file as `python3 -c <source> COMMAND ARG`, so it must stay standard
# library only, Python 3.8+, and work on Linux and macOS. Locally it is an ordinary module: run_limited is
# the same contract LocalRunner.run keeps, so both runners can share it.
#
#   run  JSON   {"argv": [...], "cwd": "/abs", "timeout": 5, "memory_mb": 512} -> one JSON line on stdout:
#               {"returncode", "seconds", "timed_out", "stdout", "stderr", "user", "system", "faults"} (the
#               program never writes there); user/system/faults are the child's rusage, as wait4 reports it
#   root PATH   the folder expanded on this host (~ is the remote user's home), created 0700, printed
#   lock PATH   flock PATH, print "locked", hold it until stdin ends (the ssh session closes or dies)
from __future__ import annotations

import fcntl
import json
import os
import resource
import signal
import subprocess
import sys
import time


def _limits(memory_mb: int):
    limit = memory_mb * 1024 * 1024

    def apply() -> None:  # in the child, before exec: cap memory, and no core dumps on the bench host
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        try:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (ValueError, OSError):
            if sys.platform != "darwin":  # macOS refuses or ignores RLIMIT_AS; Linux must honour it
                raise

    return apply


def run_limited(argv: list, cwd: str, timeout: float, memory_mb: int) -> dict:
    """Run an argument list (never a shell) in its own session; on timeout the whole group is killed."""
    # This wrapper runs one child per invocation, so RUSAGE_CHILDREN after the wait is exactly that child's
    # wait4 rusage (its own children included), on Linux and macOS alike.
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    try:
        process = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, start_new_session=True, preexec_fn=_limits(memory_mb))
    except OSError as exc:
        return _result(127, b"", ("cannot run %s: %s" % (argv[0], exc.strerror)).encode(), 0.0, False)
    except subprocess.SubprocessError as exc:
        return _result(126, b"", ("cannot apply limits to %s: %s" % (argv[0], exc)).encode(), 0.0, False)
    try:
        out, err = process.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = process.communicate()
        timed_out = True
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = _result(process.returncode, out, err, seconds, timed_out)
    result.update(user=after.ru_utime - before.ru_utime, system=after.ru_stime - before.ru_stime,
                  faults=(after.ru_minflt + after.ru_majflt) - (before.ru_minflt + before.ru_majflt))
    return result


def _result(returncode: int, out: bytes, err: bytes, seconds: float, timed_out: bool) -> dict:
    return {"returncode": returncode, "seconds": seconds, "timed_out": timed_out,
            "stdout": out.decode("utf-8", "replace"), "stderr": err.decode("utf-8", "replace")}


def make_root(path: str) -> str:
    full = os.path.abspath(os.path.expanduser(path))
    os.makedirs(full, mode=0o700, exist_ok=True)
    return full


def hold_lock(path: str) -> None:
    path = os.path.expanduser(path)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    with open(path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        sys.stdout.write("locked\n")
        sys.stdout.flush()
        # The lock lives exactly as long as the runner's ssh session: its end (or death) is EOF here.
        while os.read(0, 4096):
            pass


def main(args: list) -> int:
    if len(args) != 2 or args[0] not in ("run", "root", "lock"):
        sys.stderr.write("usage: run JSON | root PATH | lock PATH\n")
        return 2
    command, arg = args
    if command == "run":
        request = json.loads(arg)
        result = run_limited(list(request["argv"]), request["cwd"], float(request["timeout"]),
                             int(request["memory_mb"]))
        sys.stdout.write("\n" + json.dumps(result) + "\n")  # own line: a chatty login shell cannot spoil it
    elif command == "root":
        sys.stdout.write("\n" + make_root(arg) + "\n")
    else:
        hold_lock(arg)
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
