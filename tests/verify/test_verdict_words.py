"""One vocabulary for verdicts: the answer to what was asked, and a colour that says what it means."""
from __future__ import annotations

import pytest

from bot.core.tracker.issue_view import LABEL_COLORS, RecordView, issue_spec
from bot.core.verify import verdict_words as words
from bot.core.verify.bench_run import BenchRun, RunResult
from bot.core.verify.bench_view import side_rows, status_description, status_state
from bot.core.verify.claim_size import in_claim_terms, judge
from bot.core.verify.stats import Interval
from bot.core.verify.vocabulary import Purpose, RunStatus
from bot.core.verify.vocabulary import Test as IntervalTest

GREEN = "0e8a16"


@pytest.mark.parametrize("purpose, test, key, text, state", [
    ("reproduce", "fail", "reproduced", "reproduced", "failure"),  # a real slowdown: not green
    ("reproduce", "pass", "not_reproduced", "not reproduced", "failure"),  # a bogus claim: not green
    ("fix", "pass", "fixed", "fixed", "success"),
    ("fix", "fail", "not_fixed", "not fixed", "failure"),
    ("guard", "pass", "not_reproduced", "not reproduced", "success"),  # the fix still holds
    ("guard", "fail", "reproduced", "reproduced", "failure"),
    ("fix", "inconclusive", "inconclusive", "inconclusive", "failure"),
    ("reproduce", "mismatch", "output_mismatch", "output mismatch", "failure"),
    ("fix", "error", "error", "error", "error"),
])
def test_each_interval_test_answers_what_was_asked(purpose, test, key, text, state):
    told = words.answer(purpose, test)
    assert (told.key, told.text, told.status_state) == (key, text, state) and told.key in words.KEYS


def test_only_a_fix_that_holds_is_green():
    greens = {(p, t) for p in ("fix", "reproduce", "guard") for t in ("pass", "fail", "inconclusive", "mismatch")
              if words.answer(p, t).colour == GREEN}
    assert greens == {("fix", "pass"), ("guard", "pass")}
    greens = {label for label, colour in LABEL_COLORS.items() if label.startswith("outcome: ") and colour == GREEN}
    assert greens == {"outcome: fixed", "outcome: fixed in main"}  # a record's label: only a fix that holds


def test_a_fix_that_made_the_program_faster_is_not_told_like_one_that_did_nothing():
    faster = run("fix", "fail", gain={"low": 1.21, "point": 1.43, "high": 1.49})
    nothing = run("fix", "fail", gain={"low": 0.95, "point": 1.02, "high": 1.1})
    assert (words.of_run(faster).text, words.of_run(faster).tone) == ("faster but not fixed", words.UNSURE)
    assert (words.of_run(nothing).text, words.of_run(nothing).tone) == ("no effect", words.BAD)  # the outcome's word


def test_a_par_claim_is_told_in_the_claim_words_not_as_a_reference():
    assert words.answer("reproduce", "pass", against="2 threads").text == "not reproduced"
    assert words.answer("reproduce", "fail", against="8 threads").text == "reproduced"


def test_a_reference_claim_is_told_against_its_reference():
    slower = words.answer("reproduce", "fail", against="runtime@v1 (0123456789ab)", factor=1.2)
    within = words.answer("reproduce", "pass", against="runtime@v1 (0123456789ab)", factor=1.2)
    assert (slower.key, slower.text) == ("slower_than_reference", "slower than runtime@v1")
    assert (within.key, within.text) == ("within_reference", "within 1.2x of runtime@v1")
    assert words.answer("fix", "pass", against="runtime@v1 (0123456789ab)", factor=1.2).text == "fixed"


def test_a_claim_off_in_size_is_flagged_with_both_numbers_and_an_honest_one_is_not():
    measured = Interval(138.0, 218.0, 361.0)
    off = judge(517.0, measured, 1.5)
    assert off.off and off.text() == "claimed 517x, measured 218x [138, 361]"
    assert not judge(300.0, measured, 1.5).off and not judge(150.0, measured, 1.5).off  # inside
    assert not judge(9.52, Interval(9.0, 9.22, 9.4), 1.5).off  # outside a tight interval, but close to it
    assert judge(130.0, measured, 1.5).off  # understated by more than the factor, too
    assert not judge(517.0, measured, 2.5).off  # the factor is the repository's
    assert judge(None, measured) is None
    # par: the bench measures a speedup; the claim is ideal/achieved, so 8 threads at 2x [1.6, 2.5] is 4x [3.2, 5]
    assert in_claim_terms(Interval(1.6, 2.0, 2.5), 8) == Interval(3.2, 4.0, 5.0)


def run(purpose: str, test: str, claim: dict | None = None, gain: dict | None = None) -> BenchRun:
    """A finished run as the store reads it from the JSON below."""
    sides = [{"side": "base", "sha": "a" * 40, "language_seconds": [4.0], "c_seconds": [1.0], "decision": "fail",
              "interval": {"low": 3.5, "point": 4.0, "high": 4.5}},
             {"side": "head", "sha": "b" * 40, "language_seconds": [1.1], "c_seconds": [1.0], "decision": test,
              "interval": {"low": 1.0, "point": 1.1, "high": 1.2}}]
    return BenchRun(id=3, repo="o/r", slug="perf_x", purpose=Purpose(purpose), status=RunStatus.DONE, head="b" * 40,
                    verdict=IntervalTest(test),
                    result=RunResult.from_json({"verdict": test, "sides": sides, "claim": claim, "gain": gain}))


def test_a_run_is_shown_in_words_in_its_status_and_its_rows():
    claim = {"claimed": 12.0, "measured": {"low": 3.5, "point": 4.0, "high": 4.5}, "off": True}
    fixed = run("fix", "pass", claim)
    assert status_state(fixed) == "success"
    assert status_description(fixed) == "fixed 1.10x [1.00, 1.20]; claimed 12x, measured 4.00x [3.50, 4.50]"
    assert [row.decision for row in side_rows(fixed.result, "fix")] == ["reproduced", "fixed"]
    assert words.of_run(fixed).said == "fixed; claimed 12x, measured 4.00x [3.50, 4.50]"
    assert status_description(run("reproduce", "fail")) == "reproduced 1.10x [1.00, 1.20]"
    assert status_state(run("reproduce", "fail")) == "failure"


def test_a_records_issue_carries_its_standing_as_a_label_and_in_its_table():
    from datetime import UTC, datetime

    from bot.core.lead.facts import RecordFact, RunFact, SidePoint
    from bot.core.lead.standing import standing_of

    at = datetime(2026, 1, 1, tzinfo=UTC)
    record = RecordFact("perf_x", "X", "seq", "c", None, 9.0, "open", None, None, at, fix="fix/x")
    fixed = RunFact(1, "perf_x", "mini", "fix", "done", "pass", None, at, at,
                    (SidePoint("base", 8.0, 7.5, 8.5, "fail"), SidePoint("head", 1.2, 1.1, 1.3, "pass")), None)
    view = RecordView("perf_x", "X", "devs/issues/perf_x.md", "seq", "c", None, 9.0, "fix/x", "open", 0, 0,
                      verdict="pass", standing=standing_of(record, [fixed]))
    labels = issue_spec(view).labels
    assert "outcome: fixed" in labels and "has fix" in labels
    assert not any("pass" in label or "fail" in label for label in labels)
    assert view.verified == "fixed: 1.20x [1.10, 1.30] in wall time; fix fix/x on its branch, not merged; was 8.00x " \
        "[7.50, 8.50] in wall time"
    never = RecordView("perf_x", "X", "devs/issues/perf_x.md", "seq", "c", None, 9.0, "unknown", "open", 0, 0)
    assert "has fix" not in issue_spec(never).labels and never.verified == "not measured"


def test_a_fix_gain_is_said_both_ways_and_already_in_base_is_named():
    from bot.core.verify.bench_view import gain_line
    from bot.core.verify.gain import fix_gain, gain_text

    assert gain_text(Interval(1.31, 1.46, 1.62)) == "1.46x faster [1.31, 1.62]"
    assert gain_text(Interval(0.5, 0.8, 1.0)) == "1.25x slower [1.00, 2.00]"
    exact = fix_gain([3.0] * 5, [2.0] * 5)  # instruction counts do not vary: the interval is the point
    assert (exact.low, exact.point, exact.high) == (1.5, 1.5, 1.5) and fix_gain([], [1.0]) is None
    result = {"gain": {"low": 1.31, "point": 1.46, "high": 1.62}, "already_in_base": True}
    assert gain_line(RunResult.from_json(result)) == "already in base: program 1.46x faster [1.31, 1.62]"
    fixed = run("fix", "pass", gain=result["gain"])
    assert status_description(fixed) == "fixed 1.10x [1.00, 1.20]; program 1.46x faster [1.31, 1.62]"


def test_a_gain_is_rounded_by_the_one_rule_of_every_view():
    from bot.core.verify.gain import gain_text

    # three significant figures, as the standing says it (core/lead/wording.py): never 30.10x beside 30.1x
    assert gain_text(Interval(15.47, 30.10, 39.51)) == "30.1x faster [15.5, 39.5]"
    assert gain_text(Interval(0.5, 0.8, 0.9)) == "1.25x slower [1.11, 2.00]"
