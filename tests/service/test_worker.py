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
from bot.adapters.store.bench import bench_store
from bot.adapters.store.engine import SQLITE_BUSY_SECONDS, Database
from bot.adapters.store.queue import DeliveryQueue, LeaseLost, NewDelivery, NotStored
from bot.cli import main
from bot.core.verify.run_parts import RunProgress, RunResult
from bot.errors import RateLimited, TransientError
from bot.services.worker import Event, Lease, Leases, Worker, backoff_seconds

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


def test_the_heartbeat_keeps_a_long_jobs_short_lease_and_a_rival_never_runs_it(database):
    queue = DeliveryQueue(database)
    queue.enqueue(new(1, "perfbot.verify"))
    leases = Leases(queue, lease_seconds=1)
    seen = []

    def measure(event):  # a job many leases long: the heartbeat (beat) renews it while a rival keeps looking
        for _ in range(4):
            time.sleep(0.6)
            leases.beat()
            seen.append(queue.claim("rival", 1))
            event.keep_alive(0)  # still ours: no LeaseLost
        return []

    w = Worker(queue, measure, owner="w1", lease_seconds=1, max_attempts=3, leases=leases)
    assert w.run_once()
    assert seen == [None] * 4 and queue.get("d-1")["status"] == "done"


def test_a_claim_taken_over_writes_nothing_after_and_its_work_is_told_to_stop(database):
    queue = DeliveryQueue(database)
    queue.enqueue(new(1), now=T0)
    slow = queue.claim("slow", 30, now=T0)
    taken = queue.claim("w2", 30, now=T0 + timedelta(seconds=31))  # the slow worker's lease ran out
    assert (slow.generation, taken.generation) == (1, 2)
    leases = Leases(queue, 30)
    leases.hold(slow)
    leases.beat()  # the heartbeat finds it lost ...
    with pytest.raises(LeaseLost):
        Lease(leases, slow)(0)  # ... and the slow worker's next step stops its work
    assert queue.renew([slow], 30) == [slow] and not queue.finish(slow) and not queue.fail(slow, "late")
    # The same owner claiming again is a new generation: an old claim of its own is fenced off too.
    assert queue.hand_back(taken)
    again = queue.claim("w2", 30)
    assert again.generation == 3 and not queue.finish(taken) and queue.finish(again)


def test_a_bench_runs_progress_and_verdict_are_fenced_by_its_deliverys_lease(database):
    queue = DeliveryQueue(database)
    run_id = bench_store.queue_run(database, "team/runtime", "perf_x", base="a" * 40, head="b" * 40,
                                   purpose="fix")
    queue.enqueue(new(1, "perfbot.verify"), now=T0)
    first = queue.claim("w1", 30, now=T0)
    bench_store.start_run(database, run_id, "local", "here", queue.fence(first))
    bench_store.save_progress(database, run_id, RunProgress(taken=5), None, queue.fence(first))
    second = queue.claim("w2", 30, now=T0 + timedelta(seconds=31))
    with pytest.raises(LeaseLost):
        bench_store.save_progress(database, run_id, RunProgress(taken=6), None, queue.fence(first))
    with pytest.raises(LeaseLost):
        bench_store.finish_run(database, run_id, "pass", "late", RunResult(), queue.fence(first))
    assert bench_store.get_run(database, run_id).progress == RunProgress(taken=5)
    bench_store.finish_run(database, run_id, "fail", "measured", RunResult(), queue.fence(second))
    assert (bench_store.get_run(database, run_id).verdict, bench_store.get_run(database, run_id).status) == \
        ("fail", "done")


def test_a_stopping_worker_hands_its_claims_back_for_another_to_take_at_once(database):
    queue = DeliveryQueue(database)
    queue.enqueue(new(1))
    leases = Leases(queue, 300)
    claimed = queue.claim("stopping", 300)
    leases.hold(claimed)
    assert leases.hand_back() == 1
    row = queue.get("d-1")
    assert (row["status"], row["attempts"]) == ("pending", 0)  # the attempt given back: no fault of the job
    with pytest.raises(LeaseLost):
        Lease(leases, claimed)(0)
    successor = queue.claim("w2", 300)  # due now, not after the 300 s lease
    assert successor is not None and not queue.finish(claimed) and queue.finish(successor)


def test_a_pool_timeout_sends_the_delivery_back_to_the_queue_not_to_failure(database):
    from sqlalchemy.exc import TimeoutError as PoolTimeout

    queue = DeliveryQueue(database)
    queue.enqueue(new(1))
    w = worker(queue, lambda e: [("push", PoolTimeout("QueuePool limit of size 5 overflow 10 reached"))],
               max_attempts=1)
    for _ in range(3):  # more than max_attempts: congestion in this process is no attempt of the delivery's
        assert w.run_once()
        row = queue.get("d-1")
        assert (row["status"], row["attempts"]) == ("pending", 0) and "QueuePool" in row["error"]
        _due_now(database, "d-1")


def test_a_store_that_went_away_mid_delivery_is_tried_again_counted_until_the_attempts_run_out(database):
    from sqlalchemy.exc import OperationalError

    queue = DeliveryQueue(database)
    queue.enqueue(new(1))
    lost = OperationalError("UPDATE records", {}, Exception("server closed the connection unexpectedly"))
    w = worker(queue, lambda e: [("push", lost)], max_attempts=2)
    assert w.run_once()
    row = queue.get("d-1")
    assert (row["status"], row["attempts"]) == ("pending", 1) and "server closed" in row["error"]
    _due_now(database, "d-1")
    assert w.run_once()
    assert queue.get("d-1")["status"] == "failed"  # a fault that never heals still ends


def test_comments_are_claimed_first_and_a_comment_lane_takes_nothing_else(database):
    queue = DeliveryQueue(database)
    queue.enqueue(new(1, "push"), now=T0)
    queue.enqueue(new(2, "perfbot.verify"), now=T0 + timedelta(seconds=1))
    queue.enqueue(new(3, "issue_comment"), now=T0 + timedelta(seconds=2))
    lane = ("issue_comment", "pull_request_review_comment")
    assert queue.claim("w1", 30).id == "d-3"  # the newest, but a person waits for its answer
    assert queue.claim("lane", 30, only=lane) is None
    assert queue.claim("w1", 30).id == "d-1"


def test_each_finished_job_logs_one_line_with_its_outcome_and_time(database, caplog):
    queue = DeliveryQueue(database)
    queue.enqueue(new(1))
    with caplog.at_level("INFO", logger="perfbot.worker"):
        assert worker(queue, lambda e: []).run_once()
    lines = [r.getMessage() for r in caplog.records if r.name == "perfbot.worker"]
    assert len(lines) == 1 and lines[0].startswith("delivery d-1 (push) done after ") and "attempt 1" in lines[0]


def test_a_runtime_with_several_threads_keeps_its_last_one_for_comments(tmp_path):
    from bot.adapters.store.queue import COMMENT_EVENTS
    from bot.app.runtime import Runtime
    from bot.config import Settings

    settings = Settings(instance_dir=tmp_path, database_url=f"sqlite:///{tmp_path / 'db.sqlite3'}",
                        github_token="t", github_api_url="http://127.0.0.1:9")
    runtime = Runtime(settings, workers=3)
    try:
        assert [w.only for w in runtime.workers] == [None, None, COMMENT_EVENTS]
        assert len({id(w.leases) for w in runtime.workers}) == 1  # one heartbeat renews every thread's claims
        assert runtime.db.pool_in_use() == (0, 2 * (2 * 3 + 4))  # sized from the threads
    finally:
        runtime.stop()
    single = Runtime(settings, workers=1)
    assert [w.only for w in single.workers] == [None]  # one thread takes everything
    single.stop()
