"""The statistics behind verdicts: bootstrap intervals, decisions, and when sampling stops."""
from __future__ import annotations

import numpy as np
import pytest

from bot.core.verify.stats import (
    FAIL,
    INCONCLUSIVE,
    PASS,
    Interval,
    SamplingPlan,
    decide_at_least,
    decide_at_most,
    ratio_interval,
    speedup_interval,
)


def noisy(rng, mean: float, n: int, cv: float = 0.1) -> list[float]:
    return list(mean * rng.lognormal(0, cv, n))


def test_the_interval_brackets_the_true_ratio_and_shrinks_with_samples():
    rng = np.random.default_rng(1)
    small = ratio_interval(noisy(rng, 3.0, 8), noisy(rng, 1.0, 8))
    large = ratio_interval(noisy(rng, 3.0, 60), noisy(rng, 1.0, 60))
    assert small.low < 3.0 < small.high and large.low < 3.0 < large.high
    assert large.high - large.low < small.high - small.low


def test_an_outlier_does_not_move_the_median_ratio():
    clean = ratio_interval([2.0] * 9 + [2.0], [1.0] * 10)
    spiked = ratio_interval([2.0] * 9 + [40.0], [1.0] * 10)
    assert clean.point == spiked.point == 2.0


@pytest.mark.parametrize("interval, at_most, at_least", [
    (Interval(1.2, 1.5, 1.9), PASS, FAIL),
    (Interval(2.1, 2.6, 3.0), FAIL, PASS),
    (Interval(1.8, 2.0, 2.2), INCONCLUSIVE, INCONCLUSIVE),
])
def test_verdicts_need_the_whole_interval_on_one_side(interval, at_most, at_least):
    assert decide_at_most(interval, 2.0) == at_most
    assert decide_at_least(interval, 2.0) == at_least


def test_sampling_stops_early_when_clear_and_gives_up_honestly_when_not():
    rng = np.random.default_rng(2)
    plan = SamplingPlan(minimum=5, maximum=30)
    assert plan.next_step([1.0] * 4, [1.0] * 4, 2.0) == ("sample", None)
    verdict, interval = plan.next_step(noisy(rng, 5.0, 5), noisy(rng, 1.0, 5), 2.0)
    assert verdict == FAIL and interval.low > 2.0
    verdict, _ = plan.next_step(noisy(rng, 2.0, 10, cv=0.3), noisy(rng, 1.0, 10, cv=0.3), 2.0)
    assert verdict == "sample"
    verdict, _ = plan.next_step(noisy(rng, 2.0, 30, cv=0.3), noisy(rng, 1.0, 30, cv=0.3), 2.0)
    assert verdict == INCONCLUSIVE


def test_par_speedup_against_ideal_times_efficiency():
    rng = np.random.default_rng(3)
    speedup = speedup_interval(noisy(rng, 8.0, 20), noisy(rng, 1.0, 20))  # 8 threads, near-ideal
    assert decide_at_least(speedup, 8 * 0.75) == PASS
    assert decide_at_least(speedup_interval(noisy(rng, 8.0, 20), noisy(rng, 4.0, 20)), 8 * 0.75) == FAIL


def test_bad_samples_are_refused():
    with pytest.raises(ValueError):
        ratio_interval([], [1.0])
    with pytest.raises(ValueError):
        ratio_interval([1.0], [0.0])


def test_the_interval_is_reproducible():
    assert ratio_interval([2.0, 2.1, 1.9], [1.0, 1.1, 0.9]) == ratio_interval([2.0, 2.1, 1.9], [1.0, 1.1, 0.9])
