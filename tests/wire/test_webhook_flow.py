"""Every example payload of the handled events, signed, through the served app, then through the worker."""
from __future__ import annotations

import copy

import pytest

from bot.adapters.store import service_queries
from bot.app.runtime import Runtime
from bot.config import Settings
from tests.gitrepo import RepoBuilder
from tests.npm_fixtures import webhook_examples
from tests.reports import canonical_report
from tests.servers import serving
from tests.webhooks import post_delivery

SECRET = "flow-secret"
FULL_NAME = "Codertocat/Hello-World"
EVENTS = ("push", "installation", "installation_repositories", "issues")


@pytest.fixture
def runtime(github, database, tmp_path):
    github.add_repo(FULL_NAME, default_branch="master")
    remote = RepoBuilder(tmp_path / "remotes" / "Codertocat" / "Hello-World.git", branch="master")
    settings = Settings(instance_dir=tmp_path / "instance", database_url=database.url, webhook_secrets=(SECRET,),
                        github_token=github.token, github_api_url=github.url,
                        git_base_url=f"file://{tmp_path / 'remotes'}",
                        github_request_interval=0, github_write_interval=0)
    runtime = Runtime(settings)
    yield runtime, remote
    runtime.stop()


def test_every_handled_example_is_stored_then_done_or_failed_with_a_reason(runtime, github, database):
    rt, remote = runtime
    head = remote.write("devs/issues/perf_a.md", canonical_report("perf_a")).commit("a report")
    sent = []
    with serving(rt.app) as url:
        for event in EVENTS:
            for n, example in enumerate(webhook_examples(event)):
                payload = copy.deepcopy(example)
                if event == "push" and payload["ref"] == "refs/heads/master" and not payload.get("deleted"):
                    payload["after"] = head  # GitHub's example names a commit our remote does not have
                delivery = f"{event}-{n}"
                assert post_delivery(url, event, payload, secret=SECRET, delivery=delivery).status_code == 202
                sent.append(delivery)
    while rt.workers[0].run_once():
        pass
    outcome = {d["id"]: (d["status"], d["error"]) for d in rt.queue.listing(limit=500)}
    assert set(outcome) == set(sent)
    assert {status for status, _ in outcome.values()} == {"done"}, {k: v for k, v in outcome.items() if v[0] != "done"}
    with github.state.lock:
        issues = list(github.state.repo("Codertocat", "Hello-World").issues.values())
    assert [i.body.split("\n")[0] for i in issues] == ["<!-- perfbot:record perf_a -->"]
    assert {row["id"] for row in service_queries.installations(database)} == {
        e["installation"]["id"] for event in ("installation", "installation_repositories")
        for e in webhook_examples(event)}
