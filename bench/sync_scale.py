"""Sync at scale: full sync of N reports, then one changed report on top of them, side by side for several N.

Run: .venv/bin/python bench/sync_scale.py [--reports 10000 --reports 1000] [--db URL]
The goals: a first sync of 10,000 reports under 15 s, and an incremental sync (one changed report, the
median of 15 edits, each its own commit) that costs no more on top of 10,000 reports than on top of 1,000.
The first sync runs three times on fresh stores. For the largest N the phases of a first sync are then
timed one at a time: git, reading (parse, lint, audit), store writes; and reading is timed again by a pool
of worker processes, alternating with reading in this process, to show whether a pool would pay.
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import statistics
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import git

from bot.adapters.git import GitRepository
from bot.adapters.store.engine import Database
from bot.adapters.store.repository import RecordRepository
from bot.cli.new_cmd import scaffold
from bot.core.reports.history import DELETED
from bot.core.reports.reading import read_report
from bot.services.reports.identities import Identities
from bot.services.reports.sync import SyncSummary, apply_step, plan, sync

ROUNDS = 15  # incremental and no-op syncs are timed this many times each; the median is printed
FULL_ROUNDS = 3  # first syncs; and reading the largest N each way
POOL_BATCH = 50  # reports per task handed to a worker


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
    source = GitRepository(root)
    full = []
    for round_ in range(1 if db_url else FULL_ROUNDS):  # a --db URL is one store: one first sync
        url = db_url or f"sqlite:///{workdir / f'bench-{n}-{round_}.sqlite3'}"
        db = Database(url)
        seconds, summary = timed(lambda db=db: sync(db, source))
        assert summary.counts["added"] == n, summary.counts
        full.append(seconds)
        db.dispose()
    db = Database(url)  # the last store: every report synced
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
    return {"n": n, "build": build_seconds, "full": full,
            "incremental": statistics.median(incremental), "incremental_range": (min(incremental), max(incremental)),
            "noop": statistics.median(noop), "root": root}


def _spread(seconds: list[float]) -> str:
    """Median (min-max) of first syncs."""
    return f"{statistics.median(seconds):.2f}s ({min(seconds):.2f}-{max(seconds):.2f})"


def phases(root: Path, workdir: Path) -> dict[str, float]:
    """A fresh full sync of the repository at `root`, one phase at a time, all in this process."""
    source = GitRepository(root)
    head = source.resolve(source.default_ref())
    git_seconds, (mode, steps, _, seen) = timed(lambda: plan(source, head, None, False))
    read_seconds, read = timed(lambda: [{c.path: read_report(c.path, c.data or b"") for c in step.changes
                                         if c.kind != DELETED} for step in steps])
    db = Database(f"sqlite:///{workdir / 'phases.sqlite3'}")

    def write() -> None:
        summary, ids = SyncSummary(source.full_name, head, None, mode), Identities(replay=False)
        with db.session() as session:
            records = RecordRepository.open(session, source.full_name)
            for step, step_read in zip(steps, read, strict=False):
                apply_step(records, step, summary, ids, seen, step_read)
            records.mark_synced(head)

    write_seconds, _ = timed(write)
    source.close()
    db.dispose()
    return {"git": git_seconds, "read": read_seconds, "write": write_seconds}


def reading_pooled(root: Path) -> dict[str, list[float]]:
    """Seconds to read every report under `root` in this process and by a pool of forked workers, alternating."""
    items = [(str(path), path.read_bytes()) for path in sorted((root / "devs" / "issues").glob("*.md"))]
    batches = [items[at:at + POOL_BATCH] for at in range(0, len(items), POOL_BATCH)]
    workers = len(os.sched_getaffinity(0))
    times: dict[str, list[float]] = {"this process": [], f"{workers} workers": []}
    for round_ in range(FULL_ROUNDS):
        for way in list(times) if round_ % 2 == 0 else reversed(list(times)):
            if way == "this process":
                times[way].append(timed(lambda: _read_batch(items))[0])
                continue
            with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
                times[way].append(timed(lambda: [r for b in pool.map(_read_batch, batches) for r in b])[0])
    return times


def _read_batch(batch: list[tuple[str, bytes]]) -> list:
    return [read_report(path, data) for path, data in batch]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reports", type=int, action="append", help="report counts (repeatable)")
    parser.add_argument("--db", default=None, help="database URL (default: a fresh SQLite file per run)")
    args = parser.parse_args()
    counts = args.reports or [10_000, 1_000]
    workdir = Path(tempfile.mkdtemp(prefix="perfbot-bench-"))
    try:
        rows = [measure(n, args.db, workdir) for n in counts]
        biggest = max(rows, key=lambda r: r["n"])
        split = phases(biggest["root"], workdir)
        pooled = reading_pooled(biggest["root"])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"first syncs: {FULL_ROUNDS} each, median (min-max); one changed report and no-op: median of {ROUNDS}")
    print(f"{'reports':>8} {'first sync':>19} {'per report':>11} {'1 changed':>10} {'no-op':>8}")
    for r in rows:
        print(f"{r['n']:>8} {_spread(r['full']):>19} {statistics.median(r['full']) / r['n'] * 1000:>9.2f}ms "
              f"{r['incremental'] * 1000:>8.1f}ms {r['noop'] * 1000:>6.1f}ms")
    print(f"phases of a full sync of {biggest['n']} in one process: " +
          ", ".join(f"{name} {seconds:.2f}s" for name, seconds in split.items()))
    print(f"reading the same {biggest['n']} reports, alternating: " +
          ", ".join(f"{way} {_spread(seconds)}" for way, seconds in pooled.items()))
    for r in rows:
        low, high = r["incremental_range"]
        print(f"one changed report on top of {r['n']}: median {r['incremental'] * 1000:.1f}ms "
              f"({ROUNDS} edits: {low * 1000:.1f}-{high * 1000:.1f}ms)")
    if len(rows) > 1:
        big, small = max(rows, key=lambda r: r["n"]), min(rows, key=lambda r: r["n"])
        print(f"incremental at {big['n']} vs {small['n']} reports: {big['incremental'] / small['incremental']:.2f}x "
              f"(reports grew {big['n'] / small['n']:.0f}x)")


if __name__ == "__main__":
    main()
