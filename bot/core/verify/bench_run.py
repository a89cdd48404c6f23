"""A bench run as every reader sees it: one frozen row, typed with the shared vocabulary.

The store (adapters/store/bench/bench_store.py) makes it; flows, views, templates and the CLI read its
attributes; `as_dict()` is its one JSON shape (`perfbot verify --format json`, `perfbot show`, MCP).
`progress`, `result` and `options` are JSON objects in the store, typed here (core/verify/run_parts.py, where
their keys are spelled once); the store parses them when it reads a row and writes them from these types.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bot.core.verify.noise import waiting_text
from bot.core.verify.run_parts import ActionsDispatch, Follower, RunOptions, RunProgress, RunResult
from bot.core.verify.vocabulary import Purpose, RunStatus, Test

__all__ = ["ActionsDispatch", "BenchRun", "Follower", "RunOptions", "RunProgress", "RunResult"]


@dataclass(frozen=True)
class BenchRun:
    id: int
    repo: str  # owner/name
    slug: str
    purpose: Purpose
    status: RunStatus
    head: str
    base: str | None = None  # a fix's base; None for a claim measured on one commit
    verdict: Test | None = None  # the interval test a finished run stored; None until then
    message: str = ""
    runner: str = ""
    host: str = ""
    pr: int | None = None
    requested_by: str = ""
    progress: RunProgress = field(default_factory=RunProgress)  # where a running run is
    result: RunResult = field(default_factory=RunResult)  # verify.Outcome as stored, or the samples so far
    options: RunOptions = field(default_factory=RunOptions)  # what a command asked (runner, samples) and more
    created: datetime | None = None
    started: datetime | None = None
    finished: datetime | None = None

    @property
    def at(self) -> str | None:
        """When it was queued, as ISO 8601 (what JSON carries)."""
        return self.created.isoformat() if self.created else None

    @property
    def done(self) -> bool:
        return self.status == RunStatus.DONE

    @property
    def measured(self) -> bool:
        """Did any side take a sample? A run that failed before one says nothing about the claim."""
        return bool(self.result.sides)

    @property
    def compares_base(self) -> bool:
        """A fix measured base against head (a fix without a base measures its head alone)."""
        return self.purpose == Purpose.FIX and bool(self.base)

    @property
    def runner_asked(self) -> str | None:
        """The runner a command named (`runner=`), None to let the report's backend choose."""
        return self.options.runner

    @property
    def noisy_tries(self) -> int:
        """How many times this run was measured again because its host was busy."""
        return self.options.noisy_tries

    @property
    def remeasure_due(self) -> bool:
        """A noisy verdict is shown and a measurement that replaces it is still to come."""
        return self.options.remeasure_at is not None

    @property
    def waiting(self) -> str:
        """'measured again after 10:42 UTC' while a re-measure is due, else ''."""
        return waiting_text(self.options.remeasure_at)

    @property
    def followers(self) -> list[Follower]:
        return list(self.options.answers)

    @property
    def actions(self) -> ActionsDispatch | None:
        """Set once the run was dispatched to GitHub Actions."""
        return self.options.actions

    def as_dict(self) -> dict[str, Any]:
        """The run as JSON: the words the store holds, `at` its creation time."""
        return {"id": self.id, "repo": self.repo, "slug": self.slug, "runner": self.runner, "host": self.host,
                "base": self.base, "head": self.head, "verdict": str(self.verdict) if self.verdict else "",
                "message": self.message, "status": str(self.status), "purpose": str(self.purpose), "pr": self.pr,
                "requested_by": self.requested_by, "progress": self.progress.as_dict(),
                "result": self.result.as_dict(), "options": self.options.as_dict(), "at": self.at}
