"""The queue's own sqlite3 writer: rows it writes read back through the ORM exactly, a redelivery is told apart
(also twice in one batch), and a batch that fails leaves nothing behind."""
from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone

import pytest

from bot.adapters.store.engine import Database
from bot.adapters.store.queue import DeliveryQueue, NewDelivery


@pytest.fixture
def queue(tmp_path):
    db = Database(f"sqlite:///{tmp_path / 'q.sqlite3'}")
    yield DeliveryQueue(db)
    db.dispose()


def delivery(n: int) -> NewDelivery:
    return NewDelivery(f"d{n}", "push", "opened", "team/runtime", 42, '{"n": %d}' % n)


def test_rows_read_back_through_the_orm_and_redeliveries_are_told_apart(queue):
    assert queue._appender is not None  # a file database takes this path
    now = datetime(2026, 12, 3, 15, 0, 0, 123456, tzinfo=timezone.utc)
    later = now + timedelta(minutes=15)
    assert queue._store_batch([(delivery(1), now, later), (delivery(2), now, now), (delivery(1), now, now)]) == \
        [True, True, False]
    assert queue._store_batch([(delivery(2), now, now)]) == [False]
    stored = next(d for d in queue.listing() if d["id"] == "d1")
    assert (stored["event"], stored["action"], stored["repo"], stored["status"], stored["attempts"]) == \
        ("push", "opened", "team/runtime", "pending", 0)
    assert datetime.fromisoformat(stored["received_at"]) == now and queue.counts() == {"pending": 2}
    assert datetime.fromisoformat(stored["next_attempt_at"]) == later  # aware UTC, to the microsecond
    claimed = queue.claim("w", 60, now=later)
    assert claimed is not None and (claimed.id, claimed.installation_id, claimed.payload) == ("d2", 42, '{"n": 2}')


def test_a_batch_the_database_refuses_leaves_nothing_half_written(queue):
    now = datetime.now(timezone.utc)
    broken = NewDelivery("d9", None, None, None, None, "{}")  # event is NOT NULL
    with pytest.raises(sqlite3.IntegrityError):
        queue._store_batch([(delivery(8), now, now), (broken, now, now)])
    assert queue.get("d8") is None and queue.get("d9") is None
    assert queue.enqueue(delivery(8)) is True  # the shared path retries the good row alone when one is refused
