"""A scaling sweep as people see it: one table row per side and thread count, the curve as a mermaid
xychart with the ideal line, and the labels; all read from a bench run's stored result, without I/O."""
from __future__ import annotations

from dataclasses import dataclass

from bot.core.verify.claim_size import number
from bot.core.verify.interval import Interval
from bot.core.verify.run_parts import RunResult
from bot.core.verify.scaling import holds_text
from bot.core.verify.sweep_result import SweepSummary


@dataclass(frozen=True)
class ScalingRow:
    side: str
    threads: int
    median: float
    samples: int
    speedup: tuple[float, float, float]  # low, point, high
    efficiency: tuple[float, float, float]
    claimed: bool

    @property
    def speedup_text(self) -> str:
        """'2.41x [1.80, 3.11]': the one rounding rule (claim_size.number) of every figure perfbot shows."""
        low, point, high = self.speedup
        return f"{number(point)}x [{number(low)}, {number(high)}]"

    @property
    def efficiency_text(self) -> str:
        low, point, high = self.efficiency
        return f"{number(point)} [{number(low)}, {number(high)}]"


@dataclass(frozen=True)
class SideScaling:
    side: str
    rows: tuple[ScalingRow, ...]
    flattening: str  # "flattens after 4 threads (...)" or "no flattening measured"
    holds: str  # "holds 0.75 of ideal up to 8 threads"


def sweeps(result: RunResult) -> list[tuple[str, SweepSummary]]:
    """(side, sweep) for every side of a result that was swept (par runs since sweeps; none for seq)."""
    return [(side.side, side.sweep) for side in result.sides if side.sweep and side.sweep.points]


def _triple(interval: Interval) -> tuple[float, float, float]:
    return interval.low, interval.point, interval.high


def scaling_tables(result: RunResult) -> list[SideScaling]:
    """Each swept side's rows; the claimed count's row is the verdict's interval (scaling.summary), so it reads
    as the side's row of the verdict table does."""
    out = []
    for side, sweep in sweeps(result):
        rows = tuple(ScalingRow(side, p.threads, p.median, p.samples, _triple(p.speedup), _triple(p.efficiency),
                                p.threads == sweep.claimed) for p in sweep.points)
        out.append(SideScaling(side, rows, sweep.flattening.label(), holds_text(sweep)))
    return out


def mermaid_curve(slug: str, result: RunResult) -> str:
    """Speedup by thread count, one line per side and the ideal line last; GitHub renders it in a comment.
    The x axis is the counts measured, as categories: a sweep need not be powers of two."""
    swept = sweeps(result)
    if not swept:
        return ""
    counts = sorted({p.threads for _, sweep in swept for p in sweep.points})
    lines = []
    for _, sweep in swept:
        by_count = {p.threads: p.speedup.point for p in sweep.points}
        # A count one side lacks (a sweep changed between base and head) is drawn at zero rather than shifted.
        lines.append([by_count.get(n, 0.0) for n in counts])
    top = max([*counts, *(v for line in lines for v in line)]) * 1.1
    names = ", ".join(side for side, _ in swept)
    axis = ", ".join(f'"{n}"' for n in counts)
    body = "".join(f"    line [{', '.join(f'{v:.3g}' for v in line)}]\n" for line in lines)
    return (f'```mermaid\nxychart-beta\n    title "{slug}: speedup by threads ({names}; last line: ideal)"\n'
            f'    x-axis "threads" [{axis}]\n    y-axis "speedup (x)" 0 --> {top:.3g}\n{body}'
            f"    line [{', '.join(str(n) for n in counts)}]\n```")


def head_scaling(result: RunResult) -> SweepSummary | None:
    """The head side's sweep (what was measured at the commit the run is about), else None."""
    return next((sweep for side, sweep in reversed(sweeps(result)) if side == "head"), None)
