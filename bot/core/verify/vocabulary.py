"""The shared vocabulary of bench runs and records, as enums: what a run was asked (purpose), where it is
(status), the interval test it stored (test), the answer people read (verdict), and where a record stands
(outcome, core/lead/standing.py).

StrEnum members are their stored values: `Purpose.GUARD == "guard"`, `str(Verdict.FIXED) == "fixed"`, so rows
written before these enums read back unchanged and JSON carries the plain words.
"""
from __future__ import annotations

from enum import StrEnum


class Purpose(StrEnum):
    FIX = "fix"  # a fix measured base against head
    REPRODUCE = "reproduce"  # a report's claim measured on the default branch
    GUARD = "guard"  # a fixed claim measured again on the default branch


class RunStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"


class Test(StrEnum):
    """The interval test a finished run stores; what it means depends on the purpose (verdict_words.answer)."""

    PASS = "pass"  # the measured ratio meets the threshold: the gap is not there
    FAIL = "fail"
    INCONCLUSIVE = "inconclusive"
    MISMATCH = "mismatch"
    IMPLAUSIBLE = "implausible"  # a speedup past the ideal (core/verify/sweep_checks.py): noisy or mismeasured
    ERROR = "error"
    CANCELLED = "cancelled"


class Verdict(StrEnum):
    """The JSON `verdict` enum (docs/verification.md, "What the verdicts mean")."""

    REPRODUCED = "reproduced"
    NOT_REPRODUCED = "not_reproduced"
    FIXED = "fixed"
    NOT_FIXED = "not_fixed"
    SLOWER = "slower_than_reference"
    WITHIN = "within_reference"
    INCONCLUSIVE = "inconclusive"
    MISMATCH = "output_mismatch"
    IMPLAUSIBLE = "implausible"
    ERROR = "error"
    CANCELLED = "cancelled"
    NO_REGRESSION = "no_regression"  # the suite's answers: does the head slow anything else down?
    REGRESSION = "regression"


class Outcome(StrEnum):
    """Where a record stands, one word for every view (core/lead/standing.py decides it)."""

    REPRODUCED = "reproduced"  # the gap is real; the report states no figure to compare, or understates it
    ACCURATE = "accurate"  # the gap is real and the claimed figure agrees with the measured one
    OVERSTATED = "overstated"  # the gap is real but much smaller than claimed
    NOT_REPRODUCED = "not reproduced"  # the gap the report claims is not there
    SLOWER = "slower than its reference"  # a `reference:` report: the gap to the reference is real
    INCONCLUSIVE = "inconclusive"  # measured, but the interval decides nothing yet
    MISMATCH = "output mismatch"  # the program and what it is measured against print different results
    IMPLAUSIBLE = "implausible"  # a speedup past the ideal: above ideal, noisy or mismeasured, so no figure counts
    UNMEASURED = "unmeasured"  # no run has measured it (or every run failed before a figure)
    FIXED = "fixed"  # a fix closes the gap on its branch; not merged yet
    FIXED_IN_MAIN = "fixed in main"  # a fix that closes the gap is on the default branch
    FASTER_NOT_FIXED = "faster but not fixed"  # a fix made the program faster, not enough to close the gap
    NO_EFFECT = "no effect"  # a fix that did not make the program measurably faster

    @property
    def measured(self) -> bool:
        """A valid measurement stands behind it: only these are ranked."""
        return self not in (Outcome.MISMATCH, Outcome.UNMEASURED, Outcome.IMPLAUSIBLE)

    @property
    def real(self) -> bool | None:
        """Is the report's gap real? None: nothing says yet."""
        if self in (Outcome.NOT_REPRODUCED,):
            return False
        if self in (Outcome.MISMATCH, Outcome.UNMEASURED, Outcome.INCONCLUSIVE, Outcome.IMPLAUSIBLE):
            return None
        return True
