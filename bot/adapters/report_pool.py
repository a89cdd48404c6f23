"""Reading many reports at once in worker processes: parsing is pure Python and bounds a large sync."""
from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager

from bot.core.reading import Reading, read_report, unreadable
from bot.errors import TransientError

# Fewer reports than this are read in this process: starting workers costs more than it saves.
POOLED_FROM = 200
BATCH = 50  # reports per task: large enough that pickling is cheap per report, small enough to spread evenly
# How the machine, not a report, stops a reader: the OOM killer's SIGKILL, a shutdown's SIGTERM.
KILLED_FROM_OUTSIDE = frozenset({-signal.SIGKILL, -signal.SIGTERM})


def _read_batch(batch: Sequence[tuple[str, bytes]]) -> list[Reading]:
    return [read_report(path, data) for path, data in batch]


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@contextmanager
def read_reports(items: Sequence[tuple[str, bytes]], workers: int | None = None) -> Iterator[Iterator[Reading]]:
    """The readings of `items` (path, bytes), in order, as an iterator that yields each as soon as it is read.

    Every batch is handed to the workers at once, so they read ahead while the caller writes what came
    back.
    """
    workers = usable_cores() if workers is None else workers
    if workers < 2 or len(items) < POOLED_FROM:
        yield (read_report(path, data) for path, data in items)
        return
    batches = [items[start:start + BATCH] for start in range(0, len(items), BATCH)]
    readings = _pooled(batches, workers, _start_method())
    try:
        yield readings
    finally:
        readings.close()


def _pooled(batches: Sequence[Sequence[tuple[str, bytes]]], workers: int,
            context: multiprocessing.context.BaseContext) -> Iterator[Reading]:
    pending = deque(batches)
    while pending:
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=context)
        try:
            futures = [pool.submit(_read_batch, batch) for batch in pending]
            for future in futures:
                readings = future.result()
                pending.popleft()
                yield from readings
        except BrokenProcessPool:
            pass
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        if pending:
            # A worker died, and the pool cannot say which report it was reading: the first unread batch is
            # read one report per process, so a report that kills its reader is named and only it is lost.
            # The next batches go to a new pool.
            for path, data in pending.popleft():
                yield _read_isolated(context, path, data)


def _read_isolated(context: multiprocessing.context.BaseContext, path: str, data: bytes) -> Reading:
    outcome = _read_alone(context, path, data)
    if _killed_from_outside(outcome):
        outcome = _read_alone(context, path, data)
    if isinstance(outcome, Reading):
        return outcome
    if _killed_from_outside(outcome):
        raise TransientError(f"{path}: the process reading it was {_how(outcome)} twice, by the machine rather "
                             "than by the report (out of memory?); nothing past the last stored transaction "
                             "was written, and the sync is retried")
    return unreadable(path, _first_failing_line(context, path, data), _how(outcome))


def _killed_from_outside(outcome: Reading | int) -> bool:
    return isinstance(outcome, int) and outcome in KILLED_FROM_OUTSIDE


def _first_failing_line(context: multiprocessing.context.BaseContext, path: str, data: bytes) -> int:
    """The line whose addition makes the file's reading die: every prefix before it reads, with it one does not."""
    lines = data.split(b"\n")
    reads, dies = 0, len(lines)
    while dies - reads > 1:
        middle = (reads + dies) // 2
        if isinstance(_read_alone(context, path, b"\n".join(lines[:middle])), Reading):
            reads = middle
        else:
            dies = middle
    return dies


def _read_alone(context: multiprocessing.context.BaseContext, path: str, data: bytes) -> Reading | int:
    """The reading of one report by a process of its own, or that process's exit code if it died first."""
    received, send = context.Pipe(duplex=False)
    process = context.Process(target=_read_into, args=(send, path, data), daemon=True)
    process.start()
    send.close()
    try:
        outcome = received.recv()
    except EOFError:
        outcome = None
    finally:
        received.close()
    process.join()
    if isinstance(outcome, Exception):
        raise outcome  # the reader's own bug, raised as it would be in this process
    return process.exitcode if outcome is None else outcome


def _read_into(send: multiprocessing.connection.Connection, path: str, data: bytes) -> None:
    try:
        send.send(read_report(path, data))
    except Exception as exc:  # sent back to be raised in the caller, not printed by a dying child
        send.send(exc)
    finally:
        send.close()


def _how(exitcode: int) -> str:
    if exitcode < 0:
        try:
            return f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"stopped with exit status {exitcode}"


def _start_method() -> multiprocessing.context.BaseContext:
    """fork while this process runs one thread (the CLI, a bench), else a forkserver.

    A forked child starts with this process's modules loaded, so it reads at once; but another thread
    (the web service's, the scheduler's) may hold a lock at the fork that the child then waits on
    forever. A forkserver's children fork from a clean process that imported the parser once; each
    still imports this program's main module.
    """
    if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["bot.core.reading"])
    return context
