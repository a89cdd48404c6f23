"""The App's webhook as GitHub keeps it: deliveries the double sends to the App's URL, each attempt recorded
(`GET /app/hook/deliveries`), and a failed one sent again on request (`POST .../{delivery_id}/attempts`), as
GitHub's guide "Handling failed webhook deliveries" describes. GitHub never redelivers on its own; neither does
the double.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

import requests

from .routes_apps import _app_identity
from .routes_common import ApiError, Call, Reply, not_found, route
from .state import State, iso, utc_now


@dataclass
class HookDelivery:
    """One attempt: the first delivery of an event (a new guid) or a redelivery of it (the same guid)."""

    id: int
    guid: str
    event: str
    action: str | None
    installation_id: int | None
    repository_id: int | None
    body: bytes
    delivered_at: datetime
    redelivery: bool
    duration: float = 0.0
    status: str = "pending"
    status_code: int = 0

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "guid": self.guid, "delivered_at": iso(self.delivered_at),
                "redelivery": self.redelivery, "duration": round(self.duration, 3), "status": self.status,
                "status_code": self.status_code, "event": self.event, "action": self.action,
                "installation_id": self.installation_id, "repository_id": self.repository_id, "throttled_at": None}


@dataclass
class AppHook:
    url: str
    secret: str


def send(state: State, event: str, payload: dict | bytes, *, guid: str | None = None,
         redelivery: bool = False) -> HookDelivery:
    """POST one delivery to the App's webhook URL, signed as GitHub signs, and record how it went."""
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    parsed = json.loads(body)
    with state.lock:
        hook = state.app_hook
        if hook is None:
            raise ValueError("no App webhook: call set_app_webhook(url, secret) first")
        attempt = HookDelivery(state.next_id(), guid or str(uuid.uuid4()), event, parsed.get("action"),
                               (parsed.get("installation") or {}).get("id"),
                               (parsed.get("repository") or {}).get("id"), body, utc_now(), redelivery)
    signature = "sha256=" + hmac.new(hook.secret.encode(), body, hashlib.sha256).hexdigest()
    began = time.monotonic()
    try:
        answer = requests.post(hook.url, data=body, timeout=10, headers={
            "X-GitHub-Event": event, "X-GitHub-Delivery": attempt.guid, "X-Hub-Signature-256": signature,
            "Content-Type": "application/json", "User-Agent": "GitHub-Hookshot/double"})
        status, code = ("OK" if answer.status_code < 400 else f"Invalid HTTP Response: {answer.status_code}",
                        answer.status_code)
    except requests.Timeout:
        status, code = "timed out", 0
    except requests.RequestException:
        status, code = "failed to connect", 0
    with state.lock:  # listed once answered, as GitHub lists finished attempts
        attempt.status, attempt.status_code, attempt.duration = status, code, time.monotonic() - began
        state.hook_deliveries.append(attempt)
    return attempt


@route("GET", "/app/hook/deliveries")
def list_deliveries(call: Call) -> Reply:
    """Newest first; `cursor` names the delivery a page starts at (GitHub's Link header carries it)."""
    _app_identity(call)
    per_page = min(int(call.query.get("per_page", 30)), 100) or 30
    wanted = call.query.get("status")
    attempts = sorted(call.state.hook_deliveries, key=lambda d: d.id, reverse=True)
    if wanted is not None:
        failed = {"failure": True, "success": False}[wanted]
        attempts = [d for d in attempts if (not 200 <= d.status_code < 400) == failed]
    cursor = call.query.get("cursor")
    if cursor is not None:
        if not cursor.startswith("v1_") or not cursor[3:].isdigit():
            raise ApiError(400, "Bad Request")
        attempts = [d for d in attempts if d.id <= int(cursor[3:])]
    page, rest = attempts[:per_page], attempts[per_page:]
    headers = {}
    if rest:
        query = [(k, v) for k, v in call.query.items(multi=True) if k != "cursor"] + [("cursor", f"v1_{rest[0].id}")]
        headers["Link"] = f'<{call.api}{call.path}?{urlencode(query)}>; rel="next"'
    return Reply(200, [d.as_json() for d in page], headers)


@route("POST", "/app/hook/deliveries/{delivery_id}/attempts")
def redeliver(call: Call) -> Reply:
    """Accepted at once; the delivery goes out again (same guid, `redelivery: true`) from another thread."""
    _app_identity(call)
    wanted = call.int_arg("delivery_id")
    found = next((d for d in call.state.hook_deliveries if d.id == wanted), None)
    if found is None:
        raise not_found()
    state = call.state
    threading.Thread(target=send, args=(state, found.event, found.body), kwargs={"guid": found.guid,
                                                                                  "redelivery": True},
                     daemon=True).start()
    return Reply(202, {})
