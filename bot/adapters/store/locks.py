"""One writer per repository at a time, across worker processes: a PostgreSQL advisory lock, or a file lock
beside a SQLite database. Reentrant within a thread, so a use case may call another that locks too; within
`kept_for`, a delivery's handlers take their repository's lock once.

No thread holds a database connection while it waits: threads of one process queue on a lock of the process, and
the one at the front polls PostgreSQL's try-lock, its connection back in the pool between tries. (A blocking
pg_advisory_lock held one connection per waiting thread: 16 threads behind one repository drained the pool.)"""
from __future__ import annotations

import fcntl
import hashlib
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from bot.adapters.store.engine import Database
from bot.errors import TransientError

POLL_SECONDS = (0.02, 0.5)  # a waiter's first and longest pause between two tries of another process's lock
BUSY_RETRY_SECONDS = 15.0  # when work that would not wait (`wait=False`) is due again


class _Held(threading.local):
    """This thread's locks: each taken one's release, how many `repo_lock` blocks are inside it now, and the
    locks a delivery keeps until it ends (`kept_for`)."""

    def __init__(self) -> None:
        self.releases: dict[str, ExitStack] = {}
        self.depth: dict[str, int] = {}
        self.kept: set[str] = set()
        self.checks: dict[str, Callable[[], None]] = {}  # a PostgreSQL lock's session asked whether it still lives


class RepositoryBusy(TransientError):
    """`repo_lock(..., wait=False)` found the lock held by other work (a long sync): the caller's work waits in the
    queue, no failed attempt, instead of holding its thread (the worker settles it as a wait)."""


class LockLost(TransientError):
    """The database dropped a repository lock this thread held (a restart or fail-over ended the lock's session,
    and another worker may hold it now): the work stops before its next post and is tried again."""


_held = _Held()
_process_locks: dict[str, threading.Lock] = {}
_process_locks_guard = threading.Lock()


def _process_lock(full_name: str) -> threading.Lock:
    with _process_locks_guard:
        return _process_locks.setdefault(full_name, threading.Lock())


def _key(name: str) -> int:
    """A stable signed 64-bit key for pg_advisory_lock (Python's hash() changes between processes)."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


@contextmanager
def repo_lock(db: Database, full_name: str, *, wait: bool = True) -> Iterator[None]:
    """Two deliveries for one repository (a push and the hourly reconcile, say) must not mirror the same new
    record at once: each would open its own issue. Deliveries of different repositories still run in parallel.
    `wait=False`: RepositoryBusy at once when other work holds the lock (work that may as well run later)."""
    if full_name not in _held.releases:
        _let_go_of_idle()  # never wait for a lock while holding one no running code needs: lock order as ever
        _held.releases[full_name] = _take(db, full_name, wait)
    _held.depth[full_name] = _held.depth.get(full_name, 0) + 1
    try:
        yield
    finally:
        _held.depth[full_name] -= 1
        if not _held.depth[full_name]:
            del _held.depth[full_name]
            if full_name not in _held.kept:
                _held.releases.pop(full_name).close()


@contextmanager
def kept_for(full_name: str | None) -> Iterator[None]:
    """A delivery's handlers run one after another and most lock its repository: within this block the lock,
    once taken, stays held until the block ends, so the delivery takes it once. Held idle, it is let go before
    this thread waits for any other lock, so no thread ever waits while holding a lock it does not use."""
    if full_name is None or full_name in _held.kept:
        yield
        return
    _held.kept.add(full_name)
    try:
        yield
    finally:
        _held.kept.discard(full_name)
        if full_name in _held.releases and full_name not in _held.depth:
            _held.releases.pop(full_name).close()


def confirm_held() -> None:
    """Before an effect only the lock's holder may have (opening an issue, posting a comment): LockLost when the
    database dropped a lock this thread holds. A file lock (SQLite) lasts as long as its process; a PostgreSQL
    session lock ends with its connection, which a database restart cuts while the holder's job goes on."""
    for check in list(_held.checks.values()):
        check()


def _let_go_of_idle() -> None:
    for name in [name for name in _held.releases if name not in _held.depth]:
        _held.releases.pop(name).close()


def _take(db: Database, full_name: str, wait: bool = True) -> ExitStack:
    """The lock of this process, then the one across processes; what closing the stack returns lets go of both."""
    taken = ExitStack()
    try:
        lock = _process_lock(full_name)
        if not lock.acquire(blocking=wait):
            raise RepositoryBusy(f"{full_name} is busy with other work (a long sync or reconcile); tried again "
                                 "later", retry_after=BUSY_RETRY_SECONDS)
        taken.callback(lock.release)
        taken.enter_context(_advisory_lock(db, full_name, wait) if db.engine.dialect.name == "postgresql"
                            else _file_lock(db, full_name, wait))
    except BaseException:
        taken.close()
        raise
    return taken


@contextmanager
def _advisory_lock(db: Database, full_name: str, wait: bool = True) -> Iterator[None]:
    """The session lock lives on one connection for as long as it is held; while another process holds it, this
    one tries again and again, handing its connection back to the pool between tries (`wait=False`: once)."""
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
        if not wait:
            raise RepositoryBusy(f"{full_name} is busy with another process's work; tried again later",
                                 retry_after=BUSY_RETRY_SECONDS)
        time.sleep(pause)
        pause = min(pause * 2, POLL_SECONDS[1])

    def check() -> None:
        try:
            connection.execute(text("SELECT 1"))
            connection.commit()
        except SQLAlchemyError as exc:  # the driver's error, then sqlalchemy's about the failed transaction
            raise LockLost(f"the database dropped this worker's lock on {full_name} (its session ended: a restart "
                           "or fail-over); the work stops here and is tried again") from exc

    _held.checks[full_name] = check
    try:
        yield
    finally:
        _held.checks.pop(full_name, None)
        try:
            connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": key})
            connection.commit()
        except SQLAlchemyError:  # the session is gone, or its state unknown: closed for real, never pooled locked
            connection.invalidate()
        finally:
            connection.close()


@contextmanager
def _file_lock(db: Database, full_name: str, wait: bool = True) -> Iterator[None]:
    database = db.engine.url.database
    folder = Path(database).parent if database and database != ":memory:" else Path("/tmp")
    path = folder / f".perfbot-lock-{hashlib.sha256(full_name.encode()).hexdigest()[:16]}"
    with open(path, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            raise RepositoryBusy(f"{full_name} is busy with another process's work; tried again later",
                                 retry_after=BUSY_RETRY_SECONDS) from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
