"""How often the claimed-vs-measured flag fires on honest claims, and how often it catches a claim off in size.

Run: .venv/bin/python bench/claim_flag.py [--trials 2000] [--cv 0.10]
A simulated report: C takes 1.0 s, the language `true ratio` x that; every timing is lognormal with the
given coefficient of variation, and 5% of them are host hiccups 1.5-3x slower. An honest author claims the
ratio of the medians of their own 5 runs of each (noisy, but honest). perfbot then measures as
`perfbot verify` does: interleaved pairs through bot/core/stats.SamplingPlan (at least 5, at most 30, deciding
against the 2.0x threshold at 99% per look), and bot/core/claim_size.judge flags the claim when it lies
outside the final interval by more than the factor (default 1.5). A false alarm is a flag on an honest claim.
The same runs with the claim multiplied by `--off` (517/218 = 2.37 in the report that prompted this) show
how often a claim wrong in size is caught. Exits 1 when the false-alarm rate is above 1%.
"""
from __future__ import annotations

import argparse

import numpy as np

from bot.core.verify.claim_size import DEFAULT_FACTOR, judge
from bot.core.verify.stats import SamplingPlan

THRESHOLD = 2.0
TRUE_RATIOS = (2.5, 9.5, 60.0, 218.0)
LIMIT = 0.01


def timings(rng, mean: float, cv: float, n: int) -> np.ndarray:
    sigma = np.sqrt(np.log(1 + cv * cv))
    values = mean * rng.lognormal(-sigma * sigma / 2, sigma, n)
    hiccups = rng.random(n) < 0.05
    values[hiccups] *= rng.uniform(1.5, 3.0, hiccups.sum())
    return values


def measured_interval(rng, ratio: float, cv: float, plan: SamplingPlan):
    language, c = list(timings(rng, ratio, cv, plan.maximum)), list(timings(rng, 1.0, cv, plan.maximum))
    for taken in range(plan.minimum, plan.maximum + 1):
        step, interval = plan.next_step(language[:taken], c[:taken], THRESHOLD)
        if step != "sample":
            return interval
    return interval


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--cv", type=float, default=0.10)
    parser.add_argument("--factor", type=float, default=DEFAULT_FACTOR)
    parser.add_argument("--off", type=float, default=517 / 218)
    args = parser.parse_args()
    rng = np.random.default_rng(29)
    plan = SamplingPlan()
    worst = 0.0
    print(f"cv {args.cv:.0%}, factor {args.factor:g}, {args.trials} trials per ratio; claims off by {args.off:.2f}x")
    print(f"{'true ratio':>10} {'false alarms (honest)':>22} {'caught (off in size)':>21}")
    for ratio in TRUE_RATIOS:
        alarms = caught = 0
        for _ in range(args.trials):
            honest = float(np.median(timings(rng, ratio, args.cv, 5)) / np.median(timings(rng, 1.0, args.cv, 5)))
            interval = measured_interval(rng, ratio, args.cv, plan)
            alarms += judge(honest, interval, args.factor).off
            caught += judge(honest * args.off, interval, args.factor).off
        rate = alarms / args.trials
        worst = max(worst, rate)
        print(f"{ratio:>10g} {rate:>22.2%} {caught / args.trials:>21.1%}")
    print(f"worst false-alarm rate {worst:.2%} (limit {LIMIT:.0%}): {'ok' if worst <= LIMIT else 'TOO HIGH'}")
    return 0 if worst <= LIMIT else 1


if __name__ == "__main__":
    raise SystemExit(main())
