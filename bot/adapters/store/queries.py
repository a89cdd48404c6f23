"""Read-side queries for people and machines: record lists and one record with its history."""
from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from bot.adapters.store.models import Record, Repo, Revision, SlugAlias
from bot.core.verify.claim_size import ratio_kind

SORTS = {
    "ratio": (Record.ratio.desc().nulls_last(), Record.slug),
    "slug": (Record.slug,),
    "updated": (Record.updated_at.desc(), Record.slug),
}


@dataclass(frozen=True)
class RecordFilter:
    states: tuple[str, ...] = ("open",)
    track: str | None = None
    backend: str | None = None
    min_ratio: float | None = None
    with_errors: bool | None = None
    repo: str | None = None
    sort: str = "ratio"


def record_summary(record: Record, full_name: str, merged_into: str | None = None) -> dict:
    return {
        "slug": record.slug,
        "repo": full_name,
        "path": record.path,
        "title": record.title,
        "track": record.track,
        "backend": record.backend,
        "threads": record.threads,
        "ratio": record.ratio,
        "table_ratio": record.table_ratio,
        "ratio_kind": ratio_kind(record.track, record.reference),
        "fix": record.fix,
        "supersedes": list(record.supersedes or []),
        "state": record.state, "verdict": record.verdict, "reproduced": record.reproduced,
        "merged_into": merged_into,
        "errors": record.errors,
        "warnings": record.warnings,
        "created_at": record.created_at.isoformat() if record.created_at else None,
        "updated_at": record.updated_at.isoformat() if record.updated_at else None,
    }


def list_records(session: Session, flt: RecordFilter) -> list[dict]:
    query = select(Record, Repo.full_name).join(Repo, Repo.id == Record.repo_id)
    if flt.states:
        query = query.where(Record.state.in_(flt.states))
    if flt.track:
        query = query.where(Record.track == flt.track)
    if flt.backend:
        query = query.where(Record.backend == flt.backend)
    if flt.min_ratio is not None:
        query = query.where(Record.ratio >= flt.min_ratio)
    if flt.with_errors is not None:
        query = query.where((Record.errors > 0) if flt.with_errors else (Record.errors == 0))
    if flt.repo:
        query = query.where(Repo.full_name == flt.repo)
    query = query.order_by(*SORTS[flt.sort])
    rows = session.execute(query).all()
    merged_ids = {r.merged_into_id for r, _ in rows if r.merged_into_id}
    names = dict(session.execute(select(Record.id,
                                        Record.slug).where(Record.id.in_(merged_ids))).all()) if merged_ids else {}
    return [record_summary(record, key, names.get(record.merged_into_id) if record.merged_into_id else None)
            for record, key in rows]


def all_known_slugs(session: Session) -> set[str]:
    """Every slug any record in the store has ever had."""
    return set(session.scalars(select(SlugAlias.slug)))


def find_records(session: Session, slug: str, repo: str | None = None) -> list[tuple[Record, str]]:
    """Records answering to `slug` (current name first, then former names), per repository."""
    query = (
        select(Record, Repo.full_name).join(Repo, Repo.id == Record.repo_id)
        .join(SlugAlias, SlugAlias.record_id == Record.id)
        .where(SlugAlias.slug == slug)
    )
    if repo:
        query = query.where(Repo.full_name == repo)
    return list(session.execute(query).all())


def record_detail(session: Session, record: Record, full_name: str) -> dict:
    revisions = session.scalars(
        select(Revision).where(Revision.record_id == record.id).order_by(Revision.committed_at, Revision.id)
    ).all()
    latest = next((r for r in reversed(revisions) if r.content is not None), None)
    merged_into = session.get_one(Record, record.merged_into_id).slug if record.merged_into_id else None
    detail = record_summary(record, full_name, merged_into)
    detail["findings"] = latest.findings if latest else []
    detail["derived"] = dict((latest.facts or {}).get("derived", {})) if latest else {}
    detail["host"] = (latest.facts or {}).get("host") if latest else None
    detail["aliases"] = sorted(session.scalars(select(SlugAlias.slug).where(SlugAlias.record_id == record.id)))
    detail["history"] = [
        {
            "commit": r.commit_sha,
            "change": r.change,
            "path": r.path,
            "author": r.author_name,
            "email": r.author_email,
            "date": r.committed_at.isoformat(),
            "content_hash": r.content_hash,
            "errors": sum(1 for f in r.findings if f.get("severity") == "error"),
        }
        for r in revisions
    ]
    return detail
