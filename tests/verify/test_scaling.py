"""The pure side of scaling sweeps: which counts, in what order, the points, and where a curve flattens."""
from __future__ import annotations

import numpy as np

from bot.core.verify.scaling import flattening, holds_to, round_order, scaling_points, summary, sweep_counts, sweep_text


def amdahl(serial: float, counts, noise: float = 0.01, samples: int = 9, seed: int = 1) -> dict[int, list[float]]:
    """Times of a program whose `serial` fraction does not parallelise, with multiplicative noise."""
    rng = np.random.default_rng(seed)
    return {n: list((serial + (1 - serial) / n) * (1 + noise * rng.standard_normal(samples))) for n in counts}


def test_the_counts_are_the_configured_or_the_cores_with_one_and_the_claim():
    assert sweep_counts((1, 2, 4, 8, 12), 64, 6) == (1, 2, 4, 6, 8, 12)
    assert sweep_counts((3, 12), None, 12) == (1, 3, 12)
    assert sweep_counts(None, 3, 2) == (1, 2, 3)
    assert sweep_counts(None, 12, 16) == (*tuple(range(1, 13)), 16)
    assert sweep_counts(None, None, 8) == (1, 8)  # a host that cannot tell: the baseline and the claim


def test_rounds_go_up_then_down():
    assert [round_order((1, 2, 4), n) for n in range(3)] == [(1, 2, 4), (4, 2, 1), (1, 2, 4)]


def test_an_amdahl_curve_flattens_where_a_step_gains_under_half_of_ideal():
    # serial 0.2: speedups 1, 1.67, 2.5, 3.33, 3.75; the steps gain 0.67, 0.50, 0.33, 0.25 of ideal.
    samples = amdahl(0.2, (1, 2, 4, 8, 12))
    flat = flattening(samples)
    assert (flat.after, flat.to) == (4, 8) and flat.gain.high < 0.5 < flattening(samples, gain=0.6).gain.high
    assert flattening(samples, gain=0.6).after == 2 and flattening(samples, gain=0.2).after is None
    assert flat.label().startswith("flattens after 4 threads (4→8 gains 0.3")
    points = scaling_points(samples)
    assert [p.threads for p in points] == [1, 2, 4, 8, 12]
    assert abs(points[-1].speedup.point - 3.75) < 0.1 and abs(points[-1].efficiency.point - 3.75 / 12) < 0.01
    assert holds_to(points, 0.6) == 4 and holds_to(points, 0.9) is None
    assert flattening(amdahl(0.0, (1, 2, 4, 8, 12))).after is None


def test_a_noisy_step_is_not_called_flat_on_its_point_alone():
    # Both pairs have the same medians (1.0 and 0.75: a step gaining 0.33 of ideal); only the spread differs.
    tight = {1: [0.99, 1.0, 1.01, 1.0, 1.0], 2: [0.75, 0.74, 0.76, 0.75, 0.75]}
    noisy = {1: [1.0, 1.4, 0.7, 1.2, 0.8], 2: [0.75, 0.5, 0.9, 0.6, 0.8]}
    assert flattening(tight).after == 1
    wide = flattening(noisy)
    assert wide.after is None
    assert scaling_points(noisy)[1].speedup.point == scaling_points(tight)[1].speedup.point


def test_a_summary_keeps_every_sample_and_says_it_in_one_line():
    samples = amdahl(0.5, (1, 2, 4))
    kept = summary(samples, claimed=4, par_efficiency=0.75)
    assert kept.counts == (1, 2, 4) and list(kept.seconds[4]) == samples[4] and kept.claimed == 4
    assert kept.as_dict()["seconds"]["4"] == samples[4]
    assert [p.threads for p in kept.points] == [1, 2, 4] and kept.holds_to is None
    text = sweep_text(kept)
    assert text.startswith("sweep efficiency 1.00 at 1, 0.67 at 2, 0.40 at 4; below 0.75 of ideal from 2 threads")
    assert "flattens after 1 thread (1→2 gains 0.3" in text
    assert scaling_points({2: [1.0]}) == () and sweep_text(summary({2: [1.0]}, 2, 0.75)) == ""
