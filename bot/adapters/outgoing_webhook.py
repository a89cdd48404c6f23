"""perfbot's own outgoing webhook: a notice POSTed as JSON to a chat tool, signed the way GitHub signs its own."""
from __future__ import annotations

import hashlib
import hmac
import json
import os

import requests

from bot.config import read_setting
from bot.errors import TransientError

SIGNATURE_HEADER = "X-Hub-Signature-256"  # the receiver checks it exactly as it checks GitHub's
TIMEOUT_SECONDS = 10


def signature(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def notify_secret() -> str:
    """PERFBOT_NOTIFY_SECRET (or PERFBOT_NOTIFY_SECRET_FILE), read when a notice is sent, never from the toml."""
    secret = read_setting(os.environ, "NOTIFY_SECRET")
    if not secret:
        raise RuntimeError("[notify] webhook_url is set but PERFBOT_NOTIFY_SECRET is not: perfbot signs every "
                           "outgoing notice; set the secret in perfbot's environment and redeliver")
    return secret


def send(url: str, payload: dict, delivery_id: str, secret: str) -> int:
    """POST once; an outage or a 429/5xx is a TransientError, so the delivery queue retries it with backoff."""
    body = json.dumps(payload, sort_keys=True).encode("utf-8")
    headers = {"Content-Type": "application/json", "User-Agent": "perfbot", SIGNATURE_HEADER: signature(secret, body),
               "X-Perfbot-Event": "notice", "X-Perfbot-Delivery": delivery_id}
    try:
        reply = requests.post(url, data=body, headers=headers, timeout=TIMEOUT_SECONDS, allow_redirects=False)
    except requests.RequestException as exc:
        raise TransientError(f"notice webhook unreachable: {exc.__class__.__name__}") from None
    if reply.status_code == 429 or reply.status_code >= 500:
        retry = reply.headers.get("Retry-After", "")
        raise TransientError(f"notice webhook answered {reply.status_code}",
                             retry_after=float(retry) if retry.isdigit() else None)
    if reply.status_code >= 300:
        raise RuntimeError(f"notice webhook refused the notice with {reply.status_code}; check [notify] webhook_url")
    return reply.status_code
