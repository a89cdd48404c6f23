"""Was the bench host quiet enough for its times to mean something? Read from the load and CPU steal that each
timed run recorded on the host itself, before and during the run.

A busy host slows both sides of a pair unevenly and flattens a parallel sweep, so a time-based verdict taken
there cannot be told apart from contention. Counted measures (instructions, a runtime's own count) do not
move with load, and are never noisy.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass

TIME_MEASURES = ("wall", "user")


@dataclass(frozen=True)
class Quiet:
    """`[verify] busy_load` (the load per core above which a host is busy; a single-threaded benchmark adds
    about 1 itself) and `max_steal` (the share of CPU time a hypervisor may take)."""

    busy_load: float = 1.25
    max_steal: float = 0.05


def noise(runs: list[dict], measure: str, quiet: Quiet = Quiet()) -> str | None:
    """Why these timed runs are noisy, in words for the verdict; None when the host was quiet enough."""
    if measure not in TIME_MEASURES:
        return None
    loads = [(r["load"], r["cores"]) for r in runs if r.get("load") is not None and r.get("cores")]
    steals = [r["steal"] for r in runs if r.get("steal") is not None]
    if loads:
        load = statistics.median(load for load, _ in loads)
        cores = loads[0][1]
        if load >= cores * quiet.busy_load:
            return f"the host was busy: load {load:.1f} on {cores} core{'s' if cores != 1 else ''}"
    if steals and statistics.median(steals) > quiet.max_steal:
        return f"the hypervisor took {statistics.median(steals):.0%} of the host's CPU time (steal)"
    return None
