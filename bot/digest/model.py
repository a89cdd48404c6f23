"""What a digest says, as a pure function: the campaign's facts and a window in, every section of the digest out."""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeGuard

from bot.core.config import Milestone
from bot.core.lead.campaign import Tally, act_first, ranking, tally
from bot.core.lead.facts import CampaignFacts, EventFact, FixFact, RecordFact, RevisionFact, RunFact, VerdictFact
from bot.core.lead.milestones import MilestoneProgress, as_ratio, latest_suites, progress
from bot.core.lead.standing import Standing, standings_of
from bot.core.verify.vocabulary import Outcome, Purpose, RunStatus, Test
from bot.digest.scaling import ParScaling, par_scaling

STALE_AFTER = timedelta(days=14)
Inside = Callable[[datetime | None], TypeGuard[datetime]]  # in the digest's window
Revisions = defaultdict[str, list[RevisionFact]]  # by slug, in time order
RunsOf = defaultdict[str, list[RunFact]]


@dataclass(frozen=True)
class NewReport:
    slug: str
    title: str
    track: str | None
    backend: str | None
    ratio: float | None
    state: str
    author: str
    at: datetime


@dataclass(frozen=True)
class Merged:
    slug: str
    title: str
    into: str | None
    at: datetime
    verdict: str | None  # the reviewer's kind and confidence, when a reviewer judged the pair
    confidence: float | None


@dataclass(frozen=True)
class VerifiedFix:
    slug: str
    track: str | None
    run_id: int
    pr_number: int | None
    before: float | None  # ratios (par: threads / speedup), lower is better; None: a par record without threads
    after: float | None
    after_low: float | None
    after_high: float | None
    at: datetime
    merged: bool = False  # "verified" only once merged; before that it passes on its branch
    measure: str | None = None  # what its ratios are made of (None: wall time)


@dataclass(frozen=True)
class NotReproduced:
    slug: str
    title: str
    claimed: float | None
    measured: float | None
    run_id: int
    at: datetime
    measure: str | None = None  # what the measured ratio is made of (None: wall time)
    claim_measure: str | None = None  # what the claimed one is made of


@dataclass(frozen=True)
class Stale:
    slug: str
    title: str
    last_activity: datetime
    idle_days: int


@dataclass(frozen=True)
class AuthorQuality:
    name: str
    email: str
    reports: int
    duplicates: int
    defective: int
    not_reproduced: int


@dataclass(frozen=True)
class Digest:
    full_name: str
    window_start: datetime
    window_end: datetime
    week: str  # ISO year-week of the window's end in its own time zone, e.g. 2026-W49
    new_reports: tuple[NewReport, ...]
    new_by_kind: tuple[tuple[str, str, int], ...]  # (track, backend, count); "?" when not known
    duplicates: tuple[Merged, ...]
    fixes: tuple[FixFact, ...]
    verified: tuple[VerifiedFix, ...]
    not_reproduced: tuple[NotReproduced, ...]
    stale: tuple[Stale, ...]
    authors: tuple[AuthorQuality, ...]
    milestones: tuple[MilestoneProgress, ...]
    par_scaling: tuple[ParScaling, ...] = ()  # live PAR records, least efficient at their highest count first
    standings: tuple[Standing, ...] = ()  # every record as it stood at the window's end, by slug
    tally: Tally | None = None  # the counts every view shows (core/lead/campaign.py)

    @property
    def reports(self) -> tuple[Standing, ...]:
        """Per report, what a lead asks: real or not, overstated or not, fixed in main or not."""
        return tuple(s for s in self.standings if s.live or s.state == "fixed")

    @property
    def ranked(self) -> tuple[Standing, ...]:
        return ranking(self.standings)[0]

    @property
    def ranked_by_kind(self) -> tuple[tuple[str, tuple[Standing, ...]], ...]:
        """The ranking cut by kind of ratio, each kind in the ranking's own order."""
        kinds = dict.fromkeys(s.kind for s in self.ranked)
        return tuple((kind, tuple(s for s in self.ranked if s.kind == kind)) for kind in kinds)

    @property
    def apart(self) -> tuple[Standing, ...]:
        return ranking(self.standings)[1]

    @property
    def culprits(self) -> tuple[Standing, ...]:
        return act_first(self.standings)[0]

    @property
    def overstated(self) -> tuple[Standing, ...]:
        return act_first(self.standings)[1]

    @property
    def waiting_merge(self) -> tuple[Standing, ...]:
        return act_first(self.standings)[2]

    @property
    def merged_fixes(self) -> tuple[VerifiedFix, ...]:
        return tuple(v for v in self.verified if v.merged)

    @property
    def branch_fixes(self) -> tuple[VerifiedFix, ...]:
        return tuple(v for v in self.verified if not v.merged)


def week_of(moment: datetime) -> str:
    """The ISO week a digest is named by, in the time zone `moment` is in: 2026-W49."""
    year, week, _ = moment.isocalendar()
    return f"{year}-W{week:02d}"


def build_digest(facts: CampaignFacts, window_start: datetime, window_end: datetime,
                 milestones: tuple[Milestone, ...], seq_threshold: float) -> Digest:
    """Everything as it stood at `window_end`; "in the window" is window_start <= t < window_end."""

    def inside(t: datetime | None) -> TypeGuard[datetime]:
        return t is not None and window_start <= t < window_end

    before_end = lambda t: t is not None and t < window_end  # noqa: E731
    records = [r for r in facts.records if r.created_at is None or before_end(r.created_at)]
    revisions: Revisions = defaultdict(list)
    for rev in sorted((r for r in facts.revisions if before_end(r.at)), key=lambda r: r.at):
        revisions[rev.slug].append(rev)
    runs = sorted((r for r in facts.runs if r.status == RunStatus.DONE and before_end(r.finished_at or r.created_at)),
                  key=lambda r: (r.finished_at or r.created_at, r.id))
    runs_of: RunsOf = defaultdict(list)
    for run in runs:
        runs_of[run.slug].append(run)
    fixes = [f for f in facts.fixes if before_end(f.created_at)]
    by_slug = {r.slug: r for r in records}
    standings = standings_of(records, runs, fixes, (b for b in facts.bisections if b.at is None or before_end(b.at)))
    new = sorted((r for r in records if inside(r.created_at)), key=lambda r: (r.created_at, r.slug))
    kinds: dict[tuple[str, str], int] = defaultdict(int)
    for r in new:
        kinds[(r.track or "?", r.backend or "?")] += 1
    return Digest(
        facts.full_name, window_start, window_end, week_of(window_end),
        tuple(NewReport(r.slug, r.title, r.track, r.backend, r.ratio, r.state, _author(revisions[r.slug])[0], at)
              for r in new if (at := r.created_at) is not None),
        tuple((track, backend, n) for (track, backend), n in sorted(kinds.items())),
        _merged(records, revisions, facts.verdicts, inside),
        tuple(sorted((f for f in fixes if inside(f.created_at)), key=lambda f: (f.created_at, f.slug, f.branch))),
        _verified(by_slug, runs, inside, standings),
        _not_reproduced(by_slug, runs, inside, standings),
        _stale(records, revisions, facts.runs, fixes, facts.events, window_end),
        _authors(new, revisions, runs_of),
        tuple(progress(m, standings, latest_suites(runs), seq_threshold, window_end.date()) for m in milestones),
        par_scaling(records, runs),
        tuple(standings[slug] for slug in sorted(standings)),
        tally(standings.values()),
    )


def _merged(records: list[RecordFact], revisions: Revisions, verdicts: tuple[VerdictFact, ...], inside: Inside
            ) -> tuple[Merged, ...]:
    out = []
    for r in records:
        at = next((v.at for v in reversed(revisions[r.slug]) if v.change == "merged"), None)
        if r.state == "merged" and inside(at):
            judged = next((v for v in reversed(verdicts) if {v.new_slug, v.old_slug} == {r.slug, r.merged_into}), None)
            out.append(Merged(r.slug, r.title, r.merged_into, at, judged.kind if judged else None,
                              judged.confidence if judged else None))
    return tuple(sorted(out, key=lambda m: (m.at, m.slug)))


def _verified(by_slug: dict[str, RecordFact], runs: list[RunFact], inside: Inside,
              standings: dict[str, Standing]) -> tuple[VerifiedFix, ...]:
    """Fixes that passed in the window and that the record still stands by: a later run, or a regression, that
    says otherwise leaves the fix out, so this section never disagrees with the report's standing."""
    out = []
    for run in _latest_per_slug(r for r in runs if r.purpose == Purpose.FIX and r.verdict == Test.PASS
                                and r.side("head") and inside(r.finished_at or r.created_at)):
        record, head, base = by_slug.get(run.slug), run.side("head"), run.side("base")
        standing = standings.get(run.slug)
        if head is None or standing is None or standing.fix is None or standing.fix.run_id != run.id \
                or standing.outcome not in (Outcome.FIXED, Outcome.FIXED_IN_MAIN):
            continue
        low, high = sorted((as_ratio(record, head.low), as_ratio(record, head.high)), key=lambda b: b or 0)
        out.append(VerifiedFix(run.slug, record.track if record else None, run.id, run.pr_number,
                               as_ratio(record, base.point) if base else None, as_ratio(record, head.point),
                               low, high, run.finished_at or run.created_at,
                               standing.outcome is Outcome.FIXED_IN_MAIN, run.measure))
    return tuple(out)


def _not_reproduced(by_slug: dict[str, RecordFact], runs: list[RunFact], inside: Inside,
                    standings: dict[str, Standing]) -> tuple[NotReproduced, ...]:
    """Claims a run in the window did not reproduce, and that the record's standing still calls not reproduced."""
    found = _latest_per_slug(r for r in runs if r.claim_failed and inside(r.finished_at or r.created_at)
                             and (s := standings.get(r.slug)) is not None and s.outcome is Outcome.NOT_REPRODUCED)
    return tuple(NotReproduced(r.slug, by_slug[r.slug].title if r.slug in by_slug else "",
                               by_slug[r.slug].ratio if r.slug in by_slug else None,
                               as_ratio(by_slug.get(r.slug), _head_point(r)), r.id, r.finished_at or r.created_at,
                               r.measure, by_slug[r.slug].claim_measure if r.slug in by_slug else None)
                 for r in found)


def _head_point(run: RunFact) -> float | None:
    head = run.side("head")
    return head.point if head else None


def _latest_per_slug(runs: Iterable[RunFact]) -> list[RunFact]:
    latest: dict[str, RunFact] = {}
    for run in runs:  # in time order: the last one wins
        latest[run.slug] = run
    return sorted(latest.values(), key=lambda r: (r.finished_at or r.created_at, r.slug))


def _stale(records: list[RecordFact], revisions: Revisions, runs: tuple[RunFact, ...], fixes: list[FixFact],
           events: tuple[EventFact, ...], window_end: datetime) -> tuple[Stale, ...]:
    """Any sign of life counts, even a run still queued: someone is working on the report."""
    moments: dict[str, list[datetime | None]] = defaultdict(list)
    for fix in fixes:
        moments[fix.slug] += [fix.created_at, fix.updated_at]
    for event in events:
        moments[event.slug].append(event.at)
    for run in runs:
        moments[run.slug] += [run.created_at, run.finished_at]
    out = []
    for r in (r for r in records if r.state == "open"):
        times = [t for t in moments[r.slug] + [v.at for v in revisions[r.slug]] + [r.created_at]
                 if t is not None and t < window_end]
        last = max(times, default=None)
        if last is not None and last < window_end - STALE_AFTER:
            out.append(Stale(r.slug, r.title, last, (window_end - last).days))
    return tuple(sorted(out, key=lambda s: (s.last_activity, s.slug)))


def _authors(new: list[RecordFact], revisions: Revisions, runs_of: RunsOf) -> tuple[AuthorQuality, ...]:
    counts: dict[str, list] = {}
    for r in new:
        name, email = _author(revisions[r.slug])
        latest = next((v for v in reversed(revisions[r.slug]) if v.has_content), None)
        row = counts.setdefault(email.lower() or name, [name, email, 0, 0, 0, 0])
        row[2] += 1
        row[3] += r.state == "merged"
        row[4] += bool(latest and latest.errors > 0)
        row[5] += r.reproduced == "not reproduced" or any(run.claim_failed for run in runs_of[r.slug])
    return tuple(sorted((AuthorQuality(*row) for row in counts.values()), key=lambda a: (-a.reports, a.email, a.name)))


def _author(revisions: list[RevisionFact]) -> tuple[str, str]:
    return (revisions[0].author_name, revisions[0].author_email) if revisions else ("", "")

