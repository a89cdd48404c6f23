"""Sync at scale: full sync of N reports, then one changed report, side by side for several N.

Run: .venv/bin/python bench/sync_scale.py [--reports 10000 --reports 1000] [--db URL]
Incremental work must not grow with the number of reports: compare the incremental column across N
(each the median of five one-report edits). The full sync runs twice, with reports read by worker
processes (as perfbot does) and all in this process; for the largest N the phases are then timed
one at a time: git, reading (parse, lint, audit), store writes; and the block parser alone, markdown-it-py's
token stream (what perfbot parsed with before) against markdown-it-pyrs's tree (what it parses with), on the
same reports.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import git
from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

import bot.adapters.report_pool as report_pool
from bot.adapters.git import GitRepository
from bot.adapters.store.engine import Database
from bot.adapters.store.repository import RecordRepository
from bot.cli.new_cmd import scaffold
from bot.core.history import DELETED
from bot.core.reading import read_report
from bot.core.scan import PARSER
from bot.services.identities import Identities
from bot.services.sync import SyncSummary, apply_step, plan, sync

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
    one_process_seconds = float("nan")
    if db_url is None:  # a second fresh store, for the same full sync read all in this process
        alone = Database(f"sqlite:///{workdir / f'bench-{n}-one-process.sqlite3'}")
        one_process_seconds = _in_one_process(lambda: timed(lambda: sync(alone, source))[0])
        alone.dispose()
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
    return {"n": n, "build": build_seconds, "full": full_seconds, "one_process": one_process_seconds,
            "incremental": statistics.median(incremental), "noop": statistics.median(noop), "root": root}


def _in_one_process(fn):
    cores = report_pool.usable_cores
    report_pool.usable_cores = lambda: 1
    try:
        return fn()
    finally:
        report_pool.usable_cores = cores


def phases(root: Path, workdir: Path) -> dict[str, float]:
    """A fresh full sync of the repository at `root`, one phase at a time, all in this process."""
    source = GitRepository(root)
    head = source.resolve(source.default_ref())
    git_seconds, (mode, steps, _, seen) = timed(lambda: plan(source, head, None, False))
    read_seconds, read = timed(lambda: [{c.path: read_report(c.path, c.data or b"") for c in step.changes
                                         if c.kind != DELETED} for step in steps])
    db = Database(f"sqlite:///{workdir / 'phases.sqlite3'}")

    def write() -> None:
        summary, ids = SyncSummary(source.key, head, None, mode), Identities(replay=False)
        with db.session() as session:
            records = RecordRepository.open(session, source.key)
            for step, step_read in zip(steps, read):
                apply_step(records, step, summary, ids, seen, step_read)
            records.mark_synced(head)

    write_seconds, _ = timed(write)
    source.close()
    db.dispose()
    return {"git": git_seconds, "read": read_seconds, "write": write_seconds}


def block_parsers(root: Path) -> dict[str, float]:
    """Seconds each block parser takes over every report under `root`, with the settings scan uses."""
    texts = [path.read_text(encoding="utf-8") for path in sorted((root / "devs" / "issues").glob("*.md"))]
    tokens = MarkdownIt("commonmark").enable("table").use(front_matter_plugin).disable("inline")

    def each(parse) -> None:  # one result alive at a time, as in scan
        for text in texts:
            parse(text)

    return {"markdown-it-py tokens": timed(lambda: each(tokens.parse))[0],
            "markdown-it-pyrs tree": timed(lambda: each(PARSER.tree))[0]}


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
        parsers = block_parsers(biggest["root"])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"reading with {report_pool.usable_cores()} worker processes; 'one process' reads in the syncing process")
    print(f"{'reports':>8} {'full sync':>10} {'per report':>11} {'one process':>12} {'speedup':>8} {'1 changed':>10} "
          f"{'no-op':>8} {'full/1 changed':>15}")
    for r in rows:
        print(f"{r['n']:>8} {r['full']:>9.2f}s {r['full'] / r['n'] * 1000:>9.2f}ms {r['one_process']:>11.2f}s "
              f"{r['one_process'] / r['full']:>7.2f}x {r['incremental'] * 1000:>8.1f}ms "
              f"{r['noop'] * 1000:>6.1f}ms {r['full'] / r['incremental']:>14.0f}x")
    print(f"phases of a full sync of {biggest['n']} in one process: " +
          ", ".join(f"{name} {seconds:.2f}s" for name, seconds in split.items()))
    py, rs = parsers.values()
    print(f"block parser over the same {biggest['n']} reports: markdown-it-py {py:.2f}s, markdown-it-pyrs {rs:.2f}s "
          f"({py / rs:.1f}x)")
    if len(rows) > 1:
        big, small = max(rows, key=lambda r: r["n"]), min(rows, key=lambda r: r["n"])
        print(f"incremental at {big['n']} vs {small['n']} reports: {big['incremental'] / small['incremental']:.2f}x "
              f"(reports grew {big['n'] / small['n']:.0f}x)")


if __name__ == "__main__":
    main()
