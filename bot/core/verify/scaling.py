"""Scaling sweeps: which thread counts a PAR verification measures, in what order, and what its curve says.

A sweep times the program at every count, one run of each count per round, so a host that drifts (turbo,
a neighbour, thermal throttling) drifts under every count alike. Each count's speedup is one thread's
median time over its own, with a bootstrap interval; efficiency is speedup / threads. A curve "flattens"
at the first step whose added threads confidently gain less than a fraction of what ideal scaling would add.
"""
from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from bot.core.config.run import FLATTEN_GAIN, MAX_THREADS  # the sweep's rules live with its keys
from bot.core.verify.claim_size import number
from bot.core.verify.stats import CONFIDENCE, Interval, ratio_interval
from bot.core.verify.sweep_checks import above_ideal_counts
from bot.core.verify.sweep_result import Flattening, ScalingPoint, SweepSummary


def sweep_counts(configured: Sequence[int] | None, cores: int | None, claimed: int | None) -> tuple[int, ...]:
    """`[verify] threads`, else 1..the host's cores; always with 1 (the baseline) and the claimed count."""
    chosen = configured if configured else range(1, max(cores or 1, 1) + 1)
    return tuple(sorted({1, max(claimed or 1, 1), *chosen}))


def round_order(counts: Sequence[int], round_index: int) -> tuple[int, ...]:
    """Up, then down: no count always runs right after the same neighbour (caches, clocks carry over)."""
    return tuple(counts) if round_index % 2 == 0 else tuple(reversed(counts))


def _usable(samples: Mapping[int, Sequence[float]]) -> list[int]:
    return sorted(n for n, values in samples.items() if values and all(v > 0 for v in values))


def scaling_points(samples: Mapping[int, Sequence[float]], confidence: float = CONFIDENCE) -> tuple[ScalingPoint, ...]:
    """One point per count with samples; empty until one thread has some (every speedup is against it)."""
    counts = _usable(samples)
    if 1 not in counts:
        return ()
    one = samples[1]
    return tuple(ScalingPoint(n, _median(samples[n]), len(samples[n]),
                              ratio_interval(one, samples[n], confidence=confidence, seed=n)) for n in counts)


def flattening(samples: Mapping[int, Sequence[float]], gain: float = FLATTEN_GAIN,
               confidence: float = CONFIDENCE) -> Flattening:
    """The first step a -> b whose whole interval of gained fraction, (t_a/t_b - 1) / (b/a - 1), is under
    `gain`: decided on the intervals, so noise between two counts never reads as a plateau."""
    counts = _usable(samples)
    for a, b in itertools.pairwise(counts):
        step = ratio_interval(samples[a], samples[b], confidence=confidence, seed=a * MAX_THREADS + b)
        ideal = b / a - 1
        fraction = Interval((step.low - 1) / ideal, (step.point - 1) / ideal, (step.high - 1) / ideal)
        if fraction.high < gain:
            return Flattening(a, b, fraction)
    return Flattening(None)


def holds_to(points: Sequence[ScalingPoint], efficiency: float) -> int | None:
    """The highest count up to which every count's efficiency interval reaches `efficiency` (None: not even 2)."""
    best = None
    for point in points:
        if point.efficiency.low < efficiency:
            break
        best = point.threads
    return best if best and best > 1 else None


def summary(samples: Mapping[int, Sequence[float]], claimed: int, par_efficiency: float,
            gain: float = FLATTEN_GAIN, *, decided: Interval | None = None) -> SweepSummary:
    """What a bench run's result keeps of a sweep: every sample per count, the points and the labels.

    `decided` is the interval the verdict was taken on (the claimed count against one thread, at the sampling
    plan's confidence): the claimed count's point is that interval, so the verdict's row and the sweep's row,
    and every view of either, show one figure."""
    points = scaling_points(samples)
    if decided is not None:
        points = tuple(replace(p, speedup=decided) if p.threads == claimed else p for p in points)
    flat = flattening(samples, gain) if points else Flattening(None)
    return SweepSummary(tuple(sorted(samples)), claimed, par_efficiency, gain,
                        {n: tuple(v) for n, v in sorted(samples.items())}, points, flat,
                        holds_to(points, par_efficiency))


def sweep_text(sweep: SweepSummary) -> str:
    """'sweep efficiency 1.00 at 1, 0.98 at 2, 0.51 at 4; holds 0.75 of ideal up to 2 threads, below it at 4 ...'"""
    if not sweep.points:
        return ""
    shown = ", ".join(f"{number(p.efficiency.point)} at {p.threads}" for p in sweep.points)
    above = above_ideal_counts(sweep.points)
    said = f"; speedup above ideal ({', '.join(above)}): noisy or mismeasured" if above else ""
    return f"sweep efficiency {shown}; {holds_text(sweep)}; {sweep.flattening.label()}{said}"


def holds_text(sweep: SweepSummary) -> str:
    """What the efficiency intervals say against `par_efficiency`, count by count, and never more: a count holds
    when its whole interval reaches it, is below when its whole interval is under it, and is otherwise
    undecided, said with its figure ('holds 0.75 of ideal up to 2 threads; undecided at 4 threads (0.97
    [0.60, 1.10]): its interval reaches across 0.75'): no sentence beside the table says 'below' of an
    efficiency the table shows near 1."""
    target = sweep.par_efficiency
    many = [p for p in sweep.points if p.threads > 1]
    if not many:
        return "one thread only: no efficiency to judge"
    held: list[ScalingPoint] = []
    below: list[ScalingPoint] = []
    open_: list[ScalingPoint] = []
    for p in many:
        e = p.efficiency
        (held if e.low >= target else below if e.high < target else open_).append(p)
    counts = [p.threads for p in many]
    parts = []
    if held:
        prefix = [p.threads for p in held] == counts[:len(held)]
        parts.append(f"holds {target:g} of ideal {'up to' if prefix else 'at'} {_counts(held, last_only=prefix)}")
    if below:
        suffix = [p.threads for p in below] == counts[len(counts) - len(below):]
        word = "it" if held else f"{target:g} of ideal"
        parts.append(f"below {word} from {below[0].threads} threads on" if suffix else
                     f"below {word} at {_counts(below)}")
    if open_:
        shown = ", ".join(f"{p.threads} threads ({_efficiency(p)})" for p in open_)
        parts.append(f"undecided at {shown}: {'its' if len(open_) == 1 else 'each'} interval reaches across "
                     f"{target:g}")
    return "; ".join(parts)


def _counts(points: list[ScalingPoint], last_only: bool = False) -> str:
    """'4 threads' (the last of a run from 2) or '2, 8 threads': every count here is above one."""
    counts = [str(p.threads) for p in points]
    return f"{counts[-1] if last_only else ', '.join(counts)} threads"


def _efficiency(point: ScalingPoint) -> str:
    e = point.efficiency
    return f"{number(e.point)} [{number(e.low)}, {number(e.high)}]"


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


@dataclass(frozen=True)
class ScalingFact:
    """What a run's head sweep says at its top: read from the stored result by the store's digest queries."""

    threads: int  # the highest count measured
    speedup: float
    efficiency: tuple[float, float, float]  # low, point, high
    flattens_after: int | None
    claimed: int | None


def scaling_fact(sweep: SweepSummary | None) -> ScalingFact | None:
    """The stored sweep (verify's `sweep` of a side) reduced to its highest count; None without points."""
    top = sweep.highest if sweep else None
    if sweep is None or top is None:
        return None
    e = top.efficiency
    return ScalingFact(top.threads, top.speedup.point, (e.low, e.point, e.high), sweep.flattening.after,
                       sweep.claimed)
