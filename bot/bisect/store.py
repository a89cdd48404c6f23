"""Bisections in the store: queued, running with each decided step saved at once, done with the culprit."""
from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import select

from bot.adapters.store.engine import Database
from bot.adapters.store.service_models import Bisection
from bot.core.verify.vocabulary import RunStatus

QUEUED, RUNNING, DONE = RunStatus.QUEUED, RunStatus.RUNNING, RunStatus.DONE


def create(db: Database, full_name: str, slug: str, good: str, bad: str, *, requested_by: str,
           options: dict | None = None) -> int:
    with db.session() as session:
        row = Bisection(full_name=full_name, slug=slug, good_sha=good, bad_sha=bad, status=QUEUED, outcome="",
                        message="queued", steps=[], requested_by=requested_by, options=options or {},
                        created_at=datetime.now(UTC))
        session.add(row)
        session.flush()
        return row.id


def get(db: Database, bisect_id: int) -> dict | None:
    return db.row(Bisection, bisect_id, _as_dict)


def stored(db: Database, bisect_id: int) -> dict:
    """A bisection known to be stored (this flow wrote it); sqlalchemy's NoResultFound if it is not."""
    return db.stored_row(Bisection, bisect_id, _as_dict)


def unfinished(db: Database, full_name: str, slug: str) -> dict | None:
    with db.session() as session:
        row = session.scalars(select(Bisection).where(Bisection.full_name == full_name, Bisection.slug == slug,
                                                      Bisection.status != DONE).order_by(Bisection.id)).first()
        return _as_dict(row) if row else None


def for_record(db: Database, full_name: str, slug: str) -> list[dict]:
    """A record's bisections, newest first, for `perfbot show`."""
    with db.session() as session:
        rows = session.scalars(select(Bisection).where(Bisection.full_name == full_name, Bisection.slug == slug)
                               .order_by(Bisection.id.desc()))
        return [_as_dict(row) for row in rows]


def add_step(db: Database, bisect_id: int, step: dict) -> None:
    with db.session() as session:
        row = session.get_one(Bisection, bisect_id)
        row.status, row.message = RUNNING, "bisecting"
        row.steps = [*(row.steps or []), step]  # a new list: JSON columns track assignment, not mutation


def finish(db: Database, bisect_id: int, outcome: str, message: str, culprit: str | None = None) -> None:
    with db.session() as session:
        row = session.get_one(Bisection, bisect_id)
        row.status, row.outcome, row.message, row.culprit_sha = DONE, outcome, message, culprit
        row.finished_at = datetime.now(UTC)


def _as_dict(row: Bisection) -> dict:
    return {"id": row.id, "repo": row.full_name, "slug": row.slug, "good": row.good_sha, "bad": row.bad_sha,
            "status": row.status, "outcome": row.outcome, "culprit": row.culprit_sha, "message": row.message,
            "steps": list(row.steps or []), "requested_by": row.requested_by, "options": dict(row.options or {})}
