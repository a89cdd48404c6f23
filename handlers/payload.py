"""Reading webhook payloads defensively: every value a handler uses is checked before it is trusted."""
from __future__ import annotations

import re

from bot.errors import UserError

_FULL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}")
_SHA = re.compile(r"[0-9a-f]{40}")


def repo_full_name(payload: dict) -> str:
    name = (payload.get("repository") or {}).get("full_name")
    if not isinstance(name, str) or not _FULL_NAME.fullmatch(name) or any(p.strip(".") == "" for p in name.split("/")):
        raise UserError(f"payload has no valid repository.full_name (got {str(name)[:80]!r})")
    return name


def commit_sha(value) -> str:
    if not isinstance(value, str) or not _SHA.fullmatch(value):
        raise UserError(f"not a commit sha: {str(value)[:80]!r}")
    return value


def login(payload: dict, key: str = "sender") -> str:
    value = (payload.get(key) or {}).get("login")
    return value if isinstance(value, str) else ""


def installation_id(payload: dict) -> int | None:
    value = (payload.get("installation") or {}).get("id")
    return value if type(value) is int and 0 < value < 2**63 else None
