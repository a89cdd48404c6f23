"""Bisection as a pure function: the first-parent commits and the marks so far in, the next commit to measure
(or the culprit) out.

`commits` runs oldest to newest: the last commit known to pass first, the first commit known to fail last.
A step is marked `good` (the claim does not reproduce there), `bad` (it does) or `skip` (measured twice and
still undecided, or the commit would not build or run): a skipped commit is never guessed, so when skips
sit next to the culprit the answer is the range that holds it, as `git bisect` says "only skipped commits
left to test".
"""
from __future__ import annotations

from dataclasses import dataclass

GOOD, BAD, SKIP = "good", "bad", "skip"
RESAMPLE = "resample"  # an inconclusive first measurement: measured again with more samples before a skip


@dataclass(frozen=True)
class Probe:
    sha: str
    left: int  # commits still suspected, this one included: what the step narrows


@dataclass(frozen=True)
class Found:
    """The culprit: the first bad commit, right after a good one."""

    sha: str
    last_good: str


@dataclass(frozen=True)
class Unresolved:
    """The culprit is one of `suspects` (oldest first); all but the last could not be decided."""

    suspects: tuple[str, ...]
    last_good: str


@dataclass(frozen=True)
class NotBisectable:
    """The ends do not hold what a bisection needs (good at the first, bad at the last): nothing was guessed."""

    sha: str
    problem: str


def next_step(commits: tuple[str, ...], marks: dict[str, str]) -> Probe | Found | Unresolved | NotBisectable:
    """The ends are confirmed first (a guard's own measurement counts), then the commit nearest the middle of the
    suspected range that is neither decided nor skipped."""
    if len(commits) < 2:
        raise ValueError("a bisection needs a passing and a failing commit")
    for end, expected in ((commits[-1], BAD), (commits[0], GOOD)):
        mark = marks.get(end)
        if mark is None:
            return Probe(end, len(commits) - 1)
        if mark != expected:
            return NotBisectable(end, _END_PROBLEMS[(expected, mark)])
    first_bad = next(i for i, sha in enumerate(commits) if marks.get(sha) == BAD)
    # The last good commit before the first bad one: a good one after it means the claim came and went, and
    # the first arrival is what a bisection names.
    last_good = max(i for i in range(first_bad) if marks.get(commits[i]) == GOOD)
    untested = [i for i in range(last_good + 1, first_bad) if commits[i] not in marks]
    if not untested:
        suspects = commits[last_good + 1:first_bad + 1]
        if len(suspects) == 1:
            return Found(suspects[0], commits[last_good])
        return Unresolved(tuple(suspects), commits[last_good])
    middle = (last_good + first_bad) / 2
    chosen = min(untested, key=lambda i: (abs(i - middle), i))
    return Probe(commits[chosen], first_bad - last_good)


_END_PROBLEMS = {
    (BAD, GOOD): "the claim does not reproduce here, at the failing end: there is nothing to bisect",
    (BAD, SKIP): "the failing end could not be decided (measured twice, or it does not build or run)",
    (GOOD, BAD): "the claim reproduces here too, at the passing end: the regression is older; name an older "
                 "good commit (`good..bad`)",
    (GOOD, SKIP): "the passing end could not be decided (measured twice, or it does not build or run)",
}


def mark_of(reproduction: str, attempt: int) -> str:
    """A measured step's mark from its reproduction (bench_flow.reproduction): `reproduced` means the claimed
    gap is back (bad). Undecided is measured once more, then skipped; a build or run error is skipped at once."""
    if reproduction == "reproduced":
        return BAD
    if reproduction == "not reproduced":
        return GOOD
    if reproduction == "inconclusive" and attempt == 1:
        return RESAMPLE
    return SKIP


def steps_at_most(count: int) -> int:
    """Measurements a bisection of `count` commits (both ends included) needs without skips."""
    inner, steps = max(count - 2, 0), 0
    while inner > 0:
        inner //= 2
        steps += 1
    return steps
