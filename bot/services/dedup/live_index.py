"""A long-lived retrieval index per repository, brought in step with the store's live records before each use.

A push changes a few records; rebuilding the index from every live record (parse, lex, hash) on each push
cost seconds at 10,000 records and a minute at 100,000. Here each use asks the store for the live slugs and
their content hashes (one narrow query), and only records that appeared, changed or went away are added,
replaced or removed. Asking the store, not trusting what this process synced, keeps the index right when
another worker synced the repository or a person merged or deleted records. Features are stored by content
(retrieval_features), so a new process builds its index without parsing or lexing a report again.
"""
from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from bot.adapters.store.engine import Database
from bot.adapters.store.reviews.retrieval_store import (
    features_version,
    live_features,
    live_hashes,
    live_reports_named,
    store_features,
    stored_features,
)
from bot.core.dedup.retrieval import RetrievalIndex
from bot.core.dedup.similarity import Features, features
from bot.core.reports.records import PerfIssue, ReadingOptions


@dataclass
class Step:
    """What bringing an index up to date did, for logs and tests."""

    built: int = 0
    added: int = 0
    replaced: int = 0
    removed: int = 0
    parsed: int = 0  # records whose features were computed (the rest came from the store)


@dataclass
class _RepoIndex:
    index: RetrievalIndex = field(default_factory=RetrievalIndex)
    hashes: dict[str, str] = field(default_factory=dict)  # slug -> content hash the index holds
    lock: threading.Lock = field(default_factory=threading.Lock)
    steps: deque[Step] = field(default_factory=lambda: deque(maxlen=50))  # the latest, for logs and tests
    reading: ReadingOptions = ReadingOptions()  # how the indexed reports were read


class StoredReports(Mapping):
    """The live records by slug, parsed from the store only when a reviewer needs one."""

    def __init__(self, db: Database, full_name: str, hashes: dict[str, str],
                 reading: ReadingOptions = ReadingOptions()) -> None:
        self.db, self.full_name, self.hashes, self.reading = db, full_name, hashes, reading
        self._parsed: dict[str, PerfIssue] = {}

    def __getitem__(self, slug: str) -> PerfIssue:
        if slug not in self._parsed:
            found = live_reports_named(self.db, self.full_name, {slug}, self.reading)
            if not found:
                raise KeyError(slug)
            self._parsed[slug] = found[0]
        return self._parsed[slug]

    def __iter__(self) -> Iterator[str]:
        return iter(self.hashes)

    def __len__(self) -> int:
        return len(self.hashes)


class LiveIndexes:
    def __init__(self) -> None:
        self._repos: dict[str, _RepoIndex] = {}
        self._lock = threading.Lock()

    def current(self, db: Database, full_name: str,
                reading: ReadingOptions = ReadingOptions()) -> tuple[RetrievalIndex, StoredReports, Step]:
        """The repository's index as of the store now, the live records it indexes, and what updating it did;
        `reading` is how the repository reads its reports (an index read another way is built again)."""
        with self._lock:
            state = self._repos.get(full_name)
            if state is None:  # not setdefault: an empty index costs 40 ms to make (LSH parameters), every call
                state = self._repos[full_name] = _RepoIndex(reading=reading)
            if state.reading != reading:
                state = self._repos[full_name] = _RepoIndex(reading=reading, steps=state.steps)
        with state.lock:
            step = self._update(db, full_name, state)
            state.steps.append(step)
            return state.index, StoredReports(db, full_name, dict(state.hashes), reading), step

    def steps(self, full_name: str) -> list[Step]:
        return list(self._repos[full_name].steps) if full_name in self._repos else []

    @staticmethod
    def _update(db: Database, full_name: str, state: _RepoIndex) -> Step:
        live = live_hashes(db, full_name)
        step = Step()
        for slug in state.hashes.keys() - live.keys():
            state.index.remove(slug)
            del state.hashes[slug]
            step.removed += 1
        changed = {slug for slug, _ in live.items() - state.hashes.items()}  # new or other content
        if not changed:
            return step
        docs = LiveIndexes._features(db, full_name, {slug: live[slug] for slug in changed}, step,
                                     whole_repo=not state.hashes, reading=state.reading)
        if not state.hashes:  # the first use in this process: one batch build
            state.index = RetrievalIndex(docs)
            step.built = len(docs)
        else:
            for doc in docs:
                step.replaced += doc.slug in state.index
                step.added += doc.slug not in state.index
                state.index.add(doc)
        for doc in docs:
            # The hash the store named: if the record was synced again meanwhile, the next use reads it again.
            state.hashes[doc.slug] = live[doc.slug]
        for slug in changed - {d.slug for d in docs}:  # live but unreadable now: not a candidate
            if slug in state.index:
                state.index.remove(slug)
                step.removed += 1
            state.hashes.pop(slug, None)
        return step

    @staticmethod
    def _features(db: Database, full_name: str, wanted: dict[str, str], step: Step, whole_repo: bool,
                  reading: ReadingOptions) -> list[Features]:
        """Features of each slug's content: stored ones as they are, the rest parsed, computed and stored."""
        version = features_version(reading)
        if whole_repo:  # one join instead of looking up every content hash
            by_slug = {slug: found for slug, found in live_features(db, full_name, version).items() if slug in wanted}
        else:
            stored = stored_features(db, set(wanted.values()), version)
            by_slug = {slug: stored[content] for slug, content in wanted.items() if content in stored}
        docs = [Features(slug, *found) for slug, found in by_slug.items()]
        missing = wanted.keys() - by_slug.keys()
        reports = live_reports_named(db, full_name, missing, reading) if missing else []
        computed = [features(r) for r in reports]
        # Each under the hash of the content actually read, which is newer if the record was synced meanwhile.
        store_features(db, {r.content_hash: doc for r, doc in zip(reports, computed, strict=True)}, version)
        step.parsed = len(computed)
        return docs + computed
