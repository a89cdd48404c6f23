"""How much a fix gains: the program's own time before (base) over after (head), with its bootstrap interval.

Each side's ratio to C says whether the gap is closed; this says by how much the program itself got faster,
which is what a fix is worth even when the head stays above the threshold.
"""
from __future__ import annotations

from collections.abc import Sequence

from bot.core.verify.claim_size import number
from bot.core.verify.stats import Interval, ratio_interval


def fix_gain(base: Sequence[float], head: Sequence[float]) -> Interval | None:
    """base / head of the language program's samples (same measure, same input); None without both."""
    if not base or not head:
        return None
    return ratio_interval(base, head)


def gain_text(gain: Interval) -> str:
    """'1.46x faster [1.31, 1.62]', or for a change that slows the program, '1.20x slower [1.10, 1.31]'."""
    if gain.point >= 1:
        return f"{number(gain.point)}x faster [{number(gain.low)}, {number(gain.high)}]"
    return f"{number(1 / gain.point)}x slower [{number(1 / gain.high)}, {number(1 / gain.low)}]"
