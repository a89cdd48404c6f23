"""The webhook endpoint over a real socket: GitHub's example payloads, signatures, and every bad request."""
from __future__ import annotations

import json
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from sqlalchemy import select

import handlers
from bot.adapters.store.queue import DeliveryQueue
from bot.adapters.store.service_models import Delivery
from bot.app import create_app
from bot.config import Settings
from tests.npm_fixtures import (
    openapi_webhook_event_names,
    openapi_webhook_header_examples,
    webhook_example_sets,
    webhook_examples,
    webhook_schema_event_names,
)
from tests.servers import serving
from tests.webhooks import post_delivery, sign

SECRET, OLD_SECRET = "s3cret-webhook-key", "previous-key-still-valid"


@pytest.fixture
def service(database, tmp_path):
    settings = Settings(instance_dir=tmp_path, database_url=database.url, webhook_secrets=(SECRET, OLD_SECRET),
                        github_token="t", max_body_bytes=256 * 1024)
    app = create_app(settings, DeliveryQueue(database), wanted_events=handlers.github_events())
    with serving(app) as url:
        yield url, database


def stored(database) -> list[Delivery]:
    with database.session() as session:
        return list(session.scalars(select(Delivery).order_by(Delivery.received_at)))


@pytest.mark.parametrize("event", ["push", "installation", "installation_repositories", "issues"])
def test_every_example_payload_is_stored_once_with_its_facts(service, event):
    url, database = service
    examples = webhook_examples(event)
    assert examples, f"no {event} examples in @octokit/webhooks-examples"
    for n, payload in enumerate(examples):
        response = post_delivery(url, event, payload, secret=SECRET, delivery=f"{event}-{n}")
        assert response.status_code == 202, response.text
    rows = stored(database)
    assert [r.id for r in rows] == [f"{event}-{n}" for n in range(len(examples))]
    for row, payload in zip(rows, examples, strict=True):
        assert (row.event, row.status, json.loads(row.payload)) == (event, "pending", payload)
        assert row.action == payload.get("action")
        assert row.repo == (payload.get("repository") or {}).get("full_name")


def test_ping_is_answered_and_unwanted_events_are_acknowledged_only(service):
    url, database = service
    for payload in webhook_examples("ping"):
        response = post_delivery(url, "ping", payload, secret=SECRET)
        assert response.status_code == 200 and response.json()["ok"] is True
    assert post_delivery(url, "star", {"action": "created"}, secret=SECRET).json()["status"] == "ignored"
    assert stored(database) == []


def test_a_redelivery_is_acknowledged_and_stored_once(service):
    url, database = service
    payload = webhook_examples("push")[0]
    first = post_delivery(url, "push", payload, secret=SECRET, delivery="same-id")
    again = post_delivery(url, "push", payload, secret=SECRET, delivery="same-id")
    assert (first.status_code, again.status_code, again.json()["status"]) == (202, 200, "duplicate")
    assert len(stored(database)) == 1


def test_a_rotated_out_secret_still_verifies_while_listed(service):
    url, _database = service
    assert post_delivery(url, "push", webhook_examples("push")[0], secret=OLD_SECRET).status_code == 202


@pytest.mark.parametrize("case, expected", [
    ("forged", 401), ("unsigned", 400), ("truncated", 401), ("wrong-algorithm", 401), ("no-event", 400),
    ("no-delivery", 400), ("hostile-delivery-id", 400), ("not-json", 400), ("json-array", 400),
    ("form-encoded", 415), ("huge", 413),
])
def test_bad_requests_get_a_clear_4xx_and_store_nothing(service, case, expected):
    url, database = service
    body = json.dumps(webhook_examples("push")[0]).encode()
    headers: dict = {}
    secret: str | None = SECRET
    if case == "forged":
        secret = "not-the-secret"
    elif case == "unsigned":
        secret = None
    elif case == "truncated":
        headers["X-Hub-Signature-256"] = sign(SECRET, body)
        body = body[: len(body) // 2]
        secret = None
    elif case == "wrong-algorithm":
        headers["X-Hub-Signature-256"] = "sha1=" + sign(SECRET, body)[7:]
        secret = None
    elif case == "no-event":
        headers["X-GitHub-Event"] = None
    elif case == "no-delivery":
        headers["X-GitHub-Delivery"] = None
    elif case == "hostile-delivery-id":
        headers["X-GitHub-Delivery"] = "../../etc/passwd'; DROP TABLE deliveries;--"
    elif case == "not-json":
        body = b"payload=%7B%7D"
    elif case == "json-array":
        body = b"[1, 2, 3]"
    elif case == "form-encoded":
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    elif case == "huge":
        body = b'{"padding": "' + b"x" * (300 * 1024) + b'"}'
    response = post_delivery(url, "push", body, secret=secret, headers=headers)
    assert response.status_code == expected, response.text
    assert response.json()["error"]
    assert stored(database) == []


def test_without_a_secret_every_delivery_is_refused(database, tmp_path):
    settings = Settings(instance_dir=tmp_path, database_url=database.url)
    app = create_app(settings, DeliveryQueue(database), wanted_events=handlers.github_events())
    with serving(app) as url:
        response = post_delivery(url, "push", webhook_examples("push")[0], secret="anything")
    assert response.status_code == 403 and "no PERFBOT_WEBHOOK_SECRET" in response.json()["error"]
    assert stored(database) == []


def test_health_readiness_and_metrics(service):
    url, _ = service
    post_delivery(url, "push", webhook_examples("push")[0], secret=SECRET)
    post_delivery(url, "push", webhook_examples("push")[0], secret="forged")
    assert requests.get(f"{url}/healthz", timeout=5).json() == {"status": "ok"}
    assert requests.get(f"{url}/readyz", timeout=5).status_code == 200
    text = requests.get(f"{url}/metrics", timeout=5).text
    assert 'perfbot_webhooks_received_total{event="push",outcome="queued"} 1.0' in text
    assert 'perfbot_webhooks_received_total{event="push",outcome="forged"} 1.0' in text
    assert 'perfbot_deliveries{status="pending"} 1.0' in text


def documented_event_names() -> list[str]:
    """Every event name GitHub's packages know: @octokit/webhooks-schemas, the x-webhooks of the REST
    descriptions (github.com and GHES), and the events @octokit/webhooks-examples has payloads for."""
    names = set(webhook_schema_event_names()) | set(openapi_webhook_event_names())
    names.update(event for events in webhook_example_sets().values() for event in events)
    # The descriptions file three events under a hyphenated slug (sub-issues); the header says sub_issues.
    names.update(name.replace("-", "_") for name in list(names))
    return sorted(names)


def test_every_documented_event_name_is_acknowledged_and_only_handled_ones_are_stored(service):
    url, database = service
    names = documented_event_names()
    assert {"projects_v2_item", "projects_v2", "push", "sub_issues"} <= set(names) and len(names) > 80, names
    answers = {}
    for event in names:
        response = post_delivery(url, event, {"action": "created"}, secret=SECRET)
        answers[event] = (response.status_code, response.json().get("status") or response.json().get("error"))
    wanted = handlers.github_events()
    expected = {event: (202, "queued") if event in wanted else (200, None if event == "ping" else "ignored")
                for event in names}
    assert answers == expected
    assert sorted(row.event for row in stored(database)) == sorted(wanted & set(names))


@pytest.mark.parametrize("delivery", [
    *openapi_webhook_header_examples("X-GitHub-Delivery"),  # the GUID GitHub's descriptions show
    "58474f00-b361-11eb-836d-0e4f3503ccbe",  # a hook delivery's guid in the REST description
    "26A7C758-7299-4A73-B978-5A92A7AE98A0",  # a GUID written in capitals
    "e3b0c44298fc1c149afbf4c8996fb924",  # a GUID without its hyphens
    "42", "a" * 100,
])
def test_every_real_delivery_id_shape_is_stored(service, delivery):
    url, database = service
    response = post_delivery(url, "push", webhook_examples("push")[0], secret=SECRET, delivery=delivery)
    assert response.status_code == 202, response.text
    assert [row.id for row in stored(database)] == [delivery]


@pytest.mark.parametrize("delivery", [
    "a" * 101, "id with spaces", "id`with`backticks", "it's", "a/b", "../x", "{0b989ba4-242f-11e5-81e1-c7b6966d2516}",
    "ünïcode", "<script>", "id;drop",
])
def test_a_delivery_id_that_could_not_be_stored_logged_or_quoted_safely_is_refused(service, delivery):
    url, database = service
    response = post_delivery(url, "push", webhook_examples("push")[0], secret=SECRET, delivery=delivery)
    assert response.status_code == 400 and "X-GitHub-Delivery" in response.json()["error"]
    assert stored(database) == []


@pytest.mark.parametrize("target_type", sorted({
    *openapi_webhook_header_examples("X-GitHub-Hook-Installation-Target-Type"),
    "repository", "organization", "integration", "business", "marketplace::listing", "sponsors_listing",
}))
def test_every_hook_target_type_and_the_ghes_headers_are_accepted(service, target_type):
    url, database = service
    headers = {"X-GitHub-Hook-ID": "12312312", "X-GitHub-Hook-Installation-Target-ID": "123123",
               "X-GitHub-Hook-Installation-Target-Type": target_type, "X-GitHub-Enterprise-Host": "ghes.example.test",
               "X-GitHub-Enterprise-Version": "3.17.0", "X-Hub-Signature": "sha1=0000"}
    response = post_delivery(url, "push", webhook_examples("push")[0], secret=SECRET, headers=headers)
    assert response.status_code == 202, response.text
    assert len(stored(database)) == 1


def test_an_action_longer_than_its_column_is_stored_without_it(service):
    url, database = service
    payload = dict(webhook_examples("issues")[0], action="x" * 61)
    assert post_delivery(url, "issues", payload, secret=SECRET).status_code == 202
    (row,) = stored(database)
    assert row.action is None and json.loads(row.payload)["action"] == "x" * 61


def test_unauthenticated_event_names_never_become_new_metric_series(service, database, tmp_path):
    url, _ = service
    for n in range(3):
        post_delivery(url, f"made_up_{uuid.uuid4().hex}", {"n": n}, secret="forged")
        post_delivery(url, f"made_up_unsigned_{n}", {"n": n}, secret=None)
    post_delivery(url, "push", webhook_examples("push")[0], secret="forged")
    text = requests.get(f"{url}/metrics", timeout=5).text
    assert 'perfbot_webhooks_received_total{event="other",outcome="forged"} 3.0' in text
    assert 'perfbot_webhooks_received_total{event="push",outcome="forged"} 1.0' in text
    assert 'perfbot_webhooks_received_total{event="other",outcome="rejected"} 3.0' in text
    assert "made_up_" not in text
    disabled = create_app(Settings(instance_dir=tmp_path, database_url=database.url), DeliveryQueue(database),
                          wanted_events=handlers.github_events())
    with serving(disabled) as off:
        post_delivery(off, "no such event, really", {}, secret="x")
        post_delivery(off, "push", {}, secret="x")
        text = requests.get(f"{off}/metrics", timeout=5).text
    assert 'perfbot_webhooks_received_total{event="other",outcome="disabled"} 1.0' in text
    assert 'perfbot_webhooks_received_total{event="push",outcome="disabled"} 1.0' in text
    assert "really" not in text


@pytest.mark.parametrize("event", ["Push", "push event", "push;", "9push", "x" * 61, "pull_request.opened"])
def test_an_event_name_of_no_shape_github_uses_is_refused_naming_the_header(service, event):
    url, database = service
    response = post_delivery(url, event, webhook_examples("push")[0], secret=SECRET)
    assert response.status_code == 400 and "X-GitHub-Event" in response.json()["error"]
    assert stored(database) == []


# An id too large for the store is refused with a 400 instead (test_webhook_edges.py).
@pytest.mark.parametrize("odd", [{"repository": "a string"}, {"installation": [1]}, {"repository": {"full_name": 7}},
                                 {"installation": {"id": True}}, {"action": ["x"]}])
def test_a_handled_event_of_odd_shape_is_stored_without_the_odd_hints(service, odd):
    url, database = service
    payload = dict(webhook_examples("push")[0], **odd)
    assert post_delivery(url, "push", payload, secret=SECRET).status_code == 202
    (row,) = stored(database)
    assert json.loads(row.payload) == payload
    assert row.repo == (None if "repository" in odd else payload["repository"]["full_name"])
    assert row.installation_id == (None if "installation" in odd else (payload.get("installation") or {}).get("id"))
    assert row.action == (None if "action" in odd else payload.get("action"))


def test_concurrent_deliveries_racing_their_redeliveries_are_each_stored_once(service):
    url, database = service
    payload = webhook_examples("push")[0]
    ids = [f"hook-{n % 20}" for n in range(40)]  # each id sent twice at once, as GitHub's redelivery may race
    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(lambda d: (d, post_delivery(url, "push", payload, secret=SECRET, delivery=d)), ids))
    for delivery in set(ids):
        codes = sorted(a.status_code for d, a in answers if d == delivery)
        assert codes == [200, 202], (delivery, codes)  # stored once, the copy acknowledged as a duplicate
    assert DeliveryQueue(database).counts() == {"pending": 20}


def test_a_store_that_fails_acknowledges_nothing(service):
    url, database = service
    with database.engine.begin() as connection:
        connection.exec_driver_sql("DROP TABLE deliveries")
    answer = post_delivery(url, "push", webhook_examples("push")[0], secret=SECRET, delivery="d1")
    assert answer.status_code == 503 and "did not take this delivery" in answer.json()["error"]
