"""A long-lived retrieval index per repository, brought in step with the store's live records before each use.

A push changes a few records; rebuilding the index from every live record (parse, lex, hash) on each push
cost seconds at 10,000 records and a minute at 100,000. Here each use asks the store for the live slugs and
their content hashes (one narrow query), and only records that appeared, changed or went away are parsed,
added, replaced or removed. Asking the store, not trusting what this process synced, keeps the index right
when another worker synced the repository or a person merged or deleted records.
"""
from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from bot.adapters.store.engine import Database
from bot.adapters.store.retrieval_store import live_hashes, live_reports_named
from bot.core.records import PerfIssue
from bot.core.retrieval import RetrievalIndex
from bot.core.similarity import features


@dataclass
class Step:
    """What bringing an index up to date did, for logs and tests."""

    built: int = 0
    added: int = 0
    replaced: int = 0
    removed: int = 0


@dataclass
class _RepoIndex:
    index: RetrievalIndex = field(default_factory=RetrievalIndex)
    hashes: dict[str, str] = field(default_factory=dict)  # slug -> content hash the index holds
    lock: threading.Lock = field(default_factory=threading.Lock)
    steps: list[Step] = field(default_factory=list)


class StoredReports(Mapping):
    """The live records by slug, parsed from the store only when a reviewer needs one."""

    def __init__(self, db: Database, repo_key: str, hashes: dict[str, str]) -> None:
        self.db, self.repo_key, self.hashes = db, repo_key, hashes
        self._parsed: dict[str, PerfIssue] = {}

    def __getitem__(self, slug: str) -> PerfIssue:
        if slug not in self._parsed:
            found = live_reports_named(self.db, self.repo_key, {slug})
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

    def current(self, db: Database, repo_key: str) -> tuple[RetrievalIndex, StoredReports, Step]:
        """The repository's index as of the store now, the live records it indexes, and what updating it did."""
        with self._lock:
            state = self._repos.setdefault(repo_key, _RepoIndex())
        with state.lock:
            step = self._update(db, repo_key, state)
            state.steps.append(step)
            return state.index, StoredReports(db, repo_key, dict(state.hashes)), step

    def steps(self, repo_key: str) -> list[Step]:
        return list(self._repos[repo_key].steps) if repo_key in self._repos else []

    @staticmethod
    def _update(db: Database, repo_key: str, state: _RepoIndex) -> Step:
        live = live_hashes(db, repo_key)
        step = Step()
        for slug in state.hashes.keys() - live.keys():
            state.index.remove(slug)
            del state.hashes[slug]
            step.removed += 1
        changed = {slug for slug, content in live.items() if state.hashes.get(slug) != content}
        if not changed:
            return step
        records = live_reports_named(db, repo_key, changed)
        if not state.hashes:  # the first use in this process: one batch build
            state.index = RetrievalIndex([features(r) for r in records])
            step.built = len(records)
        else:
            for record in records:
                step.replaced += record.slug in state.index
                step.added += record.slug not in state.index
                state.index.add(features(record))
        for record in records:
            state.hashes[record.slug] = live[record.slug]
        for slug in changed - {r.slug for r in records}:  # live but unreadable now: not a candidate
            if slug in state.index:
                state.index.remove(slug)
                step.removed += 1
            state.hashes.pop(slug, None)
        return step
