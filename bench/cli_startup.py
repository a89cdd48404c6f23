"""CLI start-up, side by side in one run: `flask --help` (the floor a click program in this venv pays), against
`perfbot --help`, `perfbot lint FILE` and `perfbot dedup DRAFT` offline (no API key).

Run: .venv/bin/python bench/cli_startup.py [--runs 7]
Each command runs `--runs` times, round-robin, in a fresh process; the median wall time is printed with its
ratio to `flask --help`. The lint and dedup runs use the demo repository, made once in a temporary folder.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    folder = Path(tempfile.mkdtemp(prefix="perfbot-cli-bench-"))
    try:
        demo = folder / "demo"
        subprocess.run([BIN / "perfbot", "demo", str(demo)], check=True, capture_output=True)
        report = next((demo / "devs" / "issues").glob("perf_*.md"))
        draft = folder / "perf_draft.md"
        draft.write_text(report.read_text())
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PERFBOT_", "ANTHROPIC_"))}
        env["PERFBOT_INSTANCE_DIR"] = str(folder / "instance")
        commands = {
            "flask --help": [BIN / "flask", "--help"],
            "perfbot --help": [BIN / "perfbot", "--help"],
            "perfbot lint FILE": [BIN / "perfbot", "lint", str(report)],
            "perfbot dedup DRAFT": [BIN / "perfbot", "dedup", "--repo", str(demo), str(draft)],
        }
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(runs):
            for name, argv in commands.items():
                started = time.perf_counter()
                subprocess.run(argv, cwd=folder, env=env, capture_output=True)
                times[name].append(time.perf_counter() - started)
        floor = statistics.median(times["flask --help"])
        for name, seconds in times.items():
            median = statistics.median(seconds)
            print(f"{name:22} {median:6.3f} s  {median / floor:5.1f}x flask --help  (min {min(seconds):.3f}, "
                  f"max {max(seconds):.3f}, {runs} runs)")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
