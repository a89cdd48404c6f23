"""Fix pull requests on GitHub (the local double, GitHub's own example payloads): attached from `Fixes
perf_x`, verified on the PR head with a comment and a commit status, and closing the record when merged."""
from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

import handlers
from bot.adapters.store.bench import bench_store, fix_store
from bot.core.config import PerfbotFile
from bot.digest.render import make_digest
from bot.services.worker import Event
from tests.bench_project import build_project
from tests.flows import github_bot
from tests.lead.test_dashboard import make_client
from tests.npm_fixtures import webhook_examples

REPO, SLUG, BRANCH = "team/runtime", "perf_boxed_sum", "unbox-accumulator"


@pytest.fixture
def world(github, database, tmp_path):
    github.add_repo(REPO)
    remote, heads = build_project(tmp_path / "remotes" / "team" / "runtime.git")
    remote.repo.git.branch(BRANCH, heads["fix/perf_boxed_sum"])
    remote.repo.git.branch("-D", "fix/perf_boxed_sum")  # the fix arrives as a PR, not as the report's branch
    with github_bot(github, database, tmp_path) as (services, worker, queue):
        services.reports.sync_and_mirror(REPO, None, None)  # issue #1 mirrors the report
        yield remote, heads, services, worker, queue


def pull_event(github, heads, action: str, *, merged: bool = False, fork: bool = False, number: int = 2,
               branch: str = BRANCH) -> Event:
    payload = next(p for p in webhook_examples("pull_request") if p["action"] == action)
    pr = payload["pull_request"]
    pr.update(number=number, body="Unboxes the accumulator.\n\nFixes perf_boxed_sum", merged=merged, draft=False)
    pr["head"].update(ref=branch, sha=heads["fix/perf_boxed_sum"])
    pr["head"]["repo"]["full_name"] = "someone/runtime" if fork else REPO
    pr["base"].update(ref="main", sha=heads["main"])
    payload["repository"]["full_name"] = REPO
    payload.pop("installation", None)
    return Event("pull_request", action, f"delivery-{action}", payload, REPO, None)


def repo_state(github):
    return github.state.repo("team", "runtime")


def test_a_fix_pr_is_verified_on_its_head_and_closes_the_record_when_merged(world, github, database, tmp_path):
    remote, heads, services, worker, _queue = world
    github.add_pull(REPO, head_ref=BRANCH, head_sha=heads["fix/perf_boxed_sum"], base_ref="main",
                    base_sha=heads["main"], body="Fixes perf_boxed_sum", user="dev")
    assert handlers.dispatch(pull_event(github, heads, "opened"), services) == []
    [fix] = fix_store.fixes_for(database, REPO, SLUG)
    assert (fix.source, fix.pr_number, fix.changed_files) == ("pr-body", 2, 1) and fix.token_delta < 0
    assert worker.run_once()
    run = bench_store.get_run(database, 1)
    assert (run.verdict, run.pr, run.head) == ("pass", 2, heads["fix/perf_boxed_sum"])
    with github.state.lock:
        statuses = [(s.context, s.state) for s in repo_state(github).statuses if s.sha == run.head]
        described = [s.description for s in repo_state(github).statuses if s.sha == run.head][-1]
        pr_comments = [c.body for c in repo_state(github).comments.values() if c.issue_number == 2]
        labels = sorted(label.name for label in repo_state(github).issues[1].labels)
    assert statuses[0] == ("perfbot/verify perf_boxed_sum", "pending")
    assert statuses[-1] == ("perfbot/verify perf_boxed_sum", "success")
    # the head's ratio to C, the program's own gain base to head, and when the claim is off in size at the base,
    # both figures (wall time decides which; the test asserts the shape)
    assert re.fullmatch(r"fixed \d+\.\d\dx \[\d+\.\d\d, \d+\.\d\d\]; program \d+\.\d\dx (faster|slower) "
                        r"\[\d+\.\d\d, \d+\.\d\d\](; claimed \S+x, measured .*)?", described), described
    assert "**Gain of the fix**: program " in pr_comments[0]
    assert len(pr_comments) == 1 and "```mermaid" in pr_comments[0] and "| head |" in pr_comments[0]
    assert "perfbot verification of `perf_boxed_sum`: fixed" in pr_comments[0]
    assert "has fix" in labels and "outcome: fixed" in labels
    # The same words on the dashboard and in the digest; before the merge the fix only passes on its branch.
    page = make_client(database, tmp_path).get(f"/dashboard/runs/{run.id}").get_data(as_text=True)
    assert '<span class="badge verdict-good" data-verdict="fixed">fixed' in page
    week = lambda: make_digest(database, REPO, PerfbotFile(), since=None, now=datetime.now(UTC))[1]  # noqa: E731
    assert "## Verified fixes" not in week() and "## Fixes that pass on their branch, not merged yet (1)" in week()
    assert "- **fix waiting for merge** `perf_boxed_sum`: fixed: " in week()  # the digest says to act on it

    assert handlers.dispatch(pull_event(github, heads, "synchronize"), services) == []
    assert not worker.run_once()  # the same head again: nothing new to measure

    remote.repo.git.merge("--no-ff", "-q", "-m", "Merge pull request #2", BRANCH)
    assert handlers.dispatch(pull_event(github, heads, "closed", merged=True), services) == []
    with github.state.lock:
        issue = repo_state(github).issues[1]
        state, reason, labels = issue.state, issue.state_reason, sorted(label.name for label in issue.labels)
        move = repo_state(github).issues[3].pull
    assert (state, reason) == ("closed", "completed") and "state: fixed" in labels
    assert move.head_ref == "perfbot/fixed-perf_boxed_sum" and move.base_ref == "main"
    assert "## Verified fixes (1)" in week() and "## Fixes that pass on their branch" not in week()


def test_a_fork_pr_is_attached_but_never_benchmarked_unasked(world, github, database):
    _, heads, services, worker, _queue = world
    assert handlers.dispatch(pull_event(github, heads, "opened", fork=True), services) == []
    assert [f.pr_number for f in fix_store.fixes_for(database, REPO, SLUG)] == [2]
    assert not worker.run_once() and bench_store.runs_for(database, SLUG) == []


def test_a_merged_pr_without_a_passing_verdict_closes_nothing(world, github, database):
    _, heads, services, worker, _queue = world
    assert handlers.dispatch(pull_event(github, heads, "closed", merged=True), services) == []
    with github.state.lock:
        issue = repo_state(github).issues[1]
        comments = [c.body for c in repo_state(github).comments.values() if c.issue_number == 1]
        state = issue.state
    assert state == "open" and any("stays open" in body for body in comments)
    assert not worker.run_once()  # a merged PR is never measured unasked


def test_a_hostile_branch_name_is_refused_with_its_reason(world, github, database):
    _, heads, services, _worker, _queue = world
    failures = handlers.dispatch(pull_event(github, heads, "opened", branch="fix/perf_x;rm -rf ~"), services)
    assert len(failures) == 1
    assert str(failures[0][1]) == ("PR #2: the head branch 'fix/perf_x;rm -rf ~' is refused: it contains a space; "
                                   "rename the branch")
    assert fix_store.fixes_for(database, REPO, SLUG) == []
