"""How sure the offline reviewer is: a logistic model of "these two reports overlap" over what it compares.

Retrieval's combined score ranks candidates; it is no probability (true overlaps sat at 0.2-0.5, hard
negatives at 0.4-0.5). What separates them is what the two root causes blame and in which words, so the
reviewer's confidence is P(overlap) from those features, fitted by `bench/dedup_eval.py --fit` on the training
sets (tests/data/dedup and tests/data/dedup_tune) and never on a held-out one.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

FEATURES = ("text", "shape", "locations", "places", "cause_words", "no_places", "mechanisms", "apart", "bottlenecks")
# Fitted by `bench/dedup_eval.py --fit` (L2 0.1) on the training sets; the intercept is the last entry.
WEIGHTS = (5.958, 1.3265, 4.8316, 3.2316, 5.2261, 2.0985, 2.5755, -3.7136, 3.7641, -7.5226)


@dataclass(frozen=True)
class PairFeatures:
    text: float         # retrieval's word similarity
    shape: float        # MinHash Jaccard of the programs' shapes
    locations: float    # rare root-cause places in common (retrieval's)
    places: float       # share of the shorter list of places the two root causes blame
    cause_words: float  # Jaccard of the two root causes' mechanism words
    no_places: float    # 1 when a root cause names no place: `places` says nothing then
    mechanisms: float = 0.0  # Jaccard of the mechanism families the two root causes describe (core/dedup/mechanisms)
    apart: float = 0.0       # 1 when both describe mechanisms and share none: one kernel, different bottlenecks
    bottlenecks: float = 0.0  # bottleneck families both describe (a lock, a launch, growth), 0, 0.5 or 1 for 2+

    def vector(self) -> tuple[float, ...]:
        return tuple(getattr(self, name) for name in FEATURES)


def overlap_probability(features: PairFeatures, weights: tuple[float, ...] = WEIGHTS) -> float:
    z = weights[-1] + sum(w * x for w, x in zip(weights, features.vector(), strict=False))
    return 1 / (1 + math.exp(-z))


def fit(rows: list[tuple[PairFeatures, bool]], l2: float = 0.1, steps: int = 50) -> tuple[float, ...]:
    """Logistic regression by Newton's method (a few hundred pairs), the intercept unpenalised."""
    x = np.array([(*f.vector(), 1.0) for f, _ in rows])
    y = np.array([1.0 if label else 0.0 for _, label in rows])
    penalty = np.diag([l2] * len(FEATURES) + [0.0])
    w = np.zeros(x.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-x @ w))
        gradient = x.T @ (p - y) + penalty @ w
        hessian = (x.T * (p * (1 - p))) @ x + penalty
        w = w - np.linalg.solve(hessian, gradient)
    return tuple(round(float(v), 4) for v in w)
