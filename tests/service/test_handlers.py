"""Handlers driven by GitHub's example payloads, against real git repositories and the local issue tracker."""
from __future__ import annotations

import copy
import json

import pytest

import handlers
from bot.adapters.local_issues import FileIssues
from bot.adapters.store import service_queries
from bot.errors import Invalid, TransientError
from bot.services.usecases import BotServices, RepoSource
from bot.services.worker import Event
from tests.gitrepo import RepoBuilder
from tests.npm_fixtures import webhook_examples
from tests.reports import canonical_report

FULL_NAME = "Codertocat/Hello-World"  # the repository GitHub's examples are about


@pytest.fixture
def world(database, tmp_path):
    builder = RepoBuilder(tmp_path / "hello-world", branch="master")
    tracker = FileIssues(tmp_path / "issues")
    services = BotServices(database, lambda name, _inst: tracker, RepoSource(local={FULL_NAME: builder.root}),
                           bot_login="perfbot[bot]")
    return builder, tracker, services


def run(services, name: str, payload: dict, delivery: str = "d1"):
    event = Event(name, payload.get("action"), delivery, payload, FULL_NAME, None)
    failures = handlers.dispatch(event, services)
    assert not failures, failures


def push_example(after: str) -> dict:
    payload = copy.deepcopy(next(p for p in webhook_examples("push") if p["ref"] == "refs/heads/master"))
    payload["after"] = after
    return payload


def issues(tracker) -> dict:
    return json.loads(tracker.state_file.read_text())["issues"]


def test_a_push_to_the_default_branch_syncs_and_opens_issues(world):
    builder, tracker, services = world
    head = builder.write("devs/issues/perf_a.md", canonical_report("perf_a")).commit("report")
    run(services, "push", push_example(head))
    assert [i["title"].split(":")[0] for i in issues(tracker).values()] == ["perf_a"]


def _elsewhere(payload: dict) -> bool:
    return payload["ref"] != "refs/heads/master" or bool(payload.get("deleted"))


@pytest.mark.parametrize("example", [n for n, p in enumerate(webhook_examples("push")) if _elsewhere(p)])
def test_pushes_that_are_not_to_the_default_branch_do_nothing(world, example):
    builder, tracker, services = world
    payload = webhook_examples("push")[example]
    builder.write("devs/issues/perf_a.md", canonical_report("perf_a")).commit("report")
    run(services, "push", payload)
    assert not tracker.state_file.exists()


def test_a_push_with_a_hostile_payload_is_a_clear_permanent_error(world, caplog):
    _, _, services = world
    payload = push_example("0" * 40)
    payload["repository"]["full_name"] = "../../etc/passwd"
    failures = handlers.dispatch(Event("push", None, "d1", payload, None, None), services)
    # The payload is parsed once, for every handler of a push, and refused once: nothing runs on it.
    assert [name for name, _ in failures] == ["payload"]
    assert isinstance(failures[0][1], Invalid) and "repository.full_name" in str(failures[0][1])
    # The log line is the refusal's one rendering for logs: its kind, where and what.
    said = [r.getMessage() for r in caplog.records if r.name == "perfbot.handlers"]
    assert len(said) == 1 and "\n" not in said[0], said
    assert said[0].startswith("delivery d1: refused (invalid): push payload: repository.full_name: "), said


@pytest.mark.parametrize("example", range(len(webhook_examples("installation"))))
def test_installation_examples_are_recorded(world, database, example):
    _, _, services = world
    payload = webhook_examples("installation")[example]
    run(services, "installation", payload)
    [row] = service_queries.installations(database)
    assert row["id"] == payload["installation"]["id"]
    assert row["active"] is (payload["action"] not in ("deleted", "suspend"))
    assert row["repos"] == sorted(r["full_name"] for r in payload.get("repositories") or [])


def test_installation_repositories_add_and_remove(world, database):
    _, _, services = world
    for payload in webhook_examples("installation_repositories"):
        run(services, "installation_repositories", payload)
    assert service_queries.installations(database)


def test_a_person_closing_an_issue_is_an_override_and_reopening_undoes_it(world, database):
    builder, tracker, services = world
    head = builder.write("devs/issues/perf_a.md", canonical_report("perf_a")).commit("report")
    run(services, "push", push_example(head))
    closed = copy.deepcopy(next(p for p in webhook_examples("issues") if p["action"] == "reopened"))
    closed.update(action="closed")
    closed["issue"]["number"] = 1
    closed["repository"]["full_name"] = FULL_NAME
    run(services, "issues", closed, delivery="close-1")
    issue = issues(tracker)["1"]
    assert "state: override" in issue["labels"] and issue["state"] == "closed"
    reopened = copy.deepcopy(closed)
    reopened["action"] = "reopened"
    run(services, "issues", reopened, delivery="reopen-1")
    assert "state: open" in issues(tracker)["1"]["labels"] and issues(tracker)["1"]["state"] == "open"


def test_edits_of_a_generated_body_are_undone_and_the_bots_own_events_ignored(world):
    builder, tracker, services = world
    head = builder.write("devs/issues/perf_a.md", canonical_report("perf_a")).commit("report")
    run(services, "push", push_example(head))
    original = issues(tracker)["1"]["body"]
    tracker.update_issue(1, title="x", body="vandalised", labels=("perfbot",), state="open", state_reason=None)
    edited = copy.deepcopy(next(p for p in webhook_examples("issues") if p["action"] == "edited"))
    edited["issue"]["number"] = 1
    edited["repository"]["full_name"] = FULL_NAME
    edited["sender"]["login"] = "perfbot[bot]"
    run(services, "issues", edited)
    assert issues(tracker)["1"]["body"] == "vandalised"  # our own write echoing back changes nothing
    edited["sender"]["login"] = "someone"
    run(services, "issues", edited)
    assert issues(tracker)["1"]["body"] == original


def test_a_push_for_a_repository_local_mode_does_not_watch_fails_once_and_says_which_it_watches(world):
    _, _, services = world
    payload = push_example("0" * 40)
    payload["repository"]["full_name"] = "someone/else"
    failures = handlers.dispatch(Event("push", None, "d1", payload, "someone/else", None), services)
    assert failures and {name for name, _ in failures} >= {"push"}
    for _, error in failures:
        assert not isinstance(error, TransientError)  # retrying cannot make the repository appear
        assert "someone/else" in str(error) and FULL_NAME in str(error) and "--repo" in str(error)
