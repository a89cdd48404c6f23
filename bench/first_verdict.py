"""Time to a first answer on a loaded host: `perfbot serve` on the demo, with CPU hogs, until the dashboard shows
its first verdict (issue 40: a busy host once held every run back for twice ten minutes).

Run: .venv/bin/python bench/first_verdict.py [--hogs 2] [--limit 600] [--dir PATH]

It makes the demo (`perfbot demo`, not timed) in a new directory, starts `--hogs` busy processes (each spins until
the run ends or `--limit` seconds pass, whichever comes first: they stop themselves), starts `perfbot serve --repo`
on the demo and reads /dashboard/runs every second until a run shows a verdict. Printed: seconds from the serve
command to the first verdict, which run and verdict, whether it was marked noisy, and the load average seen.
Nothing leaves localhost. The figure depends on the machine and its other load; docs/benchmarks.md keeps the one
seen.
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.request import urlopen

PERFBOT = Path(sys.executable).with_name("perfbot")
VERDICT = re.compile(r'<a href="/dashboard/runs/(\d+)">#\d+</a>.*?data-verdict="([a-z_]+)">([^<]*)<', re.S)


def hog(until: float) -> None:
    """One busy core until `until` (time.monotonic()): bounded however the benchmark ends."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    x = 0
    while time.monotonic() < until:
        for _ in range(100_000):
            x = (x * 1103515245 + 12345) & 0x7FFFFFFF


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def first_verdict(base: str, limit: float, started: float) -> tuple[float, str, str, str] | None:
    """(seconds, run, verdict key, said) of the first run the dashboard shows with a verdict; None past `limit`."""
    while time.monotonic() - started < limit:
        try:
            page = urlopen(f"{base}/dashboard/runs", timeout=5).read().decode()
        except OSError:
            page = ""  # not listening yet
        found = VERDICT.search(page)
        if found:
            return time.monotonic() - started, found.group(1), found.group(2), found.group(3)
        time.sleep(1)
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hogs", type=int, default=2, help="busy processes (default 2: one per core here)")
    parser.add_argument("--limit", type=float, default=600, help="give up (and stop the hogs) after this many s")
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    root = args.dir or Path(tempfile.mkdtemp(prefix="perfbot-first-verdict-"))
    port = free_port()
    env = {**os.environ, "PERFBOT_INSTANCE_DIR": str(root / "instance"), "PERFBOT_BIND": f"127.0.0.1:{port}"}
    env.pop("PERFBOT_DATABASE_URL", None)
    subprocess.run([str(PERFBOT), "demo", str(root / "demo")], env=env, check=True, capture_output=True)
    until = time.monotonic() + args.limit
    hogs = [multiprocessing.Process(target=hog, args=(until,), daemon=True) for _ in range(args.hogs)]
    for process in hogs:
        process.start()
    time.sleep(3)  # the hogs are running before the clock starts
    log = (root / "serve.log").open("wb")
    started = time.monotonic()
    serve = subprocess.Popen([str(PERFBOT), "serve", "--repo", str(root / "demo")], env=env, stdout=log,
                             stderr=subprocess.STDOUT)
    try:
        found = first_verdict(f"http://127.0.0.1:{port}", args.limit, started)
        load = os.getloadavg()[0]
    finally:
        serve.send_signal(signal.SIGTERM)
        try:
            serve.wait(30)
        except subprocess.TimeoutExpired:
            serve.kill()
        for process in hogs:
            process.terminate()
            process.join(5)
        log.close()
    cores = len(os.sched_getaffinity(0))
    print(f"host: {cores} cores, {args.hogs} CPU hogs, load average {load:.1f} at the first verdict")
    if found is None:
        print(f"no verdict on the dashboard within {args.limit:.0f} s (log: {root / 'serve.log'})")
        raise SystemExit(1)
    seconds, run, key, said = found
    print(f"first verdict after {seconds:.0f} s: bench run {run}, {key} ({said.strip()})")
    if args.dir is None:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
