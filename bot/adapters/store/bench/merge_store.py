"""Open merge PRs in the store: written when perfbot opens one, removed when GitHub says it closed, and set right
against GitHub's own list whenever the campaign dashboard asks it (a lost webhook does not leave one behind)."""
from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import delete, select

from bot.adapters.store.engine import Database
from bot.adapters.store.service_models import PendingMerge


def opened(db: Database, full_name: str, number: int, keep: str, merged_from: str, title: str, by: str) -> None:
    """The same branch's PR reused for another merge keeps its row, with what it now merges."""
    with db.session() as session:
        row = session.scalar(select(PendingMerge).where(PendingMerge.full_name == full_name,
                                                        PendingMerge.number == number))
        if row is None:
            row = PendingMerge(full_name=full_name, number=number, opened_at=datetime.now(UTC))
            session.add(row)
        row.keep, row.merged_from, row.title, row.opened_by = keep, merged_from, title[:400], by[:200]


def closed(db: Database, full_name: str, number: int) -> None:
    with db.session() as session:
        session.execute(delete(PendingMerge).where(PendingMerge.full_name == full_name, PendingMerge.number == number))


def set_open(db: Database, full_name: str, pulls: list[tuple[int, str, str]]) -> None:
    """GitHub's open merge PRs as (number, keep, title): any other row is gone, a missing one is added."""
    numbers = {number for number, _, _ in pulls}
    with db.session() as session:
        session.execute(delete(PendingMerge).where(PendingMerge.full_name == full_name,
                                                   PendingMerge.number.not_in(numbers)))
        known = set(session.scalars(select(PendingMerge.number).where(PendingMerge.full_name == full_name)))
        for number, keep, title in pulls:
            if number not in known:
                session.add(PendingMerge(full_name=full_name, number=number, keep=keep, merged_from="",
                                         title=title[:400], opened_by="", opened_at=datetime.now(UTC)))


def as_dict(row: PendingMerge) -> dict:
    return {"repo": row.full_name, "number": row.number, "keep": row.keep, "merged_from": row.merged_from,
            "title": row.title, "by": row.opened_by, "at": row.opened_at}
