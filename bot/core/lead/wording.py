"""The words of a standing: one phrase per outcome, the measure named wherever a figure appears, one rounding
rule (claim_size.number: three significant figures). Every view takes its sentences from here."""
from __future__ import annotations

from typing import TYPE_CHECKING

from bot.core.verify.claim_size import number
from bot.core.verify.vocabulary import Outcome

if TYPE_CHECKING:
    from bot.core.lead.standing import Figure, Standing

# What each outcome means for the team, and so its colour (the badge and label tones of verdict_words).
TONES = {Outcome.REPRODUCED: "real", Outcome.ACCURATE: "real", Outcome.OVERSTATED: "real",
         Outcome.SLOWER: "real", Outcome.NOT_REPRODUCED: "bogus", Outcome.INCONCLUSIVE: "unsure",
         Outcome.MISMATCH: "bad", Outcome.UNMEASURED: "broken", Outcome.FIXED: "good",
         Outcome.FIXED_IN_MAIN: "good", Outcome.FASTER_NOT_FIXED: "unsure", Outcome.NO_EFFECT: "bad",
         Outcome.IMPLAUSIBLE: "unsure"}


def measure_words(measure: str | None) -> str:
    """'wall time', 'user time', 'instructions', or the runtime's own count ('steps')."""
    if measure in (None, "", "wall"):
        return "wall time"
    if measure == "user":
        return "user time"
    return measure.removeprefix("metric:")


def ratio_text(value: float | None) -> str:
    return f"{number(value)}x" if value is not None else "–"


def interval_text(low: float | None, high: float | None) -> str:
    return f" [{number(low)}, {number(high)}]" if low is not None and high is not None else ""


def figure_text(point: float, low: float | None, high: float | None, measure: str | None) -> str:
    """'218x [138, 361] in instructions'."""
    return f"{ratio_text(point)}{interval_text(low, high)} in {measure_words(measure)}"


def gain_words(gain: Figure) -> str:
    """'1.43x faster [1.21, 1.49]', or '1.2x slower [1.1, 1.31]' for a change that slowed the program."""
    if gain.point >= 1:
        return f"{ratio_text(gain.point)} faster{interval_text(gain.low, gain.high)}"
    flip = lambda v: 1 / v if v else None  # noqa: E731
    return f"{ratio_text(1 / gain.point)} slower{interval_text(flip(gain.high), flip(gain.low))}"


def against(kind: str) -> str:
    """What a ratio measures the distance to: 'C', the reference, or the ideal speedup."""
    if kind == "ideal/achieved":
        return "ideal"
    return kind.split("/", 1)[1] if "/" in kind else "C"


def headline(s: Standing) -> str:
    """The outcome in one phrase: 'overstated', 'fixed in main since f9fb80b1c2d3'."""
    if s.outcome is Outcome.FIXED_IN_MAIN and s.fix and s.fix.commit:
        return f"fixed in main since {s.fix.commit[:12]}"
    if s.outcome is Outcome.IMPLAUSIBLE:
        return "implausible: above ideal, noisy or mismeasured"
    return str(s.outcome)


def said(s: Standing) -> str:
    """The whole standing as one sentence, each figure with its measure:
    'overstated: 218x [138, 361] in instructions; claimed 517x in wall time'."""
    parts = [headline(s)]
    claimed = f"claimed {s.claim.text()}" if s.claim.figure is not None else ""
    fix = s.fix
    if s.outcome in (Outcome.FIXED, Outcome.FIXED_IN_MAIN, Outcome.FASTER_NOT_FIXED, Outcome.NO_EFFECT) and fix:
        after = fix.after.text() if fix.after else ""
        gain = gain_words(fix.gain) if fix.gain else ""
        if s.outcome in (Outcome.FASTER_NOT_FIXED, Outcome.NO_EFFECT):
            still = f", still {ratio_text(fix.after.point)} from {against(s.kind)}" if fix.after else ""
            parts[0] += f": {gain or 'no gain measured'}{still}"
        else:
            parts[0] += f": {after}" if after else ""
            parts.append(f"the fix itself {gain}" if gain else "")
        where = "in main" if fix.merged else "on its branch, not merged"
        parts.append(f"fix {fix.ref} {where}")
        parts.append(f"was {s.measured.figure.text()}" if s.measured and not fix.merged else "")
        parts.append(f"the claim was overstated: {claimed}" if s.overstated else "")
    elif s.outcome in (Outcome.MISMATCH, Outcome.UNMEASURED):
        parts.append(f"{claimed}, not measured" if claimed else "not measured")
    elif s.measured:
        parts[0] += f": {'measured ' if s.outcome is not Outcome.SLOWER else ''}{s.measured.figure.text()}"
        parts.append(claimed)
        parts.append("measured on a busy host" if s.measured.noisy else "")
    else:
        parts.append(claimed)
    if s.culprit:
        last = f"; last good {s.culprit.last_good[:12]}" if s.culprit.last_good else ""
        parts.append(f"introduced by {s.culprit.commit[:12]}{last}")
    return "; ".join(p for p in parts if p)


def claim_cell(s: Standing) -> str:
    """The claim beside the measurement in tables: '517x in wall time'."""
    return s.claim.text() or "–"


def measured_cell(s: Standing) -> str:
    return s.measured.figure.text() if s.measured else "–"


def tone(s: Standing) -> str:
    return TONES[s.outcome]
