"""The dashboard issue of each repository and the notices told there, kept so "once" survives a restart."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from bot.adapters.store.engine import Database
from bot.adapters.store.service_models import DashboardIssue
from bot.adapters.store.service_models import Notice as NoticeRow


@dataclass(frozen=True)
class Pending:
    """A notice claimed but not yet posted (or its webhook not yet queued)."""

    id: int
    kind: str
    subject: str
    text: str
    comment_id: int | None
    webhook_queued: bool


def dashboard_row(db: Database, full_name: str) -> tuple[int, str] | None:
    return db.row(DashboardIssue, full_name, lambda row: (row.number, row.content_hash))


def save_dashboard(db: Database, full_name: str, number: int, content_hash: str, now: datetime) -> None:
    with db.session() as session:
        row = session.get(DashboardIssue, full_name)
        if row is None:
            session.add(DashboardIssue(full_name=full_name, number=number, content_hash=content_hash, updated_at=now))
        else:
            row.number, row.content_hash, row.updated_at = number, content_hash, now


def settle_notices(db: Database, full_name: str, current: list[tuple[str, str, str]], now: datetime) -> list[Pending]:
    """Claim every (kind, subject, text) not claimed before, mark the claimed ones that no longer hold resolved
    (and a resolved one that holds again unresolved, never told twice); returns what still needs telling."""
    keys = {(kind, subject) for kind, subject, _ in current}
    with db.session() as session:
        rows = {(r.kind,
                 r.subject): r for r in session.scalars(select(NoticeRow).where(NoticeRow.full_name == full_name))}
        for key, row in rows.items():
            row.resolved_at = None if key in keys else (row.resolved_at or now)
    for kind, subject, text in current:
        if (kind, subject) not in rows:
            try:
                with db.session() as session:
                    session.add(NoticeRow(full_name=full_name, kind=kind, subject=subject, text=text, created_at=now,
                                          webhook_queued=False))
            except IntegrityError:
                pass  # another worker claimed it first: it tells it
    with db.session() as session:
        return [Pending(r.id, r.kind, r.subject, r.text, r.comment_id, r.webhook_queued) for r in session.scalars(
            select(NoticeRow).where(NoticeRow.full_name == full_name, NoticeRow.resolved_at.is_(None),
                                    (NoticeRow.comment_id.is_(None)) | (NoticeRow.webhook_queued.is_(False)))
            .order_by(NoticeRow.id))]


def set_posted(db: Database, notice_id: int, comment_id: int) -> None:
    with db.session() as session:
        session.get_one(NoticeRow, notice_id).comment_id = comment_id


def set_webhook_queued(db: Database, notice_id: int) -> None:
    with db.session() as session:
        session.get_one(NoticeRow, notice_id).webhook_queued = True


def notices_of(db: Database, full_name: str) -> list[dict]:
    with db.session() as session:
        return [{"id": r.id, "kind": r.kind, "subject": r.subject, "comment_id": r.comment_id,
                 "resolved": r.resolved_at is not None, "webhook_queued": r.webhook_queued}
                for r in session.scalars(select(NoticeRow).where(NoticeRow.full_name == full_name)
                                         .order_by(NoticeRow.id))]
