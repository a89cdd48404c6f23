"""Group commit: concurrent deliveries share a transaction, each caller gets its own answer only after the commit."""
from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy.exc import OperationalError

import handlers
from bot.adapters.store.engine import Database
from bot.adapters.store.group_commit import GroupCommit, NotStored
from bot.adapters.store.queue import DeliveryQueue, NewDelivery
from bot.app import create_app
from bot.config import Settings
from tests.npm_fixtures import webhook_examples
from tests.servers import serving
from tests.webhooks import post_delivery

SECRET = "group-commit-secret"


class SlowStore:
    """A write_batch that takes as long as a flush to disk and remembers what each transaction held."""

    def __init__(self, refuse=frozenset(), down=False) -> None:
        self.batches: list[list[str]] = []
        self.committed: set[str] = set()
        self.refuse, self.down = refuse, down

    def write_batch(self, items):
        time.sleep(0.02)
        if self.down:
            raise OperationalError("INSERT", {}, Exception("database is locked"))
        if self.refuse & set(items):
            raise ValueError(f"refused {sorted(self.refuse & set(items))}")
        self.batches.append(list(items))
        self.committed.update(items)
        return [f"stored {item}" for item in items]


def submit_all(group: GroupCommit, store: SlowStore, items: list[str]) -> dict[str, object]:
    def one(item):
        try:
            result = group.submit(item)
        except NotStored as exc:
            return item, exc
        assert item in store.committed, f"{item} answered before its transaction committed"
        return item, result
    with ThreadPoolExecutor(8) as pool:
        return dict(pool.map(one, items))


def test_concurrent_callers_share_transactions_and_each_gets_its_own_result():
    store = SlowStore()
    answers = submit_all(GroupCommit(store.write_batch), store, [f"d{n}" for n in range(40)])
    assert answers == {f"d{n}": f"stored d{n}" for n in range(40)}
    assert sorted(item for batch in store.batches for item in batch) == sorted(answers)  # each written once
    assert len(store.batches) < 40 and max(len(b) for b in store.batches) > 1, store.batches


def test_one_refused_item_fails_alone_and_its_neighbours_are_stored():
    store = SlowStore(refuse=frozenset({"d3"}))
    answers = submit_all(GroupCommit(store.write_batch), store, [f"d{n}" for n in range(16)])
    assert isinstance(answers.pop("d3"), NotStored)
    assert answers == {f"d{n}": f"stored d{n}" for n in range(16) if n != 3}


def test_a_database_failure_reaches_every_waiter_of_the_batch():
    store = SlowStore(down=True)
    answers = submit_all(GroupCommit(store.write_batch), store, [f"d{n}" for n in range(16)])
    assert all(isinstance(a, NotStored) and "database is locked" in str(a) for a in answers.values()), answers
    assert not store.committed


def test_a_batch_whose_answers_do_not_match_its_items_answers_nobody_with_success():
    with pytest.raises(NotStored, match="0 results for 1 items"):
        GroupCommit(lambda items: []).submit("d1")


def new(n: int, payload: str = "{}") -> NewDelivery:
    return NewDelivery(f"d-{n}", "push", None, "team/runtime", 7, payload)


def test_concurrent_enqueues_store_each_delivery_once_and_report_redeliveries(database):
    queue = DeliveryQueue(database)
    ids = [n % 30 for n in range(60)]  # every id twice, the copies racing each other
    with ThreadPoolExecutor(8) as pool:
        stored = list(pool.map(lambda n: (n, queue.enqueue(new(n))), ids))
    for n in range(30):
        assert sorted(s for i, s in stored if i == n) == [False, True], n  # one stored, one a duplicate
    assert queue.counts() == {"pending": 30}
    assert queue.enqueue(new(5)) is False


def test_the_queue_commits_with_a_flush_to_disk(database):
    with database.durable() as connection:
        if connection.dialect.name == "sqlite":
            assert connection.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
        else:
            assert connection.exec_driver_sql("SHOW synchronous_commit").scalar() == "on"
    if database.engine.dialect.name == "sqlite":  # the rest of the store keeps its cheaper setting
        with database.engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL


@pytest.mark.postgres
def test_a_delivery_postgresql_refuses_fails_alone(postgres_server):
    db = Database(postgres_server.create_database("perfbot_test_group_refused"))
    try:
        queue = DeliveryQueue(db)
        with ThreadPoolExecutor(8) as pool:
            futures = {n: pool.submit(queue.enqueue, new(n, "nul \x00 inside" if n == 4 else "{}")) for n in range(16)}
        with pytest.raises(NotStored, match="NUL"):
            futures.pop(4).result()
        assert all(f.result() is True for f in futures.values())
        assert queue.counts() == {"pending": 15}
    finally:
        db.dispose()


def serve_webhook(database, tmp_path):
    settings = Settings(instance_dir=tmp_path, database_url=database.url, webhook_secrets=(SECRET,), github_token="t")
    return serving(create_app(settings, DeliveryQueue(database), wanted_events=handlers.github_events()))


def test_concurrent_signed_deliveries_are_each_answered_by_their_own_commit(database, tmp_path):
    payload = webhook_examples("push")[0]
    ids = [f"hook-{n % 20}" for n in range(40)]  # each id sent twice at once, as GitHub's redelivery may race
    with serve_webhook(database, tmp_path) as url, ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(lambda d: (d, post_delivery(url, "push", payload, secret=SECRET, delivery=d)), ids))
    for delivery in set(ids):
        codes = sorted(a.status_code for d, a in answers if d == delivery)
        assert codes == [200, 202], (delivery, codes)  # stored once, the copy acknowledged as a duplicate
    assert DeliveryQueue(database).counts() == {"pending": 20}


def test_a_store_that_fails_acknowledges_nothing(database, tmp_path):
    with database.engine.begin() as connection:
        connection.exec_driver_sql("DROP TABLE deliveries")
    payload = webhook_examples("push")[0]
    with serve_webhook(database, tmp_path) as url, ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda n: post_delivery(url, "push", payload, secret=SECRET, delivery=f"d{n}"),
                                range(16)))
    assert [a.status_code for a in answers] == [503] * 16
    assert all("did not take this delivery" in a.json()["error"] for a in answers)


def test_a_caller_behind_a_stuck_write_gives_up_and_the_next_caller_still_writes():
    """A locked store holds its writer; the callers queued behind it leave after their timeout (their server
    threads free again) without wedging the hand-over, and once the store answers writes go on."""
    entered, release = threading.Event(), threading.Event()

    def write_batch(items):
        if items == ["stuck"]:
            entered.set()
            release.wait(30)
        return [f"stored {item}" for item in items]

    group = GroupCommit(write_batch)
    with ThreadPoolExecutor(2) as pool:
        stuck = pool.submit(group.submit, "stuck")
        assert entered.wait(10)
        with pytest.raises(NotStored, match="another write held the store"):
            group.submit("behind", timeout=0.05)
        release.set()
        assert stuck.result(10) == "stored stuck"
    assert group.submit("after", timeout=5) == "stored after"
