"""A record's standing as the MCP tools answer it: core's one standing (bot/core/lead/standing.py), rendered
as JSON with the sentence every other view says it in (core/lead/wording.py)."""
from __future__ import annotations

from typing import Any

from bot.core.lead import wording
from bot.core.lead.standing import Figure, Standing
from bot.core.verify import verdict_words as words
from bot.core.verify.bench_run import BenchRun


def figure(f: Figure | None) -> dict[str, Any] | None:
    return None if f is None else {"point": f.point, "low": f.low, "high": f.high, "measure": f.measure,
                                   "text": f.text()}


def rendered(s: Standing, path: str) -> dict[str, Any]:
    """The standing whole: claim, latest measurement, outcome (with its sentence), fix, culprit, and the file."""
    measured, fix, culprit = s.measured, s.fix, s.culprit
    return {
        "slug": s.slug, "title": s.title, "path": path, "state": s.state,
        "outcome": str(s.outcome), "said": wording.said(s), "real": s.outcome.real, "overstated": s.overstated,
        "ranked": s.ranked_figure is not None, "apart_reason": s.apart_reason,
        "claim": {"track": s.track, "backend": s.backend, "threads": s.threads, "figure": s.claim.figure,
                  "measure": s.claim.measure, "kind": s.claim.kind, "text": s.claim.text()},
        "measurement": None if measured is None else {
            **(figure(measured.figure) or {}), "commit": measured.commit, "run": measured.run_id,
            "noisy": measured.noisy, "at": measured.at.isoformat() if measured.at else None},
        "fix": None if fix is None else {
            "ref": fix.ref, "merged": fix.merged, "run": fix.run_id, "commit": fix.commit, "pr": fix.pr_number,
            "gain": figure(fix.gain), "after": figure(fix.after)},
        "culprit": None if culprit is None else {"commit": culprit.commit, "last_good": culprit.last_good,
                                                 "bisection": culprit.bisection_id},
    }


def measurement(run: BenchRun) -> dict[str, Any]:
    """One finished run's answer and measured figure (the last side's interval and measure), without samples."""
    told = words.of_run(run)
    side = run.result.last
    return {"run": run.id, "purpose": str(run.purpose), "at": run.at, "head": run.head,
            "verdict": told.key if told else None, "text": told.text if told else str(run.status),
            "interval": side.interval.as_dict() if side and side.interval else None,
            "measure": side.measure if side else None, "against": side.against if side else None,
            "message": run.message}
