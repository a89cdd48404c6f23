"""No delivery lost to a short outage: the webhook tries the store again for a few seconds before its 503, and in
App mode a scheduled job asks GitHub to redeliver what failed (GitHub never does on its own)."""
from __future__ import annotations

import sqlite3
import time
from importlib import import_module

import pytest

from bot.adapters.store.queue import NotStored
from bot.app.runtime import Runtime
from bot.config import Settings
from bot.services import redeliveries
from tests.servers import serving
from tests.webhooks import post_delivery

SECRET = "hook-secret"
PUSH = {"ref": "refs/heads/main", "after": "0" * 40, "repository": {"id": 5, "full_name": "acme/runtime"},
        "installation": {"id": 77}}


def app_settings(tmp_path, url: str, github, key: str) -> Settings:
    return Settings(instance_dir=tmp_path / "instance", database_url=url, webhook_secrets=(SECRET,),
                    github_app_id="1234", github_private_key=key, github_api_url=github.url,
                    github_request_interval=0, github_write_interval=0)


def wait_until(condition, seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_the_webhook_tries_a_refusing_store_again_before_answering_503(tmp_path, monkeypatch):
    runtime = Runtime(Settings(instance_dir=tmp_path / "i", database_url=f"sqlite:///{tmp_path / 'db.sqlite3'}",
                               webhook_secrets=(SECRET,), github_token="t", github_api_url="http://127.0.0.1:9"),
                      workers=0)
    real, calls = runtime.queue.enqueue, []

    def restarting(delivery, **kwargs):  # the database refuses connections twice, as while it restarts
        calls.append(delivery.id)
        if len(calls) <= 2:
            raise NotStored("not stored: OperationalError: connection refused")
        return real(delivery, **kwargs)

    monkeypatch.setattr(runtime.queue, "enqueue", restarting)
    try:
        with serving(runtime.app) as base:
            answer = post_delivery(base, "push", PUSH, secret=SECRET, delivery="during-restart")
            assert answer.status_code == 202 and calls == ["during-restart"] * 3
            monkeypatch.setattr(import_module("bot.app.webhook"), "ACK_WAIT_SECONDS", 0.5)
            calls.clear()
            monkeypatch.setattr(runtime.queue, "enqueue", lambda d, **k: (calls.append(d.id), (_ for _ in ()).throw(
                NotStored("not stored: OperationalError: connection refused")))[1])
            refused = post_delivery(base, "push", PUSH, secret=SECRET, delivery="down-too-long")
            assert refused.status_code == 503 and len(calls) >= 2  # tried more than once, then gave up in time
    finally:
        runtime.stop()
    assert runtime.queue.get("during-restart")["status"] == "pending"


def test_to_redeliver_picks_each_failed_event_once_and_skips_what_succeeded_or_is_stored():
    def attempt(n, guid, status, code, at):
        return {"id": n, "guid": guid, "status": status, "status_code": code, "delivered_at": at, "event": "push"}

    attempts = [attempt(1, "a", "Invalid HTTP Response: 503", 503, "2026-12-05T10:00:00Z"),
                attempt(2, "a", "failed to connect", 0, "2026-12-05T10:01:00Z"),
                attempt(3, "b", "Invalid HTTP Response: 503", 503, "2026-12-05T10:00:00Z"),
                attempt(4, "b", "OK", 202, "2026-12-05T10:02:00Z"),
                attempt(5, "c", "timed out", 0, "2026-12-05T10:00:00Z"),
                attempt(6, "d", "Invalid HTTP Response: 503", 503, "2026-12-05T10:00:00Z")]
    chosen = redeliveries.to_redeliver(attempts, stored=lambda guid: guid == "d")
    assert [(c["guid"], c["id"]) for c in chosen] == [("c", 5), ("a", 2)]


def test_deliveries_refused_while_the_store_was_locked_are_redelivered_and_stored_once(tmp_path, github,
                                                                                      github_app_key, monkeypatch):
    """The GitHub double sends as GitHub would; the store is locked past the webhook's wait, so three deliveries
    are answered 503 and recorded failed; the scheduled check lists them and asks for each again, once."""
    monkeypatch.setattr(import_module("bot.app.webhook"), "ACK_WAIT_SECONDS", 0.5)
    github.validate_responses = True  # the listing and the redelivery answer as GitHub's description says
    github.add_repo("acme/runtime")
    github.install_app(77, ["acme/runtime"], github_app_key, app_id=1234)
    path = tmp_path / "perfbot.sqlite3"
    runtime = Runtime(app_settings(tmp_path, f"sqlite:///{path}", github, github_app_key), workers=0)
    locker = sqlite3.connect(path, isolation_level=None)
    try:
        with serving(runtime.app) as base:
            github.set_app_webhook(f"{base}/webhook", SECRET)
            assert github.send_app_webhook("push", PUSH, guid="before").status == "OK"
            locker.execute("BEGIN EXCLUSIVE")  # the store is down for longer than the webhook waits
            failed = [github.send_app_webhook("push", PUSH, guid=f"lost-{n}") for n in range(3)]
            locker.execute("ROLLBACK")
            assert {a.status for a in failed} == {"Invalid HTTP Response: 503"}
            assert all(runtime.queue.get(f"lost-{n}") is None for n in range(3))

            assert runtime.queue_redelivery_check()  # what the scheduler queues every few minutes
            claimed = runtime.queue.claim("test", 30, only=(redeliveries.EVENT,))
            assert claimed.id.startswith("redeliveries-") and runtime._dispatch(_event(claimed)) == []
            assert wait_until(lambda: all(runtime.queue.get(f"lost-{n}") is not None for n in range(3)))
            assert wait_until(lambda: sum(a.redelivery for a in github.hook_attempts()) == 3)
            # Asked again: every event has a successful attempt now, so nothing is redelivered twice.
            assert redeliveries.redeliver_failed(runtime.clients, lambda g: runtime.queue.get(g) is not None) == []
    finally:
        locker.close()
        runtime.stop()
    attempts = github.hook_attempts()
    assert sorted(a.guid for a in attempts if a.redelivery) == ["lost-0", "lost-1", "lost-2"]
    assert all(a.status == "OK" for a in attempts if a.redelivery)
    assert github.problems() == []  # every request matched GitHub's OpenAPI description


def _event(claimed):
    from bot.services.worker import Event

    return Event(claimed.event, claimed.action, claimed.id, {}, claimed.repo, claimed.installation_id)


@pytest.mark.parametrize("pages", [1, 3])
def test_the_deliveries_list_is_followed_page_by_page(tmp_path, github, github_app_key, pages):
    from datetime import UTC, datetime, timedelta

    from bot.adapters.github.client import GitHubClients

    github.validate_responses = True  # the double's delivery listing must read as GitHub's description says
    github.add_repo("acme/runtime")
    github.install_app(77, ["acme/runtime"], github_app_key, app_id=1234)
    github.set_app_webhook("http://127.0.0.1:9/webhook", SECRET)  # nobody listens: every attempt fails
    for n in range(100 * (pages - 1) + 5):
        github.send_app_webhook("push", PUSH, guid=f"g-{n}")
    clients = GitHubClients(app_settings(tmp_path, "sqlite://", github, github_app_key))
    found = clients.app_hook_deliveries(datetime.now(UTC) - timedelta(hours=1))
    assert len(found) == 100 * (pages - 1) + 5 and {f["status"] for f in found} == {"failed to connect"}
    assert github.problems() == []
