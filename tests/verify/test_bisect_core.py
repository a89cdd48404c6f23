"""Bisection and guard settings as pure functions: every history shape a real bisection meets."""
from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.bisect.search import (
    BAD,
    GOOD,
    RESAMPLE,
    SKIP,
    Found,
    NotBisectable,
    Probe,
    Unresolved,
    mark_of,
    next_step,
    steps_at_most,
)
from bot.core.config import ConfigFileError, parse_repo_config
from bot.core.lead.notices import NoticeFacts, ReportState, current_notices

COMMITS = tuple(f"c{n}" for n in range(9))  # c0 passes (the fix), c8 fails (the guard)


def bisect_with(truth: dict[str, str], known: dict[str, str] | None = None) -> tuple[object, list[str]]:
    marks, probed = dict(known or {}), []
    while True:
        step = next_step(COMMITS, marks)
        if not isinstance(step, Probe):
            return step, probed
        probed.append(step.sha)
        marks[step.sha] = truth[step.sha]


@pytest.mark.parametrize("culprit", range(1, 9))
def test_the_first_bad_commit_is_found_in_log2_steps_for_every_position(culprit):
    truth = {sha: GOOD if n < culprit else BAD for n, sha in enumerate(COMMITS)}
    step, probed = bisect_with(truth, {"c0": GOOD, "c8": BAD})
    assert step == Found(f"c{culprit}", f"c{culprit - 1}")
    assert len(probed) <= steps_at_most(len(COMMITS)) == 3


def test_unmeasured_ends_are_confirmed_first_and_a_wrong_end_stops_without_guessing():
    truth = {sha: BAD for sha in COMMITS}
    step, probed = bisect_with(truth)
    assert probed == ["c8", "c0"] and isinstance(step, NotBisectable) and step.sha == "c0"
    assert "older good commit" in step.problem
    step, probed = bisect_with({sha: GOOD for sha in COMMITS})
    assert probed == ["c8"] and "nothing to bisect" in step.problem


def test_skipped_commits_beside_the_culprit_give_the_range_that_holds_it():
    truth = {sha: GOOD if n < 5 else BAD for n, sha in enumerate(COMMITS)}
    truth.update(c4=SKIP, c3=SKIP)
    step, probed = bisect_with(truth, {"c0": GOOD, "c8": BAD})
    assert step == Unresolved(("c3", "c4", "c5"), "c2")
    assert "c3" in probed or "c4" in probed  # they were tried, not assumed


def test_a_claim_that_came_and_went_names_its_first_arrival():
    marks = {"c0": GOOD, "c8": BAD, "c2": BAD, "c4": GOOD, "c1": GOOD}
    assert next_step(COMMITS, marks) == Found("c2", "c1")


def test_a_step_is_measured_again_once_before_it_is_skipped():
    assert mark_of("reproduced", 1) == BAD and mark_of("not reproduced", 2) == GOOD
    assert mark_of("inconclusive", 1) == RESAMPLE and mark_of("inconclusive", 2) == SKIP
    assert mark_of("error", 1) == SKIP and mark_of("mismatch", 1) == SKIP


def test_guard_settings_default_on_and_every_bad_value_names_its_line():
    assert parse_repo_config("").guards.after_push and parse_repo_config("").guards.debounce_minutes == 15
    settings = parse_repo_config('[guards]\nafter_push = false\nschedule = "daily 3:05"\n'
                                 'timezone = "Europe/Berlin"\n').guards
    assert (settings.schedule, settings.timezone, settings.enabled) == ("daily 03:05", "Europe/Berlin", True)
    for text, problem in (('[guards]\n\nschedule = "often"', ':3: guards.schedule: '),
                          ("[guards]\ndebounce_minutes = 2000", ":2: guards.debounce_minutes: "),
                          ("[guards]\nbisect = 1", ":2: guards.bisect: "),
                          ("[guards]\nrunner = 'a b'", ":2: guards.runner: "),
                          ("[guards]\nbisekt = true", "did you mean 'bisect'")):
        with pytest.raises(ConfigFileError, match=problem):
            parse_repo_config(text)


def test_a_regressed_record_is_a_blocker_notice_until_it_is_fixed_again():
    now = datetime(2026, 12, 3, tzinfo=UTC)

    def notices(state: str):
        facts = NoticeFacts((ReportState("perf_a", state, now, True, 0, ()),), (), frozenset(), ())
        return [(n.kind, n.subject, n.blocker) for n in current_notices(facts, now)]

    assert notices("regressed") == [("guard-regressed", "perf_a", True)]
    assert notices("fixed") == []
