"""Reading many reports at once in worker processes: parsing is pure Python and bounds a large sync."""
from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager

from bot.core.reading import Reading, read_report
from bot.errors import TransientError

# Fewer reports than this are read in this process: starting workers costs more than it saves.
POOLED_FROM = 200
BATCH = 50  # reports per task: large enough that pickling is cheap per report, small enough to spread evenly


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
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=_start_method())
    try:
        yield _in_order([pool.submit(_read_batch, items[at:at + BATCH]) for at in range(0, len(items), BATCH)])
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _in_order(batches: Iterable[Future]) -> Iterator[Reading]:
    for batch in batches:
        try:
            readings = batch.result()
        except BrokenProcessPool as exc:
            # Reading is pure Python and turns any bytes into findings, so only the machine stops a reader
            # (the OOM killer, a shutdown): the sync is retried, and what it stored before this stays.
            raise TransientError("a process reading reports was killed (out of memory?); nothing past the last "
                                 "stored transaction was written, and the sync is retried") from exc
        yield from readings


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
