"""The words a verdict is told in, and the colour it is shown in: one vocabulary for the CLI, JSON, comments,
statuses, labels, the dashboard and the digest.

A bench run stores the interval test it made (`pass`: the measured ratio meets the threshold, `fail`: it
does not, `inconclusive`, `mismatch`, `error`, `cancelled`). What that test means depends on what was asked:
a fix that passes is **fixed**, a claim that passes was **not reproduced** (the gap it reports is not there),
a guard that passes still holds. People only ever see the answer, never the test.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from bot.core.verify.vocabulary import Outcome, Purpose, Test, Verdict

if TYPE_CHECKING:
    from bot.core.verify.bench_run import BenchRun
    from bot.core.verify.run_parts import RunResult

# The JSON `verdict` enum (docs/verification.md, "What the verdicts mean"), named here as callers know it.
REPRODUCED, NOT_REPRODUCED, FIXED = Verdict.REPRODUCED, Verdict.NOT_REPRODUCED, Verdict.FIXED
NOT_FIXED, SLOWER, WITHIN, INCONCLUSIVE = Verdict.NOT_FIXED, Verdict.SLOWER, Verdict.WITHIN, Verdict.INCONCLUSIVE
MISMATCH, ERROR, CANCELLED = Verdict.MISMATCH, Verdict.ERROR, Verdict.CANCELLED
# A sweep whose speedup reaches past the ideal (core/verify/sweep_checks.py): no clean verdict either way.
IMPLAUSIBLE, IMPLAUSIBLE_NOTE = Verdict.IMPLAUSIBLE, "above ideal, noisy or mismeasured"  # a label holds the first
KEYS = tuple(v for v in Verdict if v not in (Verdict.NO_REGRESSION, Verdict.REGRESSION))
# A verdict taken on a busy host, posted at once and measured again later (core/verify/noise.py).
NOISY_TEXT = "noisy"
WAITING_TEXT = "waiting for a quiet host, next try at {at}"
REPLACES_TEXT = "the next measurement replaces this verdict"

# What a result means for the team, and so its colour. Only a fix that holds is green.
GOOD, BAD, REAL, BOGUS, UNSURE, BROKEN = "good", "bad", "real", "bogus", "unsure", "broken"
COLOURS = {GOOD: "0e8a16", BAD: "d93f0b", REAL: "e36209", BOGUS: "b60205", UNSURE: "fbca04", BROKEN: "cfd3d7"}
ICONS = {GOOD: "✅", BAD: "❌", REAL: "🔶", BOGUS: "⛔", UNSURE: "❔", BROKEN: "⚠️"}
STATUS = {GOOD: "success", BAD: "failure", REAL: "failure", BOGUS: "failure", UNSURE: "failure", BROKEN: "error"}
CLAIM_PURPOSES = (Purpose.REPRODUCE, Purpose.GUARD)


@dataclass(frozen=True)
class Answer:
    key: Verdict
    text: str  # "reproduced", "within 1.5x of runtime@v1"
    tone: str  # GOOD | BAD | REAL | BOGUS | UNSURE | BROKEN
    note: str = ""  # "claimed 517x, measured 218x [138, 361]" when the claim is off in size

    @property
    def said(self) -> str:
        if self.key == IMPLAUSIBLE:
            return f"{self.text}: {self.note}"  # "implausible: above ideal, noisy or mismeasured"
        return f"{self.text}; {self.note}" if self.note else self.text

    @property
    def icon(self) -> str:
        return ICONS[self.tone]

    @property
    def colour(self) -> str:
        return COLOURS[self.tone]

    @property
    def status_state(self) -> str:
        """A commit status has no orange: everything but a fix that holds is a failure, a broken run an error."""
        return STATUS[self.tone]


def answer(purpose: str, test: str | None, *, against: str = "C", factor: float | None = None) -> Answer | None:
    """The answer to what `purpose` asked, from the interval test a run made; None before there is one.

    `against`/`factor`: a `reference:` report measured against another revision (`runtime@v1`), within `factor`.
    """
    if not test:
        return None
    if test == Test.MISMATCH:
        return Answer(MISMATCH, "output mismatch", BAD)
    if test in (Test.ERROR, Test.CANCELLED):
        return Answer(Verdict(test), test, BROKEN)
    if test == Test.IMPLAUSIBLE:
        return Answer(IMPLAUSIBLE, IMPLAUSIBLE, UNSURE, IMPLAUSIBLE_NOTE)
    if test not in (Test.PASS, Test.FAIL):
        return Answer(INCONCLUSIVE, "inconclusive", UNSURE)
    held = test == Test.PASS  # the measured ratio meets the threshold: the gap is gone
    if purpose == Purpose.FIX:
        return Answer(FIXED, "fixed", GOOD) if held else Answer(NOT_FIXED, "not fixed", BAD)
    guard = purpose == Purpose.GUARD
    if against != "C" and not _threads(against):  # a par side is "against" its thread count, not a reference
        name = against.split(" (")[0]
        within = f"within {factor:g}x of {name}" if factor else f"within the allowed factor of {name}"
        return (Answer(WITHIN, within, GOOD if guard else BOGUS) if held
                else Answer(SLOWER, f"slower than {name}", BAD if guard else REAL))
    return (Answer(NOT_REPRODUCED, "not reproduced", GOOD if guard else BOGUS) if held
            else Answer(REPRODUCED, "reproduced", BAD if guard else REAL))


def _threads(against: str) -> bool:
    """'8 threads', '1 thread': what a par run measures its speedup at."""
    words = against.split()
    return len(words) == 2 and words[0].isdigit() and words[1] in ("thread", "threads")


def of_side(purpose: str, label: str, decision: str | None, against: str = "C",
            factor: float | None = None) -> Answer | None:
    """One side's own interval test: the base of a fix measures the claim, the head what was asked."""
    return answer("reproduce" if label == "base" else purpose, decision, against=against, factor=factor)


def of_run(run: BenchRun) -> Answer | None:
    """A stored bench run's answer; None while it is not finished."""
    return of_result(run.purpose, run.verdict, run.result) if run.done else None


def of_result(purpose: str, test: str | None, result: RunResult) -> Answer | None:
    """A measurement's answer: its purpose, test and what its sides were measured against."""
    last = result.last
    found = answer(purpose, test, against=last.against if last else "C", factor=last.factor if last else None)
    if found is not None and found.key == NOT_FIXED:
        # the words of the record's outcome (core/lead/standing.py): faster but not enough is never told (or
        # coloured) like a fix that did nothing, and one that did nothing is "no effect" on every page
        faster = result.gain is not None and result.gain.low > 1
        found = Answer(NOT_FIXED, str(Outcome.FASTER_NOT_FIXED if faster else Outcome.NO_EFFECT), UNSURE if faster
                       else BAD)
    claim = result.claim
    if found is None or found.key in (MISMATCH, ERROR, CANCELLED):
        return found
    notes = [found.note] if found.note else []
    if claim is not None and claim.off and found.key != IMPLAUSIBLE:  # no claim is sized on a mismeasurement
        notes.append(claim.text())
    if result.noisy:  # taken on a busy host: said beside the answer
        notes.append(NOISY_TEXT)
    return replace(found, note="; ".join(notes)) if notes else found


def of_fix(verdict: str | None) -> Answer | None:
    """The record's latest fix verdict (records.verdict)."""
    return answer("fix", verdict)


def text(answer_: Answer | None, default: str = "-") -> str:
    return answer_.text if answer_ else default


# The suite is asked whether the head slows anything else down.
SUITE = {"pass": Answer(Verdict.NO_REGRESSION, "no regression", GOOD),
         "fail": Answer(Verdict.REGRESSION, "regression", BAD),
         "inconclusive": Answer(INCONCLUSIVE, "inconclusive", UNSURE)}


def of_suite(test: str | None) -> Answer | None:
    return SUITE.get(test or "")
