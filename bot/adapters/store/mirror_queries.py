"""What the mirror reads and writes in the store: record views with their issue state, and that state."""
from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import aliased

from bot.adapters.store.engine import Database
from bot.adapters.store.models import Record, Repo, Revision
from bot.adapters.store.service_models import IssueMirror
from bot.core.issue_view import RecordView


@dataclass(frozen=True)
class MirrorRow:
    record_id: int
    view: RecordView
    content: str | None
    commit: str | None
    findings: tuple[dict, ...]
    number: int | None
    content_hash: str
    lint_hash: str
    lint_comment_id: int | None
    duplicate_comment_id: int | None


def load_mirror_rows(db: Database, repo_key: str, slugs: set[str] | None) -> list[MirrorRow]:
    target = aliased(Record)
    target_mirror = aliased(IssueMirror)
    latest = (
        select(Revision.record_id, func.max(Revision.id).label("rev_id"))
        .where(Revision.content.is_not(None)).group_by(Revision.record_id).subquery()
    )
    query = (
        select(Record, IssueMirror, Revision, target.slug, target_mirror.number)
        .join(Repo, Repo.id == Record.repo_id)
        .outerjoin(IssueMirror, IssueMirror.record_id == Record.id)
        .outerjoin(latest, latest.c.record_id == Record.id)
        .outerjoin(Revision, Revision.id == latest.c.rev_id)
        .outerjoin(target, target.id == Record.merged_into_id)
        .outerjoin(target_mirror, target_mirror.record_id == Record.merged_into_id)
        .where(Repo.key == repo_key)
    )
    if slugs is not None:
        # The records asked for, plus live ones that never reached their issue (an earlier pass failed).
        never_mirrored = IssueMirror.record_id.is_(None) & Record.state.in_(("open", "closed"))
        query = query.where(Record.slug.in_(sorted(slugs)) | never_mirrored if slugs else never_mirrored)
    rows = []
    with db.session() as session:
        for record, mirror, revision, target_slug, target_number in session.execute(query):
            view = RecordView(
                slug=record.slug, title=record.title, path=record.path, track=record.track,
                backend=record.backend, threads=record.threads, ratio=record.ratio, fix=record.fix,
                state=record.state, errors=record.errors, warnings=record.warnings,
                merged_into=target_slug, merged_into_number=target_number,
            )
            rows.append(MirrorRow(
                record_id=record.id, view=view,
                content=revision.content if revision else None,
                commit=revision.commit_sha if revision else None,
                findings=tuple(revision.findings) if revision else (),
                number=mirror.number if mirror else None,
                content_hash=mirror.content_hash if mirror else "",
                lint_hash=mirror.lint_hash if mirror else "",
                lint_comment_id=mirror.lint_comment_id if mirror else None,
                duplicate_comment_id=mirror.duplicate_comment_id if mirror else None,
            ))
    return rows


def save_mirror(db: Database, record_id: int, **values) -> None:
    with db.session() as session:
        mirror = session.get(IssueMirror, record_id)
        if mirror is None:
            mirror = IssueMirror(record_id=record_id, number=values["number"])
            session.add(mirror)
        for name, value in values.items():
            setattr(mirror, name, value)


def record_by_issue(db: Database, repo_key: str, number: int) -> tuple[int, str, str] | None:
    """(record id, slug, state) of the record mirrored to issue `number`, if any."""
    with db.session() as session:
        row = session.execute(
            select(Record.id, Record.slug, Record.state).join(IssueMirror, IssueMirror.record_id == Record.id)
            .join(Repo, Repo.id == Record.repo_id).where(Repo.key == repo_key, IssueMirror.number == number)
        ).first()
        return tuple(row) if row else None
