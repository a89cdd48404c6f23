"""Facts the offline reading left open, asked of the agent reviewer once per report content and checked.

Only when an agent reviewer is configured and `missing_facts` is non-empty; the answer fills only those
facts, only where its quote stands on the cited line (bot.core.reports.agent_facts), and marks them source "agent".
"""
from __future__ import annotations

import dataclasses
import logging
import time
from dataclasses import dataclass, field

from bot.adapters.store.engine import Database
from bot.adapters.store.reviews.llm_cache import LlmAnswerCache
from bot.core.reports.agent_facts import missing_facts, with_agent_facts
from bot.core.reports.records import ParseResult
from bot.errors import TransientError

log = logging.getLogger("perfbot.services")

# After the API fails past the SDK's retries, a sync of many reports should not wait out every one of them.
PAUSE_AFTER_OUTAGE = 300.0


@dataclass(frozen=True)
class CachedFacts:
    """The agent's answer about one content, as the answer cache keeps it."""

    asked: tuple[str, ...]
    answer: dict | None  # None: no answer fit the schema (see `problem`)
    problem: str = ""
    usage: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Reviewed:
    """A parse result with the agent's grounded facts in it, and what became of the rest of its answer."""

    result: ParseResult
    agent_facts: tuple[str, ...] = ()  # each filled fact as `record.explain` tells it: value, line, words
    refused: tuple[str, ...] = ()  # facts the agent gave that the report does not bear out
    problem: str = ""  # why there was no answer to use (none fit the schema, the API was down)
    asked: bool = False  # a request was sent for this result (not read from the cache)

    def notes(self) -> list[str]:
        """One line each, for `perfbot lint` and the sync log."""
        return ([f"fact from the agent reviewer: {fact}" for fact in self.agent_facts]
                + [f"agent reviewer's fact refused: {why}" for why in self.refused]
                + ([f"agent reviewer gave no facts: {self.problem}"] if self.problem else []))


class FactReview:
    def __init__(self, reader, db: Database) -> None:
        # Anything with `model`, `facts_prompt_version` and `read_facts(record, text) -> FactReading`; the version
        # comes from the reader, not an import of fact_reader, so linting offline never loads the anthropic SDK.
        self.reader = reader
        self.cache = LlmAnswerCache(db, "facts")  # keyed by content hash + model + prompt version
        self._answers: dict[str, CachedFacts] = {}  # content hash -> answer, for this process
        self._paused_until = 0.0  # monotonic time until which an outage keeps us from asking

    def review(self, result: ParseResult, text: str) -> Reviewed:
        """`result` with the facts the agent read filled in: from this process's answers, the cache, or a request."""
        record = result.record
        if record is None or not missing_facts(record):
            return Reviewed(result)
        known, asked = self._known(record.content_hash), False
        if known is None:
            known, asked = self._ask(record, text), True
        if known.answer is None:
            return Reviewed(result, problem=known.problem, asked=asked)
        updated, refused = with_agent_facts(record, text, known.answer)
        filled = tuple(updated.explain(name) for name, source in updated.sources if source == "agent")
        return Reviewed(dataclasses.replace(result, record=updated), filled, refused, asked=asked)

    def _known(self, content_hash: str) -> CachedFacts | None:
        if content_hash not in self._answers:
            row = self.cache.get(content_hash, self.reader.model, self.reader.facts_prompt_version)
            if row is None:
                return None
            answer = row.answer
            self._answers[content_hash] = CachedFacts(tuple(answer["asked"]), answer["answer"], answer["problem"],
                                                      dict(row.usage))
        return self._answers[content_hash]

    def _ask(self, record, text: str) -> CachedFacts:
        # Offline findings stand whenever the API fails; such failures are neither cached nor remembered, so
        # the question is asked again later.
        if time.monotonic() < self._paused_until:
            return CachedFacts(missing_facts(record), None, "the agent reviewer was unavailable moments ago")
        try:
            reading = self.reader.read_facts(record, text)
        except TransientError as exc:
            log.warning("%s: agent reviewer unavailable for its facts: %s", record.slug, exc)
            self._paused_until = time.monotonic() + PAUSE_AFTER_OUTAGE
            return CachedFacts(missing_facts(record), None, f"the agent reviewer is unavailable ({exc})")
        known = CachedFacts(reading.asked, reading.answer, reading.problem, dict(reading.usage))
        if reading.final:
            answer = {"asked": list(known.asked), "answer": known.answer, "problem": known.problem}
            self.cache.put(record.content_hash, self.reader.model, self.reader.facts_prompt_version, answer,
                           known.usage, slug=record.slug)
            self._answers[record.content_hash] = known
        return known


def fact_review_for(reviewer, db: Database | None) -> FactReview | None:
    """The fact review when the reviewer is an agent and a store can hold its answers; None offline."""
    if db is None or not hasattr(reviewer, "read_facts"):
        return None
    return FactReview(reviewer, db)
