"""Fixes in the store: which branch (and PR) claims to fix which record, its head, diff stats and token delta."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import select

from bot.adapters.store.engine import Database
from bot.adapters.store.models import Record, Repo
from bot.adapters.store.service_models import BenchRun, Fix, RecordEvent

OPEN, MERGED, CLOSED, DETACHED = "open", "merged", "closed", "detached"


@dataclass(frozen=True)
class FixRow:
    id: int
    slug: str
    branch: str
    source: str
    state: str
    head_sha: str | None
    base_sha: str | None
    pr_number: int | None
    additions: int
    deletions: int
    changed_files: int
    token_delta: int | None
    attached_by: str

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def _row(fix: Fix) -> FixRow:
    return FixRow(fix.id, fix.slug, fix.branch, fix.source, fix.state, fix.head_sha, fix.base_sha, fix.pr_number,
                  fix.additions, fix.deletions, fix.changed_files, fix.token_delta, fix.attached_by)


def attach(db: Database, full_name: str, slug: str, branch: str, *, source: str, head_sha: str | None,
           base_sha: str | None = None, pr_number: int | None = None, stats: tuple[int, int, int] | None = None,
           token_delta: int | None = None, attached_by: str = "") -> tuple[FixRow, bool]:
    """Attach (or refresh) a fix; True when its head is new, i.e. there is something new to verify."""
    now = datetime.now(UTC)
    with db.session() as session:
        fix = session.scalars(select(Fix).where(Fix.full_name == full_name, Fix.slug == slug,
                                                Fix.branch == branch)).first()
        if fix is None:
            fix = Fix(full_name=full_name, slug=slug, branch=branch, source=source, created_at=now,
                      attached_by=attached_by,
                      additions=0, deletions=0, changed_files=0)
            session.add(fix)
        elif fix.state == DETACHED and source != "command":
            return _row(fix), False  # a person detached it: only a person attaches it again
        new_head = head_sha is not None and fix.head_sha != head_sha
        if fix.state in (DETACHED, CLOSED) or (fix.state == MERGED and new_head):
            fix.state = OPEN  # reattached, reopened, or a merged branch that moved on
        fix.head_sha = head_sha or fix.head_sha
        fix.base_sha = base_sha or fix.base_sha
        fix.pr_number = pr_number or fix.pr_number
        if stats is not None:
            fix.additions, fix.deletions, fix.changed_files = stats
        if token_delta is not None:
            fix.token_delta = token_delta
        fix.updated_at = now
        session.flush()
        return _row(fix), new_head


def set_state(db: Database, fix_id: int, state: str) -> None:
    with db.session() as session:
        fix = session.get_one(Fix, fix_id)
        fix.state, fix.updated_at = state, datetime.now(UTC)


def fixes_for(db: Database, full_name: str, slug: str) -> list[FixRow]:
    with db.session() as session:
        return [_row(f) for f in session.scalars(select(Fix).where(Fix.full_name == full_name, Fix.slug == slug)
                                                 .order_by(Fix.id))]


def fixes_of_pull(db: Database, full_name: str, number: int) -> list[FixRow]:
    with db.session() as session:
        return [_row(f) for f in session.scalars(select(Fix).where(Fix.full_name == full_name, Fix.pr_number == number)
                                                 .order_by(Fix.id))]


def open_fixes(db: Database, full_name: str) -> list[FixRow]:
    with db.session() as session:
        return [_row(f) for f in session.scalars(select(Fix).where(Fix.full_name == full_name, Fix.state == OPEN)
                                                 .order_by(Fix.id))]


@dataclass(frozen=True)
class OpenRecord:
    slug: str
    fix: str | None
    reproduced: str | None
    verdict: str | None
    created_at: datetime | None = None
    record_id: int = 0
    state: str = "open"


def open_records(db: Database, full_name: str) -> dict[str, OpenRecord]:
    """The records waiting for a fix: open, closed by a person (they can be verified all the same), or regressed."""
    with db.session() as session:
        rows = session.execute(select(Record.slug, Record.fix, Record.reproduced, Record.verdict, Record.created_at,
                                              Record.id, Record.state)
                               .join(Repo).where(Repo.full_name == full_name,
                                                 Record.state.in_(("open", "closed", "regressed")))).all()
    return {row[0]: OpenRecord(*row) for row in rows}


def record_standing(db: Database, full_name: str, slug: str) -> tuple[str, str | None, str | None] | None:
    """(state, verdict, reproduced) of a record in any state, or None when there is no such record."""
    with db.session() as session:
        row = session.execute(select(Record.state, Record.verdict, Record.reproduced).join(Repo)
                              .where(Repo.full_name == full_name, Record.slug == slug)).first()
    if row is None:
        return None
    state, verdict, reproduced = row
    return state, verdict, reproduced


def has_run(db: Database, full_name: str, slug: str, purpose: str, head_sha: str | None = None,
            pr_number: int | None = None) -> bool:
    with db.session() as session:
        query = select(BenchRun.id).where(BenchRun.full_name == full_name, BenchRun.slug == slug,
                                          BenchRun.purpose == purpose)
        if head_sha is not None:
            query = query.where(BenchRun.head_sha == head_sha)
        if pr_number is not None:
            query = query.where(BenchRun.pr_number == pr_number)
        return session.scalars(query.limit(1)).first() is not None


def mark_fixed(db: Database, full_name: str, slug: str, detail: str, actor: str, delivery_id: str | None) -> bool:
    """The record's fix merged with a passing verdict: state `fixed`, logged like every change outside git."""
    with db.session() as session:
        record = session.scalars(select(Record).join(Repo).where(Repo.full_name == full_name,
                                                                 Record.slug == slug)).first()
        if record is None or record.state not in ("open", "closed", "regressed"):
            return False
        record.state = "fixed"
        session.add(RecordEvent(record_id=record.id, kind="fixed", actor=actor, detail=detail, delivery_id=delivery_id,
                                at=datetime.now(UTC)))
        return True
