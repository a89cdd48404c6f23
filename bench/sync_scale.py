"""Sync at scale: full sync of N reports, then one changed report, side by side for several N.

Run: .venv/bin/python bench/sync_scale.py [--reports 10000 --reports 1000] [--db URL]
Incremental work must not grow with the number of reports: compare the incremental column across N
(each the median of five one-report edits).
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import git

from bot.adapters.git import GitRepository
from bot.adapters.store.engine import Database
from bot.cli.new_cmd import scaffold
from bot.services.sync import sync

ROUNDS = 5  # incremental and no-op syncs are timed this many times each; the median is printed


def build_repo(root: Path, n: int) -> git.Repo:
    repo = git.Repo.init(root, initial_branch="main")
    with repo.config_writer() as config:
        config.set_value("user", "name", "bench")
        config.set_value("user", "email", "bench@example.invalid")
    folder = root / "devs" / "issues"
    folder.mkdir(parents=True)
    for i in range(n):
        track = "par" if i % 3 == 0 else "seq"
        text = scaffold(f"perf_case_{i:05d}", track, "c", 1 if track == "seq" else 8,
                        2.5 + (i % 40) / 4, f"Generated finding number {i}")
        (folder / f"perf_case_{i:05d}.md").write_text(text, encoding="utf-8")
    repo.git.add("-A")
    repo.git.commit("-q", "-m", f"{n} reports")
    return repo


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def measure(n: int, db_url: str | None, workdir: Path) -> dict:
    root = workdir / f"repo-{n}"
    build_seconds, repo = timed(lambda: build_repo(root, n))
    url = db_url or f"sqlite:///{workdir / f'bench-{n}.sqlite3'}"
    db = Database(url)
    source = GitRepository(root)
    full_seconds, full = timed(lambda: sync(db, source))
    incremental, noop = [], []
    for round_ in range(ROUNDS):
        target = root / "devs" / "issues" / f"perf_case_{(n // 2 + round_) % n:05d}.md"
        target.write_text(target.read_text().replace("Generated finding", "Edited finding"), encoding="utf-8")
        repo.git.commit("-q", "-am", f"edit one report ({round_})")
        seconds, inc = timed(lambda: sync(db, source))
        assert inc.counts["modified"] == 1, inc.counts
        incremental.append(seconds)
        noop.append(timed(lambda: sync(db, source))[0])
    source.close()
    db.dispose()
    assert full.counts["added"] == n, full.counts
    return {"n": n, "build": build_seconds, "full": full_seconds,
            "incremental": statistics.median(incremental), "noop": statistics.median(noop)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reports", type=int, action="append", help="report counts (repeatable)")
    parser.add_argument("--db", default=None, help="database URL (default: a fresh SQLite file per run)")
    args = parser.parse_args()
    counts = args.reports or [10_000, 1_000]
    workdir = Path(tempfile.mkdtemp(prefix="perfbot-bench-"))
    try:
        rows = [measure(n, args.db, workdir) for n in counts]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"{'reports':>8} {'full sync':>10} {'per report':>11} {'1 changed':>10} {'no-op':>8} {'full/1 changed':>15}")
    for r in rows:
        print(f"{r['n']:>8} {r['full']:>9.2f}s {r['full'] / r['n'] * 1000:>9.2f}ms {r['incremental'] * 1000:>8.1f}ms "
              f"{r['noop'] * 1000:>6.1f}ms {r['full'] / r['incremental']:>14.0f}x")
    if len(rows) > 1:
        big, small = max(rows, key=lambda r: r["n"]), min(rows, key=lambda r: r["n"])
        print(f"incremental at {big['n']} vs {small['n']} reports: {big['incremental'] / small['incremental']:.2f}x "
              f"(reports grew {big['n'] / small['n']:.0f}x)")


if __name__ == "__main__":
    main()
