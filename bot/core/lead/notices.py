"""Immediate notices as a pure function: the store's facts in, the notices whose condition holds now out.

A notice is keyed by (kind, subject): the store posts each key once and marks it resolved when its condition
stops holding. News (a milestone met, a fix verified) is told once and needs nothing; a blocker is listed in
the dashboard's "Needs your decision" until it is resolved. A new kind is one entry in KINDS and one detector
in `current_notices`.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.core.lead.milestones import MilestoneProgress, RunFact
from bot.core.verify.vocabulary import Purpose, RunStatus, Test

NEWS_WINDOW = timedelta(days=7)  # older verified fixes were news before notices existed: not told again

# kind -> (blocker?, the heading a notice of this kind gets)
KINDS = {
    "milestone-met": (False, "Milestone reached"),
    "fix-verified": (False, "Fix verified"),
    "fix-failed-twice": (True, "A fix failed verification twice"),
    "host-unreachable": (True, "Bench host unreachable"),
    "merged-report-lint": (True, "A merged report does not lint"),
    "suite-regression": (True, "Suite regression on the default branch"),
    "stuck-no-root-cause": (True, "Report stuck without a root cause"),
    "guard-regressed": (True, "A fixed report regressed"),
}


@dataclass(frozen=True)
class Notice:
    kind: str
    subject: str  # unique within the kind: a slug, a milestone name, a runner, "perf_x run 7"
    text: str  # one markdown line (untrusted parts already made literal by the caller's `cell`)
    slug: str | None = None  # the report it is about, for the dashboard's action

    @property
    def blocker(self) -> bool:
        return KINDS[self.kind][0]

    @property
    def heading(self) -> str:
        return KINDS[self.kind][1]


@dataclass(frozen=True)
class ReportState:
    """What notices need of one record beyond its runs."""

    slug: str
    state: str
    created_at: datetime | None
    root_cause_known: bool
    lint_errors: int
    supersedes: tuple[str, ...]


@dataclass(frozen=True)
class NoticeFacts:
    reports: tuple[ReportState, ...]
    runs: tuple[RunFact, ...]  # every run, any status, in id order
    merged_fix_slugs: frozenset[str]  # records with a fix merged into the default branch
    milestones: tuple[MilestoneProgress, ...]
    stuck_days: int = 7
    host_hours: int = 1
    runner_of: dict | None = None  # slug -> the runner `[[runners]]` picks, for runs no host has taken yet


def current_notices(facts: NoticeFacts, now: datetime, cell: Callable[[str], str] = str) -> tuple[Notice, ...]:
    """Every notice whose condition holds at `now`, in a stable order."""
    found: list[Notice] = []
    open_slugs = {r.slug for r in facts.reports if r.state == "open"}
    for m in facts.milestones:
        if m.met:
            found.append(Notice("milestone-met", m.name, f"**{cell(m.name)}**: {m.done}/{m.total} done"))
    done = [r for r in facts.runs if r.status == RunStatus.DONE]
    for run in done:
        at = run.finished_at or run.created_at
        if run.purpose == Purpose.FIX and run.verdict == Test.PASS and now - at <= NEWS_WINDOW:
            pr = f" (PR #{run.pr_number})" if run.pr_number else ""
            found.append(Notice("fix-verified", f"{run.slug} run {run.id}",
                                f"`{run.slug}`: bench run {run.id} found it fixed{pr}", run.slug))
    fix_runs = defaultdict(list)
    for run in done:
        if run.purpose == Purpose.FIX:
            fix_runs[run.slug].append(run)
    for slug, runs in sorted(fix_runs.items()):
        last = runs[-2:]
        if slug in open_slugs and len(last) == 2 and all(r.verdict == Test.FAIL for r in last):
            found.append(Notice("fix-failed-twice", slug, f"`{slug}`: bench runs {last[0].id} and {last[1].id} "
                                "both found it not fixed; re-run it or rethink the fix", slug))
    waiting = defaultdict(list)
    for run in facts.runs:
        if run.status != RunStatus.DONE and now - run.created_at >= timedelta(hours=facts.host_hours):
            waiting[run.runner or (facts.runner_of or {}).get(run.slug) or "unassigned"].append(run)
    for runner, runs in sorted(waiting.items()):
        hours = (now - runs[0].created_at).total_seconds() / 3600
        found.append(Notice("host-unreachable", runner, f"runner `{cell(runner)}`: bench run {runs[0].id} has "
                            f"waited {hours:.1f} h for its host ({len(runs)} run(s) waiting)"))
    for r in facts.reports:
        if r.state == "open" and r.supersedes and r.lint_errors:
            found.append(Notice("merged-report-lint", r.slug, f"`{r.slug}` (merged from "
                                f"{', '.join(f'`{s}`' for s in r.supersedes)}) has {r.lint_errors} lint error(s)",
                                r.slug))
    suites: dict[str, RunFact] = {}
    for run in done:
        if run.suite_verdict is not None:
            suites[run.runner] = run  # the latest per runner
    for runner, run in sorted(suites.items()):
        if run.suite_verdict == "fail" and run.slug in facts.merged_fix_slugs:
            found.append(Notice("suite-regression", runner, f"runner `{cell(runner)}`: the suite regressed in bench "
                                f"run {run.id} of `{run.slug}`, whose fix is merged", run.slug))
    for r in facts.reports:
        if r.state == "regressed":
            guard = next((run for run in reversed(done) if run.slug == r.slug and run.purpose == Purpose.GUARD
                          and run.verdict == Test.FAIL), None)
            where = f" in bench run {guard.id}" if guard else ""
            found.append(Notice("guard-regressed", r.slug, f"`{r.slug}` was fixed, but its guard finds the claim "
                                f"again{where}: it is open again as regressed", r.slug))
    for r in facts.reports:
        age = now - r.created_at if r.created_at else timedelta(0)
        if r.state == "open" and not r.root_cause_known and age >= timedelta(days=facts.stuck_days):
            found.append(Notice("stuck-no-root-cause", r.slug, f"`{r.slug}`: open {age.days} days without a root "
                                "cause", r.slug))
    return tuple(found)
