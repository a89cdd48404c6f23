"""Delivering the digest: due by the repository's schedule, posted exactly once per week as a labelled issue
however often the bot restarts around the scheduled time, and previewed without posting."""
from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from bot.adapters.git import local_full_name
from bot.adapters.local_issues import FileIssues
from bot.digest import store as digest_store
from bot.services.usecases import BotServices, RepoSource
from tests.gitrepo import RepoBuilder
from tests.reports import canonical_report

UTC = UTC
CONFIG = '[digest]\nschedule = "mon 09:00"\ntimezone = "Europe/Paris"\n'
SUNDAY_NIGHT = datetime(2026, 11, 29, 22, 0, tzinfo=UTC)
MONDAY_DUE = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)  # 09:00 in Paris


@pytest.fixture
def world(tmp_path, database):
    repo = RepoBuilder(tmp_path / "runtime")
    repo.write(".perfbot.toml", CONFIG).write("devs/issues/perf_sort_alloc.md", canonical_report("perf_sort_alloc"))
    repo.commit("a report")
    key = local_full_name(repo.root)
    tracker = FileIssues(tmp_path / "issues")

    def process() -> BotServices:  # a fresh process on the same store: nothing carried over in memory
        return BotServices(database, lambda _n, _i: tracker, RepoSource(local={key: repo.root}), bot_login="perfbot")

    process().reports.sync_and_mirror(key, None, None)
    return repo, key, tracker, process


def digest_issues(tracker: FileIssues) -> list[dict]:
    issues = json.loads(tracker.state_file.read_text())["issues"].values()
    return [i for i in issues if i["body"].startswith("<!-- perfbot:digest ")]


def test_a_restart_across_the_scheduled_time_posts_the_week_exactly_once(world, database):
    _, key, tracker, process = world
    assert process().lead.post_digest(key, None, SUNDAY_NIGHT, only_if_due=True) is not None  # last week's, caught up
    assert [i["title"] for i in digest_issues(tracker)] == ["perfbot digest 2026-W48"]
    assert process().lead.post_digest(key, None, SUNDAY_NIGHT.replace(hour=23), only_if_due=True) is None
    # The bot is down at 09:00 on Monday and comes back at 10:40, then restarts twice more.
    posted = process().lead.post_digest(key, None, datetime(2026, 11, 30, 9, 40, tzinfo=UTC), only_if_due=True)
    assert posted["week"] == "2026-W49" and posted["end"].startswith("2026-11-30T08:00")
    for later in (datetime(2026, 11, 30, 10, 0, tzinfo=UTC), datetime(2026, 12, 6, 23, 0, tzinfo=UTC)):
        assert process().lead.post_digest(key, None, later, only_if_due=True) is None
    weeks = [i["title"] for i in digest_issues(tracker)]
    assert weeks == ["perfbot digest 2026-W48", "perfbot digest 2026-W49"]
    assert all("digest" in i["labels"] and "perfbot" in i["labels"] for i in digest_issues(tracker))
    assert [d["week"] for d in digest_store.list_digests(database, key)] == ["2026-W49", "2026-W48"]


@pytest.mark.parametrize("issue_made", [False, True])
def test_a_crash_between_storing_and_posting_posts_on_the_next_look_and_never_twice(world, database, issue_made):
    _, key, tracker, process = world
    body = f"<!-- perfbot:digest {key} 2026-W49 -->\nbody"
    stored = digest_store.claim_week(database, key, "2026-W49", datetime(2026, 11, 23, 8, tzinfo=UTC), MONDAY_DUE,
                                     body, {})
    if issue_made:  # the process died after making the issue, before saving its number
        tracker.create_issue("perfbot digest 2026-W49", body, ("perfbot", "digest"))
    assert stored["issue"] is None
    posted = process().lead.post_digest(key, None, MONDAY_DUE, only_if_due=True)
    assert posted["issue"] is not None and len(digest_issues(tracker)) == 1
    assert process().lead.post_digest(key, None, MONDAY_DUE, only_if_due=True) is None


def test_without_a_digest_section_nothing_is_posted_but_a_preview_works(world, database):
    repo, key, tracker, process = world
    repo.write(".perfbot.toml", "[verify]\nmin_samples = 5\n").commit("no digest here")
    assert process().lead.post_digest(key, None, MONDAY_DUE, only_if_due=True) is None and digest_issues(tracker) == []
    preview = process().lead.preview_digest(key, None, MONDAY_DUE)
    assert preview.startswith(f"<!-- perfbot:digest {key} 2026-W49 -->") and digest_store.list_digests(database) == []


def test_the_digest_command_previews_and_posts_once(world, database, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from bot.cli import main

    repo, key, _, _ = world
    monkeypatch.setenv("PERFBOT_INSTANCE_DIR", str(tmp_path / "instance"))
    for name in ("PERFBOT_GITHUB_TOKEN", "PERFBOT_GITHUB_APP_ID"):
        monkeypatch.delenv(name, raising=False)
    args = ["digest", "--repo", str(repo.root), "--db", database.url]
    preview = CliRunner().invoke(main, [*args, "--dry-run", "--since", "2026-11-01"])
    assert preview.exit_code == 0, preview.output
    assert preview.output.startswith(f"<!-- perfbot:digest {key} ") and "perf_sort_alloc" in preview.output
    assert digest_store.list_digests(database) == []  # a preview stores nothing
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0 and "posted as issue #" in first.output, first.output
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 0 and "posted already" in again.output
    bad = CliRunner().invoke(main, [*args, "--since", "last week"])
    assert bad.exit_code == 2 and "is not a date" in bad.output
