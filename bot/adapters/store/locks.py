"""One writer per repository at a time, across worker processes: a PostgreSQL advisory lock, or a file lock
beside a SQLite database. Reentrant within a thread, so a use case may call another that locks too."""
from __future__ import annotations

import fcntl
import hashlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import text

from bot.adapters.store.engine import Database

_held = threading.local()


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
        if db.engine.dialect.name == "postgresql":
            with db.engine.connect() as connection:
                connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": _key(full_name)})
                try:
                    yield
                finally:
                    connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": _key(full_name)})
                    connection.commit()
        else:
            with _file_lock(db, full_name):
                yield
    finally:
        held.discard(full_name)


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
