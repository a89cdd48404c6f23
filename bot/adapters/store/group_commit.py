"""Group commit: concurrent callers share one transaction and one flush to disk, each gets its own answer."""
from __future__ import annotations

import threading
from typing import Callable, Generic, Sequence, TypeVar

import sqlite3

from sqlalchemy.exc import InterfaceError, OperationalError

Item = TypeVar("Item")
Result = TypeVar("Result")
# The database itself is unusable (down, locked, disk full): writing the batch again row by row cannot help.
_SHARED_FAILURES = (OperationalError, InterfaceError, sqlite3.OperationalError)


class NotStored(Exception):
    """The write this caller waited for did not commit; its cause is chained."""


class _Waiter(Generic[Item, Result]):
    __slots__ = ("item", "done", "result", "error", "wake")

    def __init__(self, item: Item) -> None:
        self.item, self.done, self.result, self.error = item, False, None, None
        self.wake = threading.Event()  # set once its batch is settled, or when it is to write the next batch


class GroupCommit(Generic[Item, Result]):
    """Writes items through `write_batch` (one transaction for the whole list, one result per item, in order).

    There is no committer thread to start or stop: the first caller to find nobody writing writes everything queued,
    one transaction. Callers arriving meanwhile queue up and sleep; when the transaction ends, each of its callers is
    woken with its own answer and the first one queued since is woken to write the next batch, so flushes follow
    each other back to back and a batch holds whoever arrived during the last one. A caller returns only after the
    transaction holding its item committed, so nothing is answered before it is durable.
    """

    def __init__(self, write_batch: Callable[[Sequence[Item]], Sequence[Result]]) -> None:
        self._write_batch = write_batch
        self._lock = threading.Lock()
        self._queued: list[_Waiter] = []
        self._writing = False  # a caller is writing a batch, or has been woken to write the next

    def submit(self, item: Item, timeout: float | None = None) -> Result:
        """`timeout`: how long to wait behind another caller's write before giving up (NotStored). A stuck write
        (a locked database) then holds its own thread only, not every thread of the server in turn."""
        waiter = _Waiter(item)
        with self._lock:
            self._queued.append(waiter)
            follow, self._writing = self._writing, True
        if follow and not waiter.wake.wait(timeout):
            self._give_up(waiter, timeout)
        if not waiter.done:  # nobody was writing, or the last writer handed over: ours is still queued
            self._lead()
        if waiter.error is not None:
            raise NotStored(f"not stored: {waiter.error.__class__.__name__}: {waiter.error}") from waiter.error
        return waiter.result

    def _give_up(self, waiter: _Waiter, timeout: float | None) -> None:
        with self._lock:
            if waiter.wake.is_set():  # woken meanwhile: settled, or handed the next batch, which it must write
                return
            queued = waiter in self._queued
            if queued:  # never taken into a batch: leaving changes nothing
                self._queued.remove(waiter)
        where = "another write held the store" if queued else "its write has not returned; it may still commit"
        raise NotStored(f"not stored within {timeout:g}s: {where}")

    def _lead(self) -> None:
        with self._lock:
            batch, self._queued = self._queued, []
        try:
            self._write(batch)
        finally:
            with self._lock:
                successor = self._queued[0] if self._queued else None
                self._writing = successor is not None
                if successor is not None:  # woken under the lock, so it cannot give up once chosen; and first,
                    successor.wake.set()  # so the next flush starts as soon as possible
            for waiter in batch:
                waiter.wake.set()

    def _write(self, batch: list[_Waiter]) -> None:
        try:
            results = self._write_batch([w.item for w in batch])
        except _SHARED_FAILURES as exc:
            self._fail(batch, exc)
        except Exception as exc:
            if len(batch) == 1:
                self._fail(batch, exc)
                return
            # One bad item (say, text PostgreSQL refuses) must not fail the deliveries that shared its transaction.
            for waiter in batch:
                self._write([waiter])
        except BaseException as exc:  # KeyboardInterrupt, SystemExit: no waiter may be left unsettled
            self._fail(batch, exc)
            raise
        else:
            if len(results) == len(batch):
                for waiter, result in zip(batch, results):
                    waiter.result, waiter.done = result, True
            else:  # committed, but the answers cannot be matched to the callers: none may claim success
                self._fail(batch, RuntimeError(f"write_batch answered {len(results)} results for {len(batch)} items"))

    @staticmethod
    def _fail(batch: list[_Waiter], exc: BaseException) -> None:
        for waiter in batch:
            waiter.error, waiter.done = exc, True
