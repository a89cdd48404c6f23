"""Signing and sending webhook deliveries the way GitHub does."""
from __future__ import annotations

import hashlib
import hmac
import json
import uuid

import requests


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
