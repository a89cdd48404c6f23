"""POST /webhook: verify GitHub's signature over the raw body, store the delivery, then answer 202."""
from __future__ import annotations

import hashlib
import hmac
import json
import re
import time

from flask import Blueprint, Response, current_app, jsonify, request

from bot.adapters.store.queue import NewDelivery, NotStored

webhook = Blueprint("webhook", __name__)
# GitHub sends a GUID (github.com and GHES alike); the id is stored (a 100-character column), logged and quoted
# in comments, so any length or character beyond a GUID's alphabet is refused rather than trusted.
_DELIVERY_ID = re.compile(r"[A-Za-z0-9_-]{1,100}")
# GitHub's event names are snake_case with digits (`projects_v2_item`); its docs spell a few with hyphens
# (`sub-issues`), accepted so that no spelling GitHub documents is refused.
_EVENT = re.compile(r"[a-z][a-z0-9_-]{0,59}")
_ACTION_MAX, _REPO_MAX = 60, 400  # the deliveries.action and .repo columns: longer would fail the insert
# How long a delivery waits behind another write: GitHub gives up at 10 s, and a request stuck on a locked store
# must free its server thread for the next (and for /readyz) rather than wait out the 30 s busy timeout.
ACK_WAIT_SECONDS = 5.0
RETRY_PAUSE_SECONDS = (0.1, 1.0)  # a refused store (restarting, fail-over) is tried again, first soon, then each second
# GitHub's ids and numbers fit a signed 64-bit column; a larger integer (signed, so past the wall) would be
# acknowledged and then end its handler with an OverflowError in the store: refused here instead.
INT_LIMIT = 2**63


class _OutOfRange(ValueError):
    pass


def _bounded_int(text: str) -> int:
    value = int(text)
    if not -INT_LIMIT <= value < INT_LIMIT:
        raise _OutOfRange(text[:40])
    return value


def _no_constant(name: str):
    raise _OutOfRange(name)  # NaN and Infinity are not JSON, and GitHub never sends them


def _label(event: str, ctx) -> str:
    """The metrics label for a delivery not yet authenticated: anyone can send any header, and each new label
    value is a series kept forever, so only events perfbot knows keep their name."""
    if not event:
        return "-"
    return event if event == "ping" or event in ctx["wanted_events"] else "other"


def _error(status: int, message: str):
    return jsonify({"error": message}), status


def signature_ok(secrets: tuple[str, ...], body: bytes, header: str) -> bool:
    """True when any configured secret signs the body; compared in constant time; no secret means no."""
    if not header.startswith("sha256=") or not secrets:
        return False
    given = header[len("sha256="):].encode("ascii", "replace")
    return any(
        hmac.compare_digest(hmac.new(secret.encode(), body, hashlib.sha256).hexdigest().encode(), given)
        for secret in secrets
    )


def _nested(payload: dict, key: str, field: str):
    """payload[key][field], or None when either is absent or not an object: a hint for the store only, so an
    odd shape must never turn an acknowledged delivery into a 500 (the handler checks the payload itself)."""
    outer = payload.get(key)
    return outer.get(field) if isinstance(outer, dict) else None


def _store(queue, delivery: NewDelivery) -> bool:
    """Enqueue, trying again for up to ACK_WAIT_SECONDS in all: a database restarting or failing over refuses
    connections for a second or two, and a delivery answered 503 is lost unless someone redelivers it."""
    deadline = time.monotonic() + ACK_WAIT_SECONDS
    pause = RETRY_PAUSE_SECONDS[0]
    while True:
        try:
            return queue.enqueue(delivery, wait=max(deadline - time.monotonic(), 0.1))
        except NotStored:
            if time.monotonic() + pause >= deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, RETRY_PAUSE_SECONDS[1])


@webhook.post("/webhook")
def receive():
    ctx = current_app.extensions["perfbot"]
    settings, metrics = ctx["settings"], ctx["metrics"]
    event = request.headers.get("X-GitHub-Event", "")
    delivery_id = request.headers.get("X-GitHub-Delivery", "")
    signature = request.headers.get("X-Hub-Signature-256", "")
    if not settings.webhook_secrets:
        metrics.received(_label(event, ctx), "disabled")
        return _error(403, "webhooks are disabled: no PERFBOT_WEBHOOK_SECRET is configured (local mode)")
    if not event or not delivery_id or not signature:
        missing = [h for h, v in (("X-GitHub-Event", event), ("X-GitHub-Delivery", delivery_id),
                                  ("X-Hub-Signature-256", signature)) if not v]
        metrics.received(_label(event, ctx), "rejected")
        return _error(400, f"missing header(s): {', '.join(missing)}")
    if not _EVENT.fullmatch(event):
        metrics.received("-", "rejected")
        return _error(400, "malformed X-GitHub-Event header: GitHub's event names are lowercase letters, digits "
                           "and _ (up to 60 characters); send the header GitHub sent")
    if not _DELIVERY_ID.fullmatch(delivery_id):
        metrics.received(_label(event, ctx), "rejected")
        return _error(400, "malformed X-GitHub-Delivery header: expected GitHub's delivery GUID (1 to 100 "
                           "letters, digits, - or _); send the header GitHub sent")
    body = request.get_data(cache=False)  # raw bytes: the signature covers exactly these
    if not signature_ok(settings.webhook_secrets, body, signature):
        metrics.received(_label(event, ctx), "forged")
        return _error(401, "signature does not match: check the webhook secret")
    if request.mimetype != "application/json":
        metrics.received(event, "rejected")
        return _error(415, "set the webhook's content type to application/json")
    try:
        payload = json.loads(body, parse_int=_bounded_int, parse_constant=_no_constant)
    except _OutOfRange as exc:
        metrics.received(event, "rejected")
        return _error(400, f"body holds a number GitHub never sends ({exc}...): integers fit in 64 signed bits")
    except ValueError:
        metrics.received(event, "rejected")
        return _error(400, "body is not JSON")
    except RecursionError:  # the parser recurses per level: 100,000 nested brackets would otherwise be a 500
        metrics.received(event, "rejected")
        return _error(400, "body is not JSON perfbot accepts: nested too deeply (GitHub never sends that)")
    if not isinstance(payload, dict):
        metrics.received(event, "rejected")
        return _error(400, "body is not a JSON object")
    if event == "ping":
        metrics.received(event, "ping")
        return jsonify({"ok": True, "zen": payload.get("zen", "")}), 200
    if event not in ctx["wanted_events"]:
        metrics.received(event, "ignored")
        return jsonify({"status": "ignored", "event": event}), 200
    action = payload.get("action")
    repo = _nested(payload, "repository", "full_name")
    installation = _nested(payload, "installation", "id")
    delivery = NewDelivery(
        id=delivery_id, event=event,
        action=action if isinstance(action, str) and len(action) <= _ACTION_MAX else None,
        repo=repo if isinstance(repo, str) and len(repo) <= _REPO_MAX else None,
        installation_id=installation if type(installation) is int and 0 < installation < 2**63 else None,
        payload=body.decode("utf-8", "replace"),
    )
    try:
        stored = _store(ctx["queue"], delivery)
    except NotStored as exc:
        current_app.logger.warning("delivery %s not stored: %s", delivery_id, exc, extra={"delivery": delivery_id})
        metrics.received(event, "unstored")
        return _error(503, "the store did not take this delivery in time; redeliver it from the webhook's "
                           "Recent Deliveries once perfbot is ready (/readyz)")
    metrics.received(event, "queued" if stored else "duplicate")
    # json.dumps, not jsonify: the answer every delivery waits for, and the id is already plain (_DELIVERY_ID)
    answer = json.dumps({"status": "queued" if stored else "duplicate", "delivery": delivery_id})
    return Response(answer, 202 if stored else 200, mimetype="application/json")
