"""The optional outgoing webhook: each notice POSTed once to a local receiver that checks the HMAC-SHA256
signature as GitHub's receivers do; a receiver outage is retried by the delivery queue, never inline."""
from __future__ import annotations

import hashlib
import hmac
import json
import threading
from datetime import UTC, datetime, timedelta

from flask import Flask, request

from bot.adapters.store.bench import bench_store
from bot.adapters.store.lead import notice_store
from bot.core.config.instance import parse_instance_config
from tests.bench_project import CONFIG
from tests.lead.test_lead_dashboard import NOTIFY, REPO, STUCK, world  # noqa: F401  (the same repository and double)
from tests.servers import serving

SECRET = "correct horse battery staple"


def receiver(outages: int):
    """A chat tool's endpoint: refuses a bad signature with 401, answers 503 for its first `outages` POSTs."""
    app, got, lock = Flask("receiver"), [], threading.Lock()
    state = {"outages": outages, "bad": 0}

    @app.post("/hook")
    def hook():
        body = request.get_data()
        wanted = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(request.headers.get("X-Hub-Signature-256", ""), wanted):
            state["bad"] += 1
            return "bad signature", 401
        with lock:
            if state["outages"]:
                state["outages"] -= 1
                return "down for maintenance", 503
            got.append((request.headers["X-Perfbot-Delivery"], json.loads(body)))
        return "", 204

    return app, got, state


def drain(worker, queue, now: datetime) -> None:
    """Run every delivery due at `now` (later than the clock, so a retry's backoff has passed)."""
    while (claimed := queue.claim("test", 60, now=now)) is not None:
        worker._process(claimed)


def test_each_notice_reaches_the_webhook_once_signed_and_an_outage_is_retried(world, database, monkeypatch):
    services, worker, queue, remote = world
    bench_store.request_cancel(database, 1)  # the fix's queued verification is not what this test is about
    monkeypatch.setenv("PERFBOT_NOTIFY_SECRET", SECRET)
    app, got, state = receiver(outages=1)
    with serving(app) as url:
        services.context.bench.operator = parse_instance_config(f'[notify]\nallow = ["{url}/"]\n')[1]
        remote.write(".perfbot.toml", CONFIG + NOTIFY.replace("stuck_days = 3",
                                                              f'stuck_days = 3\nwebhook_url = "{url}/hook"'))
        remote.commit("notices go to chat too")
        services.lead.refresh_dashboard(REPO)
        queued = [d for d in queue.listing() if d["event"] == "perfbot.notify"]
        assert len(queued) == 2 and got == []  # queued, not sent inline
        assert all(n["webhook_queued"] for n in notice_store.notices_of(database, REPO))
        worker.run_once(), worker.run_once(), worker.run_once()  # the cancelled run, then both notices
        assert len(got) == 1  # the receiver was down for the first one
        [retrying] = [d for d in queue.listing() if d["event"] == "perfbot.notify" and d["status"] == "pending"]
        assert retrying["attempts"] == 1 and "503" in (queue.get(retrying["id"])["error"] or "")
        drain(worker, queue, datetime.now(UTC) + timedelta(hours=1))
        services.lead.refresh_dashboard(REPO)  # nothing new: nothing queued again
        drain(worker, queue, datetime.now(UTC) + timedelta(hours=2))
    assert state["bad"] == 0
    assert sorted(n["kind"] for _, n in got) == ["milestone-met", "stuck-no-root-cause"]
    stuck = next(n for _, n in got if n["kind"] == "stuck-no-root-cause")
    assert stuck["subject"] == STUCK and stuck["blocker"] and stuck["repository"] == REPO
    assert stuck["dashboard_issue"] == 3 and len({d for d, _ in got}) == 2


def test_a_repository_cannot_point_the_notices_at_an_address_the_operator_did_not_allow(world, database, monkeypatch):
    """Issue 38's blind SSRF, through `[notify]`: a `.perfbot.toml` on main names an internal address as its
    webhook; the notices are queued as always, but the worker POSTs nothing there, and says why."""
    services, worker, queue, remote = world
    bench_store.request_cancel(database, 1)
    monkeypatch.setenv("PERFBOT_NOTIFY_SECRET", SECRET)
    app, got, state = receiver(outages=0)
    with serving(app) as url:
        services.context.bench.operator = parse_instance_config('[notify]\nallow = ["https://chat.example/"]\n')[1]
        remote.write(".perfbot.toml", CONFIG + NOTIFY.replace("stuck_days = 3",
                                                              f'stuck_days = 3\nwebhook_url = "{url}/hook"'))
        remote.commit("notices go to an internal address")
        services.lead.refresh_dashboard(REPO)
        queued = [d for d in queue.listing() if d["event"] == "perfbot.notify"]
        assert len(queued) == 2
        drain(worker, queue, datetime.now(UTC) + timedelta(hours=1))
    assert got == [] and state["bad"] == 0  # nothing reached the address, signed or not
    errors = [queue.get(d["id"])["error"] or "" for d in queue.listing() if d["event"] == "perfbot.notify"]
    assert len(errors) == 2 and all("not an address the operator allows" in e for e in errors), errors


def test_a_wrong_secret_is_refused_by_the_receiver(monkeypatch):
    from bot.adapters.outgoing_webhook import send

    app, got, state = receiver(outages=0)
    with serving(app) as url:
        try:
            send(f"{url}/hook", {"kind": "fix-verified"}, "d-1", "not the secret")
        except RuntimeError as exc:
            assert "refused the notice with 401" in str(exc)
        else:
            raise AssertionError("a 401 must be a permanent error")
        assert send(f"{url}/hook", {"kind": "fix-verified"}, "d-2", SECRET) == 204
    assert state["bad"] == 1 and [d for d, _ in got] == ["d-2"]
