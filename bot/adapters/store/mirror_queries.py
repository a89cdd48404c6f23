"""What the mirror reads and writes in the store: record views with their issue state, and that state."""
from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, or_, select
from sqlalchemy.orm import aliased

from bot.adapters.store.engine import Database
from bot.adapters.store.lead.standing_queries import repo_standings
from bot.adapters.store.models import Record, Repo, Revision
from bot.adapters.store.reviews.dedup_store import pair_verdicts
from bot.adapters.store.service_models import Fix, IssueMirror, LlmAnswer, PairOverride
from bot.core.tracker.issue_view import RecordView


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


def load_mirror_rows(db: Database, full_name: str, slugs: set[str] | None) -> list[MirrorRow]:
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
        .where(Repo.full_name == full_name)
    )
    if slugs is not None:
        # The records asked for, plus live ones that never reached their issue (an earlier pass failed).
        never_mirrored = IssueMirror.record_id.is_(None) & Record.state.in_(("open", "closed"))
        query = query.where(Record.slug.in_(sorted(slugs)) | never_mirrored if slugs else never_mirrored)
    rows = []
    standings = repo_standings(db, full_name)  # what every view says of each record, its issue too
    with db.session() as session:
        results = session.execute(query).all()
        dedup = _open_overlaps(session, full_name, {r.content_hash for r, *_ in results if r.content_hash})
        fixes = dict(session.execute(select(Fix.slug, func.count()).where(
            Fix.full_name == full_name, Fix.state.in_(("open", "merged"))).group_by(Fix.slug)).all())
        for record, mirror, revision, target_slug, target_number in results:
            view = RecordView(
                slug=record.slug, title=record.title, path=record.path, track=record.track,
                backend=record.backend, threads=record.threads, ratio=record.ratio, fix=record.fix,
                state=record.state, errors=record.errors, warnings=record.warnings,
                merged_into=target_slug, merged_into_number=target_number,
                dedup=dedup.get(record.content_hash) if record.content_hash else None, verdict=record.verdict,
                reproduced=record.reproduced,
                attached_fixes=fixes.get(record.slug, 0), standing=standings.get(record.slug),
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


_STRENGTH = {"duplicate": 3, "subsumes": 2, "overlaps": 1}


def _open_overlaps(session, full_name: str, hashes: set[str]) -> dict[str, str]:
    """Content hash -> the strongest overlap verdict with a partner that is still live and not overruled."""
    if not hashes:
        return {}
    live = set(session.scalars(select(Record.slug).join(Repo, Repo.id == Record.repo_id)
                               .where(Repo.full_name == full_name, Record.state.in_(("open", "closed")))))
    overruled = {frozenset(pair) for pair in session.execute(
        select(PairOverride.slug_a, PairOverride.slug_b).where(PairOverride.full_name == full_name))}
    verdicts = pair_verdicts(session, or_(LlmAnswer.content_hash.in_(sorted(hashes)),
                                          LlmAnswer.partner_hash.in_(sorted(hashes))), kinds=tuple(_STRENGTH))
    found: dict[str, str] = {}
    for pair in verdicts:
        kind = pair.verdict.kind
        if frozenset({pair.new_slug, pair.old_slug}) in overruled or not {pair.new_slug, pair.old_slug} <= live:
            continue
        for content in (pair.new_hash, pair.old_hash):
            if content in hashes and _STRENGTH[kind] > _STRENGTH.get(found.get(content, ""), 0):
                found[content] = kind
    return found


def save_mirror(db: Database, record_id: int, **values) -> None:
    with db.session() as session:
        mirror = session.get(IssueMirror, record_id)
        if mirror is None:
            mirror = IssueMirror(record_id=record_id, number=values["number"])
            session.add(mirror)
        for name, value in values.items():
            setattr(mirror, name, value)


def record_by_issue(db: Database, full_name: str, number: int) -> tuple[int, str, str] | None:
    """(record id, slug, state) of the record mirrored to issue `number`, if any."""
    with db.session() as session:
        row = session.execute(
            select(Record.id, Record.slug, Record.state).join(IssueMirror, IssueMirror.record_id == Record.id)
            .join(Repo, Repo.id == Record.repo_id).where(Repo.full_name == full_name, IssueMirror.number == number)
        ).first()
    if row is None:
        return None
    record_id, slug, state = row
    return record_id, slug, state


def live_reports(db: Database, full_name: str) -> list:
    """The parsed latest content of every live record (open, or closed by a person) of a repository."""
    from bot.core.reports.parse import parse

    latest = (select(Revision.record_id, func.max(Revision.id).label("rev_id"))
              .where(Revision.content.is_not(None)).group_by(Revision.record_id).subquery())
    query = (select(Record.path, Revision.content).join(Repo, Repo.id == Record.repo_id)
             .join(latest, latest.c.record_id == Record.id).join(Revision, Revision.id == latest.c.rev_id)
             .where(Repo.full_name == full_name, Record.state.in_(("open", "closed"))).order_by(Record.slug))
    with db.session() as session:
        rows = session.execute(query).all()
    parsed = (parse(path, content.encode("utf-8")).record for path, content in rows if content is not None)
    return [record for record in parsed if record is not None]


def issue_numbers(db: Database, full_name: str) -> dict[str, int]:
    with db.session() as session:
        rows = session.execute(select(Record.slug, IssueMirror.number).join(IssueMirror,
                                                                            IssueMirror.record_id == Record.id)
                               .join(Repo, Repo.id == Record.repo_id).where(Repo.full_name == full_name)).all()
    return dict(rows)


def flagged_partners(db: Database, full_name: str, slug: str) -> set[str]:
    """The live records an overlap verdict pairs with `slug` (either side), for a person to overrule."""
    with db.session() as session:
        record = session.scalar(select(Record).join(Repo, Repo.id == Record.repo_id)
                                .where(Repo.full_name == full_name, Record.slug == slug))
        if record is None or not record.content_hash:
            return set()
        pairs = pair_verdicts(session, or_(LlmAnswer.content_hash == record.content_hash,
                                           LlmAnswer.partner_hash == record.content_hash), kinds=tuple(_STRENGTH))
    return {p.old_slug if p.new_slug == slug else p.new_slug for p in pairs} - {slug}
