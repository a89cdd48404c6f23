"""The delivery queue in the database: store once by id, claim under a lease, finish, retry or fail."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from sqlalchemy import CursorResult, Result, and_, case, exists, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import DBAPIError

from bot.adapters.store.engine import Database
from bot.adapters.store.service_models import Delivery

PENDING, RUNNING, DONE, FAILED = "pending", "running", "done", "failed"
# How many due deliveries one SQLite claim looks at; other workers race for the same rows and some claims lose.
CLAIM_WINDOW = 8
ERROR_LIMIT = 4000
# Short commands people wait for: claimed before other due work, and by a lane of their own (`claim(only=...)`),
# so a long sync or bench run never holds up a `/perf status` answer.
COMMENT_EVENTS = ("issue_comment", "pull_request_review_comment")


class NotStored(Exception):
    """A delivery was not committed: the store refused it or did not take the write in time; its cause is chained."""


class LeaseLost(Exception):
    """This worker's claim was taken over (its lease ran out while it stalled, or it handed the claim back): the
    work stops, and its fenced writes are refused."""


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class NewDelivery:
    id: str
    event: str
    action: str | None
    repo: str | None
    installation_id: int | None
    payload: str


@dataclass(frozen=True)
class Claimed:
    """A delivery this worker holds the lease on."""

    id: str
    event: str
    action: str | None
    repo: str | None
    installation_id: int | None
    payload: str
    attempts: int
    owner: str
    received_at: datetime
    generation: int = 0  # the claim's fence: its writes match (owner, generation), so a claim taken over writes nothing


class DeliveryQueue:
    def __init__(self, db: Database) -> None:
        self.db = db
        dialect = postgresql if db.engine.dialect.name == "postgresql" else sqlite
        # DO NOTHING rather than an IntegrityError: a redelivery, even one racing its first copy, is no failure.
        self._insert = dialect.insert(Delivery).on_conflict_do_nothing(index_elements=[Delivery.id]) \
            .returning(Delivery.id)

    def enqueue(self, new: NewDelivery, now: datetime | None = None, due: datetime | None = None,
                wait: float | None = None) -> bool:
        """Store a delivery durably; False when this id was stored before (a redelivery), which is not an error.
        `due`: not claimed before then (a debounced check), else at once. `wait`: how long to wait for another
        writer's lock (a webhook's thread must not wait out a locked store), else as long as the store takes.

        Returns only once the row's commit reached the disk; raises NotStored when the store did not take it.
        """
        now = now or utcnow()
        row = dict(id=new.id, event=new.event, action=new.action, repo=new.repo, installation_id=new.installation_id,
                   payload=new.payload, received_at=now, status=PENDING, attempts=0, next_attempt_at=due or now,
                   lease_owner=None, lease_expires_at=None, last_error=None, finished_at=None)
        try:
            with self.db.bounded(wait, flush=True) as connection:
                stored = connection.execute(self._insert, row).first() is not None
                connection.commit()
        except DBAPIError as exc:  # locked past `wait`, refused, or down: the caller must not acknowledge it
            reason = str(exc.orig).partition("\n")[0][:200]
            raise NotStored(f"not stored: {exc.__class__.__name__}: {reason}") from exc
        return stored

    def claim(self, owner: str, lease_seconds: float, now: datetime | None = None,
              only: tuple[str, ...] | None = None) -> Claimed | None:
        """Take one due delivery: pending and due, or running with an expired lease (its worker died or stopped
        renewing). Comments come first; `only`: claim these events alone (a lane kept for them)."""
        now = now or utcnow()
        due = or_(
            and_(Delivery.status == PENDING, Delivery.next_attempt_at <= now),
            and_(Delivery.status == RUNNING, Delivery.lease_expires_at < now),
        )
        if only is not None:
            due = and_(due, Delivery.event.in_(only))
        take = dict(status=RUNNING, lease_owner=owner, attempts=Delivery.attempts + 1,
                    lease_generation=Delivery.lease_generation + 1,
                    lease_expires_at=now + timedelta(seconds=lease_seconds))
        order = (case((Delivery.event.in_(COMMENT_EVENTS), 0), else_=1), Delivery.next_attempt_at,
                 Delivery.received_at)
        with self.db.session() as session:
            if self.db.engine.dialect.name == "postgresql":
                # A row lock held to the end of this transaction: rivals skip the row instead of waiting on it or
                # losing a race for it, so N workers take N different deliveries at once, none retrying.
                delivery_id = session.scalars(
                    select(Delivery.id).where(due).order_by(*order).limit(1).with_for_update(skip_locked=True)
                ).first()
                if delivery_id is None:
                    return None
                session.execute(update(Delivery).where(Delivery.id == delivery_id).values(**take))
                return self._claimed(session, delivery_id, owner)
            # SQLite has no row locks (a writer locks the whole file, and SKIP LOCKED does not exist), so workers
            # read a window of due rows and compare-and-set: of several racing for a row, exactly one update matches.
            candidates = session.scalars(select(Delivery.id).where(due).order_by(*order).limit(CLAIM_WINDOW)).all()
            for delivery_id in candidates:
                taken = _rowcount(session.execute(update(Delivery).where(Delivery.id == delivery_id, due)
                                                  .values(**take)))
                if taken == 1:
                    return self._claimed(session, delivery_id, owner)
        return None

    @staticmethod
    def _claimed(session, delivery_id: str, owner: str) -> Claimed:
        row = session.get(Delivery, delivery_id, populate_existing=True)
        return Claimed(row.id, row.event, row.action, row.repo, row.installation_id, row.payload, row.attempts, owner,
                       row.received_at, row.lease_generation)

    @staticmethod
    def held(claimed: Claimed):
        """The condition a fenced write adds: this claim still holds its delivery (same owner and generation,
        still running). Another table's write is fenced with `exists(...)` of it (a bench run's progress)."""
        return and_(Delivery.id == claimed.id, Delivery.lease_owner == claimed.owner,
                    Delivery.lease_generation == claimed.generation, Delivery.status == RUNNING)

    def fence(self, claimed: Claimed):
        """A WHERE clause for another table's UPDATE: true only while `claimed` holds its lease."""
        return exists().where(self.held(claimed))

    def _settle(self, claimed: Claimed, **values) -> bool:
        """Write the outcome only if this claim still holds the lease (a slow worker may have lost it)."""
        with self.db.session() as session:
            return _rowcount(session.execute(update(Delivery).where(self.held(claimed)).values(**values))) == 1

    def renew(self, claims: list[Claimed], lease_seconds: float) -> list[Claimed]:
        """The heartbeat: every claim still held gets `lease_seconds` more, in one transaction; returns the
        claims that were lost (taken over after this process stalled past its lease). Waits at most a third of a
        lease for another writer (a SQLite write lock), so a busy store delays one beat, never the next ones."""
        lost = []
        until = utcnow() + timedelta(seconds=lease_seconds)
        with self.db.bounded(lease_seconds / 3) as connection:
            for claimed in claims:
                if _rowcount(connection.execute(update(Delivery).where(self.held(claimed))
                                                .values(lease_expires_at=until))) != 1:
                    lost.append(claimed)
            connection.commit()
        return lost

    def finish(self, claimed: Claimed, error: str | None = None) -> bool:
        return self._settle(claimed, status=DONE, lease_owner=None, lease_expires_at=None,
                            finished_at=utcnow(), last_error=_clip(error))

    def retry_later(self, claimed: Claimed, error: str, delay_seconds: float, *, counted: bool = True) -> bool:
        """Due again in `delay_seconds`; a wait that is no failed attempt (a rate limit) gives its attempt back."""
        refund = {} if counted else {"attempts": Delivery.attempts - 1}
        return self._settle(claimed, status=PENDING, lease_owner=None, lease_expires_at=None, last_error=_clip(error),
                            next_attempt_at=utcnow() + timedelta(seconds=delay_seconds), **refund)

    def hand_back(self, claimed: Claimed) -> bool:
        """A stopping worker (SIGTERM) returns its claim: due again at once for another worker, the attempt given
        back; the generation stays bumped, so this worker's late writes are refused."""
        return self._settle(claimed, status=PENDING, lease_owner=None, lease_expires_at=None,
                            next_attempt_at=utcnow(), attempts=Delivery.attempts - 1,
                            last_error="handed back by a stopping worker")

    def fail(self, claimed: Claimed, error: str) -> bool:
        return self._settle(claimed, status=FAILED, lease_owner=None, lease_expires_at=None,
                            finished_at=utcnow(), last_error=_clip(error))

    def redeliver(self, delivery_id: str) -> bool:
        """Run a stored delivery again from scratch (after a permanent failure, or on request)."""
        with self.db.session() as session:
            return _rowcount(session.execute(
                update(Delivery).where(Delivery.id == delivery_id, Delivery.status != RUNNING).values(
                    status=PENDING, attempts=0, next_attempt_at=utcnow(), last_error=None, finished_at=None)
            )) == 1

    def listing(self, statuses: tuple[str, ...] = (), limit: int = 50) -> list[dict]:
        with self.db.session() as session:
            query = select(Delivery).order_by(Delivery.received_at.desc()).limit(limit)
            if statuses:
                query = query.where(Delivery.status.in_(statuses))
            return [
                {"id": d.id, "event": d.event, "action": d.action, "repo": d.repo, "status": d.status,
                 "attempts": d.attempts, "received_at": d.received_at.isoformat(),
                 "next_attempt_at": d.next_attempt_at.isoformat(), "error": d.last_error}
                for d in session.scalars(query)
            ]

    def counts(self) -> dict[str, int]:
        with self.db.session() as session:
            return dict(session.execute(select(Delivery.status, func.count()).group_by(Delivery.status)).all())

    def get(self, delivery_id: str) -> dict | None:
        with self.db.session() as session:
            row = session.get(Delivery, delivery_id)
            return None if row is None else {"id": row.id, "status": row.status, "attempts": row.attempts,
                                             "error": row.last_error, "event": row.event}


def _clip(text: str | None) -> str | None:
    return None if text is None else text[:ERROR_LIMIT]


def _rowcount(result: Result[Any]) -> int:
    """Rows an UPDATE matched: its result is a CursorResult, which the session types as any Result."""
    return cast(CursorResult[Any], result).rowcount
