"""Reports read in worker processes: the same readings and the same stored rows as reading in-process."""
from __future__ import annotations

import multiprocessing
import os
import signal
import threading

import pytest
from sqlalchemy import select

import bot.adapters.report_pool as report_pool
from bot.adapters.report_pool import POOLED_FROM, read_reports
from bot.adapters.store.engine import Database
from bot.adapters.store.models import Record, Repo, Revision, SlugAlias
from bot.core.lint import lint, with_history
from bot.core.parse import parse
from bot.core.reading import read_report
from bot.errors import TransientError
from tests.gitrepo import sync_repo
from tests.reports import canonical_report

BROKEN = (b"", b"---\ntrack: [unclosed\n---\n# Broken\n\xff\xfe", b"# No front matter\n\n```bend\ndef main():\n",
          "---\ntrack: seq\nratio: 1.5\n---\n# Near C\n".encode())


def mixed_reports(n: int) -> list[tuple[str, bytes]]:
    """Valid reports of both tracks, broken ones, and reports whose `supersedes` history may not know."""
    items = []
    for i in range(n):
        slug = f"perf_case_{i:04d}"
        if i % 17 == 5:
            data = BROKEN[i % len(BROKEN)]
        elif i % 3 == 0:
            data = canonical_report(slug, track="par", backend="metal", threads=8, ratio=5 + i % 7).encode()
        else:
            named = (f"perf_case_{i - 1:04d}", "perf_ghost") if i % 11 == 0 else ()
            data = canonical_report(slug, ratio=2.5 + i % 9, supersedes=named).encode()
        items.append((f"devs/issues/{slug}.md", data))
    return items


@pytest.fixture(params=["fork", "forkserver"])
def start_method(request, monkeypatch):
    """fork is chosen while the process runs one thread; the web service's threads make it a forkserver."""
    monkeypatch.setattr(threading, "active_count", lambda: 1 if request.param == "fork" else 4)
    return request.param


def test_workers_read_every_report_exactly_as_this_process_does(start_method):
    items = mixed_reports(POOLED_FROM + 40)
    with read_reports(items, workers=2) as readings:
        pooled = [next(readings)]
        workers = multiprocessing.active_children()
        pooled.extend(readings)
    assert len(workers) == 2 and all(w.pid != multiprocessing.current_process().pid for w in workers)
    assert pooled == [read_report(path, data) for path, data in items]


def test_few_reports_are_read_in_this_process():
    with read_reports(mixed_reports(POOLED_FROM - 1), workers=2) as readings:
        list(readings)
        assert multiprocessing.active_children() == []


def test_a_pool_that_is_left_early_stops_its_workers():
    with read_reports(mixed_reports(POOLED_FROM * 2), workers=2) as readings:
        next(readings)
    assert multiprocessing.active_children() == []


def test_a_reader_the_machine_kills_is_a_passing_failure_and_leaves_no_worker(monkeypatch):
    monkeypatch.setattr(threading, "active_count", lambda: 1)  # forked: the workers run the reader put in place here
    real = report_pool.read_report

    def read(path: str, data: bytes):
        if path.endswith("perf_case_0060.md"):
            os.kill(os.getpid(), signal.SIGKILL)  # as the OOM killer would
        return real(path, data)

    monkeypatch.setattr(report_pool, "read_report", read)
    with pytest.raises(TransientError, match="a process reading reports was killed"):
        with read_reports(mixed_reports(POOLED_FROM + 40), workers=2) as readings:
            list(readings)
    assert multiprocessing.active_children() == []


def test_lint_then_history_finds_what_lint_with_known_slugs_finds():
    for path, data in mixed_reports(60):
        result = parse(path, data)
        for known in (frozenset(), frozenset({"perf_ghost"}), frozenset({f"perf_case_{i:04d}" for i in range(60)})):
            later = with_history(lint(result, path=path), result, path=path, known_slugs=known)
            assert later == lint(result, path=path, known_slugs=known)


def dump(database) -> list:
    with database.session() as session:
        rows = []
        for model in (Record, Revision, SlugAlias):
            rows += [{c.key: getattr(row, c.key) for c in model.__table__.columns}
                     for row in session.scalars(select(model).order_by(model.id))]
        return rows


def test_a_first_sync_read_by_workers_stores_what_one_read_in_process_stores(git_repo, tmp_path, monkeypatch):
    for path, data in mixed_reports(POOLED_FROM + 10):
        git_repo.write(path, data)
    head = git_repo.commit("a campaign's worth of reports")
    pooled_db, alone_db = (Database(f"sqlite:///{tmp_path / name}") for name in ("pooled.sqlite3", "alone.sqlite3"))
    pooled = sync_repo(pooled_db, git_repo)
    monkeypatch.setattr(report_pool, "usable_cores", lambda: 1)
    in_process = sync_repo(alone_db, git_repo)
    assert pooled.counts == in_process.counts and pooled.counts["added"] == POOLED_FROM + 10
    assert dump(pooled_db) == dump(alone_db)
    with pooled_db.session() as session:
        assert session.scalar(select(Repo.last_synced_commit)) == head
    pooled_db.dispose()
    alone_db.dispose()
