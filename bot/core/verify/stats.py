"""Deciding from noisy timings: a bootstrap interval on a ratio, verdicts from it, and when to stop sampling.

Bench hosts are noisy; a verdict from one run each is worthless. Samples arrive interleaved (A B A B ...);
after each pair the interval either decides (wholly on one side of the threshold) or sampling goes on until
the budget runs out, and the verdict is then `inconclusive`: never a guess.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bot.core.verify.interval import Interval

PASS, FAIL, INCONCLUSIVE = "pass", "fail", "inconclusive"
RESAMPLES = 2000
CONFIDENCE = 0.95


def ratio_interval(numerator: Sequence[float], denominator: Sequence[float], *, confidence: float = CONFIDENCE,
                   resamples: int = RESAMPLES, seed: int = 0) -> Interval:
    """Percentile bootstrap of median(numerator) / median(denominator); medians shrug off outliers."""
    a, b = np.asarray(numerator, dtype=float), np.asarray(denominator, dtype=float)
    if len(a) == 0 or len(b) == 0 or np.any(b <= 0) or np.any(a <= 0):
        raise ValueError("a ratio needs at least one positive sample on each side")
    rng = np.random.default_rng(seed)
    ratios = (np.median(a[rng.integers(0, len(a), (resamples, len(a)))], axis=1)
              / np.median(b[rng.integers(0, len(b), (resamples, len(b)))], axis=1))
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(ratios, [tail, 100 - tail])
    return Interval(float(low), float(np.median(a) / np.median(b)), float(high))


def decide_at_most(interval: Interval, threshold: float) -> str:
    """seq: the gap is gone when the whole interval of language/C is at or under the threshold (2.0x)."""
    if interval.high <= threshold:
        return PASS
    if interval.low > threshold:
        return FAIL
    return INCONCLUSIVE


def decide_at_least(interval: Interval, target: float) -> str:
    """par: the speedup reaches `target` (ideal x efficiency) when the whole interval is at or above it."""
    if interval.low >= target:
        return PASS
    if interval.high < target:
        return FAIL
    return INCONCLUSIVE


@dataclass(frozen=True)
class SamplingPlan:
    """How many interleaved pairs to take: at least `minimum`, at most `maximum`, deciding as soon as it can."""

    minimum: int = 5
    maximum: int = 30
    # Looking after every pair and stopping at the first decision inflates the error of a 95% interval
    # (optional stopping); each look therefore asks for 99%.
    confidence: float = 0.99

    def next_step(self, language: Sequence[float], c: Sequence[float], threshold: float,
                  decide: Callable[[Interval, float], str] = decide_at_most) -> tuple[str, Interval | None]:
        """`sample` while undecided and within budget; otherwise the verdict and its interval.

        `decide(interval, threshold)` judges the ratio: at most the threshold (seq language/C), or at least
        a target (par: one thread's time over N threads', against ideal x efficiency).
        """
        taken = min(len(language), len(c))
        if taken < self.minimum:
            return "sample", None
        interval = ratio_interval(language[:taken], c[:taken], confidence=self.confidence, seed=taken)
        verdict = decide(interval, threshold)
        if verdict == INCONCLUSIVE and taken < self.maximum:
            return "sample", interval
        return verdict, interval


def speedup_interval(one_thread: Sequence[float], n_threads: Sequence[float], **kwargs: Any) -> Interval:
    """Speedup of N threads over one: time(1) / time(N), with its bootstrap interval."""
    return ratio_interval(one_thread, n_threads, **kwargs)
