"""The worker: claims stored deliveries under a lease, runs their handlers, and settles the outcome."""
from __future__ import annotations

import json
import logging
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from bot.adapters.store.queue import Claimed, DeliveryQueue
from bot.errors import RateLimited, TransientError

log = logging.getLogger("perfbot.worker")
MAX_BACKOFF_SECONDS = 3600
# A first mirror of thousands of reports meets GitHub's write limits for hours; its waits are no failed attempts
# for this long after the delivery arrived, and count as any outage after that.
RATE_LIMIT_PATIENCE = timedelta(days=2)


@dataclass(frozen=True)
class Event:
    """A delivery as handlers see it."""

    name: str
    action: str | None
    delivery_id: str
    payload: dict
    repo: str | None
    installation_id: int | None
    # Long work (a bench run) calls this now and then, with how long it may go quiet before the next call,
    # so its lease does not expire under it.
    keep_alive: Callable[[float], object] = lambda seconds: None


# A dispatcher runs every handler for the event and returns the failures, one handler's never stopping another.
Dispatch = Callable[[Event], list[tuple[str, BaseException]]]


def backoff_seconds(attempts: int, retry_after: float | None = None, base: float = 15.0) -> float:
    """Exponential backoff with jitter, never sooner than GitHub's Retry-After."""
    delay = min(base * 2 ** max(attempts - 1, 0), MAX_BACKOFF_SECONDS) * random.uniform(0.8, 1.2)
    return max(delay, retry_after or 0.0)


class Worker:
    def __init__(self, queue: DeliveryQueue, dispatch: Dispatch, *, owner: str, lease_seconds: int,
                 max_attempts: int, on_outcome: Callable[[str, str], None] | None = None) -> None:
        self.queue = queue
        self.dispatch = dispatch
        self.owner = owner
        self.lease_seconds = lease_seconds
        self.max_attempts = max_attempts
        self.on_outcome = on_outcome or (lambda event, outcome: None)

    def run_once(self) -> bool:
        """Process one due delivery; False when there was none."""
        claimed = self.queue.claim(self.owner, self.lease_seconds)
        if claimed is None:
            return False
        self.on_outcome(claimed.event, self._process(claimed))
        return True

    def run_until(self, stop: threading.Event, idle_seconds: float = 0.5) -> None:
        while not stop.is_set():
            try:
                busy = self.run_once()
            except Exception:  # the queue itself failed (database down): keep the worker alive and wait
                log.exception("worker %s could not claim work", self.owner)
                busy = False
            if not busy:
                stop.wait(idle_seconds)

    def _process(self, claimed: Claimed) -> str:
        if claimed.attempts > self.max_attempts:
            self.queue.fail(claimed, f"gave up after {self.max_attempts} attempts: its worker stopped before "
                                     "finishing each time (lease expired)")
            return "failed"
        try:
            payload = json.loads(claimed.payload)
        except ValueError as exc:
            self.queue.fail(claimed, f"stored payload is not JSON: {exc}")
            return "failed"
        event = Event(claimed.event, claimed.action, claimed.id, payload, claimed.repo, claimed.installation_id,
                      keep_alive=lambda seconds: self.queue.extend(claimed, max(seconds, self.lease_seconds)))
        failures = self.dispatch(event)
        if not failures:
            self.queue.finish(claimed)
            return "done"
        summary = "; ".join(f"{name}: {exc.__class__.__name__}: {exc}" for name, exc in failures)
        transient = [exc for _, exc in failures if isinstance(exc, TransientError)]
        waiting = bool(transient) and all(isinstance(exc, RateLimited) for exc in transient) and \
            datetime.now(UTC) - claimed.received_at < RATE_LIMIT_PATIENCE
        if len(transient) == len(failures) and (waiting or claimed.attempts < self.max_attempts):
            retry_after = max((exc.retry_after or 0.0) for exc in transient)
            delay = backoff_seconds(claimed.attempts, retry_after)
            log.warning("delivery %s: transient failure, retry in %.0fs: %s", claimed.id, delay, summary,
                        extra={"delivery": claimed.id})
            self.queue.retry_later(claimed, summary, delay, counted=not waiting)
            return "retry"
        self.queue.fail(claimed, summary)
        return "failed"

