"""The worker: claims stored deliveries under a lease, runs their handlers, and settles the outcome."""
from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from bot.adapters.store.engine import STORE_AWAY, STORE_BUSY
from bot.adapters.store.locks import RepositoryBusy
from bot.adapters.store.queue import Claimed, DeliveryQueue, LeaseLost
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
    # Long work (a bench run) calls this between steps: it raises LeaseLost once the delivery was taken over,
    # so the work stops; the heartbeat, not these calls, keeps the lease (the argument, seconds of quiet to
    # come, is no longer needed). A `Lease` also fences writes.
    keep_alive: Callable[[float], object] = lambda seconds: None


# A dispatcher runs every handler for the event and returns the failures, one handler's never stopping another.
Dispatch = Callable[[Event], list[tuple[str, BaseException]]]


def backoff_seconds(attempts: int, retry_after: float | None = None, base: float = 15.0) -> float:
    """Exponential backoff with jitter, never sooner than GitHub's Retry-After."""
    delay = min(base * 2 ** max(attempts - 1, 0), MAX_BACKOFF_SECONDS) * random.uniform(0.8, 1.2)
    return max(delay, retry_after or 0.0)


class Leases:
    """The claims a process holds, renewed together by one heartbeat thread every third of a lease, so a lease
    lasts as long as its worker lives whatever the work (a delivery, a long sync, a bench run), and a dead or
    frozen worker's work is due again within one lease."""

    def __init__(self, queue: DeliveryQueue, lease_seconds: float) -> None:
        self.queue = queue
        self.lease_seconds = lease_seconds
        self._held: dict[tuple[str, int], Claimed] = {}
        self._lost: set[tuple[str, int]] = set()
        self._lock = threading.Lock()

    def hold(self, claimed: Claimed) -> None:
        with self._lock:
            self._held[(claimed.id, claimed.generation)] = claimed

    def drop(self, claimed: Claimed) -> None:
        with self._lock:
            self._held.pop((claimed.id, claimed.generation), None)
            self._lost.discard((claimed.id, claimed.generation))

    def lost(self, claimed: Claimed) -> bool:
        with self._lock:
            return (claimed.id, claimed.generation) in self._lost

    def beat(self) -> None:
        with self._lock:
            held = list(self._held.values())
        if not held:
            return
        lost = self.queue.renew(held, self.lease_seconds)
        for claimed in lost:
            log.warning("delivery %s: lease lost (taken over, or handed back); its work stops",
                        claimed.id, extra={"delivery": claimed.id})
        with self._lock:
            self._lost.update((c.id, c.generation) for c in lost)

    def run(self, stop: threading.Event) -> None:
        while not stop.wait(self.lease_seconds / 3):
            try:
                self.beat()
            except Exception:  # the store is down: the next beat tries again; leases last a while
                log.exception("lease heartbeat failed")

    def hand_back(self) -> int:
        """SIGTERM: every claim held goes back to the queue at once, for another worker to take now."""
        with self._lock:
            held = list(self._held.values())
            self._lost.update(self._held)
        returned = 0
        for claimed in held:
            try:
                returned += self.queue.hand_back(claimed)
            except Exception:  # the store is down: the lease runs out instead
                log.exception("delivery %s: could not hand it back", claimed.id)
        return returned


@dataclass(frozen=True)
class Lease:
    """A claim as the work sees it: called between steps, it raises LeaseLost once the claim was taken over;
    `fence` is the clause a fenced write of another table adds (a bench run's progress and verdict)."""

    leases: Leases
    claimed: Claimed

    def __call__(self, _quiet_seconds: float = 0) -> None:
        if self.leases.lost(self.claimed):
            raise LeaseLost(f"delivery {self.claimed.id} was taken over by another worker")

    @property
    def fence(self):
        return self.leases.queue.fence(self.claimed)


class Worker:
    def __init__(self, queue: DeliveryQueue, dispatch: Dispatch, *, owner: str, lease_seconds: float,
                 max_attempts: int, on_outcome: Callable[[str, str], None] | None = None,
                 leases: Leases | None = None, only: tuple[str, ...] | None = None) -> None:
        self.queue = queue
        self.dispatch = dispatch
        self.owner = owner
        self.lease_seconds = lease_seconds
        self.max_attempts = max_attempts
        self.on_outcome = on_outcome or (lambda event, outcome: None)
        self.leases = leases or Leases(queue, lease_seconds)
        self.only = only  # a lane: the events this worker alone claims (comments), else any

    def run_once(self) -> bool:
        """Process one due delivery; False when there was none."""
        claimed = self.queue.claim(self.owner, self.lease_seconds, only=self.only)
        if claimed is None:
            return False
        began = time.monotonic()
        self.leases.hold(claimed)
        try:
            outcome = self._process(claimed)
        finally:
            self.leases.drop(claimed)
        log.info("delivery %s (%s) %s after %.1f s, attempt %d", claimed.id, claimed.event, outcome,
                 time.monotonic() - began, claimed.attempts, extra={"delivery": claimed.id})
        self.on_outcome(claimed.event, outcome)
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
                      keep_alive=Lease(self.leases, claimed))
        failures = self.dispatch(event)
        if any(isinstance(exc, LeaseLost) for _, exc in failures) or self.leases.lost(claimed):
            return "taken over"  # another worker holds it now: this one writes no outcome
        if not failures:
            return "done" if self.queue.finish(claimed) else "taken over"
        summary = "; ".join(f"{name}: {exc.__class__.__name__}: {exc}" for name, exc in failures)
        # A pool timeout is the process's own congestion, not the delivery's fault: back to the queue, uncounted,
        # as is work that would not wait for a repository a long job holds (RepositoryBusy); a store that went
        # away mid-delivery (a restart) is tried again too, counted.
        transient = [exc for _, exc in failures if isinstance(exc, (TransientError, *STORE_BUSY, *STORE_AWAY))]
        waiting = bool(transient) and \
            all(isinstance(exc, (RateLimited, RepositoryBusy, *STORE_BUSY)) for exc in transient) and \
            datetime.now(UTC) - claimed.received_at < RATE_LIMIT_PATIENCE
        if len(transient) == len(failures) and (waiting or claimed.attempts < self.max_attempts):
            retry_after = max((getattr(exc, "retry_after", None) or 0.0) for exc in transient)
            delay = backoff_seconds(claimed.attempts, retry_after)
            log.warning("delivery %s: transient failure, retry in %.0fs: %s", claimed.id, delay, summary,
                        extra={"delivery": claimed.id})
            self.queue.retry_later(claimed, summary, delay, counted=not waiting)
            return "retry"
        self.queue.fail(claimed, summary)
        return "failed"

