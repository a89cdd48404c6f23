"""How far each milestone has got, judged on each record's standing (core/lead/standing.py)."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from bot.core.config import Milestone
from bot.core.lead.facts import RecordFact, RunFact, SidePoint
from bot.core.lead.standing import Standing
from bot.core.lead.wording import ratio_text

__all__ = ("RecordFact", "RunFact", "SidePoint", "Standing")  # the facts' old home: callers still import them here

# A fixed report still counts: it is a report the milestone was about, now done; a regressed one is not done.
LIVE = ("open", "fixed", "regressed")


@dataclass(frozen=True)
class Failing:
    name: str  # a slug or a runner
    value: float | None
    why: str


@dataclass(frozen=True)
class MilestoneProgress:
    name: str
    kind: str
    due: date | None
    done: int
    total: int
    fraction: float | None  # None: nothing to count (no report matches)
    failing: tuple[Failing, ...]
    met: bool
    overdue: bool


def progress(milestone: Milestone, standings: dict[str, Standing], suites: dict[str, tuple[str, int]],
             seq_threshold: float, today: date) -> MilestoneProgress:
    """`suites`: runner -> (suite verdict, run id) of its latest run that ran the suite."""
    if milestone.kind == "seq-near-c":
        total, failing = _seq_near_c(milestone, standings, seq_threshold)
    elif milestone.kind == "par-speedup":
        total, failing = len(milestone.reports), _par_speedup(milestone, standings)
    else:
        runner = milestone.runner or ""  # required of suite-passes milestones: the config check set it
        verdict, run = suites.get(runner, ("", 0))
        total = 1
        failing = [] if verdict == "pass" else [Failing(runner, None, f"suite {verdict} in run {run}"
                                                        if verdict else "no run with the suite yet")]
    done = total - len(failing)
    met = total > 0 and not failing
    return MilestoneProgress(milestone.name, milestone.kind, milestone.due, done, total,
                             done / total if total else None, tuple(failing), met,
                             milestone.due is not None and today > milestone.due and not met)


def _seq_near_c(milestone: Milestone, standings: dict[str, Standing], seq_threshold: float) -> tuple[int, list]:
    threshold = milestone.threshold or seq_threshold
    counted = [s for s in standings.values() if s.state in LIVE and s.track == "seq"
               and (milestone.backend is None or s.backend == milestone.backend)]
    failing = [Failing(s.slug, s.ratio, f"{s.source} {ratio_text(s.ratio)} above {threshold:g}x" if s.ratio is not None
                       else "no ratio") for s in counted if s.ratio is None or s.ratio > threshold]
    failing.sort(key=lambda f: (f.value is not None, -(f.value or 0), f.name))
    return len(counted), failing


def _par_speedup(milestone: Milestone, standings: dict[str, Standing]) -> list[Failing]:
    failing = []
    target = milestone.target or 0.0  # required of par-speedup milestones: the config check set it
    for slug in milestone.reports:
        s = standings.get(slug)
        why = ("no such report" if s is None else f"{s.state}, not live" if s.state not in LIVE
               else "not a par report" if s.track != "par" else "not measured yet" if s.speedup is None
               else f"speedup {ratio_text(s.speedup)} below {target:g}x" if s.speedup < target else "")
        if why:
            failing.append(Failing(slug, s.speedup if s else None, why))
    return failing


def as_ratio(record: RecordFact | None, point: float | None) -> float | None:
    """A par run measures a speedup; reports state threads / speedup, so the two compare like seq ratios."""
    if record is None or record.track != "par":
        return point
    return record.threads / point if record.threads and point else None


def latest_suites(runs: list[RunFact]) -> dict[str, tuple[str, int]]:
    return {r.runner: (r.suite_verdict, r.id) for r in runs if r.suite_verdict is not None}  # later runs win
