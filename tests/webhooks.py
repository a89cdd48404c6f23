"""Webhook payloads built from GitHub's own examples, signed and sent the way GitHub does."""
from __future__ import annotations

import copy
import hashlib
import hmac
import json
import uuid

import requests

from tests.npm_fixtures import webhook_examples


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def post_delivery(base_url: str, event: str, payload: dict | bytes, *, secret: str | None, delivery: str | None = None,
                  headers: dict | None = None, timeout: float = 10) -> requests.Response:
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    sent = {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
        "Content-Type": "application/json",
        "User-Agent": "GitHub-Hookshot/test",
    }
    if secret is not None:
        sent["X-Hub-Signature-256"] = sign(secret, body)
    sent.update(headers or {})
    return requests.post(f"{base_url}/webhook", data=body, headers={k: v for k, v in sent.items() if v is not None},
                         timeout=timeout)


def comment_payload(repo: str, number: int, comment_id: int, body: str, author: str, *, pull: bool = False,
                    sender: str | None = None, edited_from: str | None = None) -> dict:
    """An `issue_comment` payload from @octokit/webhooks-examples: `author` wrote `body` on issue (or, with
    `pull`, pull request) `number`; `sender` did the action, `edited_from` makes it an edit."""
    action = "created" if edited_from is None else "edited"
    payload = copy.deepcopy(next(p for p in webhook_examples("issue_comment") if p["action"] == action))
    payload["comment"].update(id=comment_id, body=body)
    payload["comment"]["user"]["login"] = author
    payload["sender"]["login"] = sender or author
    payload["repository"]["full_name"] = repo
    payload["issue"].update(number=number, pull_request={"url": "x"} if pull else None)
    if edited_from is not None:
        payload["changes"] = {"body": {"from": edited_from}}
    payload.pop("installation", None)
    return payload
