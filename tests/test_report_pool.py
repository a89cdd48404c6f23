"""Reports read in worker processes: the same readings and the same stored rows as reading in-process."""
from __future__ import annotations

import faulthandler
import multiprocessing
import os
import resource
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
from bot.core.reading import read_report, unreadable
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


KILLER = b"<!-- this line kills its reader -->"


def reports_with_a_killer(n: int, victim: int, line: int) -> list[tuple[str, bytes]]:
    items = mixed_reports(n)
    path, data = items[victim]
    lines = data.split(b"\n")
    items[victim] = (path, b"\n".join(lines[:line - 1] + [KILLER] + lines[line - 1:]))
    return items


@pytest.fixture
def forked(monkeypatch):
    """Workers forked from this process, so they run the reader this test puts in place of the real one."""
    monkeypatch.setattr(threading, "active_count", lambda: 1)


def reader_dying_on_the_killer(monkeypatch, dies) -> None:
    real = report_pool.read_report

    def read(path: str, data: bytes):
        if KILLER in data:
            dies()
        return real(path, data)

    monkeypatch.setattr(report_pool, "read_report", read)


def crash() -> None:
    """What a native stack overflow in the parser does to its process."""
    faulthandler.disable()  # pytest's, inherited: its dump of the dying child is noise here
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    os.kill(os.getpid(), signal.SIGSEGV)


def test_a_report_that_kills_its_reader_is_named_with_its_line_and_the_rest_are_read(forked, monkeypatch):
    items = reports_with_a_killer(POOLED_FROM + 40, victim=130, line=7)
    reader_dying_on_the_killer(monkeypatch, crash)
    with read_reports(items, workers=2) as readings:
        pooled = list(readings)
    path = items[130][0]
    expected = [read_report(p, d) for p, d in items[:130]] + [unreadable(path, 7, "killed by SIGSEGV")]
    assert pooled == expected + [read_report(p, d) for p, d in items[131:]]
    finding = pooled[130].result.findings[0]
    assert (finding.file, finding.line, finding.rule) == (path, 7, "unreadable")
    assert "up to line 6 reads, and line 7 is what makes it fail" in finding.message
    assert multiprocessing.active_children() == []


def test_a_reader_the_machine_killed_once_is_read_again(forked, monkeypatch, tmp_path):
    items = reports_with_a_killer(POOLED_FROM + 40, victim=60, line=3)
    first_time = tmp_path / "not yet killed"
    first_time.touch()

    def killed_once() -> None:
        if first_time.exists():
            first_time.unlink()
            os.kill(os.getpid(), signal.SIGKILL)

    reader_dying_on_the_killer(monkeypatch, killed_once)
    with read_reports(items, workers=2) as readings:
        assert list(readings) == [read_report(p, d) for p, d in items]
    assert not first_time.exists()


def test_a_reader_the_machine_kills_every_time_is_a_passing_failure_not_the_reports(forked, monkeypatch):
    items = reports_with_a_killer(POOLED_FROM + 40, victim=60, line=3)
    reader_dying_on_the_killer(monkeypatch, lambda: os.kill(os.getpid(), signal.SIGKILL))
    with pytest.raises(TransientError, match=r"perf_case_0060\.md: the process reading it was killed by SIGKILL"):
        with read_reports(items, workers=2) as readings:
            list(readings)
    assert multiprocessing.active_children() == []


def test_a_sync_stores_every_report_when_one_kills_its_reader(forked, monkeypatch, git_repo, database):
    items = reports_with_a_killer(POOLED_FROM + 10, victim=3, line=1)
    for path, data in items:
        git_repo.write(path, data)
    head = git_repo.commit("a campaign's worth of reports, one of them hostile")
    reader_dying_on_the_killer(monkeypatch, crash)
    summary = sync_repo(database, git_repo)
    assert summary.counts["added"] == POOLED_FROM + 10
    with database.session() as session:
        assert session.scalar(select(Repo.last_synced_commit)) == head
        killer = session.scalar(select(Revision).join(Record).where(Record.slug == "perf_case_0003"))
        assert [(f["line"], f["rule"]) for f in killer.findings] == [(1, "unreadable")]
        assert "its first line alone makes it fail" in killer.findings[0]["message"]
        others = session.scalars(select(Revision).join(Record).where(Record.slug != "perf_case_0003")).all()
        assert len(others) == POOLED_FROM + 9
        assert not any(f["rule"] == "unreadable" for r in others for f in r.findings)


def test_a_report_read_alone_by_a_forkserver_child_reads_as_in_this_process():
    path, data = mixed_reports(1)[0]
    context = multiprocessing.get_context("forkserver")
    assert report_pool._read_alone(context, path, data) == read_report(path, data)


def test_a_readers_own_bug_in_a_child_is_raised_here_not_taken_for_the_report(monkeypatch):
    def buggy(path: str, data: bytes):
        raise ValueError("a bug in the reader")

    monkeypatch.setattr(report_pool, "read_report", buggy)
    with pytest.raises(ValueError, match="a bug in the reader"):
        report_pool._read_alone(multiprocessing.get_context("fork"), *mixed_reports(1)[0])


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
