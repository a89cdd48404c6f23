"""Cached answers of the agent reviewer about the facts of one report content, in the store."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from bot.adapters.store.engine import Database
from bot.adapters.store.models import FactAnswer


@dataclass(frozen=True)
class CachedFacts:
    asked: tuple[str, ...]
    answer: dict | None
    problem: str = ""
    usage: dict[str, int] = field(default_factory=dict)


class FactAnswerCache:
    """Keyed by content hash + model + prompt version: the same question is never asked twice."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def get(self, content_hash: str, model: str, prompt_version: str) -> CachedFacts | None:
        with self.db.session() as session:
            row = session.scalar(select(FactAnswer).where(
                FactAnswer.content_hash == content_hash, FactAnswer.model == model,
                FactAnswer.prompt_version == prompt_version))
            if row is None:
                return None
            return CachedFacts(tuple(row.asked), row.answer, row.problem, dict(row.usage))

    def put(self, content_hash: str, model: str, prompt_version: str, slug: str, reading: CachedFacts) -> None:
        try:
            with self.db.session() as session:
                session.add(FactAnswer(content_hash=content_hash, model=model, prompt_version=prompt_version,
                                       slug=slug, asked=list(reading.asked), answer=reading.answer,
                                       problem=reading.problem, usage=dict(reading.usage),
                                       created_at=datetime.now(timezone.utc)))
        except IntegrityError:
            pass  # another worker asked the same question first; its answer stands

    def token_totals(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        with self.db.session() as session:
            for usage in session.scalars(select(FactAnswer.usage)):
                for key, value in (usage or {}).items():
                    totals[key] = totals.get(key, 0) + int(value or 0)
        return totals
