"""The mirror through real PyGithub against the local GitHub double (checked against GitHub's OpenAPI)."""
from __future__ import annotations

import time

import pytest
from github import GithubException

from bot.adapters.github.client import GitHubClients
from bot.adapters.github.issues import GitHubIssues
from bot.config import Settings
from bot.errors import TransientError
from bot.services.reports.mirror import mirror_repo
from tests import flows
from tests.reports import canonical_report

REPO = "team/runtime"
A, B, C = (f"devs/issues/perf_{n}.md" for n in ("a", "b", "c"))


def settings_for(double, tmp_path, **extra) -> Settings:
    values = dict(instance_dir=tmp_path, database_url="sqlite://", github_api_url=double.url,
                  github_token=double.token, github_request_interval=0, github_write_interval=0)
    values.update(extra)
    return Settings(**values)


@pytest.fixture
def tracker(github, tmp_path):
    github.add_repo(REPO)
    clients = GitHubClients(settings_for(github, tmp_path))
    yield GitHubIssues(clients.for_installation(None), REPO, clients.own_login)
    clients.close()


def sync_and_mirror(database, builder, tracker):
    return flows.sync_and_mirror(database, builder, tracker, REPO)


def issues(double) -> dict:
    with double.state.lock:
        repo = double.state.repo(*REPO.split("/"))
        return {n: (i.title, i.state, i.state_reason, sorted(label.name for label in i.labels), i.body)
                for n, i in repo.issues.items()}


def comments(double, number: int) -> list[str]:
    with double.state.lock:
        repo = double.state.repo(*REPO.split("/"))
        return [c.body for c in repo.comments.values() if c.issue_number == number]


def test_issues_labels_and_zero_writes_on_unchanged_input(database, git_repo, tracker, github):
    git_repo.write(A, canonical_report("perf_a")).write(B, canonical_report("perf_b", ratio=1.5)).commit("two")
    sync_and_mirror(database, git_repo, tracker)
    found = issues(github)
    assert len(found) == 2
    assert found[1][3] == ["backend: c", "perfbot", "state: open", "track: seq"]
    assert found[2][3] == ["backend: c", "lint: errors", "perfbot", "state: open", "track: seq"]
    assert all(body.startswith("<!-- perfbot:record ") for *_, body in found.values())
    assert any("seq-within-tolerance" in c for c in comments(github, 2))
    before = len(github.writes())
    mirror_repo(database, tracker, REPO, None)
    assert len(github.writes()) == before


def test_edits_and_merges_update_in_place(database, git_repo, tracker, github):
    git_repo.write(A, canonical_report("perf_a", ratio=1.5)).commit("a")
    sync_and_mirror(database, git_repo, tracker)
    git_repo.write(A, canonical_report("perf_a", ratio=3.5)).commit("a measured again")
    sync_and_mirror(database, git_repo, tracker)
    assert len(comments(github, 1)) == 1 and "clean now" in comments(github, 1)[0]
    git_repo.delete(A).write(C, canonical_report("perf_c", supersedes=("perf_a",))).commit("merge")
    sync_and_mirror(database, git_repo, tracker)
    _title, state, reason, labels, _ = issues(github)[1]
    assert (state, reason) == ("closed", "duplicate") and "state: merged" in labels
    assert any("Duplicate of #2" in c for c in comments(github, 1))


def test_a_lost_database_finds_issues_by_marker(database, git_repo, tracker, github, tmp_path):
    from bot.adapters.store.engine import Database

    git_repo.write(A, canonical_report("perf_a")).commit("a")
    sync_and_mirror(database, git_repo, tracker)
    fresh = Database(f"sqlite:///{tmp_path / 'rebuilt.sqlite3'}")
    try:
        sync_and_mirror(fresh, git_repo, tracker)
    finally:
        fresh.dispose()
    assert list(issues(github)) == [1]


@pytest.mark.parametrize("kind, status, seconds", [("secondary", 403, 600), ("secondary", 429, 5),
                                                   ("primary", 403, 90)])
def test_a_rate_limit_is_handed_back_with_its_wait_not_slept_on(database, git_repo, tracker, github, kind, status,
                                                              seconds):
    git_repo.write(A, canonical_report("perf_a")).commit("a")
    armed = time.monotonic()
    github.rate_limit_next(retry_after=seconds, status=status, kind=kind)
    with pytest.raises(TransientError) as limited:
        sync_and_mirror(database, git_repo, tracker)
    # A primary limit's reset is a time of day, set when the limit was armed: what passed since comes off the wait.
    passed = time.monotonic() - armed if kind == "primary" else 0
    # One limited request and no second try in this thread: the wait is the queue's (Retry-After, or the reset +1 s).
    assert [r.status for r in github.requests] == [status]
    assert seconds - 1 - passed <= limited.value.retry_after <= seconds + 1 and "rate limit" in str(limited.value)
    sync_and_mirror(database, git_repo, tracker)
    assert list(issues(github)) == [1]


def test_an_outage_beyond_the_retries_is_transient(database, git_repo, tracker, github):
    git_repo.write(A, canonical_report("perf_a")).commit("a")
    github.fail_next(count=20, status=502)
    with pytest.raises(TransientError):
        sync_and_mirror(database, git_repo, tracker)


def test_permanent_api_errors_stay_permanent(tracker, github):
    with pytest.raises(GithubException):
        tracker.update_issue(999, title="t", body="b", labels=(), state="open", state_reason=None)
    github.take_violations()


def test_github_app_installation_tokens_are_cached_until_they_expire(database, git_repo, github, github_app_key,
                                                                        tmp_path):
    github.add_repo(REPO)
    github.install_app(77, [REPO], github_app_key, app_id=1234)
    clients = GitHubClients(settings_for(github, tmp_path, github_token=None, github_app_id="1234",
                                         github_private_key=github_app_key))
    app_tracker = GitHubIssues(clients.for_installation(77), REPO, clients.own_login)
    git_repo.write(A, canonical_report("perf_a")).commit("a")
    sync_and_mirror(database, git_repo, app_tracker)
    git_repo.write(B, canonical_report("perf_b")).commit("b")
    sync_and_mirror(database, git_repo, app_tracker)
    minted = [r for r in github.requests if r.path.endswith("/access_tokens")]
    assert len(minted) == 1 and len(issues(github)) == 2
    clients.close()


def test_github_enterprise_server_urls_work(database, git_repo, github, tmp_path):
    github.add_repo(REPO)
    clients = GitHubClients(settings_for(github, tmp_path, github_api_url=github.ghes_url))
    ghes_tracker = GitHubIssues(clients.for_installation(None), REPO, clients.own_login)
    git_repo.write(A, canonical_report("perf_a")).commit("a")
    sync_and_mirror(database, git_repo, ghes_tracker)
    assert list(issues(github)) == [1]
    assert all(r.headers.get("Host", "").startswith("127.0.0.1") for r in github.requests)
    clients.close()


def test_the_bot_learns_its_own_login_once_from_the_token_or_the_app(github, github_app_key, tmp_path):
    clients = GitHubClients(settings_for(github, tmp_path))
    assert clients.own_login() == clients.own_login() == github.login
    github.add_repo(REPO)
    github.install_app(77, [REPO], github_app_key, app_id=1234, app_slug="perf-runner")
    app_clients = GitHubClients(settings_for(github, tmp_path, github_token=None, github_app_id="1234",
                                             github_private_key=github_app_key))
    assert app_clients.own_login() == app_clients.own_login() == "perf-runner[bot]"
    asked = [r.path for r in github.requests if r.path in ("/user", "/app")]
    assert asked == ["/user", "/app"]  # each asked once, then remembered
    clients.close()
    app_clients.close()
