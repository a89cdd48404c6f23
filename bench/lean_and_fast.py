"""The figures of "lean and fast" from one run: CLI start-up against flask, the 10,000-report sync, and the whole
suite quiet and with two CPU-bound processes competing for the cores.

Run: .venv/bin/python bench/lean_and_fast.py [--skip-suite]
It runs bench/cli_startup.py and bench/sync_scale.py as they are, then `./test.sh -q` twice (the README's test
command), the second time beside two busy loops; it prints each part's own output, then one summary with the
load average each part ran at. It takes about 25 minutes on a 2-core machine.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable


def timed(argv: list[str]) -> tuple[float, str, float]:
    """Wall seconds, the output, and the one-minute load average when it ended."""
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    output = done.stdout + done.stderr
    print(output[-4000:], flush=True)
    return elapsed, output, os.getloadavg()[0]


def suite_line(output: str) -> str:
    # `-q` prints the summary bare ("2148 passed, 1 skipped in 380.86s"), a failing run between "=" rules.
    found = re.findall(r"^=*\s*(\d+ (?:passed|failed)\b.*?)\s*=*$", output, re.M)
    return found[-1] if found else "no pytest summary (see the output above)"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--skip-suite", action="store_true", help="only the start-up and sync figures")
    args = parser.parse_args()
    summary: list[str] = []

    _, startup, load = timed([PYTHON, "bench/cli_startup.py", "--runs", "5"])
    rows = [line for line in startup.splitlines() if "flask --help" in line]
    summary += [f"CLI start-up (load {load:.1f}):", *rows]

    _, sync, load = timed([PYTHON, "bench/sync_scale.py", "--reports", "10000", "--reports", "1000"])
    lines = sync.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("first syncs:")), len(lines))
    summary += ["", f"Sync (load {load:.1f}):", *lines[start:]]

    if not args.skip_suite:
        quiet, output, load = timed(["./test.sh", "-q", "-p", "no:cacheprovider"])
        summary += ["", f"Suite, quiet: {quiet / 60:.1f} min, {suite_line(output)} (load at the end {load:.1f})"]
        busy = [subprocess.Popen([PYTHON, "-c", "while True: pass"]) for _ in range(2)]
        try:
            loaded, output, load = timed(["./test.sh", "-q", "-p", "no:cacheprovider"])
        finally:
            for process in busy:
                process.kill()
        summary += [f"Suite beside two busy loops: {loaded / 60:.1f} min, {suite_line(output)} "
                    f"(load at the end {load:.1f})"]

    print("\n".join(["", "== summary ==", *summary]))


if __name__ == "__main__":
    main()
