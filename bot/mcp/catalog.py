"""What the MCP server reads, kept warm between calls: the store's live records of one repository, their
retrieval index, and how the repository reads reports.

A server answers many calls, so it pays once for what `perfbot dedup` pays per run: the index is the
service's long-lived one (services/dedup/live_index.py), brought in step with the store by one narrow
query per call, and the record summaries are read again only when a record's content changed.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bot.adapters.git import GitRepository
from bot.adapters.store.engine import Database
from bot.adapters.store.lead.standing_queries import repo_standings, standings_version
from bot.adapters.store.queries import RecordFilter, all_known_slugs, list_records
from bot.core.dedup.retrieval import RetrievalIndex
from bot.core.dedup.similarity import words_of
from bot.core.lead.campaign import rank_key
from bot.core.lead.standing import Standing
from bot.core.reports.records import ReadingOptions
from bot.services.bench.bench_inputs import reading_at
from bot.services.dedup.live_index import LiveIndexes, StoredReports

LIVE = ("open", "closed")


@dataclass
class Catalog:
    """One repository as the store holds it (`full_name`), read the way its `.perfbot.toml` reads reports."""

    db: Database
    full_name: str
    reading: ReadingOptions
    history: frozenset[str]  # every slug the repository's git history has had: `supersedes` is judged on it
    indexes: LiveIndexes = field(default_factory=LiveIndexes)
    live: int = 0  # live records as of the latest call
    _summaries: dict[str, dict[str, Any]] = field(default_factory=dict)
    _hashes: dict[str, str] = field(default_factory=dict)
    _standings: dict[str, Standing] = field(default_factory=dict)
    _version: tuple = ()
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def open(cls, db: Database, repo_path: str | Path) -> Catalog:
        repo = GitRepository(repo_path)
        try:
            reading = reading_at(repo, repo.resolve(repo.default_ref()))
            return cls(db, repo.full_name, reading, repo.slugs_ever())
        finally:
            repo.close()

    def current(self) -> tuple[RetrievalIndex, StoredReports, dict[str, dict[str, Any]]]:
        """The index, the live records and their summaries by slug, as of the store now."""
        index, records, _ = self.indexes.current(self.db, self.full_name, self.reading)
        with self._lock:
            hashes = records.hashes  # what the store said just now: no second query
            if hashes != self._hashes:  # a sync changed content: the summaries (title, claim, path) with it
                with self.db.session() as session:
                    rows = list_records(session, RecordFilter(states=LIVE, repo=self.full_name))
                self._summaries, self._hashes = {row["slug"]: row for row in rows}, hashes
            self.live = len(self._summaries)
            return index, records, self._summaries

    def standings(self) -> dict[str, Standing]:
        """slug -> the record's standing (core/lead/standing.py), computed again only when a record, a run, a
        fix or a bisection changed since the last call."""
        self.current()  # brings the content hashes in step with the store
        version = (tuple(sorted(self._hashes.items())), standings_version(self.db, self.full_name))
        with self._lock:
            if version != self._version:
                self._standings, self._version = repo_standings(self.db, self.full_name), version
            return self._standings

    def known_slugs(self) -> frozenset[str]:
        """Slugs history has seen, in git and in the store (merged and deleted records included)."""
        with self.db.session() as session:
            return self.history | all_known_slugs(session)

    def search(self, query: str, track: str | None, backend: str | None, limit: int) -> list[tuple[dict, float]]:
        """Live records matching the filters, best BM25 match on title, context and root cause first; with no
        words, the campaign's ranking (measured figures only, worst first; records without one after them)."""
        index, _, summaries = self.current()

        def wanted(row: dict[str, Any] | None) -> bool:
            return row is not None and track in (None, row["track"]) and backend in (None, row["backend"])

        words = words_of(query)
        if not words:
            standings = self.standings()
            rows = [row for row in summaries.values() if wanted(row) and row["slug"] in standings]
            rows.sort(key=lambda row: (standings[row["slug"]].ranked_figure is None, rank_key(standings[row["slug"]])))
            return [(row, 0.0) for row in rows[:limit]]
        scores = index.words.scores(words)
        slots = np.flatnonzero(scores > 0)
        slots = slots[np.argsort(-scores[slots], kind="stable")]  # best first; filters then take the first few
        hits: list[tuple[dict[str, Any], float]] = []
        for slot in slots.tolist():
            slug = index.slugs[slot]
            row = summaries.get(slug) if slug is not None else None
            if row is not None and wanted(row):
                hits.append((row, float(scores[slot])))
                if len(hits) == limit:
                    break
        return hits
