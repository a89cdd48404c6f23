"""What a bench run's side keeps of a sweep (every thread count's samples, points and labels: scaling.summary) and
of a GPU report's modes (each mode's median and speedup over one CPU thread: gpu_modes.modes_summary), typed.

Its own module, without numpy, so that reading a stored run (run_parts) loads no statistics. `from_json` reads
what any version stored (a point without a whole speedup interval is dropped, a missing key takes its default);
`as_dict` writes the JSON key for key as scaling.summary and gpu_modes.modes_summary wrote it before these types:
efficiency and the flattening label are said again from the figures, as they were when the summary was made.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.core.verify.claim_size import number
from bot.core.verify.interval import Interval


def json_mapping(data: object) -> Mapping[str, Any]:
    """A stored JSON object, or an empty one for anything else: old and odd rows read, never raise."""
    return data if isinstance(data, Mapping) else {}


def json_list(data: object) -> list:
    """A stored JSON array, or an empty one for anything else."""
    return list(data) if isinstance(data, (list, tuple)) else []


def _count(data: object) -> int | None:
    return int(data) if isinstance(data, (int, float)) and not isinstance(data, bool) else None


@dataclass(frozen=True)
class ScalingPoint:
    threads: int
    median: float  # of the measure (seconds unless [verify] measure says otherwise)
    samples: int
    speedup: Interval  # time(1) / time(threads)

    @property
    def efficiency(self) -> Interval:
        n = self.threads
        return Interval(self.speedup.low / n, self.speedup.point / n, self.speedup.high / n)

    def as_dict(self) -> dict:
        return {"threads": self.threads, "median": self.median, "samples": self.samples,
                "speedup": self.speedup.as_dict(), "efficiency": self.efficiency.as_dict()}

    @classmethod
    def from_json(cls, data: object) -> ScalingPoint | None:
        found = json_mapping(data)
        speedup, threads = Interval.from_json(found.get("speedup")), _count(found.get("threads"))
        if speedup is None or not threads:
            return None
        return cls(threads, found.get("median") or 0.0, int(found.get("samples") or 0), speedup)


@dataclass(frozen=True)
class Flattening:
    """Where the curve stops paying for threads: `after` still gained, the step to `to` gained `gain` of ideal."""

    after: int | None  # None: every step gained at least the fraction asked (or could not be told apart)
    to: int | None = None
    gain: Interval | None = None  # the fraction of the ideal step gain this step reached

    def label(self) -> str:
        if self.after is None or self.gain is None:
            return "no flattening measured"
        return (f"flattens after {self.after} thread{'s' if self.after != 1 else ''} ({self.after}→{self.to} "
                f"gains {number(self.gain.point)} [{number(self.gain.low)}, {number(self.gain.high)}] of ideal)")

    def as_dict(self) -> dict:
        return {"after": self.after, "to": self.to, "gain": self.gain.as_dict() if self.gain else None,
                "label": self.label()}

    @classmethod
    def from_json(cls, data: object) -> Flattening:
        found = json_mapping(data)
        return cls(_count(found.get("after")), _count(found.get("to")), Interval.from_json(found.get("gain")))


@dataclass(frozen=True)
class SweepSummary:
    """A par side's sweep: the counts asked, every sample per count, one point per count with samples (the
    claimed count's is the verdict's interval), where the curve flattens and up to where it holds."""

    counts: tuple[int, ...]
    claimed: int
    par_efficiency: float  # the fraction of ideal a count must reach
    flatten_gain: float  # the fraction of an ideal step's gain under which the curve flattens
    seconds: Mapping[int, tuple[float, ...]] = field(default_factory=dict)  # count -> the measure's samples
    points: tuple[ScalingPoint, ...] = ()
    flattening: Flattening = Flattening(None)
    holds_to: int | None = None  # the highest count up to which every count holds par_efficiency

    @property
    def highest(self) -> ScalingPoint | None:
        """The point at the highest count measured: what the digest ranks PAR records by."""
        return self.points[-1] if self.points else None

    def as_dict(self) -> dict[str, Any]:
        return {"counts": list(self.counts), "claimed": self.claimed, "par_efficiency": self.par_efficiency,
                "flatten_gain": self.flatten_gain,
                "seconds": {str(n): list(v) for n, v in sorted(self.seconds.items())},
                "points": [p.as_dict() for p in self.points], "flattening": self.flattening.as_dict(),
                "holds_to": self.holds_to}

    @classmethod
    def from_json(cls, data: object) -> SweepSummary | None:
        """A stored sweep; None when there is none."""
        found = json_mapping(data)
        if not found:
            return None
        stored = json_mapping(found.get("seconds")).items()
        seconds = {int(n): tuple(json_list(v)) for n, v in stored if str(n).isdigit()}
        points = (ScalingPoint.from_json(p) for p in json_list(found.get("points")))
        return cls(tuple(n for n in map(_count, json_list(found.get("counts"))) if n),
                   _count(found.get("claimed")) or 1, found.get("par_efficiency") or 0.0,
                   found.get("flatten_gain") or 0.0, seconds, tuple(p for p in points if p is not None),
                   Flattening.from_json(found.get("flattening")), _count(found.get("holds_to")))


@dataclass(frozen=True)
class GpuMode:
    """One mode a GPU report ran: 'cpu N', 'gpu' or 'auto'; its speedup over one CPU thread (None for that one)."""

    name: str
    median: float
    samples: int
    speedup: Interval | None


@dataclass(frozen=True)
class GpuSummary:
    """Every mode a GPU side ran, CPU counts first, and the CPU count with the lowest median."""

    modes: tuple[GpuMode, ...]
    best_cpu: int

    def as_dict(self) -> dict[str, Any]:
        return {"modes": {m.name: {"median": m.median, "samples": m.samples,
                                   "speedup": m.speedup.as_dict() if m.speedup else None} for m in self.modes},
                "best_cpu": self.best_cpu}

    @classmethod
    def from_json(cls, data: object) -> GpuSummary | None:
        """A stored GPU summary; None when there is none."""
        found = json_mapping(data)
        if not found:
            return None
        modes = tuple(GpuMode(str(name), row.get("median") or 0.0, int(row.get("samples") or 0),
                              Interval.from_json(row.get("speedup")))
                      for name, row in ((n, json_mapping(r)) for n, r in json_mapping(found.get("modes")).items()))
        return cls(modes, _count(found.get("best_cpu")) or 1)
