"""Dedup's state in the store: pair verdicts and audits (kinds of the one LLM answer cache), people's overrides."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from bot.adapters.store.engine import Database
from bot.adapters.store.models import Record, Repo, Revision
from bot.adapters.store.reviews.llm_cache import LlmAnswerCache
from bot.adapters.store.service_models import LlmAnswer, PairOverride
from bot.core.dedup.verdicts import Verdict


def _verdict(row: LlmAnswer) -> Verdict:
    answer = row.answer
    return Verdict(answer["verdict"], float(answer["confidence"]), tuple(answer.get("reasons") or ()),
                   answer.get("merged_report"), row.model, row.prompt_version, dict(row.usage or {}),
                   tuple(answer.get("merge_problems") or ()))


class VerdictCache:
    """Pair verdicts, keyed by both contents + reviewer + prompt version, in the one LLM answer cache."""

    def __init__(self, db: Database) -> None:
        self.answers = LlmAnswerCache(db, "dedup")

    def get(self, new_hash: str, old_hash: str, reviewer: str, prompt_version: str) -> Verdict | None:
        row = self.answers.get(new_hash, reviewer, prompt_version, partner_hash=old_hash)
        return _verdict(row) if row is not None else None

    def put(self, new_hash: str, old_hash: str, new_slug: str, old_slug: str, verdict: Verdict) -> None:
        answer = {"verdict": verdict.kind, "confidence": verdict.confidence, "reasons": list(verdict.reasons),
                  "merged_report": verdict.merged_report, "merge_problems": list(verdict.merge_problems)}
        self.answers.put(new_hash, verdict.reviewer, verdict.prompt_version, answer, verdict.usage,
                         partner_hash=old_hash, slug=new_slug, partner_slug=old_slug)


@dataclass(frozen=True)
class PairVerdict:
    """A cached verdict as pages and digests read it: the two contents, their names when judged, and when."""

    new_hash: str
    old_hash: str
    new_slug: str
    old_slug: str
    verdict: Verdict
    at: datetime


def pair_verdicts(session: Session, *where, kinds: tuple[str, ...] = (), newest_first: bool = False,
                  limit: int | None = None) -> list[PairVerdict]:
    """Cached verdicts matching `where` (conditions on LlmAnswer: `content_hash`/`slug` are the new side,
    `partner_hash`/`partner_slug` the old) and of one of `kinds` if given, oldest first unless `newest_first`."""
    if kinds:  # in the query: a first mirror asks about every record, and most verdicts are "distinct"
        where += (LlmAnswer.answer["verdict"].as_string().in_(kinds),)
    order = (LlmAnswer.created_at.desc(), LlmAnswer.id.desc()) if newest_first else (LlmAnswer.id,)
    rows = session.scalars(select(LlmAnswer).where(LlmAnswer.kind == "dedup", *where).order_by(*order).limit(limit))
    return [PairVerdict(row.content_hash, row.partner_hash, row.slug, row.partner_slug, _verdict(row), row.created_at)
            for row in rows]


def _ordered(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def remember_not_duplicate(db: Database, full_name: str, a: str, b: str, actor: str) -> None:
    slug_a, slug_b = _ordered(a, b)
    with db.session() as session:
        exists = session.scalar(select(PairOverride.id).where(
            PairOverride.full_name == full_name, PairOverride.slug_a == slug_a, PairOverride.slug_b == slug_b))
        if exists is None:
            session.add(PairOverride(full_name=full_name, slug_a=slug_a, slug_b=slug_b, kind="not-duplicate",
                                     actor=actor, at=datetime.now(UTC)))


def not_duplicates(db: Database, full_name: str) -> set[frozenset[str]]:
    with db.session() as session:
        rows = session.execute(select(PairOverride.slug_a, PairOverride.slug_b).where(
            PairOverride.full_name == full_name, PairOverride.kind == "not-duplicate")).all()
    return {frozenset(row) for row in rows}


def audited(db: Database, content_hash: str, reviewer: str, prompt_version: str) -> bool:
    return LlmAnswerCache(db, "audit").get(content_hash, reviewer, prompt_version) is not None


def save_audit(db: Database, full_name: str, slug: str, content_hash: str, prompt_version: str, result) -> None:
    """Keep the audit, and make its findings the record's audit findings (they join the lint findings)."""
    answer = {"findings": [f.as_dict() for f in result.findings], "not_checked": list(result.not_checked)}
    with db.session() as session:
        if not LlmAnswerCache(db, "audit").put(content_hash, result.reviewer, prompt_version, answer, result.usage,
                                               slug=slug, session=session):
            return  # audited meanwhile by another worker
        record = session.scalar(select(Record).join(Repo, Repo.id == Record.repo_id)
                                .where(Repo.full_name == full_name, Record.slug == slug))
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
