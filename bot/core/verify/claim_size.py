"""Is a claim the right size? A report may be right that a gap exists and wrong about how large it is
("517x" where the bench measures 218x [138, 361]); the verdict then says both numbers.

The claim is compared in its own terms: language/C (seq), head/reference (`reference:`), or ideal/achieved
speedup (par, where the bench measures the speedup itself and the interval is turned over).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.core.reports.records import PerfIssue

if TYPE_CHECKING:  # stats loads numpy, which the store's queries (and so `perfbot lint`) need not
    from bot.core.verify.stats import Interval

DEFAULT_FACTOR = 1.5


@dataclass(frozen=True)
class ClaimSize:
    claimed: float
    measured: Interval  # in the claim's terms
    off: bool  # outside the measured interval and more than the factor away from the measured ratio

    def text(self) -> str:
        m = self.measured
        return f"claimed {times(self.claimed)}, measured {times(m.point)} [{number(m.low)}, {number(m.high)}]"

    def as_dict(self) -> dict:
        return {"claimed": self.claimed, "measured": self.measured.as_dict(), "off": self.off}


def ratio_kind(track: str | None, reference: str | None = None) -> str:
    """The three kinds of ratio a report claims, never mixed in one column unlabelled."""
    if reference:
        return f"head/{reference.split('@')[-1] if reference.startswith('runtime@') else reference}"
    return "ideal/achieved" if track == "par" else "language/C"


def in_claim_terms(interval: Interval, par_threads: int | None = None) -> Interval:
    """A par bench interval is a speedup; the claim is ideal (threads) over it."""
    if not par_threads:
        return interval
    return type(interval)(par_threads / interval.high, par_threads / interval.point, par_threads / interval.low)


def judge(claimed: float | None, measured: Interval, factor: float = DEFAULT_FACTOR) -> ClaimSize | None:
    if claimed is None or claimed <= 0:
        return None
    # Outside the interval, and further than `factor` from the measured ratio: "517x" against 218x [138, 361]
    # is flagged; "250x" (inside) is not, nor "9.52x" against a tight 9.22x [9.0, 9.4] (outside, but close).
    outside = claimed > measured.high or claimed < measured.low
    off = outside and max(claimed / measured.point, measured.point / claimed) > factor
    return ClaimSize(claimed, measured, off)


def judge_claim(record: PerfIssue, measured: Interval | None, factor: float = DEFAULT_FACTOR) -> ClaimSize | None:
    """A report's ratio against a bench interval measured where the claim is (par: a speedup, turned over)."""
    if measured is None:
        return None
    return judge(record.ratio, in_claim_terms(measured, record.threads if record.track == "par" else None), factor)


def number(value: float) -> str:
    """Three significant figures at most, as people write ratios: 218, 9.2, 1.46."""
    if abs(value) >= 100:
        return f"{value:.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}".rstrip("0").rstrip(".")
    return f"{value:.2f}"


def times(value: float) -> str:
    return f"{number(value)}x"
