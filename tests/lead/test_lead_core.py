"""The lead's view, pure parts: `[notify]` parsed strictly, which boxes an edit newly ticked, and when each
kind of notice holds."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.core.config import ConfigFileError, parse_repo_config
from bot.core.lead.dashboard import Action, newly_ticked
from bot.core.lead.milestones import RunFact, SidePoint
from bot.core.lead.notices import KINDS, NoticeFacts, ReportState, current_notices

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)


def test_notify_is_parsed_strictly():
    config = parse_repo_config('[notify]\npeople = ["lead", "@org/perf-team"]\nwebhook_url = "https://chat.example/h"\n'
                               "stuck_days = 10\n")
    assert config.notify.people == ("lead", "org/perf-team") and config.notify.mentions == "@lead @org/perf-team"
    assert config.notify.declared and config.notify.stuck_days == 10 and config.notify.host_hours == 1
    assert not parse_repo_config("").notify.declared


@pytest.mark.parametrize("text, key, problem", [
    ('[notify]\npeple = ["lead"]\n', "notify.peple", "did you mean"),
    ('[notify]\npeople = "lead"\n', "notify.people", "must list GitHub logins"),
    ('[notify]\npeople = ["lead; rm -rf /"]\n', "notify.people", "must list GitHub logins"),
    ('[notify]\npeople = ["lead", "Lead"]\n', "notify.people", "names someone twice"),
    ('[notify]\nwebhook_url = "ftp://x"\n', "notify.webhook_url", "must be an http(s) URL"),
    ('[notify]\nwebhook_url = "https://u:pw@chat.example/h"\n', "notify.webhook_url", "PERFBOT_NOTIFY_SECRET"),
    ('[notify]\n\nstuck_days = 0\n', "notify.stuck_days", "positive whole number"),
    ('notify = 3\n', "notify", "write it as [notify]"),
])
def test_a_bad_notify_section_names_the_key_line_and_fix(text, key, problem):
    with pytest.raises(ConfigFileError) as caught:
        parse_repo_config(text)
    assert caught.value.key == key and problem in str(caught.value)
    if "stuck_days" in key:
        assert caught.value.line == 3


BODY = """<!-- perfbot:dashboard -->
- [ ] <!-- perfbot:action verify perf_a --> verify now
- [x] <!-- perfbot:action rerun perf_b --> re-run
- [ ] <!-- perfbot:action close perf_c --> close
"""


def test_only_boxes_newly_ticked_count():
    after = BODY.replace("[ ] <!-- perfbot:action verify perf_a", "[x] <!-- perfbot:action verify perf_a")
    after = after.replace("[ ] <!-- perfbot:action close", "[X] <!-- perfbot:action close")
    assert newly_ticked(BODY, after) == [Action("verify", "perf_a"), Action("close", "perf_c")]
    assert newly_ticked(BODY, BODY) == []  # perf_b was ticked before: not news
    forged = (BODY + "- [x] <!-- perfbot:action delete perf_d -->\n"
              "    - [x] text <!-- perfbot:action verify perf_e -->\n")
    assert newly_ticked(BODY, forged) == []  # unknown verbs and boxes we did not draw are nobody's action


def run(id_, slug, verdict, *, purpose="fix", status="done", hours_ago=1.0, runner="mini", suite=None):
    at = NOW - timedelta(hours=hours_ago)
    return RunFact(id_, slug, runner, purpose, status, verdict, None, at, at if status == "done" else None,
                   (SidePoint("head", 1.5, 1.4, 1.6),), suite)


def facts(reports=(), runs=(), merged=frozenset()):
    return NoticeFacts(tuple(reports), tuple(runs), frozenset(merged), ())


def kinds(found):
    return sorted((n.kind, n.subject) for n in found)


def report(slug, *, state="open", days=1, root=True, errors=0, supersedes=()):
    return ReportState(slug, state, NOW - timedelta(days=days), root, errors, supersedes)


def test_each_kind_of_notice_holds_exactly_when_its_condition_does():
    assert kinds(current_notices(facts([report("perf_a")], [run(1, "perf_a", "fail"), run(2, "perf_a", "fail")]),
                                 NOW)) == [("fix-failed-twice", "perf_a")]
    assert kinds(current_notices(facts([report("perf_a")], [run(1, "perf_a", "fail"), run(2, "perf_a", "pass")]),
                                 NOW)) == [("fix-verified", "perf_a run 2")]
    old_pass = run(3, "perf_a", "pass", hours_ago=24 * 8)  # verified before notices existed: old news
    assert current_notices(facts([report("perf_a", state="fixed")], [old_pass]), NOW) == ()
    waiting = [run(4, "perf_a", "", status="queued", hours_ago=1.5), run(5, "perf_b", "", status="queued",
                                                                         hours_ago=0.5)]
    assert kinds(current_notices(facts([report("perf_a"), report("perf_b")], waiting), NOW)) == [
        ("host-unreachable", "mini")]
    assert kinds(current_notices(facts([report("perf_m", errors=2, supersedes=("perf_x",))]), NOW)) == [
        ("merged-report-lint", "perf_m")]
    suite = [run(6, "perf_a", "pass", suite="fail")]
    assert ("suite-regression", "mini") in kinds(current_notices(facts([report("perf_a", state="fixed")], suite,
                                                                          {"perf_a"}), NOW))
    assert ("suite-regression", "mini") not in kinds(current_notices(facts([report("perf_a")], suite), NOW))
    assert kinds(current_notices(facts([report("perf_s", days=8, root=False), report("perf_t", days=2, root=False)]),
                                 NOW)) == [("stuck-no-root-cause", "perf_s")]
    assert {k for k, (blocker, _) in KINDS.items() if not blocker} == {"milestone-met", "fix-verified"}
