"""How often the sequential bootstrap decides wrongly on noisy timings, against fixed-sample designs.

Run: .venv/bin/python bench/stats_noise.py [--trials 400]
Simulated bench runs: C takes 1.0 s; the language takes `true ratio` x that; every sample is lognormal with
the given coefficient of variation, and 5% of samples are outliers 1.5-3x slower (a host hiccup). The
verdict is about "is the language/C ratio at or under 2.0x"; a verdict is wrong when it says pass while the
true ratio is above 2.0 or fail while it is at or under. Inconclusive is never wrong, only unhelpful.
"""
from __future__ import annotations

import argparse

import numpy as np

from bot.core.verify.stats import FAIL, INCONCLUSIVE, PASS, SamplingPlan, decide_at_most, ratio_interval

THRESHOLD = 2.0
TRUE_RATIOS = (1.4, 1.8, 1.95, 2.05, 2.3, 3.0)


def samples(rng, ratio: float, cv: float, n: int) -> tuple[list[float], list[float]]:
    sigma = np.sqrt(np.log(1 + cv * cv))

    def draw(mean: float) -> np.ndarray:
        values = mean * rng.lognormal(-sigma * sigma / 2, sigma, n)
        hiccups = rng.random(n) < 0.05
        values[hiccups] *= rng.uniform(1.5, 3.0, hiccups.sum())
        return values

    return list(draw(ratio)), list(draw(1.0))


def sequential(language, c, plan: SamplingPlan) -> tuple[str, int]:
    for taken in range(plan.minimum, plan.maximum + 1):
        step, _ = plan.next_step(language[:taken], c[:taken], THRESHOLD)
        if step != "sample":
            return step, taken
    return INCONCLUSIVE, plan.maximum


def fixed(language, c, n: int) -> tuple[str, int]:
    return decide_at_most(ratio_interval(language[:n], c[:n], seed=n), THRESHOLD), n


def wrong(verdict: str, ratio: float) -> bool:
    return (verdict == PASS and ratio > THRESHOLD) or (verdict == FAIL and ratio <= THRESHOLD)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=400, help="simulated runs per true ratio and noise level")
    args = parser.parse_args()
    plan = SamplingPlan(minimum=5, maximum=30)
    designs = {"sequential 5..30": lambda lang, c: sequential(lang, c, plan),
               "fixed 10": lambda lang, c: fixed(lang, c, 10), "fixed 30": lambda lang, c: fixed(lang, c, 30)}
    print(f"{args.trials} trials per true ratio {TRUE_RATIOS}, threshold {THRESHOLD}x, 5% outliers")
    print(f"{'noise':>6} {'design':<18} {'wrong':>7} {'inconclusive':>13} {'samples/side':>13}")
    for cv in (0.10, 0.30):
        rng = np.random.default_rng(int(cv * 100))
        runs = [(ratio, *samples(rng, ratio, cv, 30)) for ratio in TRUE_RATIOS for _ in range(args.trials)]
        for name, design in designs.items():
            outcomes = [(ratio, *design(language, c)) for ratio, language, c in runs]
            wrong_rate = sum(wrong(v, r) for r, v, _ in outcomes) / len(outcomes)
            undecided = sum(v == INCONCLUSIVE for _, v, _ in outcomes) / len(outcomes)
            used = sum(n for *_, n in outcomes) / len(outcomes)
            print(f"{cv:>6.0%} {name:<18} {wrong_rate:>7.2%} {undecided:>13.1%} {used:>13.1f}")


if __name__ == "__main__":
    main()
