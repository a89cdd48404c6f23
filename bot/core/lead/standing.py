"""A record's standing, computed once: its claim, its latest measurement, its fix and its culprit, and the one
outcome every view shows (the overview, the records list, a record's page and issue, the digest, `perfbot list`).

Views render a Standing and nothing else, so they cannot disagree. The claim check (is the gap real, is it the
size claimed) comes from the latest decided reproduce run, else from the base side of a fix run (the base is the
default branch, or the fix's parent). A fix's outcome, once a fix run decided, is the record's outcome.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise

from bot.core.lead.facts import BisectFact, FixFact, RecordFact, RunFact, SidePoint
from bot.core.lead.wording import figure_text, measure_words, ratio_text
from bot.core.verify.claim_size import judge, ratio_kind
from bot.core.verify.stats import Interval
from bot.core.verify.vocabulary import Outcome, Purpose, RunStatus, Test

LIVE = ("open", "regressed")  # the states a lead still acts on
DECIDED = (Test.PASS, Test.FAIL, Test.INCONCLUSIVE, Test.MISMATCH, Test.IMPLAUSIBLE)  # a run that said something


@dataclass(frozen=True)
class Figure:
    """A ratio in the claim's terms (par: ideal / achieved), with its interval and the measure it is made of."""

    point: float
    low: float | None
    high: float | None
    measure: str  # wall | user | instructions | metric:NAME

    def text(self) -> str:
        """'218x [138, 361] in instructions'."""
        return figure_text(self.point, self.low, self.high, self.measure)


@dataclass(frozen=True)
class Claim:
    figure: float | None  # None: the report states no ratio
    measure: str
    kind: str  # language/C, ideal/achieved, head/REF

    def text(self) -> str:
        return f"{ratio_text(self.figure)} in {measure_words(self.measure)}" if self.figure is not None else ""


@dataclass(frozen=True)
class Measurement:
    figure: Figure
    commit: str
    run_id: int
    noisy: bool
    at: datetime | None


@dataclass(frozen=True)
class FixStanding:
    ref: str  # a branch, or the commit the report's `fix:` names
    merged: bool  # on the default branch
    run_id: int | None  # the fix run that judged it; None: not measured yet
    commit: str  # its head as measured
    gain: Figure | None  # the program's own gain, base / head: > 1 is faster
    after: Figure | None  # the head's ratio, in the claim's terms
    pr_number: int | None = None


@dataclass(frozen=True)
class Culprit:
    commit: str
    last_good: str | None
    bisection_id: int


@dataclass(frozen=True)
class Standing:
    slug: str
    title: str
    state: str
    track: str | None
    backend: str | None
    threads: int | None
    claim: Claim
    measured: Measurement | None  # the latest figure of the default branch
    checked: Outcome  # what the claim check found: real, overstated, accurate, not reproduced ...
    outcome: Outcome  # the one word every view shows
    fix: FixStanding | None
    culprit: Culprit | None
    errors: int = 0
    record_id: int | None = None

    @property
    def live(self) -> bool:
        return self.state in LIVE

    @property
    def ranked_figure(self) -> float | None:
        """Rankings use measured figures only: a mismatch or an unmeasured claim is listed apart."""
        return self.measured.figure.point if self.measured and self.outcome.measured else None

    @property
    def apart_reason(self) -> str:
        """Why it is not ranked: '' when it is."""
        if self.ranked_figure is not None:
            return ""
        if self.outcome is Outcome.MISMATCH:
            return "output mismatch: nothing was timed"
        if self.outcome is Outcome.IMPLAUSIBLE:
            return "implausible: above ideal, noisy or mismeasured"
        if self.errors:
            return f"defective: {self.errors} lint error{'s' if self.errors != 1 else ''}"
        if self.outcome is not Outcome.UNMEASURED:  # never "unmeasured" beside an outcome a run decided
            return "no figure of the default branch: only its fix was measured" if self.fix and self.fix.run_id \
                else "no figure of the default branch"
        return "unmeasured"

    @property
    def overstated(self) -> bool:
        return self.checked is Outcome.OVERSTATED

    @property
    def fixed_in_main(self) -> bool:
        return self.outcome is Outcome.FIXED_IN_MAIN

    @property
    def waiting_merge(self) -> bool:
        return self.outcome is Outcome.FIXED

    @property
    def kind(self) -> str:
        return self.claim.kind

    @property
    def ratio(self) -> float | None:
        """What milestones judge: a passing fix's head, else the latest measurement, else the claim."""
        if self.fix and self.fix.after and self.outcome in (Outcome.FIXED, Outcome.FIXED_IN_MAIN):
            return self.fix.after.point
        return self.measured.figure.point if self.measured else self.claim.figure

    @property
    def source(self) -> str:
        if self.fix and self.fix.after and self.outcome in (Outcome.FIXED, Outcome.FIXED_IN_MAIN):
            return "verified" if self.fix.merged else "passes on its branch"
        return "measured" if self.measured else "claimed" if self.claim.figure is not None else "none"

    @property
    def speedup(self) -> float | None:
        """par: the speedup behind the figure (threads / ratio)."""
        ratio = self.ratio
        if self.track != "par" or not ratio or not self.threads or self.source in ("claimed", "none"):
            return None
        return self.threads / ratio


def standing_of(record: RecordFact, runs: Iterable[RunFact], fixes: Iterable[FixFact] = (),
                bisections: Iterable[BisectFact] = ()) -> Standing:
    """`runs` of this record in the order they finished, any status; only finished ones count."""
    done = [r for r in runs if r.status == RunStatus.DONE and r.verdict in DECIDED]
    claim = Claim(record.ratio, record.claim_measure or "wall", ratio_kind(record.track, record.reference))
    check_run, check_side = _claim_check(done, record)
    checked = _checked(record, claim, check_run, check_side)
    fix = _fix(record, done, list(fixes))
    outcome = checked
    fix_run = next((r for r in reversed(done) if r.purpose == Purpose.FIX), None)
    if record.state == "regressed":
        guard = next((r for r in reversed(done) if r.purpose == Purpose.GUARD), None)
        outcome = _checked(record, claim, guard, guard.side("head")) if guard else checked
    elif fix_run is not None and fix is not None:
        outcome = _fix_outcome(fix_run, fix)
    elif record.state == "fixed":
        outcome = Outcome.FIXED_IN_MAIN  # fixed before runs were kept: the store says its fix merged passing
    return Standing(record.slug, record.title, record.state, record.track, record.backend, record.threads, claim,
                    _latest(record, done, fix), checked, outcome, fix, _culprit(bisections), record.errors,
                    record.id)


def _claim_check(done: list[RunFact], record: RecordFact) -> tuple[RunFact | None, SidePoint | None]:
    reproduce = next((r for r in reversed(done) if r.purpose == Purpose.REPRODUCE), None)
    if reproduce is not None:
        return reproduce, reproduce.side("head")
    fix_run = next((r for r in reversed(done) if r.purpose == Purpose.FIX and r.side("base")), None)
    if fix_run is not None:
        return fix_run, fix_run.side("base")
    mismatched = next((r for r in reversed(done) if r.verdict == Test.MISMATCH), None)
    return mismatched, None


def _checked(record: RecordFact, claim: Claim, run: RunFact | None, side: SidePoint | None) -> Outcome:
    if run is None:
        return Outcome.UNMEASURED
    test = side.decision if side is not None and side.decision else run.verdict
    if run.verdict == Test.MISMATCH or test == Test.MISMATCH:
        return Outcome.MISMATCH
    if run.verdict == Test.IMPLAUSIBLE or test == Test.IMPLAUSIBLE:
        return Outcome.IMPLAUSIBLE
    figure = _figure(record, side, run.measure)
    if figure is None:
        return Outcome.UNMEASURED
    if side is not None and side.side == "base" and not side.decision:
        return Outcome.INCONCLUSIVE  # a fix's base without its own test: the fix's verdict is not the claim's
    if test == Test.PASS:
        return Outcome.NOT_REPRODUCED
    if test != Test.FAIL:
        return Outcome.INCONCLUSIVE
    if claim.figure is not None and figure.low is not None and figure.high is not None:
        size = judge(claim.figure, Interval(figure.low, figure.point, figure.high))
        if size is not None and size.off and claim.figure > figure.point:
            return Outcome.OVERSTATED
        if size is not None and not size.off and not record.reference:
            return Outcome.ACCURATE
    return Outcome.SLOWER if record.reference else Outcome.REPRODUCED


def _figure(record: RecordFact, side: SidePoint | None, measure: str | None) -> Figure | None:
    """A side in the claim's terms: par runs measure a speedup, reports state threads / speedup."""
    if side is None or side.point is None:
        return None
    if record.track != "par":
        return Figure(side.point, side.low, side.high, measure or "wall")
    if not record.threads or not side.point:
        return None
    flip = lambda v: record.threads / v if v else None  # noqa: E731
    return Figure(record.threads / side.point, flip(side.high), flip(side.low), measure or "wall")


def _latest(record: RecordFact, done: list[RunFact], fix: FixStanding | None) -> Measurement | None:
    """The default branch's latest figure: a claim or guard run's head, a fix run's base, or its head once the
    fix is in main."""
    for run in reversed(done):
        if run.verdict == Test.MISMATCH:
            continue
        side = run.side("head") if run.purpose != Purpose.FIX or run.in_main else run.side("base")
        figure = _figure(record, side, run.measure)
        if figure is not None:
            commit = run.head_sha if side is not None and side.side == "head" else run.base_sha or ""
            return Measurement(figure, commit, run.id, run.noisy, run.finished_at or run.created_at)
    return None


def _fix(record: RecordFact, done: list[RunFact], fixes: list[FixFact]) -> FixStanding | None:
    """The record's fix: an attached branch or PR, the commit its `fix:` names, or what a fix run measured."""
    run = next((r for r in reversed(done) if r.purpose == Purpose.FIX), None)
    row = next((f for f in reversed(fixes) if run is not None and f.head_sha == run.head_sha), None) or \
        next((f for f in reversed(fixes) if f.state in ("open", "merged")), None)
    named = record.fix if record.fix and record.fix.lower() not in ("inline", "unknown", "none") else None
    if run is None and row is None and named is None:
        return None
    ref = row.branch if row else named or (run.head_sha[:12] if run else "")
    merged = bool(row and row.state == "merged") or bool(run and run.in_main) or record.state == "fixed"
    if run is None:
        return FixStanding(ref, merged, None, row.head_sha or "" if row else "", None, None,
                           row.pr_number if row else None)
    gain = Figure(run.gain[1], run.gain[0], run.gain[2], run.measure or "wall") if run.gain else None
    return FixStanding(ref, merged, run.id, run.head_sha, gain, _figure(record, run.side("head"), run.measure),
                       row.pr_number if row else run.pr_number)


def _fix_outcome(run: RunFact, fix: FixStanding) -> Outcome:
    if run.verdict == Test.MISMATCH:
        return Outcome.MISMATCH
    if run.verdict == Test.IMPLAUSIBLE:
        return Outcome.IMPLAUSIBLE
    if run.verdict == Test.PASS:
        return Outcome.FIXED_IN_MAIN if fix.merged else Outcome.FIXED
    if fix.gain is not None and fix.gain.low is not None and fix.gain.low > 1:
        return Outcome.FASTER_NOT_FIXED
    return Outcome.INCONCLUSIVE if run.verdict == Test.INCONCLUSIVE else Outcome.NO_EFFECT


def _culprit(bisections: Iterable[BisectFact]) -> Culprit | None:
    found = [b for b in bisections if b.outcome == "found" and b.culprit]
    if not found:
        return None
    latest = max(found, key=lambda b: b.id)
    return Culprit(latest.culprit or "", _last_good(latest.message) or latest.good, latest.id)


def _last_good(message: str) -> str | None:
    """The bisection's message names the commit right before the culprit: 'last good abc123def456'."""
    for before, after in pairwise(message.split()):
        if before == "good" and after.strip("();,").isalnum():
            return after.strip("();,")
    return None


def standings_of(records: Iterable[RecordFact], runs: Iterable[RunFact], fixes: Iterable[FixFact] = (),
                 bisections: Iterable[BisectFact] = ()) -> dict[str, Standing]:
    """Every record's standing, keyed by slug; runs in any order (sorted here by when they finished)."""
    by_slug: dict[str, list] = {}
    for run in sorted(runs, key=lambda r: (r.finished_at or r.created_at, r.id)):
        by_slug.setdefault(run.slug, []).append(run)
    fixes_of: dict[str, list] = {}
    for fix in fixes:
        fixes_of.setdefault(fix.slug, []).append(fix)
    bisections_of: dict[str, list] = {}
    for b in bisections:
        bisections_of.setdefault(b.slug, []).append(b)
    return {r.slug: standing_of(r, by_slug.get(r.slug, []), fixes_of.get(r.slug, []), bisections_of.get(r.slug, []))
            for r in records}
