"""Installations, record events and the repositories the store knows, for the service's use cases."""
from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import select

from bot.adapters.store.engine import Database
from bot.adapters.store.models import Record, Repo
from bot.adapters.store.service_models import Installation, IssueMirror, RecordEvent


def save_installation(db: Database, installation_id: int, account: str, repos: list[str] | None,
                      active: bool) -> None:
    with db.session() as session:
        row = session.get(Installation, installation_id)
        if row is None:
            row = Installation(id=installation_id, account=account, repos=[], active=active,
                               updated_at=datetime.now(UTC))
            session.add(row)
        row.account, row.active, row.updated_at = account, active, datetime.now(UTC)
        if repos is not None:
            row.repos = sorted(set(repos))


def change_installation_repos(db: Database, installation_id: int, account: str, added: list[str],
                              removed: list[str]) -> None:
    with db.session() as session:
        row = session.get(Installation, installation_id)
        current = set(row.repos) if row else set()
        repos = sorted((current | set(added)) - set(removed))
    save_installation(db, installation_id, account, repos, active=True)


def installation_for(db: Database, full_name: str) -> int | None:
    with db.session() as session:
        for row in session.scalars(select(Installation).where(Installation.active.is_(True))):
            if full_name in row.repos:
                return row.id
    return None


def installations(db: Database) -> list[dict]:
    with db.session() as session:
        return [{"id": r.id, "account": r.account, "repos": r.repos, "active": r.active}
                for r in session.scalars(select(Installation).order_by(Installation.id))]


def full_names(db: Database) -> list[str]:
    with db.session() as session:
        return list(session.scalars(select(Repo.full_name).order_by(Repo.full_name)))


def apply_person_change(db: Database, record_id: int, new_state: str | None, event: str, actor: str,
                        delivery_id: str, restore_body: bool, reason: str = "") -> None:
    """Log what a person did, move the record's state, and forget the mirrored body if it must be rewritten."""
    with db.session() as session:
        record = session.get_one(Record, record_id)
        if new_state is not None:
            record.state = new_state
        session.add(RecordEvent(record_id=record_id, kind=event, actor=actor, delivery_id=delivery_id,
                                detail=f"{event} by {actor}" + (f": {reason}" if reason else ""),
                                at=datetime.now(UTC)))
        mirror = session.get(IssueMirror, record_id)
        if mirror is not None and (restore_body or new_state is not None):
            mirror.content_hash = ""
