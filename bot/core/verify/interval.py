"""An interval on a ratio: low, point, high. Its own module so that reading a stored run (bench_run, run_parts)
needs no numpy; stats.py computes them."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Interval:
    low: float
    point: float
    high: float

    def as_dict(self) -> dict:
        return {"low": self.low, "point": self.point, "high": self.high}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Interval | None:
        """A stored interval, None when there is none (or it lacks a figure)."""
        if not isinstance(data, Mapping) or any(data.get(k) is None for k in ("low", "point", "high")):
            return None
        return cls(float(data["low"]), float(data["point"]), float(data["high"]))
