"""Was the bench host quiet enough for its times to mean something? Read from the load and CPU steal that each
timed run recorded on the host itself, before and during the run.

A verdict taken on a busy host is posted at once, marked noisy, with when it will be measured again; the
re-measure replaces it (the CLI and the service follow the same policy: nobody waits for a first answer).

A busy host slows both sides of a pair unevenly and flattens a parallel sweep, so a time-based verdict taken
there cannot be told apart from contention. Counted measures (instructions, a runtime's own count) do not
move with load, and are never noisy.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from bot.core.verify import verdict_words as words

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


# What `perfbot verify` adds to a noisy verdict: the command measures once, so the "when" is the person's to choose.
ONCE_TEXT = "measured once: run perfbot verify again once the host is quiet, and that run replaces this verdict"


def next_try(now: datetime, wait_seconds: float) -> datetime:
    """When a run measured on a busy host is measured again (its verdict is posted at once meanwhile)."""
    return now + timedelta(seconds=wait_seconds)


def waiting_text(due: datetime | None) -> str:
    """'waiting for a quiet host, next try at 10:32 UTC' while a run's re-measure is due; '' otherwise."""
    if due is None:
        return ""
    at = due.astimezone(UTC)
    return words.WAITING_TEXT.format(at=f"{at:%H:%M} UTC")
