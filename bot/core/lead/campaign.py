"""A campaign's counts and rankings, computed in one place from the records' standings: every tile, header,
ranking and filter reads these, so the overview, the digest and `perfbot list` never disagree."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from bot.core.lead.standing import Standing
from bot.core.verify.vocabulary import Outcome


@dataclass(frozen=True)
class Tally:
    live: int  # open or regressed: what a lead still acts on
    outcomes: tuple[tuple[Outcome, int], ...]  # live records by outcome, in the enum's order
    overstated: int  # live records whose claim is much larger than measured
    ranked: int  # live records with a valid measurement
    apart: int  # live records listed apart: mismatch, unmeasured, defective
    culprits: int  # live records bisected to a culprit
    fixed_in_main: int  # every record, live or closed, whose fix is on the default branch and holds
    waiting_merge: int  # fixes that hold on their branch, not merged yet
    fixes: int  # records with a fix known (attached, named by `fix:`, or measured)

    def count(self, outcome: Outcome) -> int:
        return dict(self.outcomes).get(outcome, 0)


def tally(standings: Iterable[Standing]) -> Tally:
    every = list(standings)
    live = [s for s in every if s.live]
    counts = Counter(s.outcome for s in live)
    return Tally(len(live), tuple((o, counts[o]) for o in Outcome if counts[o]),
                 sum(s.overstated for s in live), sum(s.ranked_figure is not None for s in live),
                 sum(s.ranked_figure is None for s in live), sum(s.culprit is not None for s in live),
                 sum(s.fixed_in_main for s in every), sum(s.waiting_merge for s in live),
                 sum(s.fix is not None for s in live))


def ranking(standings: Iterable[Standing]) -> tuple[tuple[Standing, ...], tuple[Standing, ...]]:
    """Live records with a measured figure, worst first within each kind of ratio; and those listed apart
    (never ranked by their claim), by slug."""
    live = [s for s in standings if s.live]
    ranked = sorted((s for s in live if s.ranked_figure is not None), key=rank_key)
    apart = sorted((s for s in live if s.ranked_figure is None), key=apart_key)
    return tuple(ranked), tuple(apart)


def rank_key(s: Standing) -> tuple:
    """The one order of every ranking: language/C first, then each other kind; worst measured figure on top."""
    return s.kind != "language/C", s.kind, -(s.ranked_figure or 0), s.slug


def apart_key(s: Standing) -> tuple:
    """The one order of what is listed apart: by outcome, then slug; never by the claim."""
    return str(s.outcome), s.slug


def act_first(standings: Iterable[Standing]) -> tuple[tuple[Standing, ...], tuple[Standing, ...],
                                                     tuple[Standing, ...]]:
    """What a lead acts on first: the culprits found, the overstated claims, the fixes waiting for merge."""
    live = sorted((s for s in standings if s.live), key=lambda s: s.slug)
    return (tuple(s for s in live if s.culprit), tuple(s for s in live if s.overstated),
            tuple(s for s in live if s.waiting_merge))
