"""One writer per repository across workers: the lock serialises one repository and lets others run."""
from __future__ import annotations

import threading
import time

import pytest

from bot.adapters.store.locks import repo_lock


def test_one_repository_is_written_by_one_worker_at_a_time_and_others_run_alongside(database):
    inside: list[str] = []
    overlaps: list[tuple[str, str]] = []
    guard = threading.Lock()

    def work(name: str, repo: str) -> None:
        with repo_lock(database, repo), repo_lock(database, repo):  # reentrant: a use case that calls another
            with guard:
                overlaps.extend((name, other) for other in inside)
                inside.append(name)
            time.sleep(0.2)
            with guard:
                inside.remove(name)

    threads = [threading.Thread(target=work, args=(f"a{n}", "team/a")) for n in range(3)]
    threads.append(threading.Thread(target=work, args=("b", "team/b")))
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all("b" in pair for pair in overlaps)  # the a-workers never overlapped one another
    assert any("b" in pair for pair in overlaps)  # while b ran beside them
    assert time.monotonic() - started >= 0.6  # the three a-workers took turns


def test_two_workers_syncing_one_repository_open_one_issue_per_record(database, tmp_path):
    import json

    from bot.adapters.git import local_full_name
    from bot.adapters.local_issues import FileIssues
    from bot.services.usecases import BotServices, RepoSource
    from tests.gitrepo import RepoBuilder
    from tests.reports import canonical_report

    repo = RepoBuilder(tmp_path / "runtime")
    for n in range(6):
        repo.write(f"devs/issues/perf_r{n}.md", canonical_report(f"perf_r{n}"))
    repo.commit("six reports")
    key, tracker = local_full_name(repo.root), FileIssues(tmp_path / "issues")
    errors = []

    def worker() -> None:  # a push and the hourly reconcile, handled by two workers at once
        try:
            BotServices(database, lambda _n, _i: tracker, RepoSource(local={key: repo.root}),
                        bot_login="perfbot").reports.sync_and_mirror(key, None, None)
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    titles = [i["title"].split(":")[0] for i in json.loads(tracker.state_file.read_text())["issues"].values()]
    assert errors == [] and sorted(titles) == [f"perf_r{n}" for n in range(6)]


def test_threads_waiting_for_a_repository_lock_hold_no_database_connection(db_url):
    """16 threads behind one repository, held by another process: the pool (here 4 connections) is not drained
    by the waiters, so the rest of the process (claims, settles, readiness) still gets a connection."""
    from sqlalchemy import create_engine, text

    from bot.adapters.store.engine import Database
    from bot.adapters.store.locks import _file_lock, _key

    db = Database(db_url, pool_size=2)
    rival = create_engine(db_url) if db.engine.dialect.name == "postgresql" else None
    release = threading.Event()
    done: list[int] = []

    def other_process() -> None:  # the lock held outside this process: a waiter must poll (PostgreSQL) or flock
        if rival is not None:
            with rival.connect() as connection:
                connection.execute(text("SELECT pg_advisory_lock(:k)"), {"k": _key("team/a")})
                release.wait(60)
                connection.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": _key("team/a")})
        else:
            with _file_lock(db, "team/a"):
                release.wait(60)

    holder = threading.Thread(target=other_process)
    holder.start()
    time.sleep(0.3)

    def waiter(n: int) -> None:
        with repo_lock(db, "team/a"), db.session() as session:
            session.execute(text("SELECT 1"))
            done.append(n)

    threads = [threading.Thread(target=waiter, args=(n,)) for n in range(16)]
    try:
        for thread in threads:
            thread.start()
        samples = []
        for _ in range(10):
            time.sleep(0.1)
            samples.append(db.pool_in_use()[0])
        assert done == [] and max(samples) <= 1, samples  # all 16 wait; at most the one polling has a connection
        with db.session() as session:  # the process still reaches its store while they wait
            assert session.execute(text("SELECT 1")).scalar() == 1
    finally:
        release.set()
        holder.join()
        for thread in threads:
            thread.join(60)
        db.dispose()
        if rival is not None:
            rival.dispose()
    assert sorted(done) == list(range(16))


def test_work_that_would_not_wait_is_told_the_repository_is_busy_and_leaves_no_lock_behind(database):
    """Held by another process (its own connection or file handle): `wait=False` raises at once and takes
    nothing, of this process's lock or the other's; once free, the same call takes it."""
    import fcntl
    import hashlib
    from pathlib import Path

    from sqlalchemy import text

    from bot.adapters.store import locks

    name = "team/held-elsewhere"
    if database.engine.dialect.name == "postgresql":
        other = database.engine.connect()  # another process's session lock, as pg_try_advisory_lock sees it
        other.execute(text("SELECT pg_advisory_lock(:key)"), {"key": locks._key(name)})

        def release() -> None:
            other.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": locks._key(name)})
            other.close()
    else:
        digest = hashlib.sha256(name.encode()).hexdigest()[:16]
        path = Path(database.engine.url.database).parent / f".perfbot-lock-{digest}"
        other_handle = open(path, "a")  # noqa: SIM115 (a second open file: flock treats it as another process's)
        fcntl.flock(other_handle, fcntl.LOCK_EX)

        def release() -> None:
            fcntl.flock(other_handle, fcntl.LOCK_UN)
            other_handle.close()
    outcome: list[str] = []

    def attempt() -> None:
        try:
            with repo_lock(database, name, wait=False):
                outcome.append("taken")
        except locks.RepositoryBusy:
            outcome.append("busy")
            outcome.append("left held" if name in locks._held.releases else "left nothing")

    try:
        trying = threading.Thread(target=attempt, daemon=True)
        trying.start()
        trying.join(60)  # bounded so that a lock that waits fails the test instead of hanging it; nothing is timed
        assert outcome == ["busy", "left nothing"] and not locks._process_lock(name).locked()
    finally:
        release()
    with repo_lock(database, name, wait=False):
        assert locks._process_lock(name).locked()
    assert not locks._process_lock(name).locked()


@pytest.mark.postgres
def test_a_lock_the_database_dropped_stops_the_next_post_and_is_let_go_cleanly(postgres_server):
    """A restart ends the lock's session while its holder's job goes on, and another worker may take the lock:
    the holder's next post (an issue, a comment) is refused with LockLost before it reaches GitHub."""
    from sqlalchemy import text

    from bot.adapters.store import locks
    from bot.adapters.store.engine import Database
    from bot.core.tracker.outgoing import Outgoing
    from bot.services.posting import CleanTracker

    posted: list[str] = []

    class Tracker:
        def upsert_comment(self, number, marker, body, comment_id):
            posted.append(body)
            return 1

    db = Database(postgres_server.create_database("perfbot_test_lock_dropped"))
    tracker = CleanTracker(Tracker(), Outgoing(()))
    try:
        with repo_lock(db, "team/dropped"):
            assert tracker.upsert_comment(1, "<!-- m -->", "while held", None) == 1
            with db.engine.connect() as other:  # what a restart does to the lock's session
                other.execute(text("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' "
                                   "AND pid <> pg_backend_pid() AND database = (SELECT oid FROM pg_database "
                                   "WHERE datname = current_database())"))
            with pytest.raises(locks.LockLost):
                tracker.upsert_comment(1, "<!-- m -->", "after the restart", None)
        assert posted == ["while held"]
        assert db.pool_in_use()[0] == 0 and "team/dropped" not in locks._held.checks
        with repo_lock(db, "team/dropped", wait=False):  # free again: nothing of the dead session kept
            tracker.upsert_comment(1, "<!-- m -->", "taken anew", None)
        assert posted == ["while held", "taken anew"]
    finally:
        db.dispose()
