"""The digest's PAR section: every live PAR record by its efficiency at the highest thread count its latest
sweep measured, least efficient first, with where its curve flattens."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot.core.lead.facts import RecordFact, RunFact
from bot.core.lead.milestones import LIVE
from bot.core.verify.scaling import ScalingFact


@dataclass(frozen=True)
class ParScaling:
    slug: str
    title: str
    state: str
    threads: int
    speedup: float
    efficiency: tuple[float, float, float]
    flattens_after: int | None
    claimed: int | None
    run_id: int
    at: datetime


def par_scaling(records: list[RecordFact], runs: list[RunFact]) -> tuple[ParScaling, ...]:
    """`runs` in time order, done and before the window's end; the latest swept run of each record counts."""
    latest: dict[str, tuple[RunFact, ScalingFact]] = {}
    for run in runs:
        if run.scaling is not None:
            latest[run.slug] = (run, run.scaling)
    out = []
    for record in records:
        found = latest.get(record.slug)
        if record.track == "par" and record.state in LIVE and found is not None:
            swept, s = found
            out.append(ParScaling(record.slug, record.title, record.state, s.threads, s.speedup, s.efficiency,
                                  s.flattens_after, s.claimed, swept.id, swept.finished_at or swept.created_at))
    return tuple(sorted(out, key=lambda p: (p.efficiency[1], p.slug)))
