"""The durable queue and the worker: a delivery stored once and flushed before it is acknowledged, a stuck store
refused in bounded time; leases, retries with backoff, permanent failures, redelivery, isolation."""
from __future__ import annotations

import sqlite3
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, event

import handlers
from bot.adapters.store.engine import SQLITE_BUSY_SECONDS, Database
from bot.adapters.store.queue import DeliveryQueue, NewDelivery, NotStored
from bot.cli import main
from bot.errors import RateLimited, TransientError
from bot.services.worker import Event, Worker, backoff_seconds

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def new(n: int | str, event: str = "push") -> NewDelivery:
    return NewDelivery(f"d-{n}", event, "opened", "team/runtime", 7, '{"n": %s}' % (n if isinstance(n, int) else 0))


def worker(queue, dispatch, owner="w1", max_attempts=3) -> Worker:
    return Worker(queue, dispatch, owner=owner, lease_seconds=60, max_attempts=max_attempts)


def test_concurrent_enqueues_store_each_delivery_once_and_report_redeliveries(database):
    queue = DeliveryQueue(database)
    ids = [n % 30 for n in range(60)]  # every id twice, the copies racing each other
    with ThreadPoolExecutor(8) as pool:
        stored = list(pool.map(lambda n: (n, queue.enqueue(new(n), wait=5)), ids))
    for n in range(30):
        assert sorted(s for i, s in stored if i == n) == [False, True], n  # one stored, one a duplicate
    assert queue.counts() == {"pending": 30}
    assert queue.enqueue(new(5)) is False


def sqlite_setting(connection, name: str):
    return connection.exec_driver_sql(f"PRAGMA {name}").scalar()


def test_a_delivery_commits_with_a_flush_and_the_pool_keeps_its_own_settings(database):
    at_commit: list[object] = []

    def on_commit(connection) -> None:  # read through the driver: SQLAlchemy is inside its own commit here
        cursor = connection.connection.dbapi_connection.cursor()
        cursor.execute("PRAGMA synchronous" if connection.dialect.name == "sqlite" else "SHOW synchronous_commit")
        at_commit.append(cursor.fetchone()[0])
        cursor.close()

    event.listen(database.engine, "commit", on_commit)
    try:
        assert DeliveryQueue(database).enqueue(new(1), wait=0.5) is True
    finally:
        event.remove(database.engine, "commit", on_commit)
    if database.engine.dialect.name == "sqlite":
        assert at_commit == [2]  # FULL: the log synced before the commit returned
        with database.engine.connect() as connection:  # the same pooled connection, back to the store's settings
            assert (sqlite_setting(connection, "synchronous"), sqlite_setting(connection, "busy_timeout")) == \
                (1, SQLITE_BUSY_SECONDS * 1000)
    else:
        assert at_commit == ["on"]


def hold_the_write_lock(database):
    """Another client holding the deliveries table (a backup, a stuck migration); returns its release."""
    if database.engine.dialect.name == "sqlite":
        locker = sqlite3.connect(database.engine.url.database, isolation_level=None)
        locker.execute("BEGIN EXCLUSIVE")
        return lambda: (locker.execute("ROLLBACK"), locker.close())
    engine = create_engine(database.engine.url)
    connection = engine.connect()
    connection.exec_driver_sql("LOCK TABLE deliveries IN ACCESS EXCLUSIVE MODE")
    return lambda: (connection.rollback(), connection.close(), engine.dispose())


def test_a_locked_store_refuses_within_the_wait_and_takes_the_delivery_once_free(database):
    queue = DeliveryQueue(database)
    release = hold_the_write_lock(database)
    began = time.monotonic()
    try:
        with pytest.raises(NotStored, match=r"not stored: OperationalError: .*(locked|timeout)"):
            queue.enqueue(new(1), wait=0.2)
    finally:
        release()
    assert time.monotonic() - began < SQLITE_BUSY_SECONDS / 2  # gave up on its own wait, not the store's usual one
    assert queue.enqueue(new(1), wait=0.2) is True and queue.counts() == {"pending": 1}
    if database.engine.dialect.name == "sqlite":  # the short wait was this write's, not the pool's from now on
        with database.engine.connect() as connection:
            assert sqlite_setting(connection, "busy_timeout") == SQLITE_BUSY_SECONDS * 1000


@pytest.mark.postgres
def test_a_delivery_postgresql_refuses_is_not_stored_and_the_next_one_is(postgres_server):
    db = Database(postgres_server.create_database("perfbot_test_refused_delivery"))
    try:
        queue = DeliveryQueue(db)
        refused = NewDelivery("d-nul", "push", None, "team/runtime", 7, "nul \x00 inside")
        with pytest.raises(NotStored, match="NUL"):
            queue.enqueue(refused, wait=5)
        assert queue.enqueue(new(2), wait=5) is True and queue.counts() == {"pending": 1}
    finally:
        db.dispose()


def test_a_delivery_runs_and_is_done(database):
    queue = DeliveryQueue(database)
    seen = []
    assert queue.enqueue(new(1))
    assert worker(queue, lambda e: seen.append((e.name, e.payload, e.installation_id)) or []).run_once()
    assert seen == [("push", {"n": 1}, 7)]
    assert queue.get("d-1")["status"] == "done"
    assert not worker(queue, lambda e: []).run_once()


def test_transient_failures_retry_later_with_their_error_kept(database):
    queue = DeliveryQueue(database)
    queue.enqueue(new(1))
    outcomes = iter([[("push", TransientError("GitHub answered 502"))], []])
    w = worker(queue, lambda e: next(outcomes))
    assert w.run_once()
    row = queue.get("d-1")
    assert (row["status"], row["attempts"]) == ("pending", 1) and "502" in row["error"]
    assert queue.claim("w2", 60) is None  # not due yet: backoff
    later = datetime.now(UTC) + timedelta(hours=2)
    claimed = queue.claim("w2", 60, now=later)
    assert claimed is not None and claimed.attempts == 2
    assert queue.finish(claimed) and queue.get("d-1")["status"] == "done"


def test_rate_limit_waits_are_no_failed_attempts_until_the_delivery_has_waited_two_days(database):
    queue = DeliveryQueue(database)
    queue.enqueue(new(1))
    limited = [("push", RateLimited("GitHub rate limit (403); retrying in 600s", retry_after=600))]
    w = worker(queue, lambda e: limited, max_attempts=3)
    for _ in range(5):  # more waits than attempts: a first mirror under GitHub's write limits
        assert w.run_once()
        row = queue.get("d-1")
        assert (row["status"], row["attempts"]) == ("pending", 0) and "rate limit" in row["error"]
        assert queue.claim("peek", 60) is None  # due when GitHub said, not before
        _due_now(database, "d-1")
    _due_now(database, "d-1", received=datetime.now(UTC) - timedelta(days=2, minutes=1))
    for attempts in (1, 2):  # waited long enough: now they count like any outage
        assert w.run_once() and (queue.get("d-1")["status"], queue.get("d-1")["attempts"]) == ("pending", attempts)
        _due_now(database, "d-1")
    assert w.run_once() and queue.get("d-1")["status"] == "failed"
    outage = [("push", TransientError("GitHub answered 502")), *limited]  # an outage beside it counts at once
    queue.enqueue(new(2))
    assert worker(queue, lambda e: outage).run_once()
    assert (queue.get("d-2")["status"], queue.get("d-2")["attempts"]) == ("pending", 1)


def _due_now(database, delivery_id: str, received: datetime | None = None) -> None:
    from sqlalchemy import update

    from bot.adapters.store.service_models import Delivery

    values = {"next_attempt_at": datetime.now(UTC)} | ({"received_at": received} if received else {})
    with database.session() as session:
        session.execute(update(Delivery).where(Delivery.id == delivery_id).values(**values))


def test_permanent_failures_are_kept_listed_and_can_be_redelivered(database, monkeypatch):
    queue = DeliveryQueue(database)
    queue.enqueue(new(1))
    worker(queue, lambda e: [("push", ValueError("payload has no repository"))]).run_once()
    assert queue.get("d-1")["status"] == "failed"
    monkeypatch.delenv("PERFBOT_DATABASE_URL", raising=False)
    listed = CliRunner().invoke(main, ["deliveries", "--status", "failed", "--db", database.url])
    assert "d-1" in listed.output and "payload has no repository" in listed.output
    again = CliRunner().invoke(main, ["redeliver", "d-1", "--db", database.url])
    assert again.exit_code == 0 and queue.get("d-1")["status"] == "pending"
    assert worker(queue, lambda e: []).run_once() and queue.get("d-1")["status"] == "done"
    assert CliRunner().invoke(main, ["redeliver", "nope", "--db", database.url]).exit_code == 1


def test_a_dead_workers_lease_expires_and_another_worker_takes_over(database):
    queue = DeliveryQueue(database)
    queue.enqueue(new(1), now=T0)
    first = queue.claim("dead-worker", 30, now=T0)
    assert first is not None
    assert queue.claim("w2", 30, now=T0 + timedelta(seconds=10)) is None
    second = queue.claim("w2", 30, now=T0 + timedelta(seconds=31))
    assert second is not None and second.attempts == 2
    assert not queue.finish(first)  # the dead worker woke up: its lease is gone, its outcome is refused
    assert queue.finish(second)


def test_a_delivery_whose_workers_keep_dying_fails_after_max_attempts(database):
    queue = DeliveryQueue(database)
    queue.enqueue(new(1), now=T0)
    for n in range(3):
        assert queue.claim(f"dies-{n}", 30, now=T0 + timedelta(minutes=n)) is not None
    w = worker(queue, lambda e: pytest.fail("must not run again"), max_attempts=3)
    claimed = queue.claim("w", 30, now=T0 + timedelta(minutes=10))
    assert w._process(claimed) == "failed"
    assert "gave up after 3 attempts" in queue.get("d-1")["error"]


def test_one_handlers_failure_never_stops_another():
    calls = []
    broken = SimpleNamespace(__name__="handlers.broken", WANTS={"perfbot.digest": None},
                             handle=lambda e, s: (_ for _ in ()).throw(RuntimeError("boom")))
    healthy = SimpleNamespace(__name__="handlers.healthy", WANTS={"perfbot.digest": None},
                              handle=lambda e, s: calls.append(e))
    event = Event("perfbot.digest", None, "d-1", {}, None, None)
    failures = handlers.dispatch(event, None, handlers=(broken, healthy))
    assert [c.delivery_id for c in calls] == ["d-1"]
    assert [(name, str(exc)) for name, exc in failures] == [("broken", "boom")]


def test_a_handler_sees_only_the_actions_it_wants_and_a_bad_payload_is_refused_once():
    calls = []
    wants_closed = SimpleNamespace(__name__="handlers.closed", WANTS={"issues": frozenset({"closed"})},
                                   handle=lambda e, s: calls.append(e.action))
    issue = {"issue": {"number": 7}, "repository": {"full_name": "o/r"}}
    for action in ("opened", "closed"):
        assert handlers.dispatch(Event("issues", action, "d", issue, None, None), None,
                                 handlers=(wants_closed, wants_closed)) == []
    assert calls == ["closed", "closed"]
    failures = handlers.dispatch(Event("issues", "closed", "d", {"issue": {"number": 2**64}}, None, None), None,
                                 handlers=(wants_closed, wants_closed))
    assert [name for name, _ in failures] == ["payload"] and "issue.number" in str(failures[0][1])


def test_two_workers_claim_every_delivery_exactly_once(database):
    queue = DeliveryQueue(database)
    for n in range(60):
        queue.enqueue(new(n))
    runs: Counter = Counter()
    lock = threading.Lock()

    def dispatch(event):
        with lock:
            runs[event.delivery_id] += 1
        return []

    stop = threading.Event()
    workers = [worker(queue, dispatch, owner=f"w{n}") for n in range(2)]
    threads = [threading.Thread(target=w.run_until, args=(stop, 0.01)) for w in workers]
    for t in threads:
        t.start()
    deadline = datetime.now() + timedelta(seconds=60)
    while sum(runs.values()) < 60 and datetime.now() < deadline:
        stop.wait(0.05)
    stop.set()
    for t in threads:
        t.join()
    assert sorted(runs) == sorted(f"d-{n}" for n in range(60)) and set(runs.values()) == {1}
    assert queue.counts() == {"done": 60}


def test_backoff_grows_is_capped_and_respects_retry_after():
    assert 12 <= backoff_seconds(1) <= 18 and 96 <= backoff_seconds(4) <= 144
    assert backoff_seconds(30) <= 3600 * 1.2
    assert backoff_seconds(1, retry_after=120) >= 120


def test_a_long_job_keeps_its_lease_alive_while_it_works(database):
    queue = DeliveryQueue(database)
    queue.enqueue(new(1, "perfbot.verify"))
    seen = []

    def measure(event):  # a bench run: says it may go quiet for 20 minutes (a build), while a rival looks
        event.keep_alive(1200)
        now = datetime.now(UTC)
        seen.append(queue.claim("rival", 60, now=now + timedelta(seconds=600)))
        return []

    assert worker(queue, measure).run_once()
    assert seen == [None]  # the lease reached past the rival's look, so nobody ran the job twice
    assert queue.get("d-1")["status"] == "done"
