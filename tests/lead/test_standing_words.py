"""The sentences a standing is said in (core/lead/wording.py), for the cases issue #39's reader could not tell
apart: a fix that helped without closing the gap, a fix already in main, an overstated claim measured in another
measure than it was claimed in, a reference report bisected to its culprit. Every view prints this sentence
(tests/lead/test_standing_consistency.py); here is what it says."""
from __future__ import annotations

from datetime import UTC, datetime

from bot.core.lead.facts import BisectFact, FixFact, RecordFact, RunFact, SidePoint
from bot.core.lead.standing import standing_of
from bot.core.lead.wording import said
from bot.core.verify.vocabulary import Outcome, Purpose, RunStatus
from bot.core.verify.vocabulary import Test as IntervalTest

AT = datetime(2026, 6, 1, 12, tzinfo=UTC)
FIX = "f9fb80b" + "0" * 33


def record(**kw) -> RecordFact:
    return RecordFact(**{"slug": "perf_x", "title": "X", "track": "seq", "backend": "c", "threads": None,
                         "ratio": 517.0, "state": "open", "merged_into": None, "reproduced": None,
                         "created_at": AT, **kw})


def run(id_: int, purpose: Purpose, verdict: IntervalTest, *sides: SidePoint, **kw) -> RunFact:
    return RunFact(id_, "perf_x", "mini", purpose, RunStatus.DONE, verdict, None, AT, AT, sides, None,
                   **{"head_sha": FIX, "base_sha": "a" * 40, **kw})


def test_a_fix_in_main_that_helped_without_closing_the_gap_says_both_numbers():
    fix = run(1, Purpose.FIX, IntervalTest.FAIL, SidePoint("base", 169.0, 160.0, 175.0, "fail"),
              SidePoint("head", 118.0, 110.0, 125.0), gain=(1.21, 1.43, 1.49), in_main=True)
    s = standing_of(record(ratio=150.0, fix=FIX[:7]), [fix])
    assert s.outcome is Outcome.FASTER_NOT_FIXED and s.fix is not None and s.fix.merged
    assert said(s).startswith("faster but not fixed: 1.43x faster [1.21, 1.49], still 118x from C; "
                              f"fix {FIX[:7]} in main")


def test_a_fix_in_main_that_closes_the_gap_is_fixed_in_main_since_its_commit():
    fix = run(1, Purpose.FIX, IntervalTest.PASS, SidePoint("base", 60.0, 55.0, 66.0, "fail"),
              SidePoint("head", 1.1, 1.0, 1.2), gain=(40.0, 52.0, 60.0), in_main=True)
    s = standing_of(record(ratio=63.6, fix=FIX[:7]), [fix])
    assert s.outcome is Outcome.FIXED_IN_MAIN
    assert said(s) == (f"fixed in main since {FIX[:12]}: 1.10x [1.00, 1.20] in wall time; the fix itself "
                       f"52x faster [40, 60]; fix {FIX[:7]} in main")


def test_an_overstated_claim_names_both_figures_and_both_measures():
    claim = run(1, Purpose.REPRODUCE, IntervalTest.FAIL, SidePoint("head", 218.0, 138.0, 361.0), measure="instructions")
    s = standing_of(record(ratio=517.0), [claim])
    assert s.outcome is Outcome.OVERSTATED
    assert said(s) == "overstated: measured 218x [138, 361] in instructions; claimed 517x in wall time"


def test_a_reference_report_bisected_says_its_culprit_and_no_guard_words():
    claim = run(1, Purpose.REPRODUCE, IntervalTest.FAIL, SidePoint("head", 1.31, 1.21, 1.42))
    found = BisectFact(3, "perf_x", "found", "c" * 40, f"introduced by {'c' * 12}; last good {'b' * 12}", "1" * 40,
                       "2" * 40)
    s = standing_of(record(ratio=1.3, reference="runtime@v1"), [claim], (), [found])
    assert s.outcome is Outcome.SLOWER and s.culprit is not None
    text = said(s)
    assert text == (f"slower than its reference: 1.31x [1.21, 1.42] in wall time; claimed 1.30x in wall time; "
                    f"introduced by {'c' * 12}; last good {'b' * 12}")
    assert "held" not in text and "came back" not in text and "again" not in text


def test_an_unmerged_fix_branch_names_the_branch_and_what_main_measures():
    fix = run(1, Purpose.FIX, IntervalTest.PASS, SidePoint("base", 9.2, 9.0, 9.4, "fail"),
              SidePoint("head", 1.5, 1.4, 1.6), head_sha="b" * 40)
    branch = FixFact("perf_x", "fix/x", 7, "pr", "open", None, AT, AT, "b" * 40)
    s = standing_of(record(ratio=9.5), [fix], [branch])
    assert s.outcome is Outcome.FIXED and not s.fix.merged  # type: ignore[union-attr]
    assert said(s) == ("fixed: 1.50x [1.40, 1.60] in wall time; fix fix/x on its branch, not merged; "
                       "was 9.20x [9.00, 9.40] in wall time")
