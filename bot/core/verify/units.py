"""The words and numbers of a measure: a bench run's samples are in `[verify] measure` (wall or user seconds,
instructions, or a count the runtime prints), and every table, chart and page names that unit, not seconds."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.core.verify.run_parts import RunResult


@dataclass(frozen=True)
class Unit:
    column: str  # a column's word after "median": "s", "user s", "instructions", "steps"
    axis: str  # a chart's axis and title: "seconds", "user seconds", "instructions", "steps"
    counted: bool  # a count is a whole number, never a time

    def format(self, value: float, digits: int = 4) -> str:
        """Seconds to `digits` significant digits (0.0911), a count grouped (1,234,567); a small count's median
        between two counts keeps its half (3.5)."""
        if abs(value) >= 10 ** digits or (self.counted and float(value).is_integer()):  # 12,345 s, not 1.234e+04
            return f"{round(value):,}"
        return f"{value:.{digits}g}"

    def text(self, value: float | None, digits: int = 4) -> str:
        """A value with its unit, as a page shows it alone: '0.0911 s', '1,234,567 steps'; '' for none."""
        return "" if value is None else f"{self.format(value, digits)} {self.column}"


def unit_of(measure: str | None) -> Unit:
    """A stored result without a measure predates measures: it was wall seconds."""
    if measure in (None, "", "wall"):
        return Unit("s", "seconds", False)
    if measure == "user":
        return Unit("user s", "user seconds", False)
    if measure.startswith("metric:"):
        return Unit(measure.removeprefix("metric:"), measure.removeprefix("metric:"), True)
    return Unit(measure, measure, True)  # instructions


def result_unit(result: RunResult) -> Unit:
    """A bench run's unit: every side of one run is measured alike, so the first says it."""
    return unit_of(result.sides[0].measure if result.sides else None)
