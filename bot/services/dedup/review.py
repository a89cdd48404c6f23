"""Dedup: retrieval picks candidates for a report, a reviewer judges each pair, verdicts are cached."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from bot.core.dedup.retrieval import Candidate, RetrievalIndex
from bot.core.dedup.similarity import features
from bot.core.dedup.verdicts import PROMPT_VERSION, Verdict
from bot.core.reports.records import PerfIssue

# Below this combined score a candidate is not worth a reviewer's time.
MIN_SCORE = 0.15
# From this many unjudged pairs on, a reviewer that can batch (the Message Batches API) gets them at once.
BATCH_MIN = 20


class Reviewer(Protocol):
    name: str

    def review(self, new: PerfIssue, old: PerfIssue, scores: Candidate) -> Verdict: ...


class Cache(Protocol):
    def get(self, new_hash: str, old_hash: str, reviewer: str, prompt_version: str) -> Verdict | None: ...
    def put(self, new_hash: str, old_hash: str, new_slug: str, old_slug: str, verdict: Verdict) -> None: ...


@dataclass(frozen=True)
class PairReview:
    new: str
    old: str
    candidate: Candidate
    verdict: Verdict
    cached: bool = False
    overruled: bool = False
    # The offline reviewer's word on the same pair: an LLM's verdict alone never opens a branch that deletes a
    # report (its text may carry a report author's instructions); a writer's `/perf merge` does.
    seconded: bool = True

    @property
    def overlapping(self) -> bool:
        return self.verdict.overlapping and not self.overruled

    def as_dict(self) -> dict:
        c = self.candidate
        return {"new": self.new, "candidate": self.old, "score": c.score, "text": c.text, "shape": c.shape,
                "locations": c.locations, "retrieval_reasons": list(c.reasons), "cached": self.cached,
                "overruled": self.overruled, **self.verdict.as_dict()}


class ReadOnlyCache:
    """Verdicts looked up, never stored: for drafts, which are no records."""

    def __init__(self, cache: Cache) -> None:
        self.cache = cache

    def get(self, new_hash: str, old_hash: str, reviewer: str, prompt_version: str) -> Verdict | None:
        return self.cache.get(new_hash, old_hash, reviewer, prompt_version)

    def put(self, new_hash: str, old_hash: str, new_slug: str, old_slug: str, verdict: Verdict) -> None:
        return None


class Dedup:
    def __init__(self, existing: list[PerfIssue], reviewer: Reviewer, cache: Cache | None = None,
                 not_duplicates: set[frozenset[str]] | None = None, k: int = 5, *,
                 index: RetrievalIndex | None = None, records: Mapping[str, PerfIssue] | None = None) -> None:
        """Over `existing`, or over an index kept elsewhere (`index`) and the records it holds (`records`)."""
        self.records = records if records is not None else {r.slug: r for r in existing}
        self.index = index if index is not None else RetrievalIndex([features(r) for r in existing])
        self.reviewer = reviewer
        self.cache = cache
        self.not_duplicates = not_duplicates or set()
        self.k = k

    def review(self, report: PerfIssue) -> list[PairReview]:
        """Every candidate worth reviewing for `report`, with its verdict, best first."""
        reviews = []
        for candidate in self.index.candidates(features(report), self.k):
            if candidate.score < MIN_SCORE or candidate.slug == report.slug:
                continue
            old = self.records[candidate.slug]
            verdict, cached = self._verdict(report, old, candidate)
            overruled = frozenset({report.slug, old.slug}) in self.not_duplicates
            reviews.append(PairReview(report.slug, old.slug, candidate, verdict, cached, overruled))
        return reviews

    def review_all(self) -> list[PairReview]:
        """The whole backlog: each unordered pair that retrieval proposes, judged once (in a batch if large)."""
        pairs: dict[frozenset[str], tuple[PerfIssue, PerfIssue, Candidate]] = {}
        for record in self.records.values():
            for candidate in self.index.candidates(features(record), self.k):
                key = frozenset({record.slug, candidate.slug})
                if candidate.score >= MIN_SCORE and candidate.slug != record.slug and key not in pairs:
                    pairs[key] = (record, self.records[candidate.slug], candidate)
        verdicts: dict[frozenset[str], tuple[Verdict, bool]] = {}
        for key, (new, old, _) in pairs.items():
            hit = self._cached(new, old)
            if hit is not None:
                verdicts[key] = (hit, True)
        todo = [key for key in pairs if key not in verdicts]
        batch = getattr(self.reviewer, "review_many", None)
        if batch is not None and len(todo) >= BATCH_MIN:
            for key, verdict in zip(todo, batch([pairs[key] for key in todo]), strict=False):
                self._remember(pairs[key][0], pairs[key][1], verdict)
                verdicts[key] = (verdict, False)
        reviews = []
        for key, (new, old, candidate) in pairs.items():
            verdict, was_cached = verdicts.get(key) or self._verdict(new, old, candidate)
            reviews.append(PairReview(new.slug, old.slug, candidate, verdict, was_cached,
                                      key in self.not_duplicates))
        return reviews

    def _cached(self, new: PerfIssue, old: PerfIssue) -> Verdict | None:
        if self.cache is None:
            return None
        return self.cache.get(new.content_hash, old.content_hash, self.reviewer.name, PROMPT_VERSION)

    def _remember(self, new: PerfIssue, old: PerfIssue, verdict: Verdict) -> None:
        if self.cache is not None and verdict.kind != "needs-people":  # a failed review is asked again next time
            self.cache.put(new.content_hash, old.content_hash, new.slug, old.slug, verdict)

    def _verdict(self, new: PerfIssue, old: PerfIssue, candidate: Candidate) -> tuple[Verdict, bool]:
        hit = self._cached(new, old)
        if hit is not None:
            return hit, True
        verdict = self.reviewer.review(new, old, candidate)
        self._remember(new, old, verdict)
        return verdict, False
