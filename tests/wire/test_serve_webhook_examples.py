"""Every example payload of every event, signed, at a running `perfbot serve`: local mode and GitHub mode."""
from __future__ import annotations

import json
import os
import uuid

import pytest
import requests
from sqlalchemy import select

import handlers
from bot.adapters.store.engine import Database
from bot.adapters.store.service_models import Delivery
from tests.gitrepo import RepoBuilder
from tests.npm_fixtures import webhook_example_sets
from tests.servers import free_port
from tests.service.test_serve_process import Service
from tests.webhooks import sign

SECRET = "examples-secret"


def expected_answer(event: str) -> tuple[int, str]:
    """The answer table of docs/service.md: stored (202) for an event a handler takes, 200 for ping and for the rest."""
    if event == "ping":
        return 200, "ping"
    return (202, "queued") if event in handlers.github_events() else (200, "ignored")


@pytest.mark.parametrize("mode", ["local", "github"])
def test_every_example_delivery_gets_a_2xx_from_a_running_service(mode, request, tmp_path):
    port = free_port()
    database_url = f"sqlite:///{tmp_path / 'perfbot.sqlite3'}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PERFBOT_", "ANTHROPIC_"))}
    env.update(PERFBOT_WEBHOOK_SECRET=SECRET, PERFBOT_BIND=f"127.0.0.1:{port}", PERFBOT_DATABASE_URL=database_url,
               PERFBOT_INSTANCE_DIR=str(tmp_path / "instance"),
               PERFBOT_GIT_BASE_URL=f"file://{tmp_path / 'no-remotes'}")  # nothing handled here may leave the machine
    args: tuple[str, ...] = ()
    if mode == "github":
        github = request.getfixturevalue("github")
        env.update(PERFBOT_GITHUB_TOKEN=github.token, PERFBOT_GITHUB_API_URL=github.url,
                   PERFBOT_GITHUB_REQUEST_INTERVAL="0", PERFBOT_GITHUB_WRITE_INTERVAL="0")
    else:
        repo = RepoBuilder(tmp_path / "repo")
        repo.write("README.md", "a repository to watch\n").commit("first")
        args = ("--repo", str(repo.root))
    service = Service(env, f"http://127.0.0.1:{port}", tmp_path / "serve.log", args)
    sets = webhook_example_sets()
    wrong, sent, wanted_ids = [], 0, set()
    service.start()
    try:
        with requests.Session() as http:
            for target, events in sets.items():
                for event, examples in events.items():
                    for n, payload in enumerate(examples):
                        body, delivery = json.dumps(payload).encode(), str(uuid.uuid4())
                        response = http.post(f"{service.base}/webhook", data=body, timeout=10, headers={
                            "X-GitHub-Event": event, "X-GitHub-Delivery": delivery,
                            "X-Hub-Signature-256": sign(SECRET, body), "Content-Type": "application/json",
                            "User-Agent": "GitHub-Hookshot/test",
                            "X-GitHub-Hook-Installation-Target-Type":
                                "integration" if mode == "github" else "repository"})
                        sent += 1
                        status, answer = expected_answer(event)
                        answered = response.json()
                        got = "ping" if event == "ping" and answered.get("ok") is True else answered.get("status")
                        if (response.status_code, got) != (status, answer) or not 200 <= response.status_code < 300:
                            wrong.append(f"{target} {event}[{n}]: {response.status_code} {response.text[:200]}")
                        if status == 202:
                            wanted_ids.add(delivery)
        metrics = requests.get(f"{service.base}/metrics", timeout=5).text
    finally:
        service.stop()

    assert sent == sum(len(examples) for events in sets.values() for examples in events.values()) > 700
    assert wrong == [], (f"{len(wrong)} of {sent} deliveries were not answered as docs/service.md says:\n"
                         + "\n".join(wrong))
    db = Database(database_url)
    try:
        with db.session() as session:
            stored = {row.id: row.event for row in session.scalars(select(Delivery))}
    finally:
        db.dispose()
    ours = {delivery: event for delivery, event in stored.items() if delivery in wanted_ids or _is_uuid(delivery)}
    assert set(ours) == wanted_ids  # every handled example stored once, no ignored one stored at all
    assert set(ours.values()) <= handlers.github_events()
    projects = sum(len(events.get("projects_v2_item", [])) for events in sets.values())
    assert projects >= 7
    assert f'perfbot_webhooks_received_total{{event="projects_v2_item",outcome="ignored"}} {float(projects)}' in metrics


def _is_uuid(text: str) -> bool:
    try:
        return str(uuid.UUID(text)) == text
    except ValueError:
        return False
