"""What the store knows about a repository's records, runs, fixes and bisections, as plain frozen facts: the one
input of a record's standing (core/lead/standing.py), the digest, the dashboard and the notices; with the
revisions, events and verdicts the digest reads besides, they make one CampaignFacts."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot.core.verify.scaling import ScalingFact
from bot.core.verify.vocabulary import Purpose, RunStatus, Test


@dataclass(frozen=True)
class RecordFact:
    slug: str
    title: str
    track: str | None
    backend: str | None
    threads: int | None
    ratio: float | None  # claimed by the report (par: threads / speedup)
    state: str
    merged_into: str | None
    reproduced: str | None
    created_at: datetime | None
    reference: str | None = None  # `reference:`: its ratio is head/REF (claim_size.ratio_kind)
    fix: str | None = None  # the report's `fix:` field: a branch, a commit, "inline" or "unknown"
    claim_measure: str | None = None  # the report's `measure:`: what its ratio is made of (None: wall time)
    errors: int = 0  # lint errors in its latest text: a defective report
    id: int | None = None  # the store's id, for links


@dataclass(frozen=True)
class SidePoint:
    side: str  # base | head
    point: float | None  # seq: language/C; par: speedup
    low: float | None
    high: float | None
    decision: str | None = None  # the side's own interval test (a fix's base measures the claim)


@dataclass(frozen=True)
class RunFact:
    id: int
    slug: str
    runner: str
    purpose: Purpose
    status: RunStatus
    verdict: Test | None  # None until the run finished
    pr_number: int | None
    created_at: datetime
    finished_at: datetime | None
    sides: tuple[SidePoint, ...]
    suite_verdict: str | None  # None: the run did not run the suite
    scaling: ScalingFact | None = None  # a swept par run's head side at its highest count
    head_sha: str = ""
    base_sha: str | None = None
    measure: str | None = None  # what its samples are (None: wall seconds)
    gain: tuple[float, float, float] | None = None  # a fix: the program's own base/head (low, point, high)
    in_main: bool = False  # a fix whose head is on the default branch (already in base, or measured in main)
    noisy: bool = False  # measured on a host too busy for its times to mean much

    def side(self, name: str) -> SidePoint | None:
        return next((s for s in self.sides if s.side == name and s.point is not None), None)

    @property
    def claim_failed(self) -> bool:
        """A reproduce run that passed found no gap: the report's claim did not hold."""
        return self.purpose == Purpose.REPRODUCE and self.verdict == Test.PASS and self.side("head") is not None


@dataclass(frozen=True)
class FixFact:
    slug: str
    branch: str
    pr_number: int | None
    source: str
    state: str  # open | merged | closed | detached
    token_delta: int | None
    created_at: datetime
    updated_at: datetime
    head_sha: str | None = None


@dataclass(frozen=True)
class BisectFact:
    id: int
    slug: str
    outcome: str  # found | unresolved | error | "" while it runs
    culprit: str | None
    message: str
    good: str
    bad: str
    at: datetime | None = None


@dataclass(frozen=True)
class RevisionFact:
    slug: str
    at: datetime
    change: str  # added | modified | renamed | deleted | merged
    author_name: str
    author_email: str
    errors: int  # lint errors found in this revision
    has_content: bool  # False for deletions and merges


@dataclass(frozen=True)
class EventFact:
    slug: str
    kind: str
    actor: str
    at: datetime


@dataclass(frozen=True)
class VerdictFact:
    new_slug: str
    old_slug: str
    kind: str
    confidence: float


@dataclass(frozen=True)
class CampaignFacts:
    """A repository's facts up to a moment (adapters/store/lead/facts_queries.py): what the digest, the
    standings and the dashboard issue read."""

    full_name: str
    records: tuple[RecordFact, ...] = ()
    revisions: tuple[RevisionFact, ...] = ()
    runs: tuple[RunFact, ...] = ()
    fixes: tuple[FixFact, ...] = ()
    events: tuple[EventFact, ...] = ()
    verdicts: tuple[VerdictFact, ...] = ()
    bisections: tuple[BisectFact, ...] = ()
