"""The handlers' payload checks take every value GitHub's example payloads hold (github.com and GHES)."""
from __future__ import annotations

import json

import pytest

import handlers
from handlers.payload import MODELS, Envelope, PullRequestEvent, Push, WorkflowRunEvent, parse
from handlers.pull_request import pull_info
from handlers.workflow_run import workflow_run
from tests.npm_fixtures import ghes_openapi_paths, openapi_path, webhook_example_sets


def handled_examples() -> list[tuple[str, str, int, dict]]:
    return [(target, event, n, payload) for target, events in webhook_example_sets().items()
            for event, examples in events.items() if event in handlers.github_events()
            for n, payload in enumerate(examples)]


def test_there_are_examples_of_every_event_a_handler_takes():
    covered = {event for _target, event, _n, _payload in handled_examples()}
    assert covered == handlers.github_events()


@pytest.mark.parametrize("target, event, n, payload", [
    pytest.param(*example, id=f"{example[0]}-{example[1]}-{example[2]}") for example in handled_examples()])
def test_every_example_parses_into_its_events_model(target, event, n, payload):
    parsed = parse(event, payload)
    assert isinstance(parsed, MODELS[event]) and isinstance(parsed, Envelope)
    if "repository" in payload:
        assert parsed.full_name == payload["repository"]["full_name"]
    assert parsed.installation_id == (payload.get("installation") or {}).get("id")
    assert parsed.sender_login == (payload.get("sender") or {}).get("login", "")
    if isinstance(parsed, Push):
        assert parsed.after == payload["after"]
    elif isinstance(parsed, PullRequestEvent):
        pull = pull_info(parsed)
        assert (pull.number, pull.head_sha) == (payload["pull_request"]["number"],
                                                payload["pull_request"]["head"]["sha"])
    elif isinstance(parsed, WorkflowRunEvent) and set(REQUIRED_BY_WORKFLOW_RUN) <= set(payload["workflow_run"]):
        assert workflow_run(parsed).id == payload["workflow_run"]["id"]


def test_every_event_a_handler_wants_has_a_model():
    wanted = {name for handler in handlers.HANDLERS for name in handler.WANTS}
    assert wanted == set(MODELS)


# What handlers.workflow_run.workflow_run() insists on. It reads only perfbot's own bench runs (by their
# display_title); the examples predate `path` and `display_title`, so GitHub's description is the reference.
REQUIRED_BY_WORKFLOW_RUN = ("id", "path", "event", "status", "html_url", "created_at", "conclusion", "actor")


def _resolved(document: dict, schema: dict) -> dict:
    while "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


@pytest.mark.parametrize("path", [openapi_path(), *ghes_openapi_paths()], ids=lambda p: p.stem)
def test_github_requires_every_workflow_run_field_the_handler_insists_on(path):
    with open(path, "rb") as handle:
        document = json.load(handle)
    completed = _resolved(document, document["components"]["schemas"]["webhook-workflow-run-completed"])
    run = _resolved(document, completed["properties"]["workflow_run"])
    required = set(run.get("required", []))
    for part in run.get("allOf", []):
        required.update(_resolved(document, part).get("required", []))
    assert set(REQUIRED_BY_WORKFLOW_RUN) <= required, set(REQUIRED_BY_WORKFLOW_RUN) - required
