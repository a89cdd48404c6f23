"""Cached verdicts and people's overrides of pairs, in the store."""
from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from bot.adapters.store.engine import Database
from bot.adapters.store.models import Record, Repo, Revision
from bot.adapters.store.service_models import DedupVerdict, PairOverride, ReportAudit
from bot.core.dedup.verdicts import Verdict


class VerdictCache:
    def __init__(self, db: Database) -> None:
        self.db = db

    def get(self, new_hash: str, old_hash: str, reviewer: str, prompt_version: str) -> Verdict | None:
        with self.db.session() as session:
            row = session.scalar(select(DedupVerdict).where(
                DedupVerdict.new_hash == new_hash, DedupVerdict.old_hash == old_hash,
                DedupVerdict.reviewer == reviewer, DedupVerdict.prompt_version == prompt_version))
            if row is None:
                return None
            return Verdict(row.kind, row.confidence, tuple(row.reasons), row.merged_report, row.reviewer,
                           row.prompt_version, dict(row.usage), tuple(row.merge_problems))

    def put(self, new_hash: str, old_hash: str, new_slug: str, old_slug: str, verdict: Verdict) -> None:
        try:
            with self.db.session() as session:
                session.add(DedupVerdict(
                    new_hash=new_hash, old_hash=old_hash, reviewer=verdict.reviewer,
                    prompt_version=verdict.prompt_version, new_slug=new_slug, old_slug=old_slug, kind=verdict.kind,
                    confidence=verdict.confidence, reasons=list(verdict.reasons), merged_report=verdict.merged_report,
                    merge_problems=list(verdict.merge_problems), usage=dict(verdict.usage),
                    created_at=datetime.now(timezone.utc)))
        except IntegrityError:
            pass  # another worker cached the same pair first; both computed the same question

    def token_totals(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        with self.db.session() as session:
            for usage in session.scalars(select(DedupVerdict.usage)):
                for key, value in (usage or {}).items():
                    totals[key] = totals.get(key, 0) + int(value or 0)
        return totals


def _ordered(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def remember_not_duplicate(db: Database, repo_key: str, a: str, b: str, actor: str) -> None:
    slug_a, slug_b = _ordered(a, b)
    with db.session() as session:
        exists = session.scalar(select(PairOverride.id).where(
            PairOverride.repo_key == repo_key, PairOverride.slug_a == slug_a, PairOverride.slug_b == slug_b))
        if exists is None:
            session.add(PairOverride(repo_key=repo_key, slug_a=slug_a, slug_b=slug_b, kind="not-duplicate",
                                     actor=actor, at=datetime.now(timezone.utc)))


def not_duplicates(db: Database, repo_key: str) -> set[frozenset[str]]:
    with db.session() as session:
        rows = session.execute(select(PairOverride.slug_a, PairOverride.slug_b).where(
            PairOverride.repo_key == repo_key, PairOverride.kind == "not-duplicate")).all()
    return {frozenset(row) for row in rows}


def audited(db: Database, content_hash: str, reviewer: str, prompt_version: str) -> bool:
    with db.session() as session:
        return session.scalar(select(ReportAudit.id).where(
            ReportAudit.content_hash == content_hash, ReportAudit.reviewer == reviewer,
            ReportAudit.prompt_version == prompt_version)) is not None


def save_audit(db: Database, repo_key: str, slug: str, content_hash: str, prompt_version: str, result) -> None:
    """Keep the audit, and make its findings the record's audit findings (they join the lint findings)."""
    with db.session() as session:
        try:
            with session.begin_nested():
                session.add(ReportAudit(content_hash=content_hash, reviewer=result.reviewer,
                                        prompt_version=prompt_version, findings=[f.as_dict() for f in result.findings],
                                        not_checked=list(result.not_checked), usage=dict(result.usage or {}),
                                        created_at=datetime.now(timezone.utc)))
        except IntegrityError:
            return  # audited meanwhile by another worker
        record = session.scalar(select(Record).join(Repo, Repo.id == Record.repo_id)
                                .where(Repo.key == repo_key, Record.slug == slug))
        if record is None:
            return
        revision = session.scalar(select(Revision).where(Revision.record_id == record.id,
                                                         Revision.content.is_not(None)).order_by(Revision.id.desc()))
        if revision is None or revision.content_hash != content_hash:
            return
        kept = [f for f in revision.findings if not f["rule"].startswith("audit-")]
        revision.findings = kept + [f.as_dict() for f in result.findings]
        record.errors = sum(1 for f in revision.findings if f["severity"] == "error")
        record.warnings = sum(1 for f in revision.findings if f["severity"] == "warning")
