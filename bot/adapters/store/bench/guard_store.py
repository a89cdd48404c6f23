"""Regression guards in the store: which records are guarded (fixed), what their guards measured, and the
`fixed` -> `regressed` change, logged like every change made outside git."""
from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import select

from bot.adapters.store.engine import Database
from bot.adapters.store.models import Record, Repo
from bot.adapters.store.service_models import BenchRun, Fix, RecordEvent
from bot.core.verify.vocabulary import Purpose

GUARD = Purpose.GUARD  # a fixed record's claim measured on the default branch


def guarded(db: Database, full_name: str) -> list[str]:
    """The slug of every fixed record: each keeps its reproduction as a guard."""
    with db.session() as session:
        return list(session.scalars(select(Record.slug).join(Repo).where(Repo.full_name == full_name,
                                                                         Record.state == "fixed")
                                    .order_by(Record.slug)))


def merged_fix_heads(db: Database, full_name: str, slug: str) -> tuple[str, ...]:
    with db.session() as session:
        return tuple(session.scalars(select(Fix.head_sha).where(
            Fix.full_name == full_name, Fix.slug == slug, Fix.state == "merged", Fix.head_sha.is_not(None))
            .order_by(Fix.id)))


def guard_results(db: Database, full_name: str, slug: str) -> dict[str, str]:
    """head sha -> verdict of every finished guard run of `slug` (pass: the claim did not reproduce there)."""
    with db.session() as session:
        rows = session.execute(select(BenchRun.head_sha, BenchRun.verdict).where(
            BenchRun.full_name == full_name, BenchRun.slug == slug, BenchRun.purpose == GUARD,
            BenchRun.status == "done").order_by(BenchRun.id)).all()
    return {sha: verdict for sha, verdict in rows}


def mark_regressed(db: Database, full_name: str, slug: str, detail: str, delivery_id: str | None) -> bool:
    """A guard's claim reproduced again: the fixed record is open again as `regressed`. False if it was not fixed."""
    with db.session() as session:
        record = session.scalars(select(Record).join(Repo).where(Repo.full_name == full_name,
                                                                 Record.slug == slug)).first()
        if record is None or record.state != "fixed":
            return False
        record.state = "regressed"
        record.verdict = None  # the verdict that closed it no longer holds at the head
        session.add(RecordEvent(record_id=record.id, kind="regressed", actor="perfbot", detail=detail,
                                delivery_id=delivery_id, at=datetime.now(UTC)))
        return True
