"""One writer per repository at a time, across worker processes: a PostgreSQL advisory lock, or a file lock
beside a SQLite database. Reentrant within a thread, so a use case may call another that locks too.

No thread holds a database connection while it waits: threads of one process queue on a lock of the process, and
the one at the front polls PostgreSQL's try-lock, its connection back in the pool between tries. (A blocking
pg_advisory_lock held one connection per waiting thread: 16 threads behind one repository drained the pool.)"""
from __future__ import annotations

import fcntl
import hashlib
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import text

from bot.adapters.store.engine import Database

_held = threading.local()
_process_locks: dict[str, threading.Lock] = {}
_process_locks_guard = threading.Lock()
POLL_SECONDS = (0.02, 0.5)  # a waiter's first and longest pause between two tries of another process's lock


def _process_lock(full_name: str) -> threading.Lock:
    with _process_locks_guard:
        return _process_locks.setdefault(full_name, threading.Lock())


def _key(name: str) -> int:
    """A stable signed 64-bit key for pg_advisory_lock (Python's hash() changes between processes)."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


@contextmanager
def repo_lock(db: Database, full_name: str) -> Iterator[None]:
    """Two deliveries for one repository (a push and the hourly reconcile, say) must not mirror the same new
    record at once: each would open its own issue. Deliveries of different repositories still run in parallel."""
    held = getattr(_held, "keys", None)
    if held is None:
        held = _held.keys = set()
    if full_name in held:
        yield
        return
    held.add(full_name)
    try:
        with _process_lock(full_name):
            if db.engine.dialect.name == "postgresql":
                with _advisory_lock(db, full_name):
                    yield
            else:
                with _file_lock(db, full_name):
                    yield
    finally:
        held.discard(full_name)


@contextmanager
def _advisory_lock(db: Database, full_name: str) -> Iterator[None]:
    """The session lock lives on one connection for as long as it is held; while another process holds it, this
    one tries again and again, handing its connection back to the pool between tries."""
    key, pause = _key(full_name), POLL_SECONDS[0]
    while True:
        connection = db.engine.connect()
        try:
            taken = connection.execute(text("SELECT pg_try_advisory_lock(:key)"), {"key": key}).scalar()
            connection.commit()
        except BaseException:
            connection.close()
            raise
        if taken:
            break
        connection.close()
        time.sleep(pause)
        pause = min(pause * 2, POLL_SECONDS[1])
    try:
        yield
    finally:
        try:
            connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": key})
            connection.commit()
        finally:
            connection.close()


@contextmanager
def _file_lock(db: Database, full_name: str) -> Iterator[None]:
    database = db.engine.url.database
    folder = Path(database).parent if database and database != ":memory:" else Path("/tmp")
    path = folder / f".perfbot-lock-{hashlib.sha256(full_name.encode()).hexdigest()[:16]}"
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
