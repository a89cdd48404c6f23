"""The one cache of LLM answers: a question is keyed by its kind, the content it asks about, the model and prompt."""
from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from bot.adapters.store.engine import Database
from bot.adapters.store.service_models import LlmAnswer

KINDS = ("dedup", "audit", "facts")  # also the `source` label of the /metrics token counter


class LlmAnswerCache:
    """The answers of one kind; the per-kind wrappers turn their typed answers into `answer` JSON and back."""

    def __init__(self, db: Database, kind: str) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown kind of LLM answer {kind!r}; one of {', '.join(KINDS)}")
        self.db, self.kind = db, kind
        dialect = postgresql if db.engine.dialect.name == "postgresql" else sqlite
        # DO NOTHING rather than an IntegrityError: two workers asking the same question is no failure, and a
        # caller's transaction (an audit stored with the findings it changes) stays usable.
        self._insert = dialect.insert(LlmAnswer).on_conflict_do_nothing().returning(LlmAnswer.id)

    def get(self, content_hash: str, model: str, prompt_version: str, partner_hash: str = "") -> LlmAnswer | None:
        with self.db.session() as session:
            return session.scalar(select(LlmAnswer).where(
                LlmAnswer.kind == self.kind, LlmAnswer.content_hash == content_hash,
                LlmAnswer.partner_hash == partner_hash, LlmAnswer.model == model,
                LlmAnswer.prompt_version == prompt_version))

    def put(self, content_hash: str, model: str, prompt_version: str, answer: dict, usage: dict | None, *,
            partner_hash: str = "", slug: str = "", partner_slug: str = "", session: Session | None = None) -> bool:
        """Store an answer (in `session`'s transaction when given); False when the question was answered before,
        whose answer then stands."""
        row = dict(kind=self.kind, content_hash=content_hash, partner_hash=partner_hash, model=model,
                   prompt_version=prompt_version, slug=slug, partner_slug=partner_slug, answer=answer,
                   usage=dict(usage or {}), created_at=datetime.now(UTC))
        if session is None:
            with self.db.session() as own:
                return own.execute(self._insert, row).first() is not None
        return session.execute(self._insert, row).first() is not None


def token_totals(db: Database) -> dict[str, dict[str, int]]:
    """kind -> usage key -> tokens, summed over every cached answer."""
    totals: dict[str, dict[str, int]] = {}
    with db.session() as session:
        for kind, usage in session.execute(select(LlmAnswer.kind, LlmAnswer.usage)):
            sums = totals.setdefault(kind, {})
            for key, value in (usage or {}).items():
                sums[key] = sums.get(key, 0) + int(value or 0)
    return totals


def asked_since(db: Database, since: datetime) -> int:
    """Answers an LLM gave (every reviewer but the offline one) stored since `since`: the hour's budget spent."""
    from sqlalchemy import func

    with db.session() as session:
        return int(session.scalar(select(func.count()).select_from(LlmAnswer).where(
            LlmAnswer.created_at >= since, LlmAnswer.model != "offline")) or 0)
